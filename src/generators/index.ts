/**
 * Stage 2: the crawler written with generator coroutines, driven by a
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
 * Read in this order: `future.ts` (a result to wait for; `yield*` on it),
 * `task.ts` (the driver: step, wake up, cancel by throwing in),
 * `event-loop.ts` (iterations, timers, how it lives inside Node's loop),
 * `sockets.ts` and `sleep.ts` (coroutines that wait, and undo their
 * registrations in `finally`), `wait-for.ts`, `joinable-queue.ts`, then
 * `request.ts` and `crawler.ts` (workers, `join()`, then cancel). No
 * Promise, `async` or `await` is used in this stage, except in
 * {@link crawl} below, which hands the finished result to Promise-based
 * callers, and `Future.then`, the bridge that makes it possible.
 *
 * @see Chapter, "Coroutines" through "Coordinating Coroutines"
 * @module
 */
import type { CrawlResult } from "../crawl/records.js";
import type { CrawlOptions } from "../crawl/options.js";
import { Crawler } from "./crawler.js";
import { EventLoop } from "./event-loop.js";
import { Task } from "./task.js";

export { Crawler } from "./crawler.js";
export { EventLoop } from "./event-loop.js";
export { Fifo } from "./fifo.js";
export { Future } from "./future.js";
export type { Coroutine, FutureState } from "./future.js";
export { gather } from "./gather.js";
export { JoinableQueue, QueueEmpty } from "./joinable-queue.js";
export { request } from "./request.js";
export type { RequestStep } from "./request.js";
export { getRunningLoop, runningLoopOrNull } from "./running-loop.js";
export { sleep } from "./sleep.js";
export { connect, read, readAll, sendAll } from "./sockets.js";
export { Task } from "./task.js";
export { TimerHandle, TimerHeap } from "../kernel/timers.js";
export { waitFor } from "./wait-for.js";

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
    // The stop callback runs in the same iteration that resolves our await; let it finish.
    if (loop.isRunning()) loop.stop();
    closeWhenStopped(loop);
  }
}

/** Closes the loop once `runForever` has returned (from a later Node macrotask, if it has not yet). */
function closeWhenStopped(loop: EventLoop): void {
  if (!loop.isRunning()) loop.close();
  else setImmediate(closeWhenStopped, loop);
}
