/**
 * The crawl core: every decision of a crawl, and no waiting (sans I/O).
 *
 * @module
 */
import type { HttpResponse } from "../http/parser.js";
import { InvalidStateError, isRetryable, type FetchError } from "../kernel/errors.js";
import { crawlChannel, type QueueCounters, type StageName } from "../observe/channels.js";
import { resolveOptions, retryDelay, type CrawlOptions, type ResolvedCrawlOptions } from "./options.js";
import { HostLines, type Cancellable } from "./politeness.js";
import { appendRecord, errorRecord, isFetchedPage, type CrawlResult, type FetchStatistic, type StoppedBy } from "./records.js";
import { RobotsReading } from "./robots.js";
import { CrawlRun } from "./run.js";
import { SITEMAP_MAX_FILES, sitemapSeeds, visitSitemap, type SitemapContext } from "./sitemaps.js";
import { StateStore } from "./state.js";
import { MemoryStore, type CrawlStore, type StoreSummary } from "./store.js";
import { UrlPolicy } from "./urls.js";
import { visit, type QueueItem, type Visit } from "./visit.js";

/**
 * Something for a stage to do, handed out by {@link CrawlCore.next}:
 * - `page`: fetch `url`, a page whose host has given it its turn;
 * - `robots`: fetch `url`, an origin's `robots.txt` (read whole, whatever `skipNonHtml` says);
 * - `sitemap`: fetch `url`, a sitemap (option `sitemaps`) whose host has given it its turn (read whole, as a `robots.txt`);
 * - `wait`: wait `delayMs`, then `finish(job)`: URLs wait for a host's delay, and nothing else can run now.
 *
 * Fetch a page, a `robots.txt` or a sitemap the same way: `started(job)`, one attempt,
 * `settle(job, outcome)`, as often as `settle` says; then `finish(job)`.
 */
export class Job {
  /** Attempts started at `url` (a `robots.txt` redirect starts the count again). */
  attempt: number;
  /** Set once `settle` said `done`. */
  settled = false;

  constructor(
    readonly kind: "page" | "robots" | "sitemap" | "wait",
    /** The URL to fetch; a `robots.txt` redirect changes it. Empty for a wait. */
    public url: string,
    /** For a wait, when it is over (performance.now() ms); else 0. */
    readonly until: number,
    /** For a page or a sitemap, the URL as it was queued. */
    readonly item: QueueItem | null,
    /** For a `robots.txt`, its reading. */
    readonly reading: RobotsReading | null,
  ) {
    this.attempt = item?.tries ?? 0; // After a Retry-After, the attempts go on from where they were.
  }

  /** For a wait, how long from now, in ms. */
  get delayMs(): number {
    return Math.max(0, this.until - performance.now());
  }
}

/**
 * What an attempt's outcome means for its job ({@link CrawlCore.settle}):
 * `retry` after `delayMs`, for a `robots.txt` only (a 5xx, a 429 or a
 * network error, after the backoff or a `Retry-After` hold; a redirect, at
 * once); or `done` (a page to try again is put back, and comes out as a new job).
 */
export type Step = { readonly kind: "retry"; readonly delayMs: number } | { readonly kind: "done" };

const DONE: Step = { kind: "done" };

/** How long a wait lasts when only a shared store may bring more URLs (another process's, a write in flight): short, since its answers come in a millisecond or so, and a wait costs nothing but a timer. */
const STORE_POLL_MS = 5;

/** A wake-up the host lines asked for, due at `at` (performance.now() ms) unless called off. */
class Wakeup implements Cancellable {
  cancelled = false;
  constructor(
    readonly at: number,
    readonly wake: () => void,
  ) {}

  cancel(): void {
    this.cancelled = true;
  }
}

