/**
 * A first-in, first-out list kept in fixed-size blocks: where every stage
 * keeps the URLs waiting to be fetched (stage 1's list of waiting URLs, the
 * queues of stages 2 and 3).
 *
 * @module
 */

/** Slots per block: 1,024 (8 KB). */
const BLOCK_SIZE = 1024;

/**
 * A first-in, first-out list that keeps its items in blocks of 1,024 slots,
 * oldest block first, as CPython's `collections.deque` (what asyncio's
 * `Queue` keeps its items in) keeps them in linked blocks of 64.
 *
 * `push` fills the last block and starts a new one when it is full; `shift`
 * takes from the front of the first block, clears the slot, and drops the
 * block once it is used up. Both are O(1), and no item is ever moved.
 *
 * @remarks Why not one array with a moving head, compacted with `slice()`
 * once its taken part is half of it, as the stages' queues had: for memory. At
 * a million URLs that array held up to 950,000 slots, and each time it grew
 * or was compacted, V8 made a new one of several MB in the old generation,
 * where the one it replaced stayed until the next full collection. V8 lets
 * the old generation grow the more, before it collects again, the faster
 * bytes arrive there, and these bursts made it wait until the heap was 2 to
 * 4 times what was alive. Blocks of 8 KB arrive as steadily as the URLs do:
 * with nothing else changed, stage 3's peak RSS on a million pages went
 * from 302 to 285–287 MB (docs/benchmarks.md, "A million pages, records not
 * kept (S5)").
 */
export class BlockFifo<T> {
  /** The blocks, oldest first: items are taken from the first and added to the last. Never empty. */
  private readonly blocks: Array<Array<T | undefined>> = [newBlock()];
  /** Where the oldest item is, in the first block. */
  private head = 0;
  /** Where the next item goes, in the last block. */
  private tail = 0;
  private count = 0;

  /** How many items are in the list. */
  get length(): number {
    return this.count;
  }

  /** Adds `item` at the end. */
  push(item: T): void {
    let last = this.blocks[this.blocks.length - 1] as Array<T | undefined>; // There is always a block.
    if (this.tail === BLOCK_SIZE) {
      last = newBlock();
      this.blocks.push(last);
      this.tail = 0;
    }
    last[this.tail] = item;
    this.tail += 1;
    this.count += 1;
  }

  /**
   * Removes and returns the oldest item.
   *
   * @throws RangeError when the list is empty.
   */
  shift(): T {
    if (this.count === 0) throw new RangeError("shift() from an empty BlockFifo");
    const first = this.blocks[0] as Array<T | undefined>; // There is always a block.
    const item = first[this.head] as T; // count > 0: the slot holds an item.
    first[this.head] = undefined; // Taken: the list no longer keeps it alive.
    this.head += 1;
    this.count -= 1;
    if (this.count === 0) {
      // Empty, so head and tail are in the one block left: start again at its front.
      this.head = 0;
      this.tail = 0;
    } else if (this.head === BLOCK_SIZE) {
      this.blocks.shift(); // Used up. A short array to shift: one block per 1,024 items.
      this.head = 0;
    }
    return item;
  }
}

/** An empty block, its slots made at once rather than grown one push at a time. */
function newBlock<T>(): Array<T | undefined> {
  return new Array<T | undefined>(BLOCK_SIZE);
}
