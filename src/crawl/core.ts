/**
 * The crawl core: every decision of a crawl, and no waiting (sans I/O).
 *
 * @module
 */
import { InvalidStateError, isRetryable } from "../kernel/errors.js";
import { storeCookies, withCookies } from "./cookies.js";
import type { QueueCounters, StageName } from "../observe/channels.js";
import { Job, type JobRequest, type JobState, type Outcome, type Step } from "./job.js";
import { retryDelay, type ResolvedCrawlOptions } from "./options.js";
import { HostLines, type Cancellable, type HostView } from "./politeness.js";
import { appendRecord, errorRecord, isFetchedPage, type CrawlResult, type FetchStatistic, type StoppedBy } from "./records.js";
import { RobotsReading } from "./robots.js";
import { CrawlRun } from "./run.js";
import { SITEMAP_MAX_FILES, sitemapSeeds, visitSitemap, type SitemapContext } from "./sitemaps.js";
import { STORE_IDLE_MS, type CrawlStore, type StoreSummary } from "./store.js";
import { UrlPolicy } from "./urls.js";
import { visit, visitHooked, type PendingVisit, type QueueItem, type Visit } from "./visit.js";
import type { HookSettled } from "./page-context.js";
import type { CrawlItem } from "./page-hook.js";
import type { RandomSource } from "./random.js";

export { Job, type JobRequest, type JobState, type Outcome, type Step } from "./job.js";

/**
 * What a {@link CrawlCore} reads of the world besides the stage's clock
 * (which comes with `begin()`, since a stage 2 Crawler meets its loop only
 * when its crawl runs). A test gives its own: a store it can look into, a
 * wall clock that stands still, a random source that always says 0.5.
 */
export interface CoreWorld {
  /** Where the URLs live: the seen set, the queue, the records (src/crawl/store.ts). */
  readonly store: CrawlStore;
  /** The wall clock, in milliseconds since the epoch (`Date.now`): the result's `startedAt` and `finishedAt`, and a `Retry-After` given as an HTTP date. */
  readonly wallClock: () => number;
  /** Uniform floats in [0, 1), seeded (src/crawl/random.ts): a host delay's `delayJitter`. */
  readonly random: RandomSource;
}

/**
 * Where the crawl is: `not begun` until `begin()`, `running`, `stopping`
 * from `stop()` on (no job is handed out; the jobs out are finished), and
 * `ended` once `end()` returned the result.
 */
export type CrawlState = "not begun" | "running" | "stopping" | "ended";

/** A hand-made event loop a crawl runs in (stages 1 and 2), as {@link CrawlCore.begin} reads it: its id, for the trace, and its clock. */
export interface CrawlLoop {
  /** The loop's number, which the trace's messages carry. */
  readonly id: number;
  /** The loop's clock, in milliseconds (asyncio's `loop.time()`, in ms). */
  time(): number;
}

/** What {@link CrawlCore.view} shows of a crawl core. */
export interface CoreView {
  readonly seen: number;
  readonly todo: number;
  readonly recorded: number;
  readonly jobs: number;
  readonly hosts: HostView[];
}

const DONE: Step = { kind: "done" };

/**
 * How long a wait lasts when only a shared store may bring more URLs (another
 * process's, a write in flight) and the store does not say when it has news
 * (no `onChange`): short, since its answers come in a millisecond or so.
 */
const STORE_POLL_MS = 5;

/**
 * The reason a wait for the store's news is aborted with: given, so that no
 * `DOMException` (with its stack) is made at each piece of news.
 */
const STORE_NEWS = "the store has news";

