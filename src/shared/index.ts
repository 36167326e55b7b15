/**
 * What the three stages stand on, in one namespace: the kernel (the
 * {@link Selector} that stands in for Python's `selectors`, the socket calls,
 * timers, the error classes), HTTP/1.x bytes (the request every stage sends,
 * and the response parser and kept connections of stages 1 and 2), the crawl's shared decisions
 * (options, cookies and cookie files, the URL policy, link extraction, page reading, `visit()`, the
 * records and the report, robots.txt, sitemaps and the host lines of politeness), the crawl core and
 * its contract with a stage (`CrawlCore`, `Job`, `Outcome`, `JobRequest`, `worldFor`: docs/crawl-core.md),
 * and the trace events.
 *
 * The code lives in `src/kernel/`, `src/http/`, `src/crawl/` and
 * `src/observe/`; this module only gathers it, so that `coroutine-crawler/shared`
 * and the root's `shared` namespace keep working. The chapter calls most of
 * this "not of particular interest": it is here so that each stage's folder
 * holds only its own way of waiting, and so that the three stages make every
 * decision the same way. docs/behaviour.md states the rules.
 *
 * @example
 * ```ts
 * import { report } from "coroutine-crawler/shared";
 * import { crawl } from "coroutine-crawler/asyncawait";
 * console.log(report(await crawl("http://127.0.0.1:8080/")));
 * ```
 * @module
 */
export * from "../crawl/options.js";
export * from "../crawl/cookies.js";
export * from "../crawl/cookie-file.js";
export * from "../crawl/records.js";
export * from "../kernel/errors.js";
export * from "../crawl/urls.js";
export * from "../crawl/links.js";
export * from "../http/parser.js";
export * from "../crawl/body.js";
export * from "../crawl/page.js";
export * from "../crawl/page-hook.js";
export * from "../crawl/page-context.js";
export * from "../crawl/document.js";
export * from "../kernel/selector.js";
export * from "../kernel/socket.js";
export * from "../kernel/timers.js";
export * from "../observe/events.js";
export * from "../observe/trace-lines.js";
export * from "../observe/trace-url.js";
export * from "../crawl/report.js";
export * from "../crawl/visit.js";
export * from "../crawl/robots.js";
export * from "../crawl/sitemaps.js";
export * from "../crawl/politeness.js";
export * from "../crawl/core.js";
export * from "../crawl/world.js";
export * from "../crawl/random.js";
export * from "../crawl/store.js";
export * from "../crawl/state.js";
export * from "../crawl/slots.js";
export * from "../http/request.js";
export * from "../http/idle-connections.js";
export * from "../http/proxy.js";
export { ProxyNetwork, type ProxyTlsOptions } from "../http/proxy-network.js";