/**
 * One crawl's decisions, made in one place for the three stages: which URL
 * runs next and when (its host's turn, `robots.txt` first, `maxTasks`,
 * `maxPages`), what each attempt's outcome means (retry after a pause,
 * a `Retry-After` hold, the rules of a `robots.txt`, the record and the URLs
 * to queue through `visit()`), when the crawl is over, and what it reports.
 * It keeps its URLs in a {@link CrawlStore}.
 *
 * It never waits and never imports a stage: a stage asks it for jobs, runs
 * each in its own style, and hands back the outcomes. Between two calls
 * nothing changes here, so a stage needs no lock (the chapter's point about
 * cooperative multitasking): whatever one call reads, it also writes.
 *
 * The one wait it needs, for a host whose delay has not run out while
 * nothing else can run, it hands out as a `wait` job: so the stage's queue
 * always holds, or is running, the work that keeps the crawl alive, and the
 * chapter's `join()` still tells when the crawl is over.
 *
 * @remarks This is the shape of h11 and hyper's h2 (Cory Benfield and Brett
 * Cannon, "network protocols, sans I/O"): a synchronous object takes events
 * and returns actions; the code around it does the I/O. The chapter's
 * crawler makes these decisions inline in `fetch()`; three stages making
 * them each their own way came to decide one case three ways.
 * @see Chapter, "Coordinating Coroutines"; docs/behaviour.md
 */
export class CrawlCore implements SitemapContext {
  /** The options in force, defaults filled in. */
  readonly options: ResolvedCrawlOptions;
  /** The URL policy: the roots, the hosts they allow, `exclude`, `maxDepth`. */
  readonly policy: UrlPolicy;
  /** Where the URLs live: the seen set, the queue, what becomes of each. */
  readonly store: CrawlStore;
  /** One record per URL fetched, in completion order (unless `keepRecords` is false). */
  readonly records: FetchStatistic[] = [];
  /** Records made, kept or not, and records a shared store is storing. */
  private recorded = 0;
  private recording = 0;
  /** Of those, the records of pages fetched (not of URLs `robots.txt` refused): with `pages`, what `maxPages` counts. */
  private fetched = 0;
  private fetching = 0;
  private readonly hosts: HostLines;
  /** Jobs handed out and not finished: pages, `robots.txt` files and waits. */
  private jobs = 0;
  /** Of those, pages and sitemaps: with `fetched` and `fetching`, what `maxPages` counts. */
  private pages = 0;
  /** Sitemap files queued (option `sitemaps`), of {@link SITEMAP_MAX_FILES}. */
  private sitemapFiles = 0;
  /** Of those, waits: when each is over (performance.now() ms). */
  private waitsUntil: number[] = [];
  /** The host lines' wake-ups not yet run. */
  private wakeups: Wakeup[] = [];
  private run: CrawlRun | null = null;
  private startedAt = 0;
  private stopping = false;
  private cancelStage: () => void = noop;

  /**
   * @param stage - The stage that crawls, for the trace.
   * @param store - Where the URLs live: unless given, a {@link StateStore} in the `state` directory, or a {@link MemoryStore}.
   * @throws TypeError for an unusable root or a bad option, naming it (`state`: another crawl's state).
   */
  constructor(
    private readonly stage: StageName,
    roots: string | string[],
    options: CrawlOptions = {},
    store?: CrawlStore,
  ) {
    this.options = resolveOptions(options);
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    if (store !== undefined && this.options.state !== null) throw new TypeError("Expected `state` to be left out with a store of its own (a frontier): that store keeps the crawl");
    this.store = store ?? (this.options.state === null ? new MemoryStore() : new StateStore(this.options.state));
    this.store.open?.(this.options, this.aborted, this.policy.roots);
    this.fetched = this.store.resumed ?? 0; // A resumed crawl's maxPages counts the pages its earlier runs fetched.
    const core = this;
    this.hosts = new HostLines(this.options, {
      requeue(item) { core.store.putBack(item); }, // Its host's turn came: back in the queue.
      robotsKnown(origin) { return core.store.robotsRules?.(origin) ?? null; }, // Read by another process sharing the store.
      later(ms, wake) {
        const wakeup = new Wakeup(performance.now() + ms, wake);
        core.wakeups.push(wakeup);
        return wakeup;
      },
    });
  }

