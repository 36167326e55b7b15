/** crawler.ts ↔ crawling.py of the chapter (`Crawler.crawl`, `work`, `fetch`): the stage 2 Crawler,
 * worker coroutines sharing a joinable queue.
 *
 * @module
 */
import { IdleConnections } from "../http/idle-connections.js";
import type { HttpResponse } from "../http/parser.js";
import { CancelledError, InvalidStateError, errorDetail, errorName, isRetryable, type FetchError } from "../kernel/errors.js";
import { resolveOptions, retryDelay, type CrawlOptions, type ResolvedCrawlOptions } from "../crawl/options.js";
import { appendRecord, crawlResult, errorRecord, type CrawlResult, type FetchStatistic } from "../crawl/records.js";
import { CrawlRun } from "../crawl/run.js";
import { UrlPolicy } from "../crawl/urls.js";
import { visit, type QueueItem, type VisitContext } from "../crawl/visit.js";
import { HostLines, type Cancellable } from "../crawl/politeness.js";
import { RobotsReading } from "../crawl/robots.js";
import { crawlChannel, type QueueCounters } from "../observe/channels.js";
import { getRunningLoop } from "./events.js";
import type { Coroutine } from "./futures.js";
import { JoinableQueue } from "./queues.js";
import { request, type RequestOptions } from "./sockets.js";
import { Task, cancelAndWait, sleep, waitFor } from "./tasks.js";

/**
 * Crawls from the roots with `maxTasks` worker coroutines. `crawl()` starts
 * the workers and waits on `yield* q.join()`; each worker loops on
 * `q.get()`, `fetch()`, `q.taskDone()`; `fetch()` makes the attempts, then
 * asks `visit()` what the outcome means, records it, and queues the URLs it
 * names. When the last URL is done, `join()` returns and `crawl()` cancels
 * the workers, now idle in `get()`.
 *
 * A URL's whole story (its tries, its response) lives in the locals of one
 * `fetch()` call: there is no Fetcher class. A coroutine can only be
 * interrupted at a `yield*`, so reading `seenUrls` in `visit()` and adding to
 * it, with no `yield*` in between, needs no lock.
 *
 * Nothing that fails for one URL can kill a worker: network errors are
 * retried and recorded, a page that cannot be read is recorded, and any
 * other exception (a bug) still gives the URL a `NetworkError` record.
 *
 * @remarks The chapter's crawler lets a non-network exception end a worker,
 * which leaves `join()` waiting forever; here `taskDone()` is in a `finally`.
 * The chapter's crawler has no `maxPages` or `signal`: on either, we stop queueing, drain the
 * queue (each drained URL is `todo`), and for the signal cancel the workers,
 * so `join()` returns once the fetches in flight finish or are cancelled.
 * The loop is not a global: run `crawl()` in any EventLoop.
 *
 * Politeness (`robots`, `maxPerHost`, `delayMs`, `Retry-After`): a worker
 * asks `this.hosts.turn(item)` before it fetches. When the URL's host cannot
 * take it yet, the URL waits in that host's line, still unfinished in the
 * queue, and the worker goes back to `q.get()`. The host hands the URL back
 * to the queue when a request to it ends, when its `robots.txt` is read, or
 * when its delay is over; for that last wait it starts a small Task that
 * `sleep`s (`wakeLater`), so no worker sleeps for a host.
 * @see Chapter, "Coordinating Coroutines"
 * @example
 * ```ts
 * const loop = new EventLoop();
 * const result = await loop.runUntilComplete(new Crawler("http://127.0.0.1:8080/").crawl());
 * loop.close();
 * ```
 */
export class Crawler implements VisitContext {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The URL policy: the roots, the hosts they allow, `exclude`. */
  readonly policy: UrlPolicy;
  /** Every URL ever queued, in order (the chapter's `seen_urls`). */
  readonly seenUrls = new Set<string>();
  /** One record per URL fetched, in completion order (unless `keepRecords` is false). */
  readonly records: FetchStatistic[] = [];
  /** Records made, kept or not. */
  private recorded = 0;
  private readonly q = new JoinableQueue<QueueItem>();
  private readonly workers: Array<Task<void>> = [];
  /** The hosts' pending wake-ups: Tasks sleeping until a host's delay is over. */
  private readonly wakeups = new Set<Task<void>>();
  /** Each host's robots.txt, requests in flight, delay and line of waiting URLs (src/crawl/politeness.ts). */
  private readonly hosts: HostLines;
  /** Connections kept open for the next request to their origin, closed when the crawl ends. */
  private readonly connections = new IdleConnections();
  /** What `request()` is given for pages and for robots.txt files. */
  private readonly pageOptions: RequestOptions;
  private readonly robotsOptions: RequestOptions;
  /** This crawl's id and trace subscription, from the start of `crawl()`. */
  private run!: CrawlRun;
  /** URLs taken from the queue so far, for `maxPages`. */
  private taken = 0;
  /** Set when the signal aborts: no more URLs are queued or taken. */
  private stopped = false;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    this.pageOptions = { ...this.options, connections: this.connections };
    this.robotsOptions = { ...this.pageOptions, skipNonHtml: false }; // robots.txt is text/plain, and read.
    const crawler = this;
    this.hosts = new HostLines(this.options, {
      requeue(item) {
        crawler.q.putNowait(item); // Back in the queue for any worker,
        crawler.q.taskDone(); // and no longer waiting in its host's line.
      },
      later(ms, wake) { return crawler.wakeLater(ms, wake); },
    });
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean { return this.policy.urlAllowed(url); }

