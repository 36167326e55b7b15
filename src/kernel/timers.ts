/**
 * Timers for the two hand-made event loops (stages 1 and 2): handles, and the
 * binary heap that keeps the next one due on top. The stand-in for the part
 * of Python's `heapq` and asyncio's `TimerHandle` that `call_later` uses:
 * plumbing, not a way of waiting, so both loops share it.
 *
 * @module
 */

/** Something that can remove a timer it holds; the heap, seen from a handle. */
interface TimerOwner {
  remove(handle: TimerHandle): void;
}

/**
 * One callback scheduled for a moment on the loop's clock, as
 * `EventLoop.callLater` returns it. `cancel()` takes it out of the loop at
 * once, so a cancelled timer costs nothing and is not counted as pending.
 *
 * @see asyncio `TimerHandle` (Lib/asyncio/events.py)
 */
export class TimerHandle {
  /** Position in the heap's array, or -1 once it left the heap. */
  heapIndex = -1;
  private owner: TimerOwner | null = null;

  constructor(
    /** When it is due, in milliseconds on the loop's clock. */
    readonly when: number,
    /** Breaks ties: of two timers due at once, the one scheduled first runs first. */
    readonly sequence: number,
    /** What to call. */
    readonly callback: () => void,
  ) {}

  /** Whether the timer is still waiting in its loop. */
  scheduled(): boolean {
    return this.owner !== null;
  }

  /** Removes the timer from its loop; nothing happens if it already ran or was cancelled. */
  cancel(): void {
    if (this.owner !== null) this.owner.remove(this);
  }

  /** Called by the heap when the handle enters or leaves it. */
  attach(owner: TimerOwner | null): void {
    this.owner = owner;
  }
}

/**
 * A binary min-heap of {@link TimerHandle}s ordered by `(when, sequence)`:
 * `push`, `pop` and `remove` are O(log n), `peek` O(1). Each handle knows its
 * index, so cancelling a timer is a removal, not a scan.
 *
 * @remarks asyncio keeps cancelled handles in its `heapq` list and skips them
 * when they reach the top (cleaning up when over half are cancelled); with an
 * index per handle the heap can drop them at once, so `size` is exactly the
 * number of timers still to run.
 */
export class TimerHeap implements TimerOwner {
  private readonly items: TimerHandle[] = [];

  /** Timers still to run. */
  get size(): number {
    return this.items.length;
  }

  /** The timer due first, or undefined when there is none. */
  peek(): TimerHandle | undefined {
    return this.items[0];
  }

  /** Adds a timer. */
  push(handle: TimerHandle): void {
    handle.attach(this);
    handle.heapIndex = this.items.length;
    this.items.push(handle);
    this.siftUp(handle.heapIndex);
  }

  /** Takes out the timer due first, if it is due at `now` (on the loop's clock). */
  popDue(now: number): TimerHandle | undefined {
    const top = this.items[0];
    if (top === undefined || top.when > now) return undefined;
    this.remove(top);
    return top;
  }

  /** Takes out the timer due first. */
  pop(): TimerHandle | undefined {
    const top = this.items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  /** Takes `handle` out, wherever it is in the heap. */
  remove(handle: TimerHandle): void {
    const index = handle.heapIndex;
    if (this.items[index] !== handle) return;
    const last = this.items.pop();
    handle.heapIndex = -1;
    handle.attach(null);
    if (last === undefined || last === handle) return;
    // Move the last timer into the hole, then restore the order around it.
    this.items[index] = last;
    last.heapIndex = index;
    this.siftUp(index);
    this.siftDown(last.heapIndex);
  }

  /** Takes every timer out; their handles report not scheduled. */
  clear(): void {
    for (const handle of this.items) {
      handle.heapIndex = -1;
      handle.attach(null);
    }
    this.items.length = 0;
  }

  private siftUp(index: number): void {
    const items = this.items;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(items[index], items[parent])) break;
      this.swap(index, parent);
      index = parent;
    }
  }

  private siftDown(index: number): void {
    const items = this.items;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < items.length && before(items[left], items[smallest])) smallest = left;
      if (right < items.length && before(items[right], items[smallest])) smallest = right;
      if (smallest === index) return;
      this.swap(index, smallest);
      index = smallest;
    }
  }

  private swap(i: number, j: number): void {
    const items = this.items;
    const a = items[i];
    const b = items[j];
    items[i] = b;
    items[j] = a;
    b.heapIndex = i;
    a.heapIndex = j;
  }
}

/** Heap order: earlier `when` first, then earlier `sequence`. */
function before(a: TimerHandle, b: TimerHandle): boolean {
  return a.when < b.when || (a.when === b.when && a.sequence < b.sequence);
}
