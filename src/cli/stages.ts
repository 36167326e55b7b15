/**
 * The three stages' `crawl` functions, by name, for `--stage` and `--compare`.
 *
 * @module
 */
import { crawl as crawlWithAsyncAwait } from "../asyncawait/index.js";
import { crawl as crawlWithCallbacks } from "../callbacks/index.js";
import { crawl as crawlWithGenerators } from "../generators/index.js";
import type { CrawlResult } from "../crawl/records.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { StageName } from "../observe/events.js";

/** The signature every stage's `crawl` shares. */
export type CrawlFunction = (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;

/** Each stage's `crawl`. */
export const STAGES: Readonly<Record<StageName, CrawlFunction>> = {
  callbacks: crawlWithCallbacks,
  generators: crawlWithGenerators,
  asyncawait: crawlWithAsyncAwait,
};
