/**
 * Loads one stage's `crawl` by name, importing that stage alone, so a child
 * process measuring stage 1 does not also hold stage 3's HTTP client.
 *
 * @module
 */
import type { CrawlFunction } from "../../src/cli/stages.js";
import type { StageName } from "../../src/shared/trace.js";

/** The stages, in the order the benchmark runs and prints them. */
export const STAGE_NAMES: readonly StageName[] = ["callbacks", "generators", "asyncawait"];

/** Imports the stage named `stage` and returns its `crawl`. */
export async function loadCrawl(stage: StageName): Promise<CrawlFunction> {
  switch (stage) {
    case "callbacks":
      return (await import("../../src/callbacks/index.js")).crawl;
    case "generators":
      return (await import("../../src/generators/index.js")).crawl;
    case "asyncawait":
      return (await import("../../src/asyncawait/index.js")).crawl;
  }
}