  /** The URLs seen so far, which `visit()` reads. */
  get seenUrls(): ReadonlySet<string> { return this.store.seenUrls; }
  /** `visit()` reads this option: redirects a new URL may follow. */
  get maxRedirect(): number { return this.options.maxRedirect; }
  /** `visit()` reads this option: the largest body it reads. */
  get maxBodyBytes(): number { return this.options.maxBodyBytes; }
  /** `visitSitemap()` reads this: sitemap files the crawl may still queue. */
  get sitemapFilesLeft(): number { return SITEMAP_MAX_FILES - this.sitemapFiles; }
  /** The crawl id every message of this crawl carries (0 before `begin`). */
  get id(): number { return this.run?.id ?? 0; }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean {
    return this.policy.urlAllowed(url);
  }

  /**
   * Starts the crawl: queues the roots, and listens to the caller's signal,
   * which stops the crawl and calls `cancel`, the stage's way of ending what
   * is in flight.
   *
   * @param loop - The id of the hand-made loop the crawl runs in (stages 1 and 2), else null.
   * @throws InvalidStateError when called a second time: a crawl runs once.
   */
  begin(loop: number | null, cancel: () => void): void {
    if (this.run !== null) throw new InvalidStateError("This Crawler has already crawled; make a new one");
    this.run = new CrawlRun(this.stage, this.options.trace, loop);
    this.startedAt = Date.now();
    this.cancelStage = cancel;
    this.store.add(this.policy.roots.map((url) => ({ url, maxRedirect: this.options.maxRedirect })));
    if (this.options.sitemaps) for (const origin of this.rootOrigins()) this.queueSitemaps(sitemapSeeds(["/sitemap.xml"], origin, null, this));
    if (this.options.signal?.aborted === true) this.stop();
    this.options.signal?.addEventListener("abort", this.aborted, { once: true });
  }

  /**
   * The next job to run, or null when there is none now (`maxTasks` jobs are
   * out, or nothing can run): a URL whose host lets it go, that host's
   * `robots.txt` first, or a wait while URLs wait only for time. URLs whose
   * host is busy wait in its line; those `robots.txt` refuses are recorded.
   */
  next(): Job | null {
    if (this.wakeups.length > 0) this.runDueWakeups();
    while (!this.stopped && this.jobs < this.options.maxTasks) {
      if (this.maxPagesReached()) return this.waitJob(false);
      const item = this.store.take();
      if (item === undefined) return this.waitJob(true);
      const turn = this.hosts.turn(item);
      if (turn.kind === "go") return this.handOut(new Job(item.sitemap === undefined ? "page" : "sitemap", item.url, 0, item, null));
      if (turn.kind === "robots") {
        const reading = new RobotsReading(turn.origin, this.options, this.policy);
        return this.handOut(new Job("robots", reading.url, 0, null, reading));
      }
      if (turn.kind === "refused") this.finishUrl(item, { record: errorRecord(item.url, turn.error, item.referrer ?? null, turn.detail, { depth: item.depth ?? 0, tries: item.tries ?? 0 }), next: [] });
      // "wait": it waits in its host's line, and comes back through the store when its turn comes.
    }
    return null;
  }

