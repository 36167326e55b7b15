/**
 * Stage 1: the crawler written with callbacks, on a hand-made event loop.
 *
 * This is the chapter's first way to wait for many sockets at once: each
 * socket is non-blocking, a {@link shared!Selector} (`src/kernel/selector.ts`) says
 * which ones are ready, and the {@link EventLoop} calls the callback that was
 * registered for each. A fetch is a chain of callbacks (`fetch` → `connected`
 * → `readResponse`) and its state lives on a {@link Fetcher} object, because
 * no function frame survives between two callbacks. An exception in a
 * callback surfaces in the loop with a stack that no longer shows who
 * started the fetch: stack ripping.
 *
 * Read in this order: `src/kernel/selector.ts` (readiness from socket
 * events) and `src/kernel/socket.ts` (`connect`, `send`, `recv`), `event-loop.ts` (select, dispatch, timers), `fetcher.ts` (the
 * callback chain, each link catching its own errors), `crawler.ts` (Fetchers
 * started for the jobs the crawl core hands out, src/crawl/core.ts, which keeps
 * the URLs and the records and says when the crawl is over). No
 * Promise, `async` or generator is used in the crawl; {@link crawl} wraps the
 * finished result in the stage's only Promise, for callers.
 *
 * @see Chapter, "The Traditional Approach: Callbacks" and "Programming With Callbacks"
 * @module
 */
import type { CrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { Crawler } from "./crawler.js";

export { Crawler } from "./crawler.js";
export type * from "../crawl/entry-types.js"; // The options and the records, as types: a notebook that imports one stage needs nothing else.
export { EventLoop, type ExceptionSource, type IoCallback } from "./event-loop.js";
export { Fetcher, type FetcherOptions, type FetchOutcome } from "./fetcher.js";
export { TimerHandle, TimerHeap } from "../kernel/timers.js";

/**
 * Crawls from `roots` with the callbacks crawler and resolves with the
 * result: a Promise adapter around {@link Crawler.crawl}, the only Promise
 * in this stage.
 *
 * @throws (rejects with) TypeError for an unusable root or a bad option.
 * @example
 * ```ts
 * import { crawl } from "coroutine-crawler/callbacks";
 * const result = await crawl("http://127.0.0.1:8080/", { maxTasks: 10 });
 * console.log(result.records.length, "pages");
 * ```
 */
export function crawl(roots: string | string[], options?: CrawlOptions): Promise<CrawlResult> {
  return new Promise<CrawlResult>(function startCrawl(resolve, reject) {
    new Crawler(roots, options).crawl(resolve, reject);
  });
}
