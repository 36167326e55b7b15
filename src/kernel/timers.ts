/**
 * Timers for the two hand-made event loops (stages 1 and 2): a handle per
 * callback, and a heap that keeps the one due first on top. The stand-in for
 * Python's `heapq` and asyncio's `TimerHandle`, in asyncio's shape.
 *
 * @module
 */

/**
 * One callback scheduled for a moment on the loop's clock, as
 * `EventLoop.callLater` returns it. `cancel()` only marks it: the heap skips
 * it when it comes to the top, and a loop that already took it out to run
 * checks the mark first, so a timer cancelled by another callback of the
 * same iteration does not run either.
 *
 * @see asyncio `TimerHandle` (Lib/asyncio/events.py)
 */
export class TimerHandle {
  private cancelledFlag = false;
  /** What to call: the callback, until `cancel()` drops it. */
  private fn: () => void;
  /** The heap it waits in; null once it was taken out (or never put in). */
  heap: TimerHeap | null = null;

  constructor(
    /** When it is due, in milliseconds on the loop's clock. */
    readonly when: number,
    /** Breaks ties: of two timers due at once, the one scheduled first runs first. */
    readonly sequence: number,
    callback: () => void,
  ) {
    this.fn = callback;
  }

  /**
   * What to call; once cancelled, a function that does nothing. `cancel()`
   * drops the callback, as asyncio's does, so a cancelled timer waiting in
   * the heap keeps nothing alive: a crawl cancels a timeout per fetch, and
   * each held its Fetcher (socket, parser, body) until the heap was rebuilt.
   */
  get callback(): () => void {
    return this.fn;
  }

  /** Whether `cancel()` was called. */
  cancelled(): boolean {
    return this.cancelledFlag;
  }

  /** Whether the timer still waits to run: neither run nor cancelled. */
  scheduled(): boolean {
    return this.heap !== null && !this.cancelledFlag;
  }

  /** Marks the timer cancelled; nothing happens if it already ran or was cancelled. */
  cancel(): void {
    if (this.cancelledFlag) return;
    this.cancelledFlag = true;
    this.fn = cancelledTimer;
    this.heap?.cancelledOne();
  }
}

/** What a cancelled timer calls instead of its callback: nothing. */
function cancelledTimer(): void {}

/**
 * The timers of one loop, the earliest on top: a binary heap ordered by
 * `when`, then `sequence`. A cancelled handle stays in until it reaches the
 * top, where `peek` and `popDue` drop it; `size` counts only live timers.
 *
 * @remarks asyncio also rebuilds its heap when more than half of it is
 * cancelled (`_run_once`); so does {@link TimerHeap.cancelledOne}, so a
 * crawl that cancels a timeout per fetch does not grow its heap.
 */
export class TimerHeap {
  private items: TimerHandle[] = [];
  private cancelledCount = 0;

  /** Timers still to run (cancelled ones are not counted). */
  get size(): number {
    return this.items.length - this.cancelledCount;
  }

  /** The live timer due first, or undefined when there is none. */
  peek(): TimerHandle | undefined {
    this.dropCancelledTop();
    return this.items[0];
  }

  /** Adds a timer. */
  push(handle: TimerHandle): void {
    handle.heap = this;
    const items = this.items;
    items.push(handle);
    let index = items.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(items[index], items[parent])) break;
      [items[index], items[parent]] = [items[parent], items[index]];
      index = parent;
    }
  }

  /** Takes out the live timer due first, if it is due at `now` (on the loop's clock). */
  popDue(now: number): TimerHandle | undefined {
    const top = this.peek();
    if (top === undefined || top.when > now) return undefined;
    this.popTop();
    return top;
  }

  /** Takes every timer out; their handles report not scheduled. */
  clear(): void {
    for (const handle of this.items) handle.heap = null;
    this.items = [];
    this.cancelledCount = 0;
  }

  /** Called by a handle of this heap when it is cancelled. */
  cancelledOne(): void {
    this.cancelledCount += 1;
    if (this.cancelledCount > 64 && this.cancelledCount * 2 > this.items.length) this.rebuild();
  }

  private dropCancelledTop(): void {
    while (this.items.length > 0 && this.items[0].cancelled()) {
      this.popTop();
      this.cancelledCount -= 1;
    }
  }

  /** Removes the top handle (heapq.heappop). */
  private popTop(): void {
    const items = this.items;
    const top = items[0];
    top.heap = null;
    const last = items.pop();
    if (last === undefined || last === top) return;
    items[0] = last;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < items.length && before(items[left], items[smallest])) smallest = left;
      if (right < items.length && before(items[right], items[smallest])) smallest = right;
      if (smallest === index) return;
      [items[index], items[smallest]] = [items[smallest], items[index]];
      index = smallest;
    }
  }

  /** Drops every cancelled handle and heapifies what is left (asyncio's clean-up). */
  private rebuild(): void {
    const live = this.items.filter((handle) => !handle.cancelled());
    for (const handle of this.items) if (handle.cancelled()) handle.heap = null;
    this.items = [];
    this.cancelledCount = 0;
    for (const handle of live) this.push(handle);
  }
}

/** Heap order: the earlier moment first, and of two at once, the one scheduled first. */
function before(a: TimerHandle, b: TimerHandle): boolean {
  return a.when < b.when || (a.when === b.when && a.sequence < b.sequence);
}
