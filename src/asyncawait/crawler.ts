/**
 * The chapter's final crawler in native async/await: `maxTasks` workers take
 * URLs from a joinable queue, and the crawl ends when `queue.join()` says
 * every URL queued has been processed.
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { errorDetail, errorName, InvalidStateError, isRetryable, type FetchError } from "../kernel/errors.js";
import type { HttpResponse } from "../http/parser.js";
import { resolveOptions, retryDelay, type CrawlOptions, type ResolvedCrawlOptions } from "../crawl/options.js";
import { appendRecord, errorRecord, type CrawlResult, type FetchStatistic } from "../crawl/records.js";
import { CrawlRun } from "../crawl/run.js";
import { UrlPolicy } from "../crawl/urls.js";
import { visit, type QueueItem, type Visit, type VisitContext } from "../crawl/visit.js";
import { HostLines, type Cancellable, type HostWaiting } from "../crawl/politeness.js";
import { RobotsReading } from "../crawl/robots.js";
import { crawlChannel, type QueueCounters } from "../observe/channels.js";
import { MemoryFrontier, type Frontier } from "./frontier.js";
import { HttpClient } from "./http-client.js";
import { QueueShutDown } from "./joinable-queue.js";

/**
 * Crawls from one or more roots with `maxTasks` concurrent workers, each an
 * ordinary `async` function.
 *
 * The queue and the seen set are the crawl's {@link Frontier}: a
 * `MemoryFrontier` (a `JoinableQueue` and a `Set`) unless the caller passes
 * another, such as a `RedisFrontier` shared by many processes.
 * `crawl()` queues the roots, starts the workers and awaits
 * `this.frontier.join()`. Each worker loops: `await this.frontier.take()`,
 * `await this.fetch(item)`, then `await this.frontier.finish(item, visit)`,
 * which stores the record, queues the new URLs and marks the URL done in one
 * step; a URL ends in `finish()` or `release()` however its fetch went.
 * `fetch()` retries network errors up to `maxTries`, then asks `visit()` what
 * the outcome means. When `join()` resolves, every worker is parked in
 * `take()`; `this.frontier.shutdown()` wakes them, their `take()` throws
 * `QueueShutDown`, and they end.
 *
 * A worker only gives way to others at an `await`. Between two awaits it runs
 * alone, which is why checking `seenUrls` and adding to it needs no lock: in
 * memory, `finish()` does both with no `await` inside.
 *
 * `maxPages` and the caller's `signal` stop the crawl early the same way:
 * `shutdown(true)` drops the URLs still queued (they count as `todo`) and
 * ends the parked workers at once, so `join()` waits only for the fetches in
 * flight. The signal also closes the HTTP client, abandoning those fetches,
 * and a fetch cut short makes no record.
 *
 * Politeness (`robots`, `maxPerHost`, `delayMs`, `Retry-After`): a worker
 * asks `this.hosts.turn(item)` before it fetches. When the URL's host cannot
 * take it yet, the URL waits in that host's line (shared code, not a worker:
 * the worker goes on with other URLs), still counted as unfinished by the
 * queue, so `join()` waits for it. Its turn comes when a request to its host
 * ends, when the host's `robots.txt` is read, or when the host's delay is
 * over: that last wait is an awaited timer promise (`later()`); then the URL
 * is put back in the queue.
 *
 * @remarks The chapter's `Crawler` runs on asyncio's loop and ends its
 * workers with `w.cancel()`, which throws `CancelledError` into each one.
 * Nothing can throw into a suspended `async` function, so here the queue's
 * `get()` throws `QueueShutDown` itself, as Python 3.13's queues do. Unlike
 * the chapter, any failure while handling one URL becomes that URL's record,
 * so no worker dies and `join()` cannot hang. The chapter kept its state in
 * module globals in the earlier stages; here it lives on one `Crawler` per run.
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue.join`, `Queue.shutdown`
 */
