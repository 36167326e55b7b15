/**
 * A store in memory that answers as a shared one does, a turn late: the
 * in-process yardstick of the store interface's background side (what
 * `RedisFrontier` does over the network), for the tests of the crawl core
 * and stage 3 on such a store. It took the place of stage 3's promise-based
 * `MemoryFrontier` when the two store interfaces became one.
 *
 * @module
 */
import type { ResolvedCrawlOptions } from "../../src/crawl/options.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { MemoryStore, type CrawlStore, type StoreSummary } from "../../src/crawl/store.js";
import type { QueueItem, Visit } from "../../src/crawl/visit.js";

/**
 * A {@link CrawlStore} over a `MemoryStore` whose every answer comes a turn
 * of the event loop later (`setImmediate`), as a server's would: `add` and
 * `finish` land then, `take()` hands out only URLs asked for at an earlier
 * call, at most `maxTasks` out at once, `finish` reports its record once
 * landed, with its `numNewUrls` the links really new (it names no URL seen
 * to `visit()`, and checks each link itself, as Redis does), and `pending()`
 * holds while anything is queued, out, or on its way. `whenDone()` resolves
 * once nothing is on its way.
 */
export class DeferredStore implements CrawlStore {
  /** None known here: `finish` checks each link, as a shared store does. */
  readonly seenUrls: ReadonlySet<string> = new Set<string>();
  /** Turns of the loop it waited for, counted: each a reply that came late. */
  turns = 0;
  private readonly memory = new MemoryStore();
  /** URLs taken from memory, a turn ago, and not handed out yet. */
  private readonly ready: QueueItem[] = [];
  /** URLs handed out and not finished, released or put back. */
  private out = 0;
  /** URLs asked for, whose answer has not come. */
  private asking = 0;
  /** Adds and finishes on their way. */
  private writing = 0;
  private stopped = false;
  private maxTasks = 1;

  open(options: ResolvedCrawlOptions): void {
    this.maxTasks = options.maxTasks;
  }

  get size(): number {
    return this.memory.size + this.ready.length;
  }

  add(items: readonly QueueItem[]): void {
    const { memory } = this;
    this.write(function added() { memory.add(items); });
  }

  take(): QueueItem | undefined {
    if (this.stopped) return undefined;
    const wanted = Math.min(this.maxTasks - this.out - this.ready.length - this.asking, this.memory.size);
    if (wanted > 0) { // Asks only for what memory holds: an ask for nothing would keep it pending.
      this.asking += wanted;
      const store = this;
      this.later(function answered() {
        store.asking -= wanted;
        for (let i = 0; i < wanted && !store.stopped; i++) {
          const item = store.memory.take();
          if (item === undefined) break;
          store.ready.push(item);
        }
      });
    }
    const item = this.ready.shift();
    if (item !== undefined) this.out += 1;
    return item;
  }

  putBack(item: QueueItem): void {
    this.out -= 1;
    this.memory.putBack(item);
  }

  finish(_item: QueueItem, visit: Visit, stored: (record: FetchStatistic | null) => void): void {
    this.out -= 1;
    const { memory } = this;
    this.write(function landed() {
      const before = memory.seenUrls.size;
      memory.add(visit.next);
      const added = memory.seenUrls.size - before;
      const { record } = visit;
      stored(record.nextUrl !== null || record.numNewUrls === added ? record : { ...record, numNewUrls: added }); // As Redis counts them.
    });
  }

  release(_item: QueueItem): void {
    this.out -= 1; // Seen, with no record: it stays to do.
  }

  pending(): boolean {
    return !this.stopped && (this.onItsWay() || this.memory.size > 0 || this.ready.length > 0 || this.out > 0);
  }

  whenDone(): Promise<void> {
    const store = this;
    return new Promise<void>(function whenQuiet(resolve) {
      (function look(): void {
        if (store.onItsWay() || store.pending()) setImmediate(look);
        else resolve();
      })();
    });
  }

  stop(): void {
    this.stopped = true; // The URLs ready here stay to do: seen, with no record.
  }

  summary(recorded: number): StoreSummary {
    return this.memory.summary(recorded);
  }

  private onItsWay(): boolean {
    return this.writing > 0 || this.asking > 0;
  }

  private write(land: () => void): void {
    this.writing += 1;
    const store = this;
    this.later(function written() {
      store.writing -= 1;
      land();
    });
  }

  /** Runs `answer` a turn of the event loop later. */
  private later(answer: () => void): void {
    const store = this;
    setImmediate(function reply() {
      store.turns += 1;
      answer();
    });
  }
}
