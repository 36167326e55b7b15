/**
 * The store under the crawl core: the seen set, the queue of URLs and what
 * becomes of each, behind one narrow interface, {@link CrawlStore}, which
 * every store keeps: in memory ({@link MemoryStore}, the default), in a local
 * directory (`StateStore`, the `state` option), or in Redis, shared by many
 * processes (`RedisFrontier`, `coroutine-crawler/redis`).
 *
 * @module
 */
import { BlockFifo } from "./block-fifo.js";
import type { ResolvedCrawlOptions } from "./options.js";
import type { CrawlItem } from "./page-hook.js";
import type { FetchStatistic } from "./records.js";
import type { RobotsRules } from "./robots.js";
import type { QueueItem, Visit } from "./visit.js";

/**
 * What the crawl core ({@link CrawlCore}) asks of the place its URLs live:
 * the one store interface, kept by every store. Every call is synchronous:
 * the core never waits. A store that talks to a server (a frontier, such as
 * `RedisFrontier`) answers from what it holds here and does its writes in
 * the background: it hands out only URLs it already has (`take`), says while
 * more may come (`pending`), reports a record once it is stored (`finish`'s
 * callback), and has a `whenDone()` for the stage to await before the
 * summary. A store in this process has no `whenDone()`: each of its calls is
 * done when it returns.
 *
 * The one step that must not interleave, checking whether a URL was seen
 * and queueing it if not, is one call (`add`, `finish`): in memory it runs
 * with nothing else in between; in Redis it is one script.
 */
export interface CrawlStore {
  /**
   * The URLs this process knows to be seen, which `visit()` leaves out of
   * the URLs it names: every one, in memory; none, for a shared store, whose
   * `finish` checks each URL itself.
   */
  readonly seenUrls: ReadonlySet<string>;
  /**
   * Called once by the core, before anything else, with the options in force
   * and `stopCrawl`, which stops the crawl as the caller's signal does: for a
   * store that can fail (a server that stops answering), which then throws
   * its error from `summary()`. `roots` are the crawl's roots, normalized: a
   * store kept across runs checks it is the same crawl.
   */
  open?(options: ResolvedCrawlOptions, stopCrawl: () => void, roots: readonly string[]): void;
  /** Pages an earlier run of this crawl fetched and recorded here (a local state resumed), which `maxPages` counts; absent: none. */
  readonly resumed?: number;
  /** URLs queued here, for the trace's counters. */
  readonly size: number;
  /** Marks each item whose URL was never seen as seen, and queues it. */
  add(items: readonly QueueItem[]): void;
  /** The next queued URL that can be had now; undefined when none is here (yet). */
  take(): QueueItem | undefined;
  /**
   * Queues again, at the end, a URL taken before: its host's turn came, or a
   * `Retry-After` sent it back, holding its host back `holdMs` (a shared
   * store holds the host back for every process). It stays seen.
   */
  putBack(item: QueueItem, holdMs?: number): void;
  /**
   * Politeness shared by processes (optional; a store in one process has
   * none): the rules of the origin's `robots.txt` when another process read
   * them, else null, and then this process reads it.
   */
  robotsRules?(origin: string): RobotsRules | null;
  /** This process read the origin's `robots.txt`: a shared store keeps the rules for every process (optional). */
  robotsRead?(origin: string, rules: RobotsRules): void;
  /**
   * A URL's work is over: its record is stored, the URLs its visit names that
   * are still unseen are marked seen and queued, in one step; then `stored`
   * is called with the record as stored (its `numNewUrls` the URLs that were
   * really new), or null if it could not be stored. In memory, before
   * `finish` returns.
   */
  finish(item: QueueItem, visit: Visit, stored: (record: FetchStatistic | null) => void): void;
  /** A URL taken that this process will not fetch (the crawl stopped): it stays to do. */
  release(item: QueueItem): void;
  /**
   * An attempt at a request to `url` (a page, a `robots.txt`, a sitemap)
   * starts now. Optional: a store shared by processes counts its origin's
   * delay from here, the real start, rather than from when the URL was taken.
   */
  started?(url: string): void;
  /** Whether URLs may still come that `take()` cannot give now: another process's work, a write in flight. Never, in memory. */
  pending(): boolean;
  /**
   * For a store that is `pending()` (optional): the store calls `changed`
   * whenever `take()` may have something new, or `pending()` may have turned
   * false (URLs arrived, the crawl ended). The core then waits for it instead
   * of looking every few ms: its wait jobs for the store last up to
   * {@link STORE_IDLE_MS}, and end early through the job's `woken` signal.
   * Called once, by the core, after `open`.
   */
  onChange?(changed: () => void): void;
  /**
   * For a store that writes in the background (optional: a store whose
   * calls are done when they return has none, and `summary()` answers at
   * once): a promise that resolves once the store has written what it holds
   * and read what `summary()` reports (for a shared store, after the crawl's
   * end or `stop()`), or null when there is nothing to wait for. The one
   * thing a stage may have to await of a store: `await store.whenDone?.()`.
   */
  whenDone?(): Promise<void> | null;
  /** The crawl stops taking URLs here (`maxPages`, the signal): hand nothing more out. */
  stop(): void;
  /**
   * What the crawl result reports once the crawl is over (see
   * {@link StoreSummary}): ready once `whenDone()`, if the store has one, has resolved.
   *
   * @throws an error of the store's when it could not keep the crawl.
   */
  summary(recorded: number): StoreSummary;
}

