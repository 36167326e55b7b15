/**
 * The types every stage's entry point gives besides its `Crawler` and
 * `crawl()`: the options, the records, and the page hook's page and items. A notebook that imports one stage
 * (`coroutine-crawler/generators`) needs nothing else to type its cells.
 *
 * @module
 */
export type { CrawlOptions } from "./options.js";
export type { CrawlItem, Item, OnPage, PageContext, PageResult } from "./page-hook.js";
export type { CrawlResult, FetchError, FetchStatistic } from "./records.js";
export type { RobotsFetch, RobotsVerdict } from "./robots.js";