/** A wake-up the host lines asked for, due at `at` (the stage's clock, ms) unless called off. */
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
 * It never waits, never imports a stage and reads nothing from the world:
 * the stage hands in its clock (`begin()`), and a {@link CoreWorld} with the
 * store, the wall clock and a seeded random source (src/crawl/world.ts). It
 * calls nothing back either: the stage asks it for jobs, runs each in its
 * own style, hands back the outcomes, and calls `stop()` on an abort.
 * Between two calls nothing changes here, so a stage needs no lock (the
 * chapter's point about cooperative multitasking): whatever one call reads,
 * it also writes.
 *
 * It is a protocol object: the crawl has a state ({@link CrawlState}) and
 * each job one ({@link JobState}), and a call out of order throws an
 * {@link InvalidStateError} naming the call and the state, before it
 * changes anything: the core stays as it was and usable.
 *
 * The one wait it needs, for a host whose delay has not run out while
 * nothing else can run, it hands out as a `wait` job: so the stage's queue
 * always holds, or is running, the work that keeps the crawl alive, and the
 * chapter's `join()` still tells when the crawl is over.
 *
 * @remarks This is the shape of h11 and hyper's h2 (Cory Benfield and Brett
 * Cannon, "network protocols, sans I/O"): a synchronous object takes events
 * and returns actions; the code around it does the I/O. h11's `Connection`
 * goes to an `ERROR` state after a protocol error, since a byte stream half
 * parsed cannot be trusted; here a refused call has changed nothing, so the
 * core stays usable, and one job's misuse does not take the other jobs'
 * records down with it. The chapter's crawler makes these decisions inline
 * in `fetch()`; three stages making them each their own way came to decide
 * one case three ways.
 * @see Chapter, "Coordinating Coroutines"; docs/crawl-core.md; docs/behaviour.md
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
  /** The items the `onPage` hook made, in the order their pages were done (unless `keepRecords` is false). */
  readonly items: CrawlItem[] = [];
  /** Where the crawl is (read it as `state`). */
  private crawlState: CrawlState = "not begun";
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
  /** Of those, waits: when each is over (the stage's clock, ms). */
  private waitsUntil: number[] = [];
  /** The host lines' wake-ups not yet run. */
  private wakeups: Wakeup[] = [];
  private run: CrawlRun | null = null;
  private startedAt = 0;
  /** The stage's clock, in ms: given to `begin()`; waits, host delays and holds are measured on it. */
  private clock: () => number = notBegun;
  private readonly wallClock: () => number;
  /** Set by `finishInFlight()` (the `finishSignal` option): no job is handed out, the jobs out finish and make their records. */
  private finishing = false;
  /** Aborted when the store has news (`onChange`): ends the store waits out; made by the first such wait after the last news. */
  private storeNews: AbortController | null = null;

  /**
   * @param stage - The stage that crawls, for the trace: any name (a fourth stage names itself).
   * @param options - The options in force (`resolveOptions()`): a stage resolves them first, to build the world.
   * @param world - The store, the wall clock and the random source (`worldFor(options)`, src/crawl/world.ts).
   * @throws TypeError for an unusable root, naming it; what the store's `open` throws (`state`: another crawl's state).
   */
  constructor(
    private readonly stage: StageName,
    roots: string | string[],
    options: ResolvedCrawlOptions,
    world: CoreWorld,
  ) {
    this.options = options;
    this.policy = new UrlPolicy(typeof roots === "string" ? [roots] : roots, this.options);
    this.store = world.store;
    this.wallClock = world.wallClock;
    const core = this;
    this.store.open?.(this.options, function stopCrawl() { core.stop(); }, this.policy.roots);
    this.fetched = this.store.resumed ?? 0; // A resumed crawl's maxPages counts the pages its earlier runs fetched.
    this.store.onChange?.(function changed() { core.storeChanged(); });
    this.hosts = new HostLines(
      this.options,
      {
        requeue(item) { core.store.putBack(item); }, // Its host's turn came: back in the queue.
        robotsKnown(origin) { return core.store.robotsRules?.(origin) ?? null; }, // Read by another process sharing the store.
        later(ms, wake) {
          const wakeup = new Wakeup(core.clock() + ms, wake);
          core.wakeups.push(wakeup);
          return wakeup;
        },
      },
      function now() { return core.clock(); },
      world.random,
      world.wallClock,
    );
  }

  /** The URLs seen so far, which `visit()` reads. */
  get seenUrls(): ReadonlySet<string> { return this.store.seenUrls; }
  /** `visit()` reads this option: redirects a new URL may follow. */
  get maxRedirect(): number { return this.options.maxRedirect; }
  /** `visit()` reads this option: the largest body it reads. */
  get maxBodyBytes(): number { return this.options.maxBodyBytes; }
  /** `visit()` reads this option: the attributes besides `<a href>` links are taken from. */
  get linkAttributes(): readonly string[] { return this.options.linkAttributes; }
  /** `visitSitemap()` reads this: sitemap files the crawl may still queue. */
  get sitemapFilesLeft(): number { return SITEMAP_MAX_FILES - this.sitemapFiles; }
  /** Where the crawl is: see {@link CrawlState}. */
  get state(): CrawlState { return this.crawlState; }
  /** The crawl id every message of this crawl carries (0 before `begin`). */
  get id(): number { return this.run?.id ?? 0; }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean {
    return this.policy.urlAllowed(url);
  }

  /**
   * Starts the crawl: queues the roots (and, with `sitemaps`, the root
   * origins' `/sitemap.xml`), and says so on the crawl channel.
   *
   * @param loop - The hand-made loop the crawl runs in (stages 1 and 2), else null: its `id` names it in the trace, and its `time()` is the crawl's clock unless `clock` is given.
   * @param clock - The stage's clock, in milliseconds: by default `loop.time()`; stage 3, with no loop of its own, gives the high-resolution clock of `node:perf_hooks`. It comes here, not to the constructor, since a stage 2 Crawler meets its loop only when its crawl runs.
   * @throws InvalidStateError when called a second time: a crawl runs once.
   * @throws TypeError with neither a loop nor a clock.
   */
  begin(loop: CrawlLoop | null, clock?: () => number): void {
    if (this.crawlState !== "not begun") throw this.crawlMisuse("begin()", "this Crawler has already crawled; make a new one");
    if (clock === undefined && loop === null) throw new TypeError("Expected begin() to get a clock, or a loop whose time() is one");
    this.crawlState = "running";
    this.clock = clock ?? function loopTime() { return (loop as CrawlLoop).time(); };
    const core = this;
    this.run = new CrawlRun(this.stage, this.options.trace, loop?.id ?? null, function counters() { return core.counters(); });
    this.startedAt = this.wallClock();
    this.store.add(this.policy.roots.map((url) => ({ url, maxRedirect: this.options.maxRedirect })));
    if (this.options.sitemaps) for (const origin of this.rootOrigins()) this.queueSitemaps(sitemapSeeds(["/sitemap.xml"], origin, null, this));
  }

  /**
   * The next job to run, or null when there is none now (`maxTasks` jobs are
   * out, or nothing can run, or the crawl is stopping): a URL whose host lets
   * it go, that host's `robots.txt` first, or a wait while URLs wait only for
   * time. URLs whose host is busy wait in its line; those `robots.txt`
   * refuses are recorded.
   *
   * @throws InvalidStateError before `begin()` and after `end()`.
   */
  next(): Job | null {
    if (this.crawlState !== "running") {
      if (this.crawlState === "stopping") return null;
      throw this.crawlMisuse("next()");
    }
    if (this.wakeups.length > 0) this.runDueWakeups();
    while (this.crawlState === "running" && this.jobs < this.options.maxTasks) {
      if (this.maxPagesReached()) return this.waitJob(false);
      const item = this.store.take();
      if (item === undefined) return this.waitJob(true);
      const turn = this.hosts.turn(item);
      if (turn.kind === "go") return this.handOut(new Job(item.sitemap === undefined ? "page" : "sitemap", item.url, 0, item, null, this.clock));
      if (turn.kind === "robots") {
        const reading = new RobotsReading(turn.origin, this.options, this.policy);
        return this.handOut(new Job("robots", reading.url, 0, null, reading, this.clock));
      }
      if (turn.kind === "refused") this.finishUrl(item, { record: errorRecord(item.url, turn.error, item.referrer ?? null, turn.detail, { depth: item.depth ?? 0, tries: item.tries ?? 0 }), next: [] });
      // "wait": it waits in its host's line, and comes back through the store when its turn comes.
    }
    return null;
  }

  /**
   * What to send for the job's next attempt: its URL, whether its body may
   * be left unread (a page) or is read whole, and the options that shape
   * every request of the crawl, its `headers` with the jar's `Cookie` for
   * the URL when the crawl keeps cookies (`withCookies`, src/crawl/cookies.ts).
   * The stages build the same from `options` (src/http/crawl-requests.ts,
   * crawl-client.ts); a new stage may ask here.
   */
  request(job: Job): JobRequest {
    const { userAgent, headers, cookies, timeoutMs, idleTimeoutMs, maxBodyBytes, skipNonHtml, ca, rejectUnauthorized } = this.options;
    return { url: job.url, body: job.kind === "page" ? "skippable" : "whole", userAgent, headers: withCookies(headers, cookies, job.url), timeoutMs, idleTimeoutMs, maxBodyBytes, skipNonHtml, ca, rejectUnauthorized };
  }

  /**
   * An attempt at the job starts now: counts it, and publishes `fetch-start`.
   *
   * @throws InvalidStateError unless the crawl is running (check `stopped`
   * first: after a stop, a job is finished, not attempted) and the job is
   * `handed` (a page, `robots.txt` or sitemap, not attempting, settled or finished).
   */
  started(job: Job): void {
    if (this.crawlState !== "running" || job.state !== "handed" || job.kind === "wait") throw this.startMisuse(job);
    job.state = "attempting";
    job.attempt += 1;
    this.run?.fetchStart(job.url, job.attempt);
    this.store.started?.(job.url); // A shared store counts the origin's delay from here (RedisFrontier).
  }

  /**
   * What the attempt's outcome (a response, or its error's name, with
   * `detail`, Node's words for a `TlsError`) means: a `robots.txt` tried
   * again after a pause (the job is `handed` again: `started()` comes next);
   * or done (the job is `settled`): the URL recorded and its links queued,
   * the URL put back to be tried again (resting for the backoff, or behind
   * its host's `Retry-After` hold), or a `robots.txt` read.
   * Publishes `fetch-end` first: a subscriber that stops the crawl there
   * stops it before this outcome counts. When the crawl keeps cookies, a
   * response's `Set-Cookie` fields go into its jar first, whatever the
   * outcome means (a redirect's, a `robots.txt`'s, a response after a stop).
   *
   * @throws InvalidStateError unless the job is `attempting` (started and not settled), or after `end()`.
   */
  settle(job: Job, outcome: Outcome, detail: string | null = null): Step {
    if (job.state !== "attempting" || this.crawlState === "ended") throw this.jobMisuse("settle()", job);
    this.run?.fetchEnd(job.url, job.attempt, outcome, detail);
    if (this.options.cookies !== null && typeof outcome !== "string") storeCookies(this.options.cookies, job.url, outcome.headers["set-cookie"], new Date(this.wallClock()));
    const step = this.outcomeStep(job, outcome, detail);
    job.state = step.kind === "done" ? "settled" : step.kind === "hook" ? "hooking" : "handed";
    return step;
  }

  /**
   * The page hook's promise of a `hook` step settled (`settled`: its value
   * or its reason): the URL is recorded and its links queued, as `settle()`
   * does for a hook that returned at once, or, when the crawl was stopped
   * meanwhile, left to do without a record. The job is `settled`: only
   * `finish()` is left.
   *
   * @throws InvalidStateError unless the job is `hooking` (a `hook` step, not yet hooked or finished).
   */
  hooked(job: Job, settled: HookSettled): void {
    if (job.state !== "hooking" || this.crawlState === "ended") throw this.jobMisuse("hooked()", job);
    const pending = job.pending as PendingVisit;
    job.pending = null;
    job.state = "settled";
    if (this.stopped) {
      this.cutShort(job);
      return;
    }
    const item = job.item as QueueItem;
    let v: Visit;
    try {
      v = pending.settle(settled);
    } catch {
      v = { record: errorRecord(item.url, "NetworkError", item.referrer ?? null, null, { depth: item.depth ?? 0, tries: job.attempt }), next: [] }; // A bug: the URL still gets its one record.
    }
    this.finishUrl(item, v);
  }

  /**
   * The stage is done with the job, however it ended. A page or `robots.txt`
   * never settled was cut short: by the crawl stopping (no record, it stays
   * to do), or by a bug in the stage (a `NetworkError` record). A wait is
   * over: the hosts whose time has come hand out their URLs.
   *
   * @throws InvalidStateError for a job already finished, and before `begin()` or after `end()`.
   */
  finish(job: Job): void {
    if (job.state === "finished" || (this.crawlState !== "running" && this.crawlState !== "stopping")) throw this.jobMisuse("finish()", job);
    const settled = job.state === "settled";
    job.state = "finished";
    this.jobs -= 1;
    if (job.kind === "wait") {
      this.waitsUntil.splice(this.waitsUntil.indexOf(job.until), 1);
      this.runDueWakeups(); // The hosts whose time has come hand out their URLs.
      return;
    }
    if (job.kind === "page" || job.kind === "sitemap") {
      this.pages -= 1;
      const item = job.item as QueueItem;
      if (!settled && this.stopped) this.store.release(item);
      else if (!settled) this.finishUrl(item, { record: errorRecord(item.url, "NetworkError", item.referrer ?? null, null, { depth: item.depth ?? 0, tries: job.attempt }), next: [] });
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

  /** Whether the crawl was stopped (`stop()`): no job is handed out any more, and none is started. */
  get stopped(): boolean {
    return this.crawlState === "stopping" || this.crawlState === "ended";
  }

  /**
   * Stops the crawl: no job is handed out or started from now on, an outcome
   * settled from now on makes no record, and the URLs waiting for their
   * hosts stay to do. The stage then ends what is in flight in its own way
   * and finishes each job out.
   *
   * Safe at any time after `begin()`, any number of times, and inside another
   * call of the core: a subscriber of `fetch-start` or `fetch-end`, or an
   * `onRecord`, may abort the crawl, and the stage's abort handling calls
   * `stop()` (and `finish()` for the jobs it had queued) from there. It
   * changes nothing the call it interrupts still reads: that call's job is
   * settled without a record, or handed back when finished. After `end()` it
   * does nothing.
   *
   * @throws InvalidStateError before `begin()`.
   */
  stop(): void {
    if (this.crawlState !== "running") {
      if (this.crawlState === "not begun") throw this.crawlMisuse("stop()");
      return;
    }
    this.crawlState = "stopping";
    this.store.stop();
    for (const item of this.hosts.close()) this.store.release(item);
  }

  /**
   * Stops the crawl gently (the `finishSignal` option): no job is handed out
   * from now on, and the URLs waiting for their hosts stay to do, as with
   * `stop()`; but the jobs out go on, and their outcomes make records as
   * usual (a retry one needs is left to do). The crawl is over once they are
   * finished. `stop()` after it still cuts them short. Called on the
   * `finishSignal` option's abort by `listenForAbort` (src/crawl/world.ts).
   */
  finishInFlight(): void {
    if (this.crawlState !== "running" || this.finishing) return;
    this.finishing = true;
    this.store.stop();
    for (const item of this.hosts.close()) this.store.release(item);
    this.storeChanged(); // A wait for the store's URLs ends: none will come.
  }

  /**
   * Ends the crawl and returns its result: calls off every wake-up and ends
   * the trace.
   *
   * @throws InvalidStateError before `begin()`, a second time, or while a
   * job is out: a stage finishes every job it was handed, however the crawl
   * ended, so that each URL is recorded or left to do, and each `robots.txt`
   * read or reported cut short, the same in every stage.
   * @throws what the store throws when it could not keep the crawl (a shared store that stopped answering).
   */
  end(): CrawlResult {
    if (this.crawlState !== "running" && this.crawlState !== "stopping") throw this.crawlMisuse("end()");
    if (this.jobs > 0) throw new InvalidStateError(`end() of a crawl with ${this.jobs} job${this.jobs === 1 ? "" : "s"} out: finish() each first`);
    this.crawlState = "ended";
    this.hosts.close();
    this.run?.end();
    return this.result(this.store.summary(this.recorded));
  }

  /** The result, from what the store reports. */
  private result(summary: StoreSummary): CrawlResult {
    return {
      records: summary.records ?? this.records,
      items: summary.items ?? this.items,
      recorded: summary.recorded ?? this.recorded,
      seen: summary.seen,
      todo: summary.todo,
      stoppedBy: this.stoppedBy(summary.todo),
      startedAt: this.startedAt,
      finishedAt: this.wallClock(),
      options: this.options,
      robots: this.hosts.robotsFetches,
    };
  }

  /** What an attempt's outcome means (the decision of {@link CrawlCore.settle}, which publishes nothing). */
  private outcomeStep(job: Job, outcome: Outcome, detail: string | null): Step {
    if (this.stopped) return this.cutShort(job); // Stopping: no more attempts, and no record.
    if (job.reading !== null) return this.robotsStep(job, outcome, detail);
    const item = job.item as QueueItem; // A page: it has its item.
    const retry = this.retryStep(job, item, outcome, detail);
    if (retry !== null) return retry;
    let v: Visit | PendingVisit;
    try {
      const { onPage } = this.options;
      if (job.kind === "sitemap") v = visitSitemap(item, outcome, this, detail, job.attempt);
      else v = onPage === null ? visit(item, outcome, this, detail, job.attempt) : visitHooked(item, outcome, this, onPage, detail, job.attempt);
    } catch {
      v = { record: errorRecord(item.url, "NetworkError", item.referrer ?? null, null, { depth: item.depth ?? 0, tries: job.attempt }), next: [] }; // A bug: the URL still gets its one record.
    }
    if ("hook" in v) {
      job.pending = v; // The hook returned a promise: the stage waits for it, then calls hooked().
      return { kind: "hook", hook: v.hook };
    }
    if (job.kind === "sitemap") this.sitemapFiles += v.next.filter((each) => each.sitemap !== undefined).length;
    this.finishUrl(item, v);
    return DONE;
  }

  /** An outcome that came after a stop: no record; a page's URL stays to do, a `robots.txt` is reported cut short when finished. */
  private cutShort(job: Job): Step {
    if (job.item !== null) this.store.release(job.item);
    return DONE;
  }

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
  private retryStep(job: Job, item: QueueItem, outcome: Outcome, detail: string | null): Step | null {
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
    if (this.finishing) {
      this.store.release(item); // Finishing what is in flight: a retry is left to do.
      return DONE;
    }
    const again = { ...item, tries: job.attempt }; // The attempts go on from here when it is handed out again.
    if (hold === null) {
      this.hosts.rest(again, backoff);
    } else {
      this.hosts.holdBack(item.url, hold);
      this.store.putBack(again, hold); // To wait in its host's line, not in a worker; a shared store holds the host back for every process.
    }
    return DONE;
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
  private robotsStep(job: Job, outcome: Outcome, detail: string | null): Step {
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
    return DONE;
  }

  /**
   * How long a `robots.txt` waits before its retry at `url`: the backoff, or
   * a `429` or `503`'s hold, which holds the host back for every request;
   * and no less than the host's delay or hold left.
   */
  private robotsPause(url: string, outcome: Outcome, backoff: number): number {
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
    const listens = this.store.onChange !== undefined;
    const forStore = at === Infinity && (this.recording > 0 || this.store.pending());
    if (forStore) at = this.clock() + (listens ? STORE_IDLE_MS : STORE_POLL_MS);
    if (at === Infinity || this.waitsUntil.some((until) => until <= at)) return null;
    this.waitsUntil.push(at);
    const job = new Job("wait", "", at, null, null, this.clock);
    if (forStore && listens) {
      this.storeNews ??= new AbortController();
      job.woken = this.storeNews.signal; // Ended by the store's news.
    }
    return this.handOut(job);
  }

  /** The store has news (`onChange`), or a record was stored: the waits for it end. */
  private storeChanged(): void {
    const news = this.storeNews;
    this.storeNews = null;
    news?.abort(STORE_NEWS);
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
    const now = this.clock();
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
      core.storeChanged(); // A wait for this record ends.
      if (record === null) return;
      core.recorded += 1;
      if (page) core.fetched += 1;
      appendRecord(core.records, record, core.options);
      if (v.items !== undefined) for (const made of v.items) core.appendItem(made); // Once stored with their record: onItem after onRecord.
      if (core.fetched >= core.options.maxPages) core.store.stop(); // maxPages: take no more URLs.
    });
  }

  /** Keeps an item (unless `keepRecords` is false) and hands it to `onItem`, whose failure is ignored as `onRecord`'s is. */
  private appendItem(made: CrawlItem): void {
    if (this.options.keepRecords) this.items.push(made);
    try {
      this.options.onItem?.(made);
    } catch {
      // The caller's callback failed; watching must not break the crawl.
    }
  }

  /**
   * What the core holds now, for a debugger's view (the stepper,
   * stepper/record.ts): URLs seen, URLs left to do (queued, in a host's
   * line or resting), records made, jobs out, and each host's line
   * ({@link HostLines.view}). Read-only: it changes nothing and reads no clock.
   */
  view(): CoreView {
    return { seen: this.store.seenUrls.size, todo: this.counters().queued, recorded: this.recorded, jobs: this.jobs, hosts: this.hosts.view() };
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

  /** The error for a crawl-level call out of order: `next() of a crawl not begun`. Built only when thrown. */
  private crawlMisuse(call: string, hint?: string): InvalidStateError {
    const where = this.crawlState === "not begun" ? "not begun" : this.crawlState === "ended" ? "already ended" : `already ${this.crawlState}`;
    return new InvalidStateError(`${call} of a crawl ${where}${hint === undefined ? "" : `: ${hint}`}`);
  }

  /** The error for `started()` out of order: a stopped crawl, a wait, or a job not `handed`. */
  private startMisuse(job: Job): InvalidStateError {
    if (job.kind === "wait") return new InvalidStateError("started() of a wait job: wait its delayMs, then finish() it");
    if (job.state !== "handed") return this.jobMisuse("started()", job);
    if (this.crawlState === "stopping") return new InvalidStateError(`started() after stop() (${job.url}): check \`stopped\` first, and finish() the job`);
    return this.crawlMisuse("started()");
  }

  /** The error for a call about a job in the wrong state: `finish() of a job already finished (http://…/a)`. */
  private jobMisuse(call: string, job: Job): InvalidStateError {
    if (this.crawlState !== "running" && this.crawlState !== "stopping") return this.crawlMisuse(call);
    return new InvalidStateError(`${call} of a job ${JOB_STATE_WORDS[job.state]} (${job.kind === "wait" ? `a wait of ${job.until} ms` : job.url})`);
  }
}

/** How a misuse message names a job's state. */
const JOB_STATE_WORDS: Readonly<Record<JobState, string>> = {
  handed: "not started",
  attempting: "already attempting",
  hooking: "waiting for its page hook",
  settled: "already settled",
  finished: "already finished",
};

/** The clock before `begin()`: nothing may read it then. */
function notBegun(): number {
  throw new InvalidStateError("the crawl core's clock was read before begin()");
}
