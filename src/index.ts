/**
 * coroutine-crawler: one web crawler written three times, once per stage of
 * "A Web Crawler With asyncio Coroutines" (A. Jesse Jiryu Davis and Guido van
 * Rossum, *500 Lines or Less*).
 *
 * The package root gathers the three stages as namespaces and re-exports the
 * shared vocabulary (options, records, errors, the report). Import a stage
 * directly (`coroutine-crawler/callbacks`, `/generators`, `/asyncawait`) to
 * read or step through one way of waiting; what the stages share is
 * `coroutine-crawler/shared`, the fixture site `coroutine-crawler/site`,
 * stage 3's frontier in Redis `coroutine-crawler/redis`, and the trace's
 * timeline page `coroutine-crawler/timeline`.
 *
 * Each stage's module page says what the stage shows and which file to read
 * first; read them in order: `callbacks` (stage 1), `generators` (stage 2),
 * `asyncawait` (stage 3). The reading guides under Documents walk through the
 * same code. This reference also lists the protected members the guides
 * name, the machinery behind the public calls (`Task.step`, each loop's one
 * iteration, how a Future schedules its done callbacks), and every member
 * links to its line in the source.
 *
 * @example
 * ```ts
 * import { asyncawait, report } from "coroutine-crawler";
 * const result = await asyncawait.crawl("http://127.0.0.1:8080/");
 * console.log(report(result));
 * ```
 * @module coroutine-crawler
 */
export * as callbacks from "./callbacks/index.js";
export * as generators from "./generators/index.js";
export * as asyncawait from "./asyncawait/index.js";
export * as shared from "./shared/index.js";
export type { CrawlOptions, ResolvedCrawlOptions } from "./crawl/options.js";
export type { CookieJarLike } from "./crawl/cookies.js";
export { DEFAULT_OPTIONS, resolveOptions, VERSION } from "./crawl/options.js";
export { proxyFromEnv } from "./http/proxy.js";
export type { Proxies, ProxyServer } from "./http/proxy.js";
export type { CrawlResult, FetchError, FetchStatistic } from "./crawl/records.js";
export type { CrawlItem, Item, OnPage, PageContext, PageResult } from "./crawl/page-hook.js";
export type { RobotsFetch, RobotsVerdict } from "./crawl/robots.js";
export { FETCH_ERRORS } from "./crawl/records.js";
export { CancelledError, InvalidStateError } from "./kernel/errors.js";
export type { AttemptError, FinalError, RetriedError } from "./kernel/errors.js";
export type { CrawlLoop, CrawlState } from "./crawl/core.js";
export type { CrawlRequestOptions, Job, JobRequest, JobState, Outcome, Step } from "./crawl/job.js";
export type { CoreWorld } from "./crawl/world.js";
export type { KnownStage, StageName, TraceEvent } from "./observe/events.js";
export { report } from "./crawl/report.js";
export type { ComparisonJson, CrawlResultJson, OptionsJson, RecordLine } from "./cli/result-json.js";
export { SCHEMA_VERSION } from "./cli/result-json.js";
