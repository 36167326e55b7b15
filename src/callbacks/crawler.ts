/**
 * The stage 1 Crawler: bookkeeping around Fetchers, with no queue and no
 * coroutines.
 *
 * @module
 */
import { InvalidStateError, isRetryable } from "../kernel/errors.js";
import { resolveOptions, retryDelay, type CrawlOptions, type ResolvedCrawlOptions } from "../crawl/options.js";
import { appendRecord, crawlResult, errorRecord, type CrawlResult, type FetchStatistic } from "../crawl/records.js";
import { CrawlRun } from "../crawl/run.js";
import { UrlPolicy } from "../crawl/urls.js";
import { visit, type QueueItem, type Visit, type VisitContext } from "../crawl/visit.js";
import { BlockFifo } from "../crawl/block-fifo.js";
import { HostLines } from "../crawl/politeness.js";
import { RobotsReading } from "../crawl/robots.js";
import { crawlChannel, type QueueCounters } from "../observe/channels.js";
import { IdleConnections } from "../http/idle-connections.js";
import { EventLoop, type ExceptionSource } from "./event-loop.js";
import { Fetcher, type FetcherOptions, type FetchOutcome } from "./fetcher.js";

/**
 * Crawls from the roots with callbacks: at most `maxTasks` Fetchers run at
 * once, the other URLs wait in `urlsTodo` for a free slot, and each Fetcher's
 * `onFetched` callback starts another attempt or records the outcome, queues
 * the URLs it names, and starts the next Fetchers. The crawl ends when no
 * Fetcher runs and no URL waits; then the loop stops, and every socket and
 * timer is gone.
 *
 * Nothing here can be interrupted: each callback runs to its end, so
 * `visit()` reading `seenUrls` and `fetched` adding to it need no lock (the
 * chapter's point about non-preemptive multitasking).
 *
 * Whatever goes wrong with one URL becomes its record: the Fetcher names
 * network and HTTP errors, `visit()` makes a record of a page that cannot be
 * read, a bug while handling an outcome gives the URL a `NetworkError`
 * record, and the loop's exception handler ends the attempt of a Fetcher
 * whose callback threw as a `NetworkError`. (Without that handler the
 * exception would escape into Node with a ripped stack; example 05 shows it
 * with a bare EventLoop and Fetcher.)
 *
 * @remarks The chapter's callback crawler has no concurrency limit, no
 * redirects and no end but `stopped = True` in a global; this one bounds its
 * Fetchers with plain bookkeeping (a list of waiting URLs, the Fetchers
 * running), where stage 2 uses a queue. Cancellation is a `stopped` flag,
 * set by the `signal`'s abort listener, which also stops the loop: the
 * callbacks left in that iteration see the flag and make no record, and once
 * the loop has stopped the Fetchers in flight are closed. So an abort from
 * anywhere, even from a trace subscriber inside a Fetcher's callback, leaves
 * that callback to finish its step.
 *
 * Politeness (`robots`, `maxPerHost`, `delayMs`, `Retry-After`):
 * `startFetchers` asks `this.hosts.turn(item)` for each URL it takes. When
 * the URL's host cannot take it yet, the URL waits in that host's line and
 * the loop takes the next URL, so a busy host never holds a slot. The host
 * hands the URL back (`requeue`: to the end of `urlsTodo`) when a request to
 * it ends, when its `robots.txt` is read (by a Fetcher of its own, with the
 * callback `robotsFetched`), or when its delay is over: a `callLater` timer
 * whose callback starts Fetchers again.
 * @see Chapter, "Programming With Callbacks"; `crawling.py` (`Crawler`)
 */
