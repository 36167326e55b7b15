/**
 * A table of slots: items kept in an array that never shrinks, a freed slot
 * going to the next item added. Stage 2 keeps its pending Tasks here.
 *
 * @module
 */

/**
 * Items in numbered slots, each freed by number; what `add` returns is the
 * number to free it by.
 *
 * @remarks For memory alone. A Map or Set that lives as long as a crawl and
 * gains and loses an entry per request keeps, in each table it outgrows,
 * every item it held at that moment alive until a full collection; a slot
 * is simply cleared (docs/benchmarks.md, "Where the bytes went": stage 2's
 * pending Tasks, 942 → 599 bytes promoted a page). asyncio holds its pending
 * Tasks in a WeakSet; in JavaScript a set of WeakRefs changed nothing, since
 * a scavenge treats a WeakRef's target as alive.
 */
export class Slots<T> {
  private readonly items: Array<T | null> = [];
  private readonly free: number[] = [];

  /** Puts `item` in a free slot and returns the slot's number. */
  add(item: T): number {
    const slot = this.free.pop() ?? this.items.length;
    this.items[slot] = item;
    return slot;
  }

  /** Frees `slot` if `item` holds it. */
  remove(slot: number, item: T): void {
    if (this.items[slot] !== item) return;
    this.items[slot] = null;
    this.free.push(slot);
  }

  /** The items in the slots, in no set order. */
  list(): T[] {
    return this.items.filter((item): item is T => item !== null);
  }
}
