/**
 * The crawlers the contract suite checks: one entry per stage, added by each
 * stage's engineer once the stage passes. Every suite in test/contract runs
 * against each entry, so the three stages are held to the same behaviour.
 */
import { crawl as crawlWithCallbacks, Crawler as CallbacksCrawler } from "../../src/callbacks/index.js";
import { Crawler as GeneratorsCrawler, crawl as crawlWithGenerators } from "../../src/generators/index.js";
import { Crawler as AsyncAwaitCrawler, crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import type { CrawlResult } from "../../src/shared/fetch-statistic.js";
import type { CrawlOptions } from "../../src/shared/options.js";

/** One stage's public API, as the contract suite calls it. */
export interface Stage {
  name: "callbacks" | "generators" | "asyncawait";
  crawl: (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;
  Crawler: new (roots: string | string[], options?: CrawlOptions) => { urlAllowed(url: string): boolean };
}

/** The registered stages. Add yours with one line, e.g. `{ name: "asyncawait", crawl, Crawler }`. */
export const stages: Stage[] = [
  { name: "callbacks", crawl: crawlWithCallbacks, Crawler: CallbacksCrawler },
  { name: "generators", crawl: crawlWithGenerators, Crawler: GeneratorsCrawler },
  { name: "asyncawait", crawl: crawlWithAsyncAwait, Crawler: AsyncAwaitCrawler },
];