  /**
   * Runs the crawl until all work is done (or `maxPages`, or the signal),
   * and returns the result. Run it in a Task: `loop.runUntilComplete(crawler.crawl())`.
   *
   * @throws {@link shared!InvalidStateError} when called a second time: a Crawler crawls once.
   */
  *crawl(): Coroutine<CrawlResult> {
    // A Crawler crawls once: from its first crawl on, its roots are seen.
    if (this.seenUrls.size > 0) throw new InvalidStateError("This Crawler has already crawled; make a new one");
    const startedAt = Date.now();
    const loop = getRunningLoop();
    this.run = new CrawlRun("generators", this.options.trace, loop.id);
    this.stopped = this.options.signal?.aborted === true;
    for (const url of this.policy.roots) this.addUrl({ url, maxRedirect: this.options.maxRedirect });
    this.options.signal?.addEventListener("abort", this.aborted, { once: true });
    try {
      for (let i = 0; i < this.options.maxTasks && !this.stopped; i++) this.workers.push(new Task(this.work(), loop, "work"));
      yield* this.q.join(); // When all work is done, exit.
    } finally {
      this.options.signal?.removeEventListener("abort", this.aborted);
      try {
        this.hosts.close(); // Calls off the hosts' pending wake-ups.
        // Waits for every worker even if we are cancelled again meanwhile; their `finally` blocks close every socket.
        yield* cancelAndWait([...this.workers, ...this.wakeups]);
      } finally {
        this.connections.close();
        this.run.end(); // Even if we were cancelled again meanwhile, which cancelAndWait throws once all are done.
      }
    }
    return crawlResult(this.seenUrls, this.records, this.recorded, startedAt, this.options, this.hosts.robotsFetches);
  }

  /**
   * A worker: take a URL; if its host lets it go now, fetch it (or record
   * why robots.txt refuses it) and mark it done; until cancelled.
   */
  private *work(): Coroutine<void> {
    for (;;) {
      const item = yield* this.q.get(); // Idle workers wait here, and are cancelled here.
      const turn = this.hosts.turn(item);
      if (turn.kind === "robots") yield* this.readRobots(turn.origin);
      if (turn.kind === "robots" || turn.kind === "wait") continue; // It waits in its host's line, unfinished, and comes back through the queue.
      if (++this.taken >= this.options.maxPages) this.drain(); // The last URL maxPages lets us take: queue no more.
      try {
        if (turn.kind === "refused") this.record(errorRecord(item.url, turn.error, item.referrer ?? null));
        else yield* this.fetch(item);
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        // A bug while handling this URL: fetch() records last, so the URL has no record yet.
        this.record(errorRecord(item.url, "NetworkError", item.referrer ?? null));
      } finally {
        if (turn.kind === "go") this.hosts.finished(item); // Its host may let the next URL go.
        this.q.taskDone();
      }
    }
  }

