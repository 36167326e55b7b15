/**
 * Stage 3: the crawler in native async/await, the shape the chapter's last
 * section arrives at, on Node's own event loop.
 *
 * The engine's promise jobs now do what stage 2's hand-made Task and
 * EventLoop did: `await` suspends a worker as `yield*` suspended a
 * coroutine. What JavaScript lacks, this stage adds: a joinable queue
 * ({@link JoinableQueue}) that ends its idle workers with `shutdown()`, as
 * Python 3.13's does, and a pooled HTTP client ({@link HttpClient}) in place
 * of aiohttp, whose requests an `AbortSignal` cancels.
 *
 * Read `joinable-queue.ts` first, then `crawler.ts` (`crawl`, `work`, `fetch`:
 * the chapter's "Coordinating Coroutines"), then src/http/http-client.ts.
 * The crawl's decisions are the crawl core's (src/crawl/core.ts), shared
 * with stages 1 and 2.
 *
 * @example
 * import { crawl } from "coroutine-crawler/asyncawait";
 * const result = await crawl("http://127.0.0.1:8080/", { maxTasks: 100 });
 *
 * @module
 */
import type { CrawlResult } from "../crawl/records.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { CrawlStore } from "../crawl/store.js";
import { MemoryStore } from "../crawl/store.js";
import { Crawler } from "./crawler.js";

export { Crawler } from "./crawler.js";
export type { CrawlStore, Frontier, FrontierSummary } from "../crawl/store.js";
export type * from "../crawl/entry-types.js"; // The options and the records, as types: a notebook that imports one stage needs nothing else.
export { HttpClient, type HttpClientOptions } from "../http/http-client.js";
export { JoinableQueue, QueueShutDown } from "./joinable-queue.js";

/**
 * The in-memory store, by the name it had when stage 3 kept its own
 * promise-based one here: a crawl keeps its URLs in memory when given no
 * store, so it is needed only where a store must be named.
 *
 * @deprecated Leave the store out, or give a `MemoryStore` (`coroutine-crawler/shared`).
 */
export const MemoryFrontier = MemoryStore;
/** @deprecated Use `MemoryStore` (`coroutine-crawler/shared`). */
export type MemoryFrontier = MemoryStore;

/**
 * Crawls from `roots` with `maxTasks` async workers and resolves with every
 * record: `new Crawler(roots, options, frontier).crawl()`.
 *
 * @param frontier - The store to crawl with (see {@link CrawlStore}): in
 * memory unless given (a `RedisFrontier` from `coroutine-crawler/redis`
 * shares the queue and seen set with other processes), the crawl core's store.
 * @throws TypeError for a bad option or an unusable root (a rejection).
 * @example
 * const controller = new AbortController();
 * process.once("SIGINT", () => controller.abort());
 * const { records, todo } = await crawl("xkcd.com", { signal: controller.signal });
 * @see Chapter, "Coordinating Coroutines"
 */
export async function crawl(roots: string | string[], options?: CrawlOptions, frontier?: CrawlStore): Promise<CrawlResult> {
  return new Crawler(roots, options, frontier).crawl();
}
