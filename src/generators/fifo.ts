/**
 * A first-in, first-out list with O(1) `push` and `shift`.
 *
 * @module
 */

/**
 * The queue's storage: an array and the index of its head. `shift` moves the
 * index instead of the elements, and the array is compacted once the used
 * part is less than half of it.
 *
 * @remarks Python's `collections.deque`, which asyncio's Queue uses. A plain
 * `Array#shift` copies the rest of the array, at least for large arrays, and a
 * crawl's queue can hold many thousands of URLs.
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  /** How many items are in the list. */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds `item` at the tail. */
  push(item: T): void {
    this.items.push(item);
  }

  /**
   * Takes the item at the head.
   *
   * @throws RangeError if the list is empty.
   */
  shift(): T {
    if (this.head === this.items.length) throw new RangeError("shift() from an empty Fifo");
    const item = this.items[this.head];
    this.head += 1;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