export class Crawler implements VisitContext {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The URL policy: the roots, the hosts they allow, `exclude`. */
  readonly policy: UrlPolicy;
  /** The loop this crawl runs on: its selector and timers are empty again at the end. */
  readonly loop = new EventLoop();
  /** Every URL ever queued, in order (the chapter's `seen_urls`). */
  readonly seenUrls = new Set<string>();
  /** One record per URL fetched, in completion order (unless `keepRecords` is false). */
  readonly records: FetchStatistic[] = [];
  /** Records made, kept or not. */
  private recorded = 0;
  /** URLs waiting for a free slot, oldest first. */
  private readonly urlsTodo = new BlockFifo<QueueItem>();
  /**
   * The Fetchers of pages running now, each in a slot of its own (null: a free
   * slot). A fixed array, not a Map: a Map that lives as long as the crawl
   * and gains and loses an entry per page keeps, in each table it outgrows,
   * every Fetcher it held at that moment alive until a full collection
   * (docs/benchmarks.md, "Where the bytes went"); a slot is simply cleared.
   */
  private readonly slots: Array<Fetcher | null> = [];
  /** The numbers of the free slots. */
  private readonly freeSlots: number[] = [];
  /** How many slots hold a Fetcher. */
  private running = 0;
  /** The Fetchers reading an origin's robots.txt, with their reading. */
  private readonly readingRobots = new Map<Fetcher, RobotsReading>();
  /** Each host's robots.txt, requests in flight, delay and line of waiting URLs (src/crawl/politeness.ts). */
  private readonly hosts: HostLines;
  /** Connections kept open for the next request to their origin, closed when the crawl ends. */
  private readonly connections = new IdleConnections();
  /** What the Fetchers of pages and of robots.txt files are given. */
  private readonly pageOptions: FetcherOptions;
  private readonly robotsOptions: FetcherOptions;
  /** This crawl's id and trace subscription, from the start of `crawl()`. */
  private run: CrawlRun | null = null;
  private stopped = false;
  private startedAt = 0;
  private onDone: ((result: CrawlResult) => void) | null = null;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    this.pageOptions = { ...this.options, connections: this.connections };
    this.robotsOptions = { ...this.pageOptions, skipNonHtml: false }; // robots.txt is text/plain, and read.
    const crawler = this;
    this.hosts = new HostLines(this.options, {
      requeue(item) { crawler.urlsTodo.push(item); }, // Whoever woke the host starts Fetchers next.
      later(ms, wake) {
        return crawler.loop.callLater(ms, function hostTurn() {
          wake();
          crawler.startFetchers();
          crawler.stopIfDone(); // The URL handed its turn may have been refused, and been the last.
        });
      },
    });
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean { return this.policy.urlAllowed(url); }

  /** `visit()` reads this option: redirects a new URL may follow. */
  get maxRedirect(): number { return this.options.maxRedirect; }
  /** `visit()` reads this option: the largest body it reads. */
  get maxBodyBytes(): number { return this.options.maxBodyBytes; }

  /**
   * Crawls, and calls `onDone` with the result when the crawl has ended.
   * Returns at once: the work happens in the loop's callbacks.
   *
   * @throws InvalidStateError when called a second time: a Crawler crawls once.
   */
  crawl(onDone: (result: CrawlResult) => void): void {
    if (this.run !== null) throw new InvalidStateError("This Crawler has already crawled; make a new one");
    this.run = new CrawlRun("callbacks", this.options.trace, this.loop.id);
    this.startedAt = Date.now();
    this.onDone = onDone;
    for (const url of this.policy.roots) this.addUrl({ url, maxRedirect: this.options.maxRedirect });
    if (this.options.signal?.aborted === true) this.stopped = true;
    this.options.signal?.addEventListener("abort", this.aborted, { once: true });
    this.loop.setExceptionHandler(this.loopException);
    this.loop.runForever(this.loopStopped);
    this.startFetchers();
    this.stopIfDone();
  }

  /** Marks the URL seen and puts it at the end of the waiting list. */
  private addUrl(item: QueueItem): void {
    this.seenUrls.add(item.url);
    this.urlsTodo.push(item);
  }

