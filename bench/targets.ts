/**
 * The figures each stage must reach on the full-size scenarios (issue 8;
 * P1, issue 14; S4 and S5, issue 18), and stage 3's with a Redis frontier
 * (R1, issue 15).
 *
 * @module
 */
import type { KnownStage as StageName } from "../src/observe/events.js";

/** One stage's targets. */
export interface Targets {
  /** S1: at least this many pages per second (median). */
  s1PagesPerSecond: number;
  /** S2: wall time at most this times the lower bound (median). */
  s2BoundRatio: number;
  /** S3: wall time at most this times the lower bound (median). */
  s3BoundRatio: number;
  /** S3: peak RSS at most this many bytes (max over runs). */
  s3PeakRssBytes: number;
  /** Heap bytes per waiting unit, at most. */
  bytesPerWaitingUnit: number;
  /**
   * P1: requests in flight (time-weighted mean, median of the runs) at least
   * this share of `min(maxTasks, hosts × maxPerHost)`; and never more than
   * `maxPerHost` on one host, which is no target but the option's promise.
   */
  p1InFlightShare: number;
  /**
   * S4: peak RSS at most this times the reference crawler's peak RSS in the
   * same round (median over rounds: one round's peak can be a GC outlier),
   * with every record still returned.
   */
  s4RssOverReference: number;
  /**
   * S5: peak RSS of the crawler process at most this many bytes (max over
   * runs) on a million pages whose records are written out and not kept;
   * null for stages that S5 does not crawl (it is stage 3's).
   */
  s5PeakRssBytes: number | null;
}

const MB = 1_000_000;

/** The targets of issues 8, 14 and 18, per stage: stage 3 has the tighter ones. */
export const TARGETS: Readonly<Record<StageName, Targets>> = {
  callbacks: { s1PagesPerSecond: 2_500, s2BoundRatio: 1.2, s3BoundRatio: 1.2, s3PeakRssBytes: 150 * MB, bytesPerWaitingUnit: 2048, p1InFlightShare: 0.9, s4RssOverReference: 1.2, s5PeakRssBytes: null },
  generators: { s1PagesPerSecond: 2_500, s2BoundRatio: 1.2, s3BoundRatio: 1.2, s3PeakRssBytes: 150 * MB, bytesPerWaitingUnit: 2048, p1InFlightShare: 0.9, s4RssOverReference: 1.2, s5PeakRssBytes: null },
  asyncawait: { s1PagesPerSecond: 4_500, s2BoundRatio: 1.15, s3BoundRatio: 1.12, s3PeakRssBytes: 150 * MB, bytesPerWaitingUnit: 1024, p1InFlightShare: 0.9, s4RssOverReference: 1.2, s5PeakRssBytes: 300 * MB },
};

/** The chapter's figures: memory per thread and per Python coroutine. */
export const CHAPTER_FIGURES = { bytesPerThread: 50 * 1024, bytesPerCoroutine: 3 * 1024 } as const;

/**
 * R1 (issue 15), with S2's 50 ms responses: the wall time of 4 processes ×
 * 10 workers over that of 1 process × 40 workers, both through one Redis
 * (medians), at most this: 4 processes at least as fast as one.
 */
export const R1_MANY_OVER_ONE_WALL = 1;

/**
 * Issue 29's targets, each a ratio to a figure measured in the same run: the
 * reference crawler's (bench/reference-crawler.ts), crawling the same site in
 * the same rounds, or `node -e 0`'s.
 */
export const AGAINST_REFERENCE = {
  /** S1: the whole crawler process's CPU (start-up, imports and crawl) over the reference's, at most (median of the rounds' ratios). */
  s1ProcessCpu: 1.0,
  /** S4 (300,000 pages): the crawl's CPU per page over the reference's, at most. */
  s4CpuPerPage: 0.9,
  /** S3 (C10K): peak RSS over the reference's, at most, with every page fetched in every run. */
  s3PeakRss: 1.0,
  /** `crawl --help`: CPU over `node -e 0`'s, at most (issue 39: 1.5, was 2). */
  helpOverNode: 1.5,
  /** A one-page crawl through the command, each stage: CPU over the yardstick's one-page crawl (bench/yardstick/), at most (issue 39). */
  onePageOverYardstick: 1.3,
} as const;

/** The scenarios crawled by the reference too, whatever `--stages` says: their targets are ratios to it. */
export const WITH_REFERENCE: ReadonlySet<string> = new Set(["S1", "S3", "S4"]);

/**
 * Issue 39's targets, each against the yardstick (bench/yardstick.ts: the
 * plainest fast crawler, run unchanged) crawling the same site in the same
 * rounds, or against the scenario's lower bound.
 */
export const AGAINST_YARDSTICK = {
  /** Y1 (S1's shape on the yardstick's site): whole-process CPU over the yardstick's, at most (median of the rounds' ratios). */
  s1ProcessCpu: 1.0,
  /** PP1 and PP2 (100,000 and 300,000 pages on the yardstick's site): CPU per page over the yardstick's, at most. */
  cpuPerPage: 0.95,
  /** S3 (C10K): wall time over the lower bound, at most (median), for every stage. */
  c10kWallOverBound: 1.2,
  /** S4's shape with `--jsonl`, at each of two speeds: peak RSS over the yardstick's of the same round, at most. */
  peakRssOverYardstick: 1.2,
} as const;

/** The scenarios the yardstick crawls too, in every round (issue 39). */
export const WITH_YARDSTICK: ReadonlySet<string> = new Set(["S1", "S3", "Y1", "PP1", "PP2"]);
