/**
 * The three stages' `crawl` functions, by name, for `--stage` and `--compare`.
 *
 * @module
 */
import { crawl as crawlWithAsyncAwait } from "../asyncawait/index.js";
import { crawl as crawlWithCallbacks } from "../callbacks/index.js";
import { crawl as crawlWithGenerators } from "../generators/index.js";
import type { CrawlResult } from "../shared/fetch-statistic.js";
import type { CrawlOptions } from "../shared/options.js";
import type { StageName } from "../shared/trace.js";

/** The signature every stage's `crawl` shares. */
export type CrawlFunction = (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;

/** Each stage's `crawl`. */
export const STAGES: Readonly<Record<StageName, CrawlFunction>> = {
  callbacks: crawlWithCallbacks,
  generators: crawlWithGenerators,
  asyncawait: crawlWithAsyncAwait,
};
