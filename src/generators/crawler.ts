/**
 * The stage 2 Crawler: worker coroutines sharing a joinable queue.
 *
 * @module
 */
import { CancelledError, InvalidStateError, errorName, isRetryable } from "../kernel/errors.js";
import { appendRecord, crawlResult, errorRecord, pageRecord, redirectRecord } from "../crawl/records.js";
import type { CrawlResult, FetchError, FetchStatistic } from "../crawl/records.js";
import type { HttpResponse } from "../http/parser.js";
import { resolveOptions } from "../crawl/options.js";
import type { CrawlOptions, ResolvedCrawlOptions } from "../crawl/options.js";
import { readPage } from "../crawl/page.js";
import type { Page } from "../crawl/page.js";
import { UrlPolicy } from "../crawl/urls.js";
import { CrawlTracer } from "./crawl-tracer.js";
import type { Coroutine } from "./future.js";
import { JoinableQueue } from "./joinable-queue.js";
import { request } from "./request.js";
import { getRunningLoop } from "./running-loop.js";
import { Task } from "./task.js";
import { cancelAndWait } from "./wait-done.js";
import { waitFor } from "./wait-for.js";

/** A queued URL and the redirects it may still follow (the chapter's `(url, max_redirect)` pair). */
interface QueueItem {
  url: string;
  maxRedirect: number;
}

/**
 * Crawls from the roots with `maxTasks` worker coroutines. `crawl()` starts
 * the workers and waits on `yield* q.join()`; each worker loops on
 * `q.get()`, `fetch()`, `q.taskDone()`; `fetch()` makes the attempts, reads
 * the page, records it, and queues its new links. When the last URL is done,
 * `join()` returns and `crawl()` cancels the workers, now idle in `get()`.
 *
 * A URL's whole story (its tries, its response, its redirect or its links)
 * lives in the locals of one `fetch()` call: there is no Fetcher class. A
 * coroutine can only be interrupted at a `yield*`, so checking `seenUrls` and
 * adding to it, with no `yield*` in between, needs no lock.
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
 * @see Chapter, "Coordinating Coroutines"; `crawling.py` (`Crawler.crawl`, `work`, `fetch`)
 * @example
 * ```ts
 * const loop = new EventLoop();
 * const result = await loop.runUntilComplete(new Crawler("http://127.0.0.1:8080/").crawl());
 * loop.close();
 * ```
 */