  /**
   * Takes waiting URLs while a slot is free (and `maxPages` allows): starts a
   * Fetcher for each URL whose host lets it go, records the ones robots.txt
   * refuses, and leaves the others in their host's line.
   */
  private startFetchers(): void {
    const { maxTasks, maxPages } = this.options;
    const crawler = this;
    while (!this.stopped && this.running + this.readingRobots.size < maxTasks && this.urlsTodo.length > 0 && this.recorded + this.running < maxPages) {
      const item = this.urlsTodo.shift();
      const turn = this.hosts.turn(item);
      if (turn.kind === "robots") this.readRobots(turn.origin);
      if (turn.kind === "refused") this.record(errorRecord(item.url, turn.error, item.referrer ?? null));
      if (turn.kind !== "go") continue; // "robots" and "wait": it waits in its host's line; requeue() brings it back.
      const slot = this.freeSlots.pop() ?? this.slots.length;
      // The callback carries the URL's item and slot: the state a callback chain keeps by hand.
      const fetcher = new Fetcher(item.url, this.loop, this.pageOptions, function pageFetched(f, outcome) { crawler.fetched(f, outcome, item, slot); }, this.run?.id);
      fetcher.tries = item.tries ?? 0; // Attempts made before a Retry-After.
      this.slots[slot] = fetcher;
      this.running += 1;
      this.attempt(fetcher);
    }
  }

