/**
 * The crawlers the contract suite checks: one entry per stage, added by each
 * stage's engineer once the stage passes. Every suite in test/contract runs
 * against each entry, so the three stages are held to the same behaviour.
 */
import { crawl as crawlWithCallbacks, Crawler as CallbacksCrawler } from "../../src/callbacks/index.js";
import { Crawler as GeneratorsCrawler, crawl as crawlWithGenerators } from "../../src/generators/index.js";
import { Crawler as AsyncAwaitCrawler, crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import { within } from "../helpers/within.js";

/**
 * How long one contract crawl may take before it fails as hung, naming the
 * stage and the roots. The crawls are of small loopback sites; the limit is
 * generous because the machines running the tests are shared and noisy.
 */
const CRAWL_HANG_MS = 20_000;

/** One stage's public API, as the contract suite calls it. */
export interface Stage {
  name: "callbacks" | "generators" | "asyncawait";
  crawl: (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;
  Crawler: new (roots: string | string[], options?: CrawlOptions) => { urlAllowed(url: string): boolean };
}

/**
 * `crawl`, failing with "Hung: <stage> crawl of <roots> did not finish within
 * 20000 ms" instead of running into the test timeout when a crawl never ends.
 */
function failingIfHung(name: Stage["name"], crawl: Stage["crawl"]): Stage["crawl"] {
  return function crawlWithinLimit(roots, options) {
    return within(CRAWL_HANG_MS, crawl(roots, options), `${name} crawl of ${String(roots)}`);
  };
}

/** The registered stages. Add yours with one line, e.g. `{ name: "asyncawait", crawl, Crawler }`. */
export const stages: Stage[] = [
  { name: "callbacks", crawl: failingIfHung("callbacks", crawlWithCallbacks), Crawler: CallbacksCrawler },
  { name: "generators", crawl: failingIfHung("generators", crawlWithGenerators), Crawler: GeneratorsCrawler },
  { name: "asyncawait", crawl: failingIfHung("asyncawait", crawlWithAsyncAwait), Crawler: AsyncAwaitCrawler },
];
