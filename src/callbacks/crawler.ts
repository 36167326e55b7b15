/**
 * The stage 1 Crawler: bookkeeping around Fetchers, with no queue and no
 * coroutines.
 *
 * @module
 */
import { errorName } from "../kernel/errors.js";
import { appendRecord, crawlResult, errorRecord, pageRecord, redirectRecord } from "../crawl/records.js";
import type { CrawlResult, FetchStatistic } from "../crawl/records.js";
import { InvalidStateError } from "../kernel/errors.js";
import { resolveOptions } from "../crawl/options.js";
import type { CrawlOptions, ResolvedCrawlOptions } from "../crawl/options.js";
import { readPage } from "../crawl/page.js";
import type { Page } from "../crawl/page.js";
import { UrlPolicy } from "../crawl/urls.js";
import { CrawlTracer } from "./crawl-tracer.js";
import { EventLoop } from "./event-loop.js";
import type { ExceptionSource } from "./event-loop.js";
import { Fetcher } from "./fetcher.js";
import type { FetchOutcome } from "./fetcher.js";

/** A URL waiting for a free slot, with the redirects it may still follow. */
interface TodoItem {
  url: string;
  maxRedirect: number;
}

/** What the Crawler keeps about a running Fetcher. */
interface Running {
  /** Redirects its URL may still follow. */
  maxRedirect: number;
  /** Which of the `maxTasks` slots it occupies (for trace events). */
  slot: number;
}

/**
 * Crawls from the roots with callbacks: at most `maxTasks` Fetchers run at
 * once, the other URLs wait in `urlsTodo` for a free slot, and each Fetcher's
 * `onFetched` callback records the outcome, queues the new links, and starts
 * the next Fetchers. The crawl ends when no Fetcher runs and no URL waits;
 * then the loop stops, and every socket and timer is gone.
 *
 * Nothing here can be interrupted: each callback runs to its end, so checking
 * `seenUrls` and adding to it need no lock (the chapter's point about
 * non-preemptive multitasking).
 *
 * Whatever goes wrong with one URL becomes its record: the Fetcher names
 * network and HTTP errors, a page that cannot be read is a record too, a bug
 * while handling an outcome gives the URL a `NetworkError` record, and an
 * exception that escapes a Fetcher's callback into the loop is turned by the
 * loop's exception handler into a `NetworkError` record for that Fetcher.
 * (Without that handler the exception would escape into Node with a ripped
 * stack; example 03 shows it with a bare EventLoop and Fetcher.)
 *
 * @remarks The chapter's callback crawler has no concurrency limit, no
 * redirects and no end but `stopped = True` in a global; this one bounds its
 * Fetchers with plain bookkeeping (a list of waiting URLs, a count of running
 * Fetchers), where stage 2 uses a queue. Cancellation is a `stopped` flag,
 * set by the `signal`'s abort listener: the Fetchers in flight are closed and
 * make no record.
 * @see Chapter, "Programming With Callbacks"; `crawling.py` (`Crawler`)
 */
export class Crawler {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The loop this crawl runs on: its selector and timers are empty again at the end. */
  readonly loop = new EventLoop();
  /** Every URL ever queued, in order (the chapter's `seen_urls`). */
  readonly seenUrls = new Set<string>();
  /** One record per URL fetched, in completion order. */
  readonly records: FetchStatistic[] = [];
  /** URLs waiting for a free slot, oldest first; the ones before `nextTodo` were taken. */
  private readonly urlsTodo: TodoItem[] = [];
  private nextTodo = 0;
  /** The Fetchers running (never more than `maxTasks`). */
  private readonly running = new Map<Fetcher, Running>();
  /** Slots freed by finished Fetchers, reused first; `slotsUsed` counts the slots ever handed out. */
  private readonly freeSlots: number[] = [];
  private slotsUsed = 0;
  private readonly policy: UrlPolicy;
  private stopped = false;
  private started = false;
  private startedAt = 0;
  private onDone: (result: CrawlResult) => void = doNothing;
  /** Reports to `options.trace`; null when the crawl is not traced. */
  private tracer: CrawlTracer | null = null;

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
   * Crawls, and calls `onDone` with the result when the crawl has ended.
   * Returns at once: the work happens in the loop's callbacks.
   *
   * @throws InvalidStateError when called a second time: a Crawler crawls once.
   */
  crawl(onDone: (result: CrawlResult) => void): void {
    if (this.started) throw new InvalidStateError("This Crawler has already crawled; make a new one");
    this.started = true;
    this.startedAt = Date.now();
    if (this.options.trace !== null) this.tracer = new CrawlTracer(this.options.trace, this.running, this.countWaiting);
    this.onDone = onDone;
    for (const root of this.policy.roots) this.addUrl(root, this.options.maxRedirect);
    const signal = this.options.signal;
    if (signal !== null) {
      if (signal.aborted) this.stopped = true;
      else signal.addEventListener("abort", this.aborted, { once: true });
    }
    this.loop.setExceptionHandler(this.loopException);
    this.tracer?.watch(this.loop);
    this.loop.runForever(this.loopStopped);
    this.startFetchers();
    this.stopIfDone();
  }

