/**
 * A FIFO queue whose `join()` waits until every item put in it has been
 * processed, and whose `shutdown()` ends the workers waiting on it:
 * asyncio's `Queue` (Python 3.13), built on promises because JavaScript has
 * no joinable queue.
 *
 * @module
 */
import { BlockFifo } from "../crawl/block-fifo.js";

/** `put()` on a queue that was shut down, or `get()` on one that is also empty (asyncio.QueueShutDown). */
export class QueueShutDown extends Error {
  override readonly name = "QueueShutDown";
  constructor(message = "the queue was shut down") {
    super(message);
  }
}

/**
 * An unbounded FIFO queue that counts unfinished tasks, so a producer can
 * `await queue.join()` until the consumers have called `taskDone()` once for
 * every item ever put, and then `shutdown()` it to send the consumers home.
 *
 * Every `put` adds one to the count of unfinished tasks and every `taskDone`
 * takes one away; when the count reaches zero, the promise `join()` handed
 * out resolves. A `get` on an empty queue parks: it hands out a promise and
 * keeps how to settle it in `getters`. The next `put` resolves the oldest
 * parked `get` with its item, so no item is ever taken twice and getters are
 * served in the order they came. `shutdown()` rejects every parked `get`
 * with {@link QueueShutDown}: a `get` only parks on an empty queue.
 *
 * @remarks Unbounded like the chapter's `Queue()`, so `put()` never waits; it
 * exists so the crawler reads like the chapter's `yield from self.q.put(url)`.
 * The chapter's crawler ends its idle workers with `w.cancel()`, which throws
 * `CancelledError` into each one where it is paused. Nothing can throw into a
 * suspended `async` function, so here the queue does it: a parked `get()` is
 * rejected with `QueueShutDown`, as in Python 3.13, where `Queue.shutdown()`
 * was added for this very job. asyncio wakes a parked getter, which takes
 * the oldest item when its Task next runs; here `put` hands the item over at
 * once, since the worker resumes a promise job later anyway (and parked
 * `get()`s stay small: `npm run bench` measured 0.71 KB of heap per idle
 * crawler worker, against 1.05 KB for a `get()` that re-checks in an async loop).
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue.join`, `Queue.shutdown` (Lib/asyncio/queues.py)
 */
export class JoinableQueue<T> {
  /** Items waiting, oldest first (asyncio's `_queue`, a deque). */
  private readonly items = new BlockFifo<T>();
  /**
   * How to settle each parked `get()`, oldest first (asyncio's `_getters`):
   * `putNowait` resolves the oldest with its item, `shutdown()` rejects them
   * all with {@link QueueShutDown}. A `get()` parks only on an empty queue.
   */
  private readonly getters: Array<{ resolve(item: T): void; reject(reason: QueueShutDown): void }> = [];
  /** Items put and not yet marked done (asyncio's `_unfinished_tasks`). */
  private unfinishedTasks = 0;
  /**
   * The one promise every `join()` gets while tasks are unfinished, or null:
   * the first `join()` makes it, and `taskDone()` resolves it (through
   * `resolveFinished`) and drops it when the count reaches zero, so a later
   * `join()` waits for later work.
   *
   * @remarks asyncio's `join()` waits on an `Event` (`_finished`); stage 2's
   * queue keeps one Future the same way. Protected so that the reference
   * shows it.
   * @see docs/guide-asyncawait.md, "1. The queue"; docs/differences.md, "Queues"
   */
  protected finished: Promise<void> | null = null;
  /** Resolves `finished`. */
  private resolveFinished: (() => void) | null = null;
  /** Set by `shutdown()` (asyncio's `_is_shutdown`). */
  private closed = false;

  /** Number of items waiting in the queue (asyncio's `qsize()`). */
  size(): number {
    return this.items.length;
  }

  /** Items put and not yet marked done with `taskDone()`: queued or being processed (asyncio's `_unfinished_tasks`). */
  unfinished(): number {
    return this.unfinishedTasks;
  }

