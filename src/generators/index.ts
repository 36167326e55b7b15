/** index.ts ↔ Lib/asyncio/__init__.py: stage 2, the crawler written with generator coroutines, driven by a
 * hand-made Future, Task and event loop.
 *
 * This is the chapter's second way to wait: a fetch is one generator
 * function that reads top to bottom, and every `yield*` is a place where it
 * pauses until a {@link Future} is done. A {@link Task} drives the generator:
 * it resumes it, takes the Future it yields, and resumes it again when that
 * Future is done. `yield*` plays Python's `yield from`, so coroutines call
 * coroutines (`fetch` → `request` → `read`) with ordinary-looking code, and
 * exceptions come back up that call chain with a useful stack. The state of
 * a fetch lives in its locals: no Fetcher class. The {@link EventLoop} is
 * the one from stage 1, grown up: ready callbacks, a heap of timers, and
 * the shared {@link shared!Selector} (`src/kernel/selector.ts`).
 *
 * The files follow asyncio's modules, each naming its CPython twin in its
 * first line. Read in this order: `futures.ts` (a result to wait for;
 * `yield*` on it), `tasks.ts` (the driver: step, wake up, cancel by throwing
 * in; then `sleep`, `gather`, `waitFor`), `events.ts` (which loop is running), `event-loop.ts` (iterations,
 * timers, how it lives inside Node's loop), `sockets.ts` (coroutines that
 * wait, and undo their registrations in `finally`; `request`), `queues.ts`,
 * then `crawler.ts` (workers, `join()`, then cancel). No
 * Promise, `async` or `await` is used in this stage, except in
 * {@link crawl} below, which hands the finished result to Promise-based
 * callers, and `Future.then`, the bridge that makes it possible.
 *
 * @see Chapter, "Coroutines" through "Coordinating Coroutines"
 * @module
 */
import type { CrawlResult } from "../crawl/records.js";
import type { CrawlOptions } from "../crawl/options.js";
import { EventLoop } from "./event-loop.js";
import { Crawler } from "./crawler.js";
import { Task } from "./tasks.js";

export { EventLoop, type ExceptionHandler } from "./event-loop.js";
export { getRunningLoop, runningLoopOrNull } from "./events.js";
export { Future, type Coroutine, type FutureState } from "./futures.js";
export { Task, allTasks, cancelAndWait, gather, sleep, waitDone, waitFor } from "./tasks.js";
export { JoinableQueue, QueueEmpty } from "./queues.js";
/** The first-in, first-out list stage 2's queue keeps its items in: `BlockFifo`, which every stage's queue now uses. */
export { BlockFifo as Fifo } from "../crawl/block-fifo.js";
export { attempt, connect, read, readAll, request, sendAll } from "./sockets.js";
export type { RequestOptions } from "../http/crawl-requests.js";
export { Crawler } from "./crawler.js";
export type * from "../crawl/entry-types.js"; // The options and the records, as types: a notebook that imports one stage needs nothing else.
export { TimerHandle, TimerHeap } from "../kernel/timers.js";

/**
 * Crawls from `roots` with the generator crawler and resolves with the
 * result: it makes an {@link EventLoop}, runs {@link Crawler.crawl} in it to
 * completion, closes the loop, and hands the result over. The only Promise
 * in this stage.
 *
 * @throws (rejects with) TypeError for an unusable root or a bad option.
 * @example
 * ```ts
 * import { crawl } from "coroutine-crawler/generators";
 * const result = await crawl("http://127.0.0.1:8080/", { maxTasks: 10 });
 * console.log(result.records.length, "pages");
 * ```
 */
export async function crawl(roots: string | string[], options?: CrawlOptions): Promise<CrawlResult> {
  const crawler = new Crawler(roots, options);
  const loop = new EventLoop();
  try {
    // The bridge out of stage 2: the crawl Task is a Future, and a Future is a thenable.
    return await loop.runUntilComplete(new Task(crawler.crawl(), loop, "crawl"));
  } finally {
    // The crawl Task's first done callback stopped the loop in the iteration that settled our await.
    loop.close();
  }
}
