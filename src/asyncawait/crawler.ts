/**
 * The chapter's final crawler in native async/await: `maxTasks` workers take
 * URLs from a joinable queue, and the crawl ends when `queue.join()` says
 * every URL queued has been processed.
 *
 * @module
 */
import { CancelledError, errorName, InvalidStateError, isRetryable } from "../kernel/errors.js";
import {
  appendRecord,
  crawlResult,
  errorRecord,
  pageRecord,
  redirectRecord,
  type CrawlResult,
  type FetchError,
  type FetchStatistic,
} from "../crawl/records.js";
import type { HttpResponse } from "../http/parser.js";
import { resolveOptions, type CrawlOptions, type ResolvedCrawlOptions } from "../crawl/options.js";
import { readPage, type Page } from "../crawl/page.js";
import { UrlPolicy } from "../crawl/urls.js";
import { CrawlTracer } from "./crawl-tracer.js";
import { HttpClient } from "./http-client.js";
import { JoinableQueue } from "./joinable-queue.js";

/** A queued URL and how many more redirects may be followed from it. */
interface QueuedUrl {
  url: string;
  maxRedirect: number;
}

/**
 * Crawls from one or more roots with `maxTasks` concurrent workers, each an
 * ordinary `async` function.
 *
 * `crawl()` queues the roots, starts the workers and awaits `this.q.join()`.
 * Each worker loops: `await this.q.get()`, `await this.fetch(url)`, then
 * `this.q.taskDone()` in a `finally`, so a URL always counts as done however
 * its fetch ended. `fetch()` retries network errors up to `maxTries`, records
 * one {@link FetchStatistic}, and queues a redirect's target or a page's new
 * links. When `join()` resolves, every worker is parked in `get()`; aborting
 * their `AbortController` with a {@link CancelledError} rejects those `get()`s,
 * and the workers end.
 *
 * A worker only gives way to others at an `await`. Between two awaits it runs
 * alone, which is why checking `seenUrls` and adding to it needs no lock.
 *
 * On `maxPages` or the signal, `crawl()` awaits `Promise.race([join(),
 * stopped])` and two AbortControllers do the stopping (one stops the workers
 * taking URLs, one cancels the requests in flight): workers parked in `get()`
 * must be cancelled by a signal, because nothing can throw into a suspended
 * async function, and draining the queue alone would leave them parked there.
 * Stage 2 can simply drain the queue and let `join()` end the crawl, because
 * its `Task.cancel()` throws into a worker wherever it is paused.
 *
 * @remarks The chapter's `Crawler` runs on asyncio's loop and cancels workers
 * with `w.cancel()`, which throws `CancelledError` into each one. Nothing can
 * throw into a suspended `async` function, so the workers' `get()` takes an
 * `AbortSignal` instead, and its reason is the same `CancelledError`. Unlike
 * the chapter, any failure while handling one URL becomes that URL's record,
 * so no worker dies and `join()` cannot hang; `maxPages` and `signal` can stop
 * the crawl early, leaving URLs in the queue (`todo`). The chapter kept its
 * state in module globals in the earlier stages; here it lives on one
 * `Crawler` per run.
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue.join`, `Task.cancel`
 */
export class Crawler {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The roots, normalised (`xkcd.com` → `http://xkcd.com/`) and without duplicates. */
  readonly roots: readonly string[];
  private readonly policy: UrlPolicy;
  private readonly q = new JoinableQueue<QueuedUrl>();
  private readonly seenUrls = new Set<string>();
  private readonly records: FetchStatistic[] = [];
  /** Fetch attempts in flight (for trace events). */
  private inFlight = 0;
  /** Set when `options.trace` is given; null keeps an untraced crawl free of trace work. */
  private tracer: CrawlTracer | null = null;
  /** URLs taken from the queue so far, counted against `maxPages`. */
  private taken = 0;
  private started = false;
  /**
   * Aborted when workers must take no more URLs: the crawl is done, or
   * `maxPages` or the caller's signal stopped it. Its reason is a CancelledError.
   */
  private readonly stopTaking = new AbortController();
  /** Aborted, with the reason of the caller's signal, when it aborts: cancels the requests in flight. */
  private readonly cancelFetches = new AbortController();
  /** The connection pool, opened lazily by the first request and closed when the crawl ends. */
  private readonly client: HttpClient;

  /**
   * @throws TypeError for a bad option or an unusable root, naming it.
   */
  constructor(roots: string | string[], options?: CrawlOptions) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    this.roots = this.policy.roots;
    const { maxTasks, timeoutMs, maxBodyBytes, userAgent } = this.options;
    this.client = new HttpClient({ connections: maxTasks, timeoutMs, maxBodyBytes, userAgent });
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
    if (this.started) throw new InvalidStateError("crawl() runs once per Crawler; make a new one");
    this.started = true;
    const startedAt = Date.now();
    const { maxTasks, maxRedirect, signal, trace } = this.options;
    if (trace !== null) {
      const { q } = this;
      const crawler = this;
      this.tracer = new CrawlTracer(trace, function queueCounters() {
        return { queued: q.size(), unfinished: q.unfinished(), inFlight: crawler.inFlight };
      });
    }
    for (const root of this.roots) this.addUrl(root, maxRedirect);

    const stopped = this.whenStopped();
    const crawler = this;
    function crawlAborted(this: AbortSignal): void {
      crawler.stop(); // Take no more URLs,
      crawler.cancelFetches.abort(this.reason); // and cancel the requests in flight.
    }
    signal?.addEventListener("abort", crawlAborted, { once: true });
    if (signal?.aborted === true) this.stop();

