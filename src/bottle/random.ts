/**
 * The bottle's seeded random source: every latency, fault and random site it
 * draws comes from one of these, so the same seed draws the same world.
 *
 * @module
 */
import { mulberry32 } from "../site/synthetic.js";

/**
 * A seeded generator of floats, integers and picks: Mulberry32 (the PRNG the
 * synthetic sites already draw their links with) behind a few named draws.
 *
 * @remarks Core's own seedable random source (issue 35, part 1) may use the
 * same algorithm; the bottle keeps its own so that what the world draws and
 * what the crawl draws never share a sequence: a change in the crawler's
 * draws cannot move a fault.
 */
export class SeededRandom {
  private readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = mulberry32(seed);
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer from `min` to `max`, both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** One of `items`, uniformly. @throws RangeError for an empty list. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick() from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }
}

/**
 * A seed made from `seed` and `text` (FNV-1a over the text's UTF-16 units,
 * mixed with the seed): the draws for one request line, one host, … are then
 * the same whichever order a stage makes its requests in.
 */
export function seedFor(seed: number, text: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