export class Crawler {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The roots, normalised (`xkcd.com` → `http://xkcd.com/`) and without duplicates. */
  readonly roots: readonly string[];
  private readonly policy: UrlPolicy;
  /** The queue and the seen set: in this process's memory unless the caller passed a shared one. */
  private readonly frontier: Frontier;
  private readonly records: FetchStatistic[] = [];
  /** Records made, kept or not. */
  private recorded = 0;
  /** What `visit()` reads of the crawl. */
  private readonly context: VisitContext;
  /** The connection pool, opened lazily by the first request and closed when the crawl ends. */
  private readonly client: HttpClient;
  /** The crawl's id and trace subscription: null until `crawl()`, which runs once. */
  private run: CrawlRun | null = null;
  /** The crawl id every message carries. */
  private id = 0;
  /** URLs taken from the queue so far, counted against `maxPages`. */
  private taken = 0;
  /** Workers handling a URL now, from its `take` to its `done`: the URLs in flight. */
  private busy = 0;
  /** Aborted with the caller's signal: it ends the pauses before retries, each of which listens to it. */
  private readonly aborting = new AbortController();
  /** Each host's robots.txt, requests in flight, delay and line of waiting URLs (src/crawl/politeness.ts). */
  private readonly hosts: HostLines;

  /**
   * @param frontier - Where the URLs wait and the seen set lives: a new
   * {@link MemoryFrontier} unless given (a `RedisFrontier` shares them with
   * other processes). A frontier serves one crawl.
   * @throws TypeError for a bad option or an unusable root, naming it.
   */
  constructor(roots: string | string[], options?: CrawlOptions, frontier: Frontier = new MemoryFrontier()) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    this.roots = this.policy.roots;
    this.frontier = frontier;
    const { maxTasks, timeoutMs, idleTimeoutMs, maxBodyBytes, userAgent, headers, skipNonHtml, ca, rejectUnauthorized, maxRedirect } = this.options;
    this.context = { policy: this.policy, seenUrls: frontier.seenUrls, maxRedirect, maxBodyBytes };
    this.client = new HttpClient({ connections: maxTasks, timeoutMs, idleTimeoutMs, maxBodyBytes, userAgent, headers, skipNonHtml, ca, rejectUnauthorized });
    setMaxListeners(0, this.aborting.signal); // As many pauses as workers may listen at once; each stops listening when it ends.
    const crawler = this;
    const waiting: HostWaiting = {
      requeue(item) {
        crawler.frontier.putBack(item); // Its host's turn came: back in the queue for any worker.
      },
      later: wakeLater,
    };
    this.hosts = new HostLines(this.options, waiting);
  }

  /** Whether `url` may be crawled: http(s), an allowed host, not excluded (the chapter's `url_allowed`). */
  urlAllowed(url: string): boolean {
    return this.policy.urlAllowed(url);
  }

  /**
   * Runs the crawl to its end and resolves with every record.
   *
   * @throws InvalidStateError when called a second time on the same Crawler.
   * @example
   * const result = await new Crawler("http://127.0.0.1:8080/", { maxTasks: 100 }).crawl();
   * console.log(result.records.length, "pages");
   */
  async crawl(): Promise<CrawlResult> {
    if (this.run !== null) throw new InvalidStateError("crawl() runs once per Crawler; make a new one");
    const run = new CrawlRun("asyncawait", this.options.trace, null);
    this.run = run;
    this.id = run.id;
    const startedAt = Date.now();
    const { maxTasks, maxRedirect, signal } = this.options;
    const crawler = this;
    // One listener for the whole crawl, rather than the signal on every request:
    // Node warns past 10 listeners on one signal, and thousands of requests are in flight.
    function crawlAborted(): void {
      crawler.stop(); // Take no more URLs,
      void crawler.client.close(); // abandon the requests in flight,
      crawler.aborting.abort(); // and end the pauses before retries.
    }
    signal?.addEventListener("abort", crawlAborted, { once: true });
    let failure: unknown = null;
    try {
      await this.frontier.add(this.roots.map((root) => ({ url: root, maxRedirect })));
      if (signal?.aborted === true) this.stop();
      const workers: Promise<void>[] = [];
      for (let i = 0; i < maxTasks; i++) workers.push(this.work());
      try {
        await this.frontier.join(); // Suspends until every URL queued is done.
      } catch (error) {
        failure = error; // A shared frontier stopped answering: stop as an abort does, and say why.
        crawlAborted();
      }
      this.frontier.shutdown(); // The idle workers, parked in take(), end: the chapter's `w.cancel()`.
      await Promise.all(workers);
    } finally {
      signal?.removeEventListener("abort", crawlAborted);
      this.hosts.close(); // Calls off the hosts' pending wake-ups.
      await this.client.close();
      run.end();
    }
    if (failure !== null) throw failure;
    const summary = await this.frontier.summary(this.options.keepRecords);
    return {
      records: summary.records ?? this.records,
      recorded: summary.recorded ?? this.recorded,
      seen: summary.seen,
      todo: summary.todo,
      startedAt,
      finishedAt: Date.now(),
      options: this.options,
      robots: this.hosts.robotsFetches,
    };
  }

  /**
   * One worker: take a URL; if its host lets it go now, fetch it (or record
   * why robots.txt refuses it) and finish it; until the frontier is shut down.
   */
  private async work(): Promise<void> {
    try {
      for (;;) {
        const item = await this.frontier.take(); // An idle worker waits here.
        if (this.frontier.isShutdown()) {
          // The frontier handed this item to our take() before a stop, but we resume a promise
          // job later (in Python, one Task step takes the item and runs on): it is left to do.
          this.frontier.release(item);
          continue;
        }
        const turn = this.hosts.turn(item);
        if (turn.kind === "robots") await this.readRobots(turn.origin);
        if (turn.kind === "robots" || turn.kind === "wait") continue; // It waits in its host's line, unfinished, and comes back through the frontier.
        this.busy += 1;
        try {
          this.taken += 1;
          if (this.taken >= this.options.maxPages) this.stop();
          if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "take", crawl: this.id, url: item.url });
          if (turn.kind === "refused") await this.finish(item, { record: errorRecord(item.url, turn.error, item.referrer ?? null), next: [] });
          else await this.fetch(item);
        } catch {
          // A bug while handling this URL, thrown before fetch() handed it back to the
          // frontier: the URL gets a NetworkError record, and the worker goes on.
          // Rethrowing would end the worker, and join() could wait forever.
          await this.finish(item, { record: errorRecord(item.url, "NetworkError", item.referrer ?? null), next: [] });
        } finally {
          if (turn.kind === "go") this.hosts.finished(item); // Its host may let the next URL go.
          this.busy -= 1;
          if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "done", crawl: this.id, url: item.url });
        }
      }
    } catch (error) {
      if (!(error instanceof QueueShutDown)) throw error; // The chapter's `except asyncio.CancelledError: pass`.
    }
  }

  /**
   * Fetches one URL, retrying network errors up to `maxTries` attempts after
   * a pause (`retryDelay`, an awaited timer that the caller's signal also
   * ends), then finishes it with what `visit()` makes of the outcome: its
   * record and the URLs to queue. A fetch the caller's signal cut short is
   * released, with no record. A `429` or `503` whose `Retry-After` the crawl
   * waits for holds its host back and puts the URL back in the frontier,
   * with its attempts so far: it waits in its host's line, not in this worker.
   */
  private async fetch(item: QueueItem): Promise<void> {
    const { url } = item;
    let outcome: HttpResponse | FetchError;
    let detail: string | null = null; // Why, in Node's words, when the last attempt's error is a TlsError.
    for (let attempt = (item.tries ?? 0) + 1; ; attempt++) {
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.id, url, attempt, ...this.counters() });
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "await", crawl: this.id, url, what: "client.get" });
      try {
        outcome = await this.client.get(url);
      } catch (error) {
        outcome = errorName(error);
        detail = errorDetail(error);
      }
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "resume", crawl: this.id, url });
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: this.id, url, attempt, ...ended(outcome, detail), ...this.counters() });
      if (this.options.signal?.aborted === true) {
        this.frontier.release(item); // Cut short by the caller: no record, left to do.
        return;
      }
      const wait = typeof outcome === "string" ? null : this.hosts.retryAfter(outcome);
      if (wait !== null && attempt < this.options.maxTries && !this.frontier.isShutdown()) {
        this.hosts.holdBack(item, wait);
        this.taken -= 1; // It is taken again when its turn comes.
        this.frontier.putBack({ ...item, tries: attempt }); // After a Retry-After, the attempts go on from where they were.
        return;
      }
      if (typeof outcome !== "string" || !isRetryable(outcome) || attempt >= this.options.maxTries) break;
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "await", crawl: this.id, url, what: "sleep" });
      try {
        await sleep(retryDelay(this.options.retryDelayMs, attempt), undefined, { signal: this.aborting.signal });
      } catch {
        this.frontier.release(item); // The caller's signal ended the pause: no record.
        return;
      }
      if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "resume", crawl: this.id, url });
    }
    // No await between visit() checking the links against seenUrls and
    // finish() queueing the new ones: no other worker runs in between.
    await this.finish(item, visit(item, outcome, this.context, detail));
  }

  /** Hands a URL's visit to the frontier, which stores the record and queues the new URLs in one step, then reports the record. */
  private async finish(item: QueueItem, done: Visit): Promise<void> {
    this.record(await this.frontier.finish(item, done));
  }

  /**
   * Reads an origin's robots.txt through the same client, trying again after
   * the pause a page would wait, and hands the rules to the host lines. Never
   * throws: if the caller's signal ends a pause, nothing there is fetched.
   */
  private async readRobots(origin: string): Promise<void> {
    const reading = new RobotsReading(origin, this.options, this.policy);
    try {
      for (;;) {
        let outcome: HttpResponse | FetchError;
        let detail: string | null = null;
        const { url } = reading;
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "take", crawl: this.id, url });
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.id, url, attempt: reading.attempts + 1, ...this.counters() });
        try {
          outcome = await this.client.get(url, undefined, { skipNonHtml: false });
        } catch (error) {
          outcome = errorName(error);
          detail = errorDetail(error);
        }
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: this.id, url, attempt: reading.attempts + 1, ...ended(outcome, detail), ...this.counters() });
        if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "done", crawl: this.id, url });
        const step = reading.next(outcome);
        if (step === "done") break;
        if (step === "retry") await sleep(retryDelay(this.options.retryDelayMs, reading.attempts), undefined, { signal: this.aborting.signal });
      }
    } catch {
      reading.fail();
    }
    this.hosts.robotsRead(reading);
  }

  /** Counts a record, keeps it (unless `keepRecords` is false) and reports it (a throwing `onRecord` is ignored); null: the frontier could not store it. */
  private record(statistic: FetchStatistic | null): void {
    if (statistic === null) return;
    this.recorded += 1;
    appendRecord(this.records, statistic, this.options);
  }

  /** Stops early (`maxPages`, the signal): the queued URLs and those waiting for their hosts are dropped, and the idle workers end. */
  private stop(): void {
    this.frontier.shutdown(true);
    for (const waiting of this.hosts.close()) this.frontier.release(waiting); // Each stays `todo`.
  }

  /** The frontier's counters, for the fetch messages. */
  private counters(): QueueCounters {
    const { queued, unfinished } = this.frontier.counters();
    // In flight: taken by a worker and not yet done, pausing before a retry included, as in stages 1 and 2.
    // Not `unfinished - queued - waiting`: a URL handed to a parked take() has left the queue, but
    // its worker resumes only a promise job later, and has not started it yet.
    return { queued, unfinished, inFlight: this.busy };
  }
}

/** An attempt's outcome as the fetch-end message has it. */
function ended(outcome: HttpResponse | FetchError, detail: string | null): { status: number | null; error: FetchError | null; detail: string | null } {
  return typeof outcome === "string" ? { status: null, error: outcome, detail } : { status: outcome.status, error: null, detail: null };
}

/**
 * How the host lines wait here: an awaited timer promise that calls `wake`
 * when it resolves, unless the crawl's end calls it off first.
 */
function wakeLater(ms: number, wake: () => void): Cancellable {
  const timer = new AbortController();
  async function waitThenWake(): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: timer.signal });
    } catch {
      return; // Called off.
    }
    wake();
  }
  void waitThenWake();
  return { cancel: function callOff() { timer.abort(); } };
}