export class Crawler {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** Every URL ever queued, in order (the chapter's `seen_urls`). */
  readonly seenUrls = new Set<string>();
  /** One record per URL fetched, in completion order. */
  readonly records: FetchStatistic[] = [];
  private readonly q = new JoinableQueue<QueueItem>();
  private readonly policy: UrlPolicy;
  private readonly workers: Array<Task<void>> = [];
  /** URLs taken from the queue so far, for `maxPages`. */
  private taken = 0;
  /** Workers inside `fetch()` right now (for the trace). */
  private inFlight = 0;
  /** Reports fetch events to the loop's trace; made by `crawl()`. */
  private tracer: CrawlTracer | null = null;
  /** Set when the signal aborts: no more URLs are queued or taken. */
  private stopped = false;
  private started = false;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean {
    return this.policy.urlAllowed(url);
  }

  /**
   * Runs the crawl until all work is done (or `maxPages`, or the signal),
   * and returns the result. Run it in a Task: `loop.runUntilComplete(crawler.crawl())`.
   *
   * @throws {@link shared!InvalidStateError} when called a second time: a Crawler crawls once.
   */
  *crawl(): Coroutine<CrawlResult> {
    if (this.started) throw new InvalidStateError("This Crawler has already crawled; make a new one");
    this.started = true;
    const startedAt = Date.now();
    const loop = getRunningLoop();
    this.tracer = new CrawlTracer(loop, this.q, this.countInFlight);
    this.tracer.attach(this.options.trace); // detach() in the finally gives the loop back its own trace.
    const signal = this.options.signal;
    if (signal?.aborted === true) this.stopped = true;
    for (const root of this.policy.roots) this.addUrl(root, this.options.maxRedirect);
    signal?.addEventListener("abort", this.aborted, { once: true });
    try {
      for (let slot = 0; slot < this.options.maxTasks && !this.stopped; slot++) {
        this.workers.push(new Task(this.work(slot), loop, "work"));
      }
      yield* this.q.join(); // When all work is done, exit.
    } finally {
      signal?.removeEventListener("abort", this.aborted);
      // Waits for every worker even if we are cancelled again meanwhile; their
      // `finally` blocks close every socket.
      yield* cancelAndWait(this.workers);
      this.tracer.detach();
    }
    return crawlResult(this.seenUrls, this.records, startedAt, this.options);
  }

  /** A worker: take a URL, fetch it, mark it done; until cancelled. `slot` numbers it in the trace. */
  private *work(slot: number): Coroutine<void> {
    for (;;) {
      const { url, maxRedirect } = yield* this.q.get(); // Idle workers wait here, and are cancelled here.
      this.taken += 1;
      if (this.taken >= this.options.maxPages) this.drain();
      this.inFlight += 1;
      try {
        yield* this.fetch(url, maxRedirect, slot);
      } catch (error) {
        if (error instanceof CancelledError) throw error;
        // A bug while handling this URL: fetch() records last, so the URL has no record yet.
        this.record(errorRecord(url, "NetworkError"));
      } finally {
        this.inFlight -= 1;
        this.q.taskDone();
      }
    }
  }

  /**
   * Fetches one URL, following the rules every stage shares: retries,
   * a timeout per attempt, then the redirect or the links.
   */
  private *fetch(url: string, maxRedirect: number, slot: number): Coroutine<void> {
    const onStep = this.tracer?.requestSteps(url, slot) ?? null;
    let response: HttpResponse | null = null;
    let error: FetchError = "NetworkError";
    let tries = 0;
    while (tries < this.options.maxTries) {
      tries += 1;
      this.tracer?.fetchStart(url, slot, tries);
      try {
        response = yield* waitFor(request(new URL(url), this.options, onStep), this.options.timeoutMs);
        this.tracer?.fetchEnd(url, slot, tries, response.status, null);
        break;
      } catch (caught) {
        if (caught instanceof CancelledError) throw caught; // We are cancelled, not the attempt.
        error = errorName(caught);
        this.tracer?.fetchEnd(url, slot, tries, null, error);
        if (!isRetryable(error)) break;
        if (this.stopped) return; // Aborted meanwhile: no more attempts, and, as for any fetch cut short, no record.
      }
    }
    if (response === null) {
      this.record(errorRecord(url, error));
      return;
    }
    let page: Page;
    try {
      page = readPage(url, response, this.options.maxBodyBytes);
    } catch (caught) {
      this.record(errorRecord(url, errorName(caught)));
      return;
    }
    // No yield* from here on: no other worker runs between a check of seenUrls and the add.
    // The record is made last, so an exception above leaves the URL without one (see work()).
    if (page.nextUrl !== null) {
      const next = page.nextUrl;
      // A redirect target already seen means we have been down this path before.
      if (!this.seenUrls.has(next) && this.urlAllowed(next) && maxRedirect > 0) this.addUrl(next, maxRedirect - 1);
      this.record(redirectRecord(url, page.status, next));
      return;
    }
    const links = page.links.filter(this.urlAllowed, this);
    const fresh = links.filter(this.isNew, this);
    for (const link of fresh) this.addUrl(link, this.options.maxRedirect);
    this.record(pageRecord(url, page, links.length, fresh.length));
  }

  /** Marks `url` seen and, unless the crawl stopped taking URLs, queues it. */
  private addUrl(url: string, maxRedirect: number): void {
    this.seenUrls.add(url);
    if (!this.stopped && this.taken < this.options.maxPages) this.q.putNowait({ url, maxRedirect });
  }

  private isNew(url: string): boolean {
    return !this.seenUrls.has(url);
  }

  /** Appends a record and reports it (a throwing `onRecord` is ignored). */
  private record(record: FetchStatistic): void {
    appendRecord(this.records, record, this.options.onRecord);
  }

  /** Takes every waiting URL out of the queue (each stays in `seenUrls`, so it counts as `todo`). */
  private drain(): void {
    while (!this.q.empty()) {
      this.q.getNowait();
      this.q.taskDone();
    }
  }

  /** Workers inside `fetch()` (the trace's `inFlight`). */
  private readonly countInFlight = (): number => this.inFlight;

  /** The signal's abort listener: stop queueing, drop the waiting URLs, cancel every worker. */
  private readonly aborted = (): void => {
    this.stopped = true;
    this.drain();
    // A cancelled worker's fetch ends at its yield*, without a record; its finally calls taskDone().
    for (const worker of this.workers) worker.cancel();
  };
}