  /**
   * Fetches one URL: up to `maxTries` attempts, each within `timeoutMs`, with
   * a pause before each retry (`retryDelay`); then its record and the URLs to queue.
   * A `429` or `503` whose `Retry-After` the crawl waits for holds its host
   * back and queues the URL again with its attempts so far, to wait in its
   * host's line rather than in this worker.
   */
  private *fetch(item: QueueItem): Coroutine<void> {
    // The response, or why the last attempt failed (and, for a TlsError, why in Node's words).
    let [outcome, detail]: [HttpResponse | FetchError, string | null] = ["NetworkError", null];
    const first = (item.tries ?? 0) + 1; // After a Retry-After, the attempts go on from where they were.
    for (let attempt = first; attempt <= this.options.maxTries; attempt++) {
      if (attempt > first) yield* sleep(retryDelay(this.options.retryDelayMs, attempt - 1) / 1000); // Other workers run meanwhile.
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.run.id, url: item.url, attempt, ...this.counters() });
      try {
        outcome = yield* waitFor(request(new URL(item.url), this.pageOptions, this.run.id), this.options.timeoutMs);
      } catch (caught) {
        if (caught instanceof CancelledError) throw caught; // We are cancelled, not the attempt.
        [outcome, detail] = [errorName(caught), errorDetail(caught)];
      }
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: this.run.id, url: item.url, attempt, ...(typeof outcome === "string" ? { status: null, error: outcome, detail } : { status: outcome.status, error: null, detail: null }), ...this.counters() });
      if (this.stopped) return; // Aborted meanwhile: no more attempts, and, as for any fetch cut short, no record.
      const wait = typeof outcome === "string" ? null : this.hosts.retryAfter(outcome);
      if (wait !== null && attempt < this.options.maxTries && this.taken < this.options.maxPages) {
        this.hosts.holdBack(item, wait);
        this.q.putNowait({ ...item, tries: attempt });
        this.taken -= 1; // It is taken again when its turn comes.
        return;
      }
      if (typeof outcome !== "string" || !isRetryable(outcome)) break;
    }
    // No yield* from here on: no other worker runs between visit() reading seenUrls and addUrl().
    const v = visit(item, outcome, this, detail);
    this.record(v.record); // Record first, then queue.
    for (const next of v.next) this.addUrl(next);
  }

  /**
   * Reads an origin's robots.txt with the same `request()`, trying again
   * after the pause a page would wait, and hands the rules to the host lines,
   * however the reading ends.
   */
  private *readRobots(origin: string): Coroutine<void> {
    const reading = new RobotsReading(origin, this.options, this.policy);
    try {
      for (;;) {
        let [outcome, detail]: [HttpResponse | FetchError, string | null] = ["NetworkError", null];
        const { url } = reading;
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.run.id, url, attempt: reading.attempts + 1, ...this.counters() });
        try {
          outcome = yield* waitFor(request(new URL(url), this.robotsOptions, this.run.id), this.options.timeoutMs);
        } catch (caught) {
          if (caught instanceof CancelledError) throw caught;
          [outcome, detail] = [errorName(caught), errorDetail(caught)];
        }
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: this.run.id, url, attempt: reading.attempts + 1, ...(typeof outcome === "string" ? { status: null, error: outcome, detail } : { status: outcome.status, error: null, detail: null }), ...this.counters() });
        const step = reading.next(outcome);
        if (step === "done") break;
        if (step === "retry") yield* sleep(retryDelay(this.options.retryDelayMs, reading.attempts) / 1000);
      }
    } finally {
      reading.fail(); // Unless it was read: cancelled, or a bug, and nothing there is fetched.
      this.hosts.robotsRead(reading);
    }
  }

  /** Starts a Task that sleeps `ms`, then wakes a host: how the host lines wait here. */
  private wakeLater(ms: number, wake: () => void): Cancellable {
    function* sleepThenWake(): Coroutine<void> {
      yield* sleep(ms / 1000);
      wake();
    }
    const task = new Task(sleepThenWake(), getRunningLoop(), "wake-host");
    this.wakeups.add(task);
    const wakeups = this.wakeups;
    task.addDoneCallback(function forget() { wakeups.delete(task); });
    return task;
  }

  /** Counts a record, keeps it (unless `keepRecords` is false) and tells `onRecord`. */
  private record(statistic: FetchStatistic): void {
    this.recorded += 1;
    appendRecord(this.records, statistic, this.options);
  }

  /** Marks the URL seen and, unless the crawl stopped taking URLs, queues it. */
  private addUrl(item: QueueItem): void {
    this.seenUrls.add(item.url);
    if (!this.stopped && this.taken < this.options.maxPages) this.q.putNowait(item);
  }

  /** Takes every waiting URL out of the queue and the hosts' lines (each stays in `seenUrls`, so it counts as `todo`). */
  private drain(): void {
    while (!this.q.empty()) {
      this.q.getNowait();
      this.q.taskDone();
    }
    for (const _waiting of this.hosts.close()) this.q.taskDone();
  }

  /** The queue's counters for a fetch message: an item taken and not yet done is in flight. */
  private counters(): QueueCounters { return { queued: this.q.qsize(), unfinished: this.q.unfinishedTasks, inFlight: this.q.unfinishedTasks - this.q.qsize() - this.hosts.waitingUrls }; }

  /** Redirects a queued URL may follow, read by `visit()`. */
  get maxRedirect(): number { return this.options.maxRedirect; }

  /** The largest body `visit()` reads. */
  get maxBodyBytes(): number { return this.options.maxBodyBytes; }

  /** The signal's abort listener: stop queueing, drop the waiting URLs, cancel every worker. */
  private readonly aborted = (): void => {
    this.stopped = true;
    this.drain();
    // A cancelled worker's fetch ends at its yield*, without a record; its finally calls taskDone().
    for (const worker of this.workers) worker.cancel();
  };
}
