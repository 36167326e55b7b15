/** queues.ts ↔ Lib/asyncio/queues.py: the joinable queue the crawler's workers share, built on
 * Futures. It keeps its items and waiting getters in a `BlockFifo` (src/crawl/block-fifo.ts),
 * as stage 3's queue does: asyncio's queue keeps them in a `collections.deque`.
 *
 * @module
 */
import { BlockFifo } from "../crawl/block-fifo.js";
import { getRunningLoop } from "./events.js";
import { Future, type Coroutine } from "./futures.js";

/** `getNowait()` on an empty queue (asyncio.QueueEmpty). */
export class QueueEmpty extends Error { override readonly name = "QueueEmpty"; }

/**
 * A FIFO queue of work that also counts unfinished work: every `put` adds
 * one, every `taskDone` takes one away, and `join` waits until the count is
 * zero. The crawler puts URLs in, its workers `get` them and call `taskDone`
 * when a URL is fully handled (including queueing its links), so `join`
 * returns exactly when the crawl is over.
 *
 * Waiting is done with Futures. A `get` on an empty queue makes a Future,
 * appends it to `getters` and waits on it; `putNowait` resolves the oldest
 * waiting one. `join` waits on the `joinFuture` that `taskDone` resolves when
 * the count drops to zero.
 *
 * @remarks The chapter's sketch makes one `_join_future` in the constructor
 * and resolves it whenever the count reaches zero: with a real Future, whose
 * result can be set once, a second time would throw. Here the join Future is
 * made by the first `join` while work is unfinished and dropped once
 * resolved, so the queue can be joined again after more work (asyncio uses an
 * Event for the same reason). This queue is unbounded: `put` never waits.
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue`
 */
export class JoinableQueue<T> {
  private readonly items = new BlockFifo<T>();
  /**
   * The Futures of the `get()` calls waiting for an item, oldest first
   * (asyncio's `_getters`). A cancelled `get()` leaves its Future here,
   * cancelled, until `wakeNextGetter` skips past it.
   *
   * @remarks Protected so that the reference shows it.
   */
  protected readonly getters = new BlockFifo<Future<void>>();
  private unfinished = 0;
  /**
   * The one Future every `join()` waits on while work is unfinished, or null.
   * The first `join()` makes it; `taskDone()` resolves it and drops it when
   * the count reaches zero, so the next `join()` makes a fresh one (a Future
   * is resolved only once). Joiners share it: that is why cancelling a
   * {@link Task} leaves the Future it waits on alone.
   *
   * @remarks asyncio's `join()` waits on an `Event` (`_finished`) instead;
   * the chapter's sketch makes one `_join_future` for the queue's whole life.
   * Protected so that the reference shows it.
   * @see docs/guide-generators.md, "5. Coordination"; docs/differences.md, "Queues"
   */
  protected joinFuture: Future<void> | null = null;

  /** Items waiting in the queue. */
  qsize(): number { return this.items.length; }

  /** Whether no item is waiting. */
  empty(): boolean { return this.items.length === 0; }

  /** Items put and not yet marked done with `taskDone()`: queued or being worked on. */
  get unfinishedTasks(): number { return this.unfinished; }

  /**
   * Puts `item` in the queue. The queue is unbounded, so this never waits; it
   * is a coroutine so code can `yield*` it like asyncio's `put`.
   */
  // biome-ignore lint/correctness/useYield: never waits (unbounded), yet a coroutine so that `yield* queue.put(x)` reads as asyncio's `await queue.put(x)`.
  *put(item: T): Coroutine<void> { this.putNowait(item); }

  /** Puts `item` in the queue, counts one more unfinished task, and wakes the oldest waiting `get`. */
  putNowait(item: T): void {
    this.items.push(item);
    this.unfinished += 1;
    this.wakeNextGetter();
  }

  /**
   * Takes the item at the head of the queue, waiting for one if it is empty.
   *
   * @remarks Cancelled while waiting, its Future stays in `getters`, cancelled,
   * until a `putNowait` skips past it (asyncio removes it at once; see
   * docs/differences.md). If it had already been handed an item (its Future resolved), it hands the
   * wake-up on to the next getter, so the item is not stranded; if not, it
   * wakes nobody, so the getters keep their first-come order (asyncio
   * `Queue.get`).
   */
  *get(): Coroutine<T> {
    while (this.empty()) {
      const getter = new Future<void>(getRunningLoop(), "get");
      this.getters.push(getter);
      try {
        yield* getter; // Paused here until putNowait() wakes us (where idle workers wait).
      } catch (error) {
        // cancel() is false if putNowait() had already handed us an item: pass it on. Either way, wakeNextGetter skips us now.
        if (!getter.cancel() && !this.empty()) this.wakeNextGetter();
        throw error;
      }
    }
    return this.getNowait();
  }

  /**
   * Takes the item at the head of the queue.
   *
   * @throws {@link QueueEmpty} if there is none.
   */
  getNowait(): T {
    if (this.empty()) throw new QueueEmpty("The queue is empty");
    return this.items.shift();
  }

  /**
   * Marks one item taken with `get` as fully handled. When no unfinished item
   * is left, the `join` waiting resumes.
   *
   * @throws RangeError if called more times than items were put.
   */
  taskDone(): void {
    if (this.unfinished <= 0) throw new RangeError("taskDone() called too many times");
    this.unfinished -= 1;
    if (this.unfinished > 0) return;
    this.joinFuture?.setResult(undefined); // Resume the join() waiting, if any.
    this.joinFuture = null;
  }

  /** Waits until every item put has been marked done with `taskDone()`. */
  *join(): Coroutine<void> {
    if (this.unfinished === 0) return;
    this.joinFuture ??= new Future<void>(getRunningLoop(), "join");
    yield* this.joinFuture;
  }

  /**
   * Wakes the oldest `get()` still waiting, by resolving its Future: its
   * Task steps in the next iteration, finds the queue not empty and takes
   * the item at the head. Cancelled getters on the way are dropped.
   * `putNowait` calls it for each item; a `get()` cancelled just after being
   * woken calls it to pass the wake-up on.
   *
   * @remarks As asyncio's `_wakeup_next`, it only wakes: the item stays in
   * the queue until the woken Task runs (stage 3's queue hands the item over
   * instead). Protected so that the reference shows it.
   * @see asyncio `Queue._wakeup_next`; docs/guide-generators.md, "5. Coordination"
   */
  protected wakeNextGetter(): void {
    while (this.getters.length > 0) {
      const getter = this.getters.shift();
      if (!getter.done()) return getter.setResult(undefined);
    }
  }
}
