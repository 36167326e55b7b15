/**
 * The benchmark's scenarios: the synthetic site each one crawls and the
 * `maxTasks` it crawls with (issue 8), full size and `--quick`.
 *
 * @module
 */

/** One scenario: a site, a worker count, and the question it asks. */
export interface Scenario {
  /** `S1`, `S2` or `S3`. */
  readonly id: string;
  /** What the scenario measures, for the table. */
  readonly title: string;
  /** Pages of the synthetic site. */
  readonly pages: number;
  /** Links on each page. */
  readonly links: number;
  /** Delay before every response, in ms. */
  readonly delayMs: number;
  /** The crawl's `maxTasks`. */
  readonly maxTasks: number;
  /** The PRNG seed of the site: same seed, same site, same crawl. */
  readonly seed: number;
}

/**
 * The three scenarios of issue 8: throughput with no delay (S1), latency
 * with a 50 ms delay (S2), and C10K, ten thousand slow responses in flight
 * at once (S3).
 */
export const SCENARIOS: readonly Scenario[] = [
  { id: "S1", title: "throughput", pages: 2_000, links: 10, delayMs: 0, maxTasks: 100, seed: 1 },
  { id: "S2", title: "latency", pages: 2_000, links: 10, delayMs: 50, maxTasks: 100, seed: 1 },
  { id: "S3", title: "C10K", pages: 10_000, links: 10, delayMs: 1_000, maxTasks: 10_000, seed: 1 },
];

/** The same three shapes, small enough for a test to run in seconds (`--quick`). */
export const QUICK_SCENARIOS: readonly Scenario[] = [
  { id: "S1", title: "throughput", pages: 200, links: 10, delayMs: 0, maxTasks: 20, seed: 1 },
  { id: "S2", title: "latency", pages: 200, links: 10, delayMs: 20, maxTasks: 20, seed: 1 },
  { id: "S3", title: "C10K", pages: 500, links: 10, delayMs: 200, maxTasks: 500, seed: 1 },
];