  /** Starts the Fetcher's next attempt (a page's or a robots.txt's): at once, or when the pause before a retry is over. */
  private readonly attempt = (fetcher: Fetcher): void => {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: fetcher.crawl, url: fetcher.url, attempt: fetcher.tries + 1, ...this.counters() });
    fetcher.fetch();
  };

  /**
   * A Fetcher's attempt ended: after a network error, while tries are left,
   * try again once a pause (`retryDelay`) is over; after a `Retry-After` the
   * crawl waits for, hold the host back and queue the URL again with its
   * attempts so far; else record and queue.
   */
  private fetched(fetcher: Fetcher, outcome: FetchOutcome, item: QueueItem, slot: number): void {
    if (this.slots[slot] !== fetcher) return;
    const [status, error] = typeof outcome === "string" ? [null, outcome] : [outcome.status, null];
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: fetcher.crawl, url: item.url, attempt: fetcher.tries, status, error, detail: error === null ? null : fetcher.detail, ...this.counters() });
    if (this.stopped) return; // Stopping: no more attempts and no record; the loop's end closes the Fetchers left.
    if (error !== null && isRetryable(error) && fetcher.tries < this.options.maxTries) return fetcher.later(retryDelay(this.options.retryDelayMs, fetcher.tries), this.attempt);
    this.slots[slot] = null;
    this.freeSlots.push(slot);
    this.running -= 1;
    const wait = typeof outcome === "string" ? null : this.hosts.retryAfter(outcome);
    if (wait !== null && fetcher.tries < this.options.maxTries) {
      this.hosts.holdBack(item, wait);
      this.urlsTodo.push({ ...item, tries: fetcher.tries }); // To wait in its host's line, not in a slot.
      this.hosts.finished(item);
      return this.startFetchers();
    }
    let v: Visit;
    try {
      v = visit(item, outcome, this, fetcher.detail);
    } catch {
      v = { record: errorRecord(item.url, "NetworkError", item.referrer ?? null), next: [] }; // A bug: the URL still gets its one record.
    }
    // Record first, then queue; no other callback runs between visit() reading seenUrls and addUrl().
    this.record(v.record);
    for (const next of v.next) this.addUrl(next);
    this.hosts.finished(item); // Its host may let the next URL go.
    this.startFetchers();
    this.stopIfDone();
  }

  /** Counts a record, keeps it (unless `keepRecords` is false) and tells `onRecord`. */
  private record(statistic: FetchStatistic): void {
    this.recorded += 1;
    appendRecord(this.records, statistic, this.options);
  }

  /** Starts reading an origin's robots.txt: a Fetcher like a page's, with its own callback. */
  private readRobots(origin: string): void {
    const reading = new RobotsReading(origin, this.options, this.policy);
    const fetcher = new Fetcher(reading.url, this.loop, this.robotsOptions, this.robotsFetched, this.run?.id);
    this.readingRobots.set(fetcher, reading);
    this.attempt(fetcher);
  }

  /**
   * A robots.txt attempt ended: try again after the pause a page would wait,
   * follow a redirect with a new Fetcher, or hand the rules to the host lines
   * and start the Fetchers its URLs may now have.
   */
  private readonly robotsFetched = (fetcher: Fetcher, outcome: FetchOutcome): void => {
    const reading = this.readingRobots.get(fetcher);
    if (reading === undefined) return;
    const [status, error] = typeof outcome === "string" ? [null, outcome] : [outcome.status, null];
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: fetcher.crawl, url: fetcher.url, attempt: fetcher.tries, status, error, detail: error === null ? null : fetcher.detail, ...this.counters() });
    if (this.stopped) return; // Stopping: the loop's end closes it.
    const step = reading.next(outcome);
    if (step === "retry") return fetcher.later(retryDelay(this.options.retryDelayMs, reading.attempts), this.attempt);
    this.readingRobots.delete(fetcher);
    if (step === "follow") {
      const next = new Fetcher(reading.url, this.loop, this.robotsOptions, this.robotsFetched, this.run?.id);
      this.readingRobots.set(next, reading);
      return this.attempt(next);
    }
    this.hosts.robotsRead(reading);
    this.startFetchers();
    this.stopIfDone();
  };

  /** The counters of a fetch message: URLs waiting for a slot, and the Fetchers running. */
  private counters(): QueueCounters {
    const queued = this.urlsTodo.length;
    return { queued, unfinished: queued + this.hosts.waitingUrls + this.running, inFlight: this.running };
  }

  /** Stops the loop when no Fetcher runs and no URL waits, in `urlsTodo` or in a host's line (or the crawl stopped). */
  private stopIfDone(): void {
    if (this.running > 0 || this.readingRobots.size > 0) return;
    const waiting = (this.urlsTodo.length > 0 || this.hosts.waitingUrls > 0) && this.recorded < this.options.maxPages;
    if (this.stopped || !waiting) this.loop.stop();
  }

  /** The signal's abort listener: take no more URLs and stop the loop; its end closes the Fetchers in flight. */
  private readonly aborted = (): void => {
    this.stopped = true;
    this.loop.stop();
  };

  /** An exception escaped a callback: it ends the attempt of the Fetcher it came from as a `NetworkError`. */
  private readonly loopException = (error: unknown, source: ExceptionSource): void => {
    for (const fetcher of this.slots) {
      if (fetcher === null || !fetcher.owns(source)) continue;
      fetcher.close();
      return fetcher.onFetched(fetcher, "NetworkError"); // Its callback, pageFetched, carries its item and slot.
    }
    for (const fetcher of this.readingRobots.keys()) {
      if (!fetcher.owns(source)) continue;
      fetcher.close();
      return this.robotsFetched(fetcher, "NetworkError");
    }
    throw error; // Not from a Fetcher: a bug in the crawler itself, so let it be seen.
  };

  /** Runs once the loop has stopped: closes the Fetchers left; then nothing is registered and no timer is left. */
  private readonly loopStopped = (): void => {
    for (const fetcher of [...this.slots, ...this.readingRobots.keys()]) fetcher?.close();
    this.connections.close();
    this.hosts.close(); // The URLs still in a host's line stay todo; the hosts' timers are cancelled.
    this.options.signal?.removeEventListener("abort", this.aborted);
    this.loop.selector.close();
    this.run?.end();
    this.onDone?.(crawlResult(this.seenUrls, this.records, this.recorded, this.startedAt, this.options, this.hosts.robotsFetches));
  };
}