/**
 * The longest a wait for a store that calls `onChange` lasts: a safety net,
 * as its news ends the wait sooner (in a stage that listens to `Job.woken`).
 */
export const STORE_IDLE_MS = 1_000;

/** What a store reports at the end of a crawl. */
export interface StoreSummary {
  /** Every URL ever queued (in the order first queued, in memory). */
  seen: string[];
  /** URLs seen that have no record: non-zero only when the crawl stopped early. */
  todo: number;
  /**
   * Every record of the crawl, when the store keeps them (a shared store:
   * every process's); null when the core's own list is all of them.
   */
  records: FetchStatistic[] | null;
  /** How many records the crawl has, when the store counts them; null when the core's own count is the count. */
  recorded: number | null;
  /**
   * Every item of the crawl (the page hook's, with their pages' URLs), when
   * the store keeps them (a `StateStore`: earlier runs' too); null or absent
   * when the core's own list is all of them.
   */
  items?: CrawlItem[] | null;
}

/**
 * The default store: the chapter's `seen_urls` set and its queue, in this
 * process's memory.
 *
 * @remarks The queue is a {@link BlockFifo} rather than an array shifted or
 * sliced: on a million pages, an array's compacting copies reached V8's old
 * generation in bursts (docs/benchmarks.md, "A million pages").
 */
export class MemoryStore implements CrawlStore {
  /** Every URL ever queued, in the order first queued. */
  readonly seenUrls = new Set<string>();
  private readonly queue = new BlockFifo<QueueItem>();
  private stopped = false;

  get size(): number {
    return this.queue.length;
  }

  add(items: readonly QueueItem[]): void {
    for (const item of items) {
      if (this.seenUrls.has(item.url)) continue;
      this.seenUrls.add(item.url);
      this.queue.push(item);
    }
  }

  take(): QueueItem | undefined {
    return this.stopped || this.queue.length === 0 ? undefined : this.queue.shift();
  }

  putBack(item: QueueItem): void {
    this.queue.push(item);
  }

  finish(_item: QueueItem, visit: Visit, stored: (record: FetchStatistic) => void): void {
    this.add(visit.next); // visit() left the seen URLs out, and nothing ran since: every one is new.
    stored(visit.record);
  }

  release(_item: QueueItem): void {
    // In memory it is simply left to do: it is seen and has no record.
  }

  pending(): boolean {
    return false;
  }

  stop(): void {
    this.stopped = true;
  }

  summary(recorded: number): StoreSummary {
    return { seen: [...this.seenUrls], todo: this.seenUrls.size - recorded, records: null, recorded: null };
  }
}

/**
 * The store interface's name when stage 3 took an asynchronous frontier
 * beside it: a frontier is now a {@link CrawlStore} (one that writes in the
 * background, such as `RedisFrontier`).
 *
 * @deprecated Use {@link CrawlStore}.
 */
export type Frontier = CrawlStore;

/**
 * What a frontier reported at the end of a crawl: a store's summary.
 *
 * @deprecated Use {@link StoreSummary}.
 */
export type FrontierSummary = StoreSummary;

/**
 * The adapter that put an asynchronous frontier under the crawl core. A
 * frontier is now a {@link CrawlStore} itself, given to the core as it is
 * (`RedisFrontier` keeps the interface directly), so nothing adapts it.
 *
 * @deprecated Use {@link CrawlStore}: pass the frontier itself where a `FrontierStore` of it went.
 */
export type FrontierStore = CrawlStore;
