/**
 * A FIFO queue whose `join()` waits until every item put in it has been
 * processed: asyncio's `Queue` with `task_done()` and `join()`, built on
 * promises because JavaScript has no joinable queue.
 *
 * @module
 */

/** One `get()` waiting for an item: how to wake it, and the signal that may cancel it. */
interface Getter<T> {
  resolve(item: T): void;
  reject(reason: unknown): void;
  signal: AbortSignal | null;
}

/** The getters parked with one signal, and the queue's one listener on it. */
interface SignalWatch<T> {
  getters: Set<Getter<T>>;
  onAbort: () => void;
}

/**
 * An unbounded FIFO queue that counts unfinished tasks, so a producer can
 * `await queue.join()` until the consumers have called `taskDone()` once for
 * every item ever put.
 *
 * Every `put` adds one to the count of unfinished tasks and every `taskDone`
 * takes one away; when the count reaches zero, the promise `join()` handed
 * out resolves. A `get` on an empty queue parks a getter; the next `put`
 * hands its item straight to the oldest getter, so no item is ever taken
 * twice and getters are served in the order they came.
 *
 * @remarks Unbounded like the chapter's `Queue()`, so `put()` never waits; it
 * exists so the crawler reads like the chapter's `yield from self.q.put(url)`.
 * asyncio cancels a waiting `get()` by throwing `CancelledError` into the
 * coroutine; nothing can throw into a suspended `async` function, so here
 * `get(signal)` rejects with `signal.reason` when its `AbortSignal` fires
 * (p-queue's pattern) and removes its getter, leaving nothing behind. The
 * queue listens once per signal, not once per `get()`: the crawler's workers
 * all share one signal, and `addEventListener` scans the listeners already
 * on the target, so 10,000 parked workers with a listener each made every
 * `get()` cost 10,000 steps (a fifth of stage 3's CPU in the C10K benchmark).
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue` (Lib/asyncio/queues.py)
 */
export class JoinableQueue<T> {
  /** Items waiting, oldest at `head`: an array with a moving head, so `get` is O(1). */
  private items: T[] = [];
  private head = 0;
  /** Parked `get()` calls, oldest first. A Set, so a cancelled one leaves in O(1). */
  private readonly getters = new Set<Getter<T>>();
  /** Each signal some parked getter was given, with those getters. */
  private readonly watches = new Map<AbortSignal, SignalWatch<T>>();
  /** Items put and not yet marked done (asyncio's `_unfinished_tasks`). */
  private unfinishedTasks = 0;
  /** The promise `join()` hands out while tasks are unfinished, and how to resolve it. */
  private finished: Promise<void> | null = null;
  private resolveFinished: (() => void) | null = null;

  /** Number of items waiting in the queue (asyncio's `qsize()`). */
  size(): number {
    return this.items.length - this.head;
  }

  /** Items put and not yet marked done with `taskDone()`: queued or being processed (asyncio's `_unfinished_tasks`). */
  unfinished(): number {
    return this.unfinishedTasks;
  }

  /** Adds an item. The queue is unbounded, so this never waits; it resolves at once. */
  async put(item: T): Promise<void> {
    this.putNowait(item);
  }

  /** Adds an item without waiting, and wakes the oldest waiting `get()` if there is one. */
  putNowait(item: T): void {
    this.unfinishedTasks += 1;
    const getter = this.oldestGetter();
    if (getter === null) {
      this.items.push(item);
      return;
    }
    this.forget(getter);
    getter.resolve(item);
  }

  /**
   * Removes and returns the oldest item, waiting for one if the queue is empty.
   *
   * @throws `signal.reason` (a rejection) when `signal` is already aborted or
   * aborts while waiting; the waiting getter is removed, so no item is lost to it.
   */
  get(signal?: AbortSignal): Promise<T> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.size() > 0) return Promise.resolve(this.take());
    return new Promise<T>((resolve, reject) => this.park({ resolve, reject, signal: signal ?? null }));
  }

  /**
   * Removes and returns the oldest item without waiting.
   *
   * @throws RangeError when the queue is empty (asyncio raises `QueueEmpty`).
   */
  getNowait(): T {
    if (this.size() === 0) throw new RangeError("getNowait() called on an empty queue");
    return this.take();
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

  /** Registers a getter until an item arrives or its signal aborts. */
  private park(getter: Getter<T>): void {
    this.getters.add(getter);
    const { signal } = getter;
    if (signal === null) return;
    const watch = this.watches.get(signal);
    if (watch !== undefined) {
      watch.getters.add(getter);
      return;
    }
    const queue = this;
    const watched: SignalWatch<T> = {
      getters: new Set([getter]),
      onAbort: function getsCancelled(): void {
        queue.cancelGetters(signal, watched);
      },
    };
    this.watches.set(signal, watched);
    signal.addEventListener("abort", watched.onAbort, { once: true });
  }

  /** The signal aborted: every getter parked with it rejects with its reason, oldest first. */
  private cancelGetters(signal: AbortSignal, watch: SignalWatch<T>): void {
    this.watches.delete(signal);
    for (const getter of watch.getters) {
      this.getters.delete(getter);
      getter.reject(signal.reason);
    }
  }

  private take(): T {
    const item = this.items[this.head]; // every caller checked size() > 0
    this.head += 1;
    if (this.head === this.items.length) {
      this.items.length = 0; // drained: start again at index 0, no allocation
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      // Drop a long consumed front once it is half the array: amortised O(1) per get.
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  private oldestGetter(): Getter<T> | null {
    for (const getter of this.getters) return getter;
    return null;
  }

  private forget(getter: Getter<T>): void {
    this.getters.delete(getter);
    if (getter.signal === null) return;
    const watch = this.watches.get(getter.signal);
    if (watch === undefined) return;
    watch.getters.delete(getter);
    if (watch.getters.size === 0) {
      // The last getter with this signal left: stop listening, so the signal does not keep the queue alive.
      this.watches.delete(getter.signal);
      getter.signal.removeEventListener("abort", watch.onAbort);
    }
  }
}
