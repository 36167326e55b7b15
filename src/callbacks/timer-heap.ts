/**
 * Timers for the callbacks event loop: {@link TimerHandle} and the heap that
 * keeps them in the order they are due.
 *
 * @module
 */

/**
 * One callback scheduled by `EventLoop.callLater`: what to call, and when.
 * `cancel()` it and the loop will skip it.
 *
 * @remarks asyncio's `TimerHandle` (Lib/asyncio/events.py); there the loop is
 * told about a cancellation so that it can clean its heap, and so here.
 */
export class TimerHandle {
  /** Set by {@link cancel}, or when the callback has run. */
  cancelled = false;

  constructor(
    /** When the callback is due, in `performance.now()` milliseconds. */
    readonly when: number,
    /** Tie-breaker: timers due at the same moment run in the order they were set. */
    readonly sequence: number,
    /** What to call when the timer is due. */
    readonly callback: () => void,
    private readonly heap: TimerHeap,
  ) {}

  /** Stops the callback from running. Cancelling twice, or after it ran, does nothing. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.heap.timerCancelled();
  }
}

/**
 * A binary min-heap of {@link TimerHandle}s ordered by due time, then by
 * the order they were added (Python's `heapq`, as asyncio's loop uses it).
 *
 * Cancelled timers stay in the heap until they reach the top, as in asyncio;
 * when they outnumber the live ones, the heap is rebuilt without them, so a
 * crawl that cancels one timeout per fetch does not grow it without end.
 */
export class TimerHeap {
  private readonly items: TimerHandle[] = [];
  private sequence = 0;
  private cancelledCount = 0;

  /** Timers neither cancelled nor run yet. */
  get size(): number {
    return this.items.length - this.cancelledCount;
  }

  /** Adds a timer calling `callback` at `when`, and returns its handle. */
  push(when: number, callback: () => void): TimerHandle {
    const timer = new TimerHandle(when, this.sequence++, callback, this);
    this.items.push(timer);
    this.siftUp(this.items.length - 1);
    return timer;
  }

  /** The earliest live timer, or undefined; cancelled timers at the top are dropped on the way. */
  peek(): TimerHandle | undefined {
    let top: TimerHandle | undefined = this.items[0];
    while (top !== undefined && top.cancelled) {
      this.removeTop();
      this.cancelledCount -= 1;
      top = this.items[0];
    }
    return top;
  }

  /** Removes and returns the earliest live timer if it is due at `now`, marking it as run. */
  popDue(now: number): TimerHandle | undefined {
    const top = this.peek();
    if (top === undefined || top.when > now) return undefined;
    this.removeTop();
    top.cancelled = true; // It runs now: a later cancel() must not count it again.
    return top;
  }

  /** Called by {@link TimerHandle.cancel}. */
  timerCancelled(): void {
    this.cancelledCount += 1;
    if (this.cancelledCount > 64 && this.cancelledCount * 2 > this.items.length) this.rebuild();
  }

  private rebuild(): void {
    const live = this.items.filter(isLive);
    this.items.length = 0;
    this.cancelledCount = 0;
    for (const timer of live) {
      this.items.push(timer);
      this.siftUp(this.items.length - 1);
    }
  }

  private removeTop(): void {
    const last = this.items.pop();
    if (last === undefined || this.items.length === 0) return;
    this.items[0] = last;
    this.siftDown(0);
  }

  private siftUp(index: number): void {
    const items = this.items;
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!before(items[child], items[parent])) break;
      this.swap(child, parent);
      child = parent;
    }
  }

  private siftDown(index: number): void {
    const items = this.items;
    let parent = index;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let first = parent;
      if (left < items.length && before(items[left], items[first])) first = left;
      if (right < items.length && before(items[right], items[first])) first = right;
      if (first === parent) return;
      this.swap(parent, first);
      parent = first;
    }
  }

  private swap(a: number, b: number): void {
    const items = this.items;
    [items[a], items[b]] = [items[b], items[a]];
  }
}

function isLive(timer: TimerHandle): boolean {
  return !timer.cancelled;
}

/** Whether timer `a` is due before timer `b`. */
function before(a: TimerHandle, b: TimerHandle): boolean {
  return a.when < b.when || (a.when === b.when && a.sequence < b.sequence);
}