  /** An attempt at the job starts now. */
  started(job: Job): void {
    job.attempt += 1;
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.id, url: job.url, attempt: job.attempt, ...this.counters() });
  }

  /**
   * What the attempt's outcome (a response, or its error's name, with
   * `detail`, Node's words for a `TlsError`) means: a `robots.txt` tried
   * again after a pause; or done: the URL recorded and its links queued, the
   * URL put back to be tried again (resting for the backoff, or behind its
   * host's `Retry-After` hold), or a `robots.txt` read.
   */
  settle(job: Job, outcome: HttpResponse | FetchError, detail: string | null = null): Step {
    const error = typeof outcome === "string" ? outcome : null;
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-end", crawl: this.id, url: job.url, attempt: job.attempt, status: error === null ? (outcome as HttpResponse).status : null, error, detail: error === null ? null : detail, ...this.counters() });
    if (this.stopped) return DONE; // Stopping: no more attempts, and no record; finish() leaves the URL to do.
    if (job.reading !== null) return this.robotsStep(job, outcome, detail);
    const item = job.item as QueueItem; // A page: it has its item.
    const retry = this.retryStep(job, item, outcome, detail);
    if (retry !== null) return retry;
    let v: Visit;
    try {
      v = job.kind === "sitemap" ? visitSitemap(item, outcome, this, detail, job.attempt) : visit(item, outcome, this, detail, job.attempt);
    } catch {
      v = { record: errorRecord(item.url, "NetworkError", item.referrer ?? null, null, { depth: item.depth ?? 0, tries: job.attempt }), next: [] }; // A bug: the URL still gets its one record.
    }
    if (job.kind === "sitemap") this.sitemapFiles += v.next.filter((each) => each.sitemap !== undefined).length;
    this.finishUrl(item, v);
    return this.settled(job);
  }

  /**
   * The stage is done with the job, however it ended. A page or `robots.txt`
   * never settled was cut short: by the crawl stopping (no record, it stays
   * to do), or by a bug in the stage (a `NetworkError` record). A wait is
   * over: the hosts whose time has come hand out their URLs.
   */
  finish(job: Job): void {
    this.jobs -= 1;
    if (job.kind === "wait") {
      this.waitsUntil.splice(this.waitsUntil.indexOf(job.until), 1);
      this.runDueWakeups(); // The hosts whose time has come hand out their URLs.
      return;
    }
    if (job.kind === "page" || job.kind === "sitemap") {
      this.pages -= 1;
      const item = job.item as QueueItem;
      if (!job.settled && this.stopped) this.store.release(item);
      else if (!job.settled) this.finishUrl(item, { record: errorRecord(item.url, "NetworkError", item.referrer ?? null, null, { depth: item.depth ?? 0, tries: job.attempt }), next: [] });
      this.hosts.finished(item); // Its host may let the next URL go.
      return;
    }
    const reading = job.reading as RobotsReading; // A robots.txt: it has its reading.
    reading.fail(); // Unless it was read: cut short, and nothing there is fetched.
    this.hosts.robotsRead(reading);
  }

  /**
   * Whether the crawl is over: no job out, and the store expects no more
   * URLs. Ask after `next()` returned null: with no job out, nothing else
   * can bring any.
   */
  get done(): boolean {
    return this.jobs === 0 && this.recording === 0 && !this.store.pending();
  }

  /** Whether the crawl was stopped (the signal, or `stop()`): no job is handed out any more. */
  get stopped(): boolean {
    return this.stopping;
  }

  /** Stops the crawl: no job is handed out from now on, and the URLs waiting for their hosts stay to do. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.store.stop();
    for (const item of this.hosts.close()) this.store.release(item);
  }

  /**
   * Ends the crawl and returns its result: stops listening to the signal,
   * calls off every wake-up, ends the trace.
   *
   * @throws what the store throws when it could not keep the crawl (a shared store that stopped answering).
   */
  end(): CrawlResult {
    this.options.signal?.removeEventListener("abort", this.aborted);
    this.hosts.close();
    this.run?.end();
    return this.result(this.store.summary(this.recorded));
  }

  /** The result, from what the store reports. */
  private result(summary: StoreSummary): CrawlResult {
    return {
      records: summary.records ?? this.records,
      recorded: summary.recorded ?? this.recorded,
      seen: summary.seen,
      todo: summary.todo,
      stoppedBy: this.stoppedBy(summary.todo),
      startedAt: this.startedAt,
      finishedAt: Date.now(),
      options: this.options,
      robots: this.hosts.robotsFetches,
    };
  }

  /** The signal's abort listener: stop, and let the stage end what is in flight. */
  private readonly aborted = (): void => {
    this.stop();
    this.cancelStage();
  };

  /**
   * Whether a page's attempt is tried again, while `maxTries` allows: a
   * network error that may not happen again (`isRetryable`) or a status of
   * `retryHttpCodes`. The URL is put back, with its attempts so far, and
   * takes its turn at its host again like any URL: after the backoff
   * (`retryDelayMs`, doubling), resting meanwhile (`HostLines.rest`); or,
   * for a `429` or `503`, at once, holding its host back for its
   * `Retry-After` or the backoff, whichever is longer. Either way a retry
   * obeys its host's holds, `maxPerHost` and delay, as no retry is made in
   * place. Null: the outcome is the URL's last (a `Retry-After` over
   * `maxRetryAfterMs` is too). A URL put back is settled: `done`.
   */
  private retryStep(job: Job, item: QueueItem, outcome: HttpResponse | FetchError, detail: string | null): Step | null {
    if (job.attempt >= this.options.maxTries) return null;
    const backoff = retryDelay(this.options.retryDelayMs, job.attempt);
    let hold: number | "too-long" | null = null;
    if (typeof outcome === "string") {
      if (!isRetryable(outcome, detail)) return null;
    } else {
      if (!this.options.retryHttpCodes.includes(outcome.status)) return null;
      hold = this.hosts.retryAfter(outcome, backoff);
      if (hold === "too-long") return null;
    }
    const again = { ...item, tries: job.attempt }; // The attempts go on from here when it is handed out again.
    if (hold === null) {
      this.hosts.rest(again, backoff);
    } else {
      this.hosts.holdBack(item.url, hold);
      this.store.putBack(again, hold); // To wait in its host's line, not in a worker; a shared store holds the host back for every process.
    }
    return this.settled(job);
  }

  /**
   * What a `robots.txt` attempt's outcome means: again after a pause, at the
   * redirect's target at once, or read. A `429` or `503` holds its host back
   * for its `Retry-After` or the backoff, whichever is longer, as a page's
   * does, and the retry waits that long; one whose `Retry-After` is over
   * `maxRetryAfterMs` is the last attempt (the origin is unreachable). A
   * retry waits for its host's delay or hold too: it does not go through the
   * host's line.
   */
  private robotsStep(job: Job, outcome: HttpResponse | FetchError, detail: string | null): Step {
    const reading = job.reading as RobotsReading;
    const tooLong = typeof outcome !== "string" && this.hosts.retryAfter(outcome, 0) === "too-long";
    const step = reading.next(outcome, detail, !tooLong);
    if (step === "retry") return { kind: "retry", delayMs: this.robotsPause(reading.url, outcome, retryDelay(this.options.retryDelayMs, reading.attempts)) };
    if (step === "follow") {
      job.url = reading.url;
      job.attempt = 0;
      return { kind: "retry", delayMs: 0 };
    }
    this.hosts.robotsRead(reading); // Its URLs waiting for it go on, or are refused when taken.
    this.store.robotsRead?.(reading.origin, reading.rules); // A shared store keeps them for every process.
    if (this.options.sitemaps && this.rootOrigins().has(reading.origin)) this.queueSitemaps(sitemapSeeds(reading.rules.sitemaps, reading.url, reading.url, this));
    return this.settled(job);
  }

  /**
   * How long a `robots.txt` waits before its retry at `url`: the backoff, or
   * a `429` or `503`'s hold, which holds the host back for every request;
   * and no less than the host's delay or hold left.
   */
  private robotsPause(url: string, outcome: HttpResponse | FetchError, backoff: number): number {
    const hold = typeof outcome === "string" ? null : this.hosts.retryAfter(outcome, backoff);
    if (typeof hold === "number") this.hosts.holdBack(url, hold);
    return Math.max(typeof hold === "number" ? hold : backoff, this.hosts.holdLeft(url));
  }

  /**
   * What stopped a crawl that ends with `todo` URLs left: nothing when none
   * is left; `maxPages` once that many pages were fetched (unless the signal
   * aborted); else the signal, or `stop()`.
   */
  private stoppedBy(todo: number): StoppedBy | null {
    if (todo === 0) return null;
    return this.fetched >= this.options.maxPages && this.options.signal?.aborted !== true ? "maxPages" : "signal";
  }

  /** Whether `maxPages` pages have been fetched, are being stored, or are out: no more pages are handed out. */
  private maxPagesReached(): boolean {
    return this.fetched + this.fetching + this.pages >= this.options.maxPages;
  }

  private settled(job: Job): Step {
    job.settled = true;
    return DONE;
  }

  private handOut(job: Job): Job {
    this.jobs += 1;
    if (job.kind === "page" || job.kind === "sitemap") this.pages += 1;
    return job;
  }

  /**
   * A wait until the earliest host's delay is over (with `hosts`), or a short
   * one while a shared store may still bring URLs or store a record; null when
   * there is nothing to wait for, or a wait out ends as early.
   */
  private waitJob(hosts: boolean): Job | null {
    let at = Infinity;
    if (hosts) for (const w of this.wakeups) if (!w.cancelled && w.at < at) at = w.at;
    if (at === Infinity && (this.recording > 0 || this.store.pending())) at = performance.now() + STORE_POLL_MS;
    if (at === Infinity || this.waitsUntil.some((until) => until <= at)) return null;
    this.waitsUntil.push(at);
    return this.handOut(new Job("wait", "", at, null, null));
  }

  /** The origins of the roots, whose sitemaps option `sitemaps` reads. */
  private rootOrigins(): Set<string> {
    return new Set(this.policy.roots.map((root) => new URL(root).origin));
  }

  /** Queues the sitemaps the crawl starts from (see src/crawl/sitemaps.ts), counting them. */
  private queueSitemaps(items: QueueItem[]): void {
    this.sitemapFiles += items.length;
    this.store.add(items);
  }

  /** Runs the host lines' wake-ups whose time has come. */
  private runDueWakeups(): void {
    const now = performance.now();
    const due = this.wakeups.filter((w) => w.at <= now && !w.cancelled);
    this.wakeups = this.wakeups.filter((w) => w.at > now && !w.cancelled);
    for (const w of due) w.wake();
  }

  /**
   * Hands the URL's visit to the store, which stores the record and queues
   * its new URLs; then counts and reports the record. A record of a URL
   * requested (`tries` over 0) is a page `maxPages` counts; one `robots.txt`
   * refused is not.
   */
  private finishUrl(item: QueueItem, v: Visit): void {
    const core = this;
    const page = isFetchedPage(v.record);
    this.recording += 1;
    if (page) this.fetching += 1;
    this.store.finish(item, v, function stored(record) {
      core.recording -= 1;
      if (page) core.fetching -= 1;
      if (record === null) return;
      core.recorded += 1;
      if (page) core.fetched += 1;
      appendRecord(core.records, record, core.options);
      if (core.fetched >= core.options.maxPages) core.store.stop(); // maxPages: take no more URLs.
    });
  }

  /**
   * The counters of a fetch message: every URL waiting (in the store, in a
   * host's line, or resting before a retry), work left, and the fetches out.
   */
  private counters(): QueueCounters {
    const queued = this.store.size + this.hosts.waitingUrls;
    const inFlight = this.jobs - this.waitsUntil.length;
    return { queued, unfinished: queued + inFlight, inFlight };
  }
}

function noop(): void {}
