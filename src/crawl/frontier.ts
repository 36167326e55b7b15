/**
 * A frontier: a queue and seen set that answer with promises, as one kept in
 * Redis must, and the {@link FrontierStore} that puts one under the crawl
 * core, whose store answers at once.
 *
 * @module
 */
import { BlockFifo } from "./block-fifo.js";
import type { FetchStatistic } from "./records.js";
import type { ResolvedCrawlOptions } from "./options.js";
import type { RobotsRules } from "./robots.js";
import type { CrawlStore, StoreSummary } from "./store.js";
import type { QueueItem, Visit } from "./visit.js";

/**
 * An asynchronous queue and seen set, such as one shared by many processes
 * in Redis (`RedisFrontier`), which a {@link FrontierStore} puts under the
 * crawl core. Every URL taken is, until it is
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
   * turn came, or a `Retry-After` put it back, holding its host back
   * `holdMs`), still unfinished: at the end of the queue in memory; first,
   * and in this process, for a shared frontier, where it stays leased and
   * the hold is kept for every process.
   */
  putBack(item: QueueItem, holdMs?: number): void;
  /**
   * The crawl starts in this process, with these options and roots (as the
   * crawl core resolved them): a shared frontier records what the crawl is
   * the first time, and fails (see `join()`) when a process joins it with
   * other roots or options, which would mix two crawls. Optional.
   */
  begin?(options: ResolvedCrawlOptions, roots: readonly string[]): void;
  /** See {@link CrawlStore.robotsRules}: rules another process read, or null. Optional. */
  robotsRules?(origin: string): RobotsRules | null;
  /** See {@link CrawlStore.robotsRead}: this process read them; kept for every process. Optional. */
  robotsRead?(origin: string, rules: RobotsRules): void;
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
  /**
   * Every URL ever queued (in the order first queued, in memory); empty for a
   * shared frontier when `keepRecords` is false: the URLs stay on the server,
   * and `todo` and `recorded` count them.
   */
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
 * A {@link Frontier} as the crawl core's store: the core asks and is
 * answered at once from what is here, while the frontier's promises settle
 * in the background. It keeps at most `maxTasks` URLs taken from the
 * frontier (being fetched, or here to be handed out: a shared frontier
 * leases each to this process), asks for more as they finish,
 * stores each record with the frontier and reports it once stored, and says
 * more may come (`pending`) until the frontier's `join()` resolves: so the
 * crawl ends when the frontier says so, in every process. `whenDone()`
 * resolves once the frontier's summary has been read.
 *
 * @remarks Nothing here waits: each promise gets a callback that updates
 * this object, and the core looks again on its next call (it hands out
 * short waits while `pending()` and nothing is here).
 */
export class FrontierStore implements CrawlStore {
  readonly seenUrls: ReadonlySet<string>;
  /** URLs the frontier has given us, not handed out yet. */
  private readonly ready = new BlockFifo<QueueItem>();
  /** `take()` calls out, and URLs handed out and not finished, released or put back. */
  private asking = 0;
  private held = 0;
  private stopped = false;
  /** Set when the frontier's `join()` resolves: no URL will come any more. */
  private over = false;
  private read: StoreSummary | null = null;
  private failure: unknown = null;
  /** Resolves once the summary is read or the frontier failed; made by the first `take()` or `whenDone()`. */
  private done: Promise<void> | null = null;
  private options: Pick<ResolvedCrawlOptions, "maxTasks" | "keepRecords"> = { maxTasks: 1, keepRecords: true };
  /** Stops the crawl, as its signal would: what this store does when the frontier fails. */
  private stopCrawl: () => void = () => {};

  constructor(private readonly frontier: Frontier) {
    this.seenUrls = frontier.seenUrls;
  }

  open(options: ResolvedCrawlOptions, stopCrawl: () => void, roots: readonly string[] = []): void {
    this.options = options;
    this.stopCrawl = stopCrawl;
    this.frontier.begin?.(options, roots);
  }

  get size(): number {
    return this.ready.length + this.frontier.counters().queued;
  }

  add(items: readonly QueueItem[]): void {
    const store = this;
    this.frontier.add(items).catch(function failed(error: unknown) { store.fail(error); });
  }

  take(): QueueItem | undefined {
    const store = this;
    this.whenDone(); // From the first take() on, after the roots were added, the frontier's join() means the end.
    while (!this.stopped && this.asking + this.ready.length + this.held < this.options.maxTasks) {
      this.asking += 1;
      this.frontier.take().then(
        function taken(item) {
          store.asking -= 1;
          if (store.stopped) store.frontier.release(item); // Stopped meanwhile: not ours to fetch.
          else store.ready.push(item);
        },
        function shutDown() { store.asking -= 1; },
      );
    }
    if (this.stopped || this.ready.length === 0) return undefined;
    this.held += 1;
    return this.ready.shift();
  }

  putBack(item: QueueItem, holdMs?: number): void {
    this.held -= 1;
    this.frontier.putBack(item, holdMs); // Still leased here: our take() gets it again.
  }

  robotsRules(origin: string): RobotsRules | null {
    return this.frontier.robotsRules?.(origin) ?? null;
  }

  robotsRead(origin: string, rules: RobotsRules): void {
    this.frontier.robotsRead?.(origin, rules);
  }

  finish(item: QueueItem, visit: Visit, stored: (record: FetchStatistic | null) => void): void {
    this.held -= 1;
    const store = this;
    this.frontier.finish(item, visit).then(stored, function failed(error: unknown) {
      stored(null);
      store.fail(error);
    });
  }

  release(item: QueueItem): void {
    this.held -= 1;
    this.frontier.release(item);
  }

  pending(): boolean {
    return !this.over && !this.stopped;
  }

  whenDone(): Promise<void> {
    if (this.done !== null) return this.done;
    const store = this;
    this.done = this.frontier.join().then(
      function over() {
        store.over = true;
        store.stop();
        return store.frontier.summary(store.options.keepRecords);
      },
    ).then(
      function summed(summary) { store.read = summary; },
      function failed(error: unknown) { store.fail(error); },
    );
    return this.done;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    while (this.ready.length > 0) this.frontier.release(this.ready.shift());
    this.frontier.shutdown(true); // join() then resolves once this process's URLs are finished or released.
  }

  summary(recorded: number): StoreSummary {
    if (this.failure !== null) throw this.failure;
    return this.read ?? { seen: [], todo: 0, records: null, recorded };
  }

  /** The frontier failed: the crawl stops (its requests in flight abandoned), and `summary()` throws the error. */
  private fail(error: unknown): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.stop();
    this.stopCrawl();
  }
}
