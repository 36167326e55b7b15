/**
 * Loads one stage's `crawl` by name, importing that stage alone, so a child
 * process measuring stage 1 does not also hold stage 3's HTTP client.
 *
 * @module
 */
import type { CrawlResult } from "../../src/crawl/records.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { KnownStage as StageName } from "../../src/observe/events.js";

/** The stages, in the order the benchmark runs and prints them. */
export const STAGE_NAMES: readonly StageName[] = ["callbacks", "generators", "asyncawait"];

/**
 * What the benchmark can crawl with: a stage, or `reference`, the plain
 * node:http crawler of `bench/reference-crawler.ts` (a yardstick, not a stage).
 */
export type BenchSubject = StageName | "reference";

/** Every {@link BenchSubject}, in the order the benchmark prints them. */
export const SUBJECT_NAMES: readonly BenchSubject[] = [...STAGE_NAMES, "reference"];

/** The part of a crawl the benchmark needs: a stage's `crawl`, or the reference crawler. */
export type BenchCrawl = (url: string, options: CrawlOptions & { maxTasks: number }) => Promise<Pick<CrawlResult, "records" | "todo">>;

/** Imports the stage (or the reference crawler) named `stage` and returns its `crawl`. */
export async function loadCrawl(stage: BenchSubject): Promise<BenchCrawl> {
  switch (stage) {
    case "reference":
      return (await import("../reference-crawler.js")).referenceCrawl;
    case "callbacks":
      return (await import("../../src/callbacks/index.js")).crawl;
    case "generators":
      return (await import("../../src/generators/index.js")).crawl;
    case "asyncawait":
      return (await import("../../src/asyncawait/index.js")).crawl;
  }
}
