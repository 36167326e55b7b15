/**
 * The crawl's random source: a tiny seeded generator, so that a crawl that
 * draws random numbers (a host delay's `delayJitter`) draws the same ones
 * again from the same `seed`, and can be replayed.
 *
 * @module
 */

/** A source of uniform floats in [0, 1): `Math.random`'s shape, but seeded. */
export type RandomSource = () => number;

/** The largest seed, plus one: a seed is an unsigned 32-bit integer. */
export const SEED_LIMIT = 2 ** 32;

/**
 * Mulberry32, a tiny seeded PRNG (public domain, Tommy Ettinger): uniform
 * floats in [0, 1), the same sequence for the same seed on every machine and
 * in every process. Its state is 32 bits, more than a crawl's jitter needs;
 * it is not for anything secret.
 *
 * @param seed - Any number; its unsigned 32-bit integer part is used (`seed >>> 0`).
 * @example
 * ```ts
 * const random = mulberry32(42);
 * random(); // 0.6011037519201636, on every machine
 * ```
 */
export function mulberry32(seed: number): RandomSource {
  let state = seed >>> 0;
  return function next(): number {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A fresh seed, drawn once for a crawl whose options give none: the crawl's
 * result reports it in `options.seed`, so the crawl can be run again with it.
 *
 * @remarks `Math.random()` (V8's xorshift128+, seeded by the OS at start-up),
 * not `node:crypto`: a seed needs no secrecy, and importing `node:crypto`
 * cost every stage's start-up 5–10 ms of CPU. This is the one place a crawl
 * reads randomness from the world; its decisions read only the seeded source.
 */
export function drawSeed(): number {
  return Math.floor(Math.random() * 4_294_967_296);
}
