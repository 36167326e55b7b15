/**
 * What the three stages share: vocabulary and plumbing, nothing about
 * waiting. The options and the record of a fetch, the URL policy, link
 * extraction, HTTP/1.x bytes and body decoding, the {@link Selector} that
 * stands in for Python's `selectors` module, the error classes, the trace
 * events, and the text report.
 *
 * The chapter calls most of this "not of particular interest"; it is here so
 * that each stage's folder holds only its own way of waiting, and so that
 * the three stages make every decision (which links, which redirects, which
 * error name) the same way. Read `selector.ts` before stage 1; the rest as
 * the stages use it. docs/behaviour.md states the rules these modules
 * implement.
 *
 * @example
 * ```ts
 * import { report } from "./src/shared/index.js"; // in this repository
 * import { crawl } from "coroutine-crawler/asyncawait";
 * console.log(report(await crawl("http://127.0.0.1:8080/")));
 * ```
 * @module
 */
export * from "./options.js";
export * from "./fetch-statistic.js";
export * from "./errors.js";
export * from "./urls.js";
export * from "./links.js";
export * from "./http.js";
export * from "./body.js";
export * from "./page.js";
export * from "./selector.js";
export * from "./socket.js";
export * from "./timer-heap.js";
export * from "./trace.js";
export * from "./report.js";