  private addUrl(url: string, maxRedirect: number): void {
    this.seenUrls.add(url);
    this.urlsTodo.push({ url, maxRedirect });
  }

  /** Starts Fetchers while a slot is free and a URL waits. */
  private startFetchers(): void {
    while (
      !this.stopped &&
      this.running.size < this.options.maxTasks &&
      this.nextTodo < this.urlsTodo.length &&
      this.nextTodo < this.options.maxPages
    ) {
      const { url, maxRedirect } = this.urlsTodo[this.nextTodo];
      this.nextTodo += 1;
      const fetcher = new Fetcher(url, this.loop, this.options, this.fetched, this.tracer?.fetcherStep ?? null);
      this.running.set(fetcher, { maxRedirect, slot: this.freeSlots.pop() ?? this.slotsUsed++ });
      fetcher.fetch();
    }
  }

  /** A Fetcher's last callback: record its URL, queue what it found, fill the free slot. */
  private readonly fetched = (fetcher: Fetcher, outcome: FetchOutcome): void => {
    const running = this.running.get(fetcher);
    if (running === undefined) return; // Cancelled by stop: no record.
    this.running.delete(fetcher);
    this.freeSlots.push(running.slot);
    try {
      this.handle(fetcher.url, running.maxRedirect, outcome);
    } catch {
      // A bug while handling this URL (handle records last, so there is no record yet): the URL
      // still gets its one record, and the crawl goes on.
      this.record(errorRecord(fetcher.url, "NetworkError"));
    }
    this.startFetchers();
    this.stopIfDone();
  };

  /** The shared decisions for one outcome: the record, then the redirect or the new links. */
  private handle(url: string, maxRedirect: number, outcome: FetchOutcome): void {
    if (outcome.error !== null) {
      this.record(errorRecord(url, outcome.error));
      return;
    }
    let page: Page;
    try {
      page = readPage(url, outcome.response, this.options.maxBodyBytes);
    } catch (error) {
      this.record(errorRecord(url, errorName(error)));
      return;
    }
    if (page.nextUrl !== null) {
      // No other callback runs between this check and addUrl.
      const follow = !this.seenUrls.has(page.nextUrl) && this.urlAllowed(page.nextUrl) && maxRedirect > 0;
      this.record(redirectRecord(url, page.status, page.nextUrl));
      if (follow) this.addUrl(page.nextUrl, maxRedirect - 1);
      return;
    }
    const links = page.links.filter(this.urlAllowed, this);
    const fresh = links.filter(this.isNew, this);
    this.record(pageRecord(url, page, links.length, fresh.length));
    for (const link of fresh) this.addUrl(link, this.options.maxRedirect);
  }

  private isNew(url: string): boolean {
    return !this.seenUrls.has(url);
  }

  /** Appends a record and reports it (a throwing `onRecord` is ignored). */
  private record(record: FetchStatistic): void {
    appendRecord(this.records, record, this.options.onRecord);
  }

  private stopIfDone(): void {
    const waiting = this.nextTodo < this.urlsTodo.length && this.nextTodo < this.options.maxPages;
    if (this.running.size === 0 && (this.stopped || !waiting)) this.loop.stop();
  }

  /** URLs waiting for a free slot (the trace's `queued`). */
  private readonly countWaiting = (): number => this.urlsTodo.length - this.nextTodo;

  /** The signal's abort listener: take no more URLs, close the Fetchers in flight, end the crawl. */
  private readonly aborted = (): void => {
    this.stopped = true;
    for (const fetcher of this.running.keys()) fetcher.cancel(); // Its callback may be the one running now.
    this.running.clear();
    this.loop.stop();
  };

  /** An exception escaped a callback: it ends the URL of the Fetcher it came from as a `NetworkError`. */
  private readonly loopException = (error: unknown, source: ExceptionSource): void => {
    for (const fetcher of this.running.keys()) {
      if (fetcher.owns(source)) {
        fetcher.close();
        this.fetched(fetcher, { response: null, error: "NetworkError" });
        return;
      }
    }
    throw error; // Not from a Fetcher: a bug in the crawler itself, so let it be seen.
  };

  /** Runs once the loop has stopped: nothing is registered and no timer is left. */
  private readonly loopStopped = (): void => {
    this.options.signal?.removeEventListener("abort", this.aborted);
    this.loop.selector.close();
    this.onDone(crawlResult(this.seenUrls, this.records, this.startedAt, this.options));
  };
}

function doNothing(): void {}