  /** Whether `shutdown()` was called. */
  isShutdown(): boolean {
    return this.closed;
  }

  /**
   * Adds an item. The queue is unbounded, so this never waits; it resolves at once.
   *
   * @throws QueueShutDown (a rejection) once the queue was shut down.
   */
  async put(item: T): Promise<void> {
    this.putNowait(item);
  }

  /**
   * Adds an item without waiting: hands it to the oldest parked `get()` if
   * there is one, else queues it.
   *
   * @throws QueueShutDown once the queue was shut down.
   */
  putNowait(item: T): void {
    if (this.closed) throw new QueueShutDown();
    this.unfinishedTasks += 1;
    const getter = this.getters.shift();
    if (getter === undefined) this.items.push(item);
    else getter.resolve(item);
  }

  /**
   * Removes and returns the oldest item, waiting for one if the queue is empty.
   *
   * @throws QueueShutDown (a rejection) once the queue was shut down and is
   * empty: at once, or when `shutdown()` finds this `get()` waiting.
   */
  get(): Promise<T> {
    if (this.size() > 0) return Promise.resolve(this.take());
    if (this.closed) return Promise.reject(new QueueShutDown());
    const { getters } = this;
    return new Promise<T>(function waitForItem(resolve, reject) {
      getters.push({ resolve, reject });
    });
  }

  /**
   * Removes and returns the oldest item without waiting.
   *
   * @throws RangeError when the queue is empty (asyncio raises `QueueEmpty`),
   * QueueShutDown when it is empty and shut down.
   */
  getNowait(): T {
    if (this.size() > 0) return this.take();
    if (this.closed) throw new QueueShutDown();
    throw new RangeError("getNowait() called on an empty queue");
  }

  /**
   * Marks one item as processed. A consumer calls it once per item it got,
   * after finishing with it; when every item put has been marked, `join()` resolves.
   *
   * @throws RangeError when called more times than items were put.
   */
  taskDone(): void {
    if (this.unfinishedTasks <= 0) throw new RangeError("taskDone() called too many times");
    this.unfinishedTasks -= 1;
    if (this.unfinishedTasks === 0 && this.resolveFinished !== null) {
      const resolve = this.resolveFinished;
      this.finished = null;
      this.resolveFinished = null;
      resolve();
    }
  }

  /** Resolves once every item put so far (and any put meanwhile) has been marked done. */
  join(): Promise<void> {
    if (this.unfinishedTasks === 0) return Promise.resolve();
    this.finished ??= new Promise<void>((resolve) => {
      this.resolveFinished = resolve;
    });
    return this.finished;
  }

  /**
   * Shuts the queue down: `put()` throws {@link QueueShutDown} from now on,
   * and `get()` does once the queue is empty, starting with every parked
   * `get()`. A second call can still make it immediate.
   *
   * @param immediate - Also drop the items waiting, marking each done (so
   * `join()` waits only for the items being processed), and make `get()`
   * throw at once.
   */
  shutdown(immediate = false): void {
    this.closed = true;
    if (immediate) {
      while (this.size() > 0) {
        this.take();
        this.taskDone();
      }
    }
    const shutDown = new QueueShutDown(); // One error for every parked getter: 10,000 of them at C10K.
    for (const getter of this.getters.splice(0)) getter.reject(shutDown);
  }

  /**
   * Removes and returns the oldest item, for `get()`, `getNowait()` and
   * `shutdown(true)`, which have checked that there is one.
   *
   * @remarks asyncio's `_get()` is `popleft()` on a deque, which JavaScript
   * lacks. The items are in a `BlockFifo` (src/crawl/block-fifo.ts), a
   * list in blocks of 1,024 whose `shift()` moves no item, where
   * `Array#shift` copies the whole array (100,000 puts and gets took 5 s
   * with 100,000 items queued, 9 ms with 1,000). Protected so that the
   * reference shows it.
   * @see asyncio `Queue._get`
   */
  protected take(): T {
    return this.items.shift();
  }
}