    const workers: Promise<void>[] = [];
    for (let i = 0; i < maxTasks; i++) workers.push(this.work(i));
    try {
      // Suspends until every queued URL is done, or the crawl was stopped early.
      await Promise.race([this.q.join(), stopped]);
      this.stop(); // Cancel the idle workers, parked in get(): the chapter's `w.cancel()`.
      await Promise.allSettled(workers); // Stopped early: the fetches in flight finish (or are cancelled) first.
    } finally {
      signal?.removeEventListener("abort", crawlAborted);
      await this.client.close();
    }
    return crawlResult(this.seenUrls, this.records, startedAt, this.options);
  }

  /** One worker: take a URL, fetch it, mark it done, until the crawl stops taking URLs. */
  private async work(worker: number): Promise<void> {
    const { signal } = this.stopTaking;
    for (;;) {
      const { url, maxRedirect } = await this.q.get(signal); // rejects with CancelledError once stopped
      try {
        // An item handed over just before the stop is left unfetched: it counts as `todo`.
        if (signal.aborted) continue;
        this.taken += 1;
        if (this.taken >= this.options.maxPages) this.stop();
        this.tracer?.take(worker, url);
        await this.fetch(worker, url, maxRedirect);
      } catch {
        // The caller's abort: a cancelled fetch makes no record. Anything else is
        // a bug while handling this URL, thrown before fetch() records (its
        // recording step catches everything itself), so the URL has no record
        // yet: it gets a NetworkError one, and the worker goes on. Rethrowing
        // would end the worker, and join() could wait forever.
        if (!this.cancelFetches.signal.aborted) this.record(errorRecord(url, "NetworkError"));
      } finally {
        this.q.taskDone();
        this.tracer?.done(worker, url);
      }
    }
  }

  /**
   * Fetches one URL, with retries, and records the outcome: a page (queueing
   * its new links), a redirect (queueing its target), or an error.
   *
   * @throws the caller signal's reason, if it aborts the request: a cancelled
   * fetch makes no record.
   */
  private async fetch(worker: number, url: string, maxRedirect: number): Promise<void> {
    let response: HttpResponse | null = null;
    let failure: FetchError = "NetworkError";
    const { tracer } = this;
    for (let tries = 1; ; tries++) {
      this.inFlight += 1;
      tracer?.fetchStart(worker, url, tries);
      tracer?.awaiting(worker, url, "client.get");
      try {
        response = await this.client.get(url, this.cancelFetches.signal, tracer?.observer(worker, url));
      } catch (error) {
        if (this.cancelFetches.signal.aborted) {
          this.inFlight -= 1;
          throw error; // The crawl was aborted: this URL gets no record.
        }
        failure = errorName(error);
      }
      tracer?.resumed(worker, url);
      tracer?.fetchEnd(worker, url, tries, response?.status ?? null, response === null ? failure : null);
      this.inFlight -= 1; // After fetch-end: its counters include the fetch that ended, as in stages 1 and 2.
      if (response !== null || !isRetryable(failure) || tries >= this.options.maxTries) break;
    }
    // No await from here to the end: no other worker runs while this URL is
    // recorded and its links are checked against seenUrls and queued.
    const recordsBefore = this.records.length;
    try {
      if (response === null) this.record(errorRecord(url, failure));
      else this.handleResponse(url, response, maxRedirect);
    } catch {
      // Escaped our own code (a bug): the URL still ends with one record, and the worker goes on.
      if (this.records.length === recordsBefore) this.record(errorRecord(url, "NetworkError"));
    }
  }

  private handleResponse(url: string, response: HttpResponse, maxRedirect: number): void {
    let page: Page;
    try {
      page = readPage(url, response, this.options.maxBodyBytes);
    } catch (error) {
      this.record(errorRecord(url, errorName(error))); // BadResponse or BodyTooLarge: not retried
      return;
    }
    if (page.nextUrl !== null) {
      this.record(redirectRecord(url, page.status, page.nextUrl));
      // No await between the check and the add: no other worker runs here.
      if (!this.seenUrls.has(page.nextUrl) && this.policy.urlAllowed(page.nextUrl) && maxRedirect > 0) {
        this.addUrl(page.nextUrl, maxRedirect - 1);
      }
      return;
    }
    let numUrls = 0;
    const fresh: string[] = [];
    for (const link of page.links) {
      if (!this.policy.urlAllowed(link)) continue;
      numUrls += 1;
      if (!this.seenUrls.has(link)) fresh.push(link);
    }
    this.record(pageRecord(url, page, numUrls, fresh.length));
    // No await between the check and the add: no other worker runs here.
    for (const link of fresh) this.addUrl(link, this.options.maxRedirect);
  }

  /** Queues a URL and marks it seen in the same step, so no worker queues it twice. */
  private addUrl(url: string, maxRedirect: number): void {
    this.seenUrls.add(url);
    this.q.putNowait({ url, maxRedirect });
  }

  /** Appends a record and reports it (a throwing `onRecord` is ignored). */
  private record(statistic: FetchStatistic): void {
    appendRecord(this.records, statistic, this.options.onRecord);
  }

  /** Takes no more URLs from the queue: workers parked in `get()` are cancelled. Safe to call twice. */
  private stop(): void {
    if (!this.stopTaking.signal.aborted) this.stopTaking.abort(new CancelledError("the crawl stopped taking URLs"));
  }

  /** Resolves when {@link stop} is called. */
  private whenStopped(): Promise<void> {
    const { signal } = this.stopTaking;
    return new Promise<void>(function waitForStop(resolve) {
      signal.addEventListener("abort", function stopped() {
        resolve();
      }, { once: true });
    });
  }
}
