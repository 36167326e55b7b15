/**
 * The frontier: where stage 3's workers take URLs from and hand back what
 * they found. The chapter's `Queue` and `seen_urls` set, behind one small
 * interface, so that the same crawler runs on the in-memory queue (the
 * default) or on a queue shared by many processes (`RedisFrontier`,
 * `coroutine-crawler/redis`).
 *
 * @module
 */
import type { FetchStatistic } from "../crawl/records.js";
import type { QueueItem, Visit } from "../crawl/visit.js";
import { JoinableQueue } from "./joinable-queue.js";

/**
 * What a stage 3 crawler asks of its queue. Every URL taken is, until it is
 * finished or released, **unfinished**: `join()` waits for it.
 *
 * The one step that must not be interleaved, checking whether a URL was
 * seen and queueing it if not, is one call here (`add`, `finish`): in
 * memory it runs with no `await` inside, so no other worker runs meanwhile;
 * in Redis it is one script, which the server runs alone.
 */
export interface Frontier {
  /**
   * The URLs this process knows to be seen, which `visit()` leaves out of the
   * URLs it names: every one, in memory; none, for a shared frontier, whose
   * `finish()` checks each URL on the server.
   */
  readonly seenUrls: ReadonlySet<string>;
  /** Queues each item whose URL was never seen, marking it seen in the same step; resolves with how many were new. */
  add(items: readonly QueueItem[]): Promise<number>;
  /**
   * The next URL to fetch, waiting while none is queued.
   *
   * @throws QueueShutDown (a rejection) once the frontier is shut down.
   */
  take(): Promise<QueueItem>;
  /**
   * A URL taken and not yet fetched goes back to be taken again (its host's
   * turn came, or a `Retry-After` put it back), still unfinished: at the end
   * of the queue in memory; first, and in this process, for a shared
   * frontier, where it stays leased.
   */
  putBack(item: QueueItem): void;
  /**
   * A URL's work is over: its record is stored, the URLs its visit found
   * that are still unseen are marked seen and queued, and it is no longer
   * unfinished, all in one step. Resolves with the record as stored (its
   * `numNewUrls` the URLs that were really new), or null if it could not be
   * stored (a shared frontier that stopped answering).
   */
  finish(item: QueueItem, visit: Visit): Promise<FetchStatistic | null>;
  /**
   * A URL taken that this process will not fetch (the crawl stopped): it is
   * no longer unfinished here. In memory it stays `todo`; a shared frontier
   * hands it back for another process, or a later run, to take.
   */
  release(item: QueueItem): void;
  /**
   * Resolves when the crawl is over: nothing queued and nothing unfinished
   * (in every process, for a shared frontier), or, after `shutdown(true)`,
   * when this process's URLs are all finished or released.
   *
   * @throws FrontierError (a rejection) when a shared frontier stops answering.
   */
  join(): Promise<void>;
  /**
   * Shuts the frontier down for this process: every `take()` waiting, and
   * every later one, rejects with `QueueShutDown`. With `immediate`, the
   * URLs queued here are dropped (in memory they stay `todo`; a shared
   * frontier leaves them queued for others).
   */
  shutdown(immediate?: boolean): void;
  /** Whether `shutdown()` was called. */
  isShutdown(): boolean;
  /** URLs queued here, and URLs unfinished here (queued, waiting or being fetched), for the trace messages. */
  counters(): { queued: number; unfinished: number };
  /** What the crawl result reports once the crawl is over (see {@link FrontierSummary}). */
  summary(keepRecords: boolean): Promise<FrontierSummary>;
}

/** What a frontier reports at the end of a crawl. */
export interface FrontierSummary {
  /** Every URL ever queued (in the order first queued, in memory). */
  seen: string[];
  /** URLs seen that have no record: non-zero only when the crawl stopped early. */
  todo: number;
  /**
   * Every record of the crawl, when the frontier stores them (a shared
   * frontier: every process's); null when the crawler's own list is all of
   * them (in memory), or when `keepRecords` is false.
   */
  records: FetchStatistic[] | null;
  /** How many records the crawl has, when the frontier counts them; null when the crawler's own count is the count. */
  recorded: number | null;
}

/**
 * The default frontier: the chapter's queue and `seen_urls` set in this
 * process's memory, a {@link JoinableQueue} and a `Set`, used as they are.
 */
export class MemoryFrontier implements Frontier {
  /** The URLs ever queued: `visit()` reads it to leave seen links out. */
  readonly seenUrls = new Set<string>();
  private readonly q = new JoinableQueue<QueueItem>();
  private finished = 0;

  async add(items: readonly QueueItem[]): Promise<number> {
    return this.queueUnseen(items);
  }

  take(): Promise<QueueItem> {
    return this.q.get();
  }

  putBack(item: QueueItem): void {
    this.q.putNowait(item); // Back in the queue for any worker,
    this.q.taskDone(); // and done as the item that was taken.
  }

  async finish(_item: QueueItem, visit: Visit): Promise<FetchStatistic> {
    this.queueUnseen(visit.next); // visit() left seen URLs out, and nothing ran since: every one is new.
    this.finished += 1;
    this.q.taskDone();
    return visit.record;
  }

  release(_item: QueueItem): void {
    this.q.taskDone();
  }

  join(): Promise<void> {
    return this.q.join();
  }

  shutdown(immediate = false): void {
    this.q.shutdown(immediate);
  }

  isShutdown(): boolean {
    return this.q.isShutdown();
  }

  counters(): { queued: number; unfinished: number } {
    return { queued: this.q.size(), unfinished: this.q.unfinished() };
  }

  async summary(_keepRecords: boolean): Promise<FrontierSummary> {
    return { seen: [...this.seenUrls], todo: this.seenUrls.size - this.finished, records: null, recorded: null };
  }

  /** Marks each unseen URL seen and queues it (after a shutdown it stays `todo`); returns how many were new. */
  private queueUnseen(items: readonly QueueItem[]): number {
    let added = 0;
    for (const item of items) {
      if (this.seenUrls.has(item.url)) continue;
      this.seenUrls.add(item.url);
      added += 1;
      if (!this.q.isShutdown()) this.q.putNowait(item);
    }
    return added;
  }
}
