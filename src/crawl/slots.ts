/**
 * A table of slots: items kept in an array that never shrinks, a freed slot
 * going to the next item added. Stage 2 keeps its pending Tasks in one, and
 * stage 1's Crawler its jobs out in a {@link SlotMap}.
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

/**
 * A map from keys to values kept in slots, as {@link Slots} keeps its items:
 * two arrays that never shrink, a freed slot going to the next entry set.
 * Stage 1's Crawler keeps its jobs out here, each with what runs for it.
 *
 * `set` and `delete` find a key by a scan (`lastIndexOf`) of the slots, so
 * the caller carries no slot number; the table is as big as the most entries
 * it held at once (`maxTasks` at most, in a crawl), and the scan is the
 * engine's own, a few microseconds at 10,000 entries.
 *
 * @remarks For memory, like {@link Slots}: a `Map` with an entry set and
 * deleted per job promoted about 1,000 more bytes a page than this table in
 * a 30,000-page stage 1 crawl (`--trace-gc-nvp`: 37-40 MB promoted against
 * 8-10 MB), the entries its outgrown tables held kept alive until a full
 * collection.
 */
export class SlotMap<K extends object, V> {
  private readonly keys: Array<K | null> = [];
  private readonly values: Array<V | null> = [];
  private readonly free: number[] = [];

  /** Sets `key` to `value`: in the slot it holds, or else in a free one. */
  set(key: K, value: V): void {
    let slot = this.keys.lastIndexOf(key);
    if (slot === -1) slot = this.free.pop() ?? this.keys.length;
    this.keys[slot] = key;
    this.values[slot] = value;
  }

  /** Frees the slot of `key`, if it is in the map. */
  delete(key: K): void {
    const slot = this.keys.lastIndexOf(key);
    if (slot === -1) return;
    this.keys[slot] = null;
    this.values[slot] = null;
    this.free.push(slot);
  }

  /** The entries, `[key, value]`, in no set order. */
  entries(): Array<[K, V]> {
    const entries: Array<[K, V]> = [];
    for (let slot = 0; slot < this.keys.length; slot++) {
      const key = this.keys[slot];
      if (key !== null && key !== undefined) entries.push([key, this.values[slot] as V]);
    }
    return entries;
  }
}
