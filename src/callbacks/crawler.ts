/**
 * The stage 1 Crawler: Fetchers started and called back, with no queue and
 * no coroutines.
 *
 * @module
 */
import { CrawlCore, type Job } from "../crawl/core.js";
import { resolveOptions, type CrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { Slots } from "../crawl/slots.js";
import { worldFor } from "../crawl/world.js";
import { IdleConnections } from "../http/idle-connections.js";
import type { TimerHandle } from "../kernel/timers.js";
import { EventLoop, type ExceptionSource } from "./event-loop.js";
import { Fetcher, type FetcherOptions, type FetchOutcome } from "./fetcher.js";

/**
 * Crawls from the roots with callbacks. `startFetchers` asks the crawl core
 * for jobs and starts a Fetcher for each (at most `maxTasks` run at once);
 * each Fetcher's callback hands its outcome to the core, which says whether
 * to try again after a pause or what the URL gave, and then starts the next
 * Fetchers. When the core has nothing left, the loop stops, and every socket
 * and timer is gone.
 *
 * Between two callbacks nothing runs, so the core's decisions need no lock:
 * each callback runs to its end (the chapter's point about non-preemptive
 * multitasking).
 *
 * The state of a fetch lives on its Fetcher (`this`) and in the closure of
 * its callback: the job it works for, and the slot it runs in. That is the
 * state a callback chain must carry by hand. An exception escaping a Fetcher's callback reaches the loop,
 * not `crawl()`, whose frame is long gone (stack ripping); the loop's
 * exception handler ends that Fetcher's attempt as a `NetworkError`.
 *
 * @remarks The chapter's callback crawler has no concurrency limit, no
 * redirects and no end but `stopped = True` in a global; here the core keeps
 * count, and an abort stops the core and the loop, whose end closes the
 * Fetchers in flight and hands their jobs back to the core.
 * @see Chapter, "Programming With Callbacks"; `crawling.py` (`Crawler`); src/crawl/core.ts
 */
export class Crawler {
  /** The crawl's decisions and what it knows: options, policy, seen URLs, records (src/crawl/core.ts). */
  readonly core: CrawlCore;
  /** The loop this crawl runs on: its selector and timers are empty again at the end. */
  readonly loop = new EventLoop();
  /** What runs for each job out, its Fetcher or (a wait) its timer, in slots: src/crawl/slots.ts says why not a Map. */
  private readonly running = new Slots<Fetcher | TimerHandle>();
  /** The jobs out, which the loop's end hands back to the core however the crawl ended. */
  private readonly out = new Set<Job>();
  /** Connections kept open for the next request to their origin, closed when the crawl ends. */
  private readonly connections = new IdleConnections();
  private readonly pageOptions: FetcherOptions;
  private readonly robotsOptions: FetcherOptions;
  private onDone: (result: CrawlResult) => void = () => {};
  private onFailed: (error: unknown) => void = rethrow;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    const settings = resolveOptions(options);
    this.core = new CrawlCore("callbacks", roots, settings, worldFor(settings));
    this.pageOptions = { ...this.core.options, connections: this.connections };
    this.robotsOptions = { ...this.pageOptions, skipNonHtml: false }; // A robots.txt or a sitemap is read whole.
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean { return this.core.urlAllowed(url); }

  /**
   * Crawls, and calls `onDone` with the result when the crawl has ended, or
   * `onFailed` with the store's error when it could not keep the crawl (a
   * `state` that could not be written; unless given, it is thrown into the
   * loop). Returns at once: the work happens in the loop's callbacks.
   *
   * @throws InvalidStateError when called a second time: a Crawler crawls once.
   */
  crawl(onDone: (result: CrawlResult) => void, onFailed: (error: unknown) => void = rethrow): void {
    const loop = this.loop;
    this.core.begin(loop.id, function time() { return loop.time(); });
    const signal = this.core.options.signal;
    if (signal?.aborted === true) this.core.stop(); // Aborted before it began: no job is handed out.
    signal?.addEventListener("abort", this.aborted, { once: true });
    this.onDone = onDone;
    this.onFailed = onFailed;
    this.loop.setExceptionHandler(this.loopException);
    this.loop.runForever(this.loopStopped);
    this.startFetchers();
  }

  /** Starts a Fetcher for each job the core hands out (a timer for a wait); stops the loop when nothing is left. */
  private startFetchers(): void {
    for (let job = this.core.next(); job !== null; job = this.core.next()) {
      this.out.add(job);
      if (job.kind === "wait") this.wait(job);
      else this.attempt(job);
    }
    if (this.core.done) this.loop.stop();
  }

  /** Starts an attempt at the job's URL: a new Fetcher, whose callback carries the job and the Fetcher's slot. */
  private attempt(job: Job): void {
    const crawler = this;
    const options = job.kind === "page" ? this.pageOptions : this.robotsOptions;
    const fetcher = new Fetcher(job.url, this.loop, options, function fetched(f, outcome) { crawler.fetched(job, slot, f, outcome); }, this.core.id);
    const slot = this.running.add(fetcher);
    this.core.started(job);
    fetcher.fetch();
  }

  /** Waits until a host's delay is over, on a timer of the loop, while nothing else can run. */
  private wait(job: Job): void {
    const crawler = this;
    const timer = this.loop.callLater(job.delayMs, function waited() { crawler.jobDone(job, slot, timer); });
    const slot = this.running.add(timer);
  }

  /** An attempt ended: the core says try again after a pause (on the Fetcher's own timer), or the job is done. */
  private fetched(job: Job, slot: number, fetcher: Fetcher, outcome: FetchOutcome): void {
    const step = this.core.settle(job, outcome, fetcher.detail);
    const crawler = this;
    if (step.kind === "retry") return fetcher.later(step.delayMs, function pauseOver() { crawler.pauseOver(job, slot, fetcher); });
    this.jobDone(job, slot, fetcher);
  }

  /** A retry's pause is over: the next attempt, in a new Fetcher; unless the crawl was stopped meanwhile (a store that failed), which starts none. */
  private pauseOver(job: Job, slot: number, fetcher: Fetcher): void {
    if (this.core.stopped) return this.jobDone(job, slot, fetcher);
    this.running.remove(slot, fetcher);
    this.attempt(job);
  }

  /** A job is over: its slot is free, the core takes it back, and the next Fetchers start. */
  private jobDone(job: Job, slot: number, running: Fetcher | TimerHandle): void {
    this.running.remove(slot, running);
    this.out.delete(job);
    this.core.finish(job);
    this.startFetchers();
  }

  /** An exception escaped a callback: it ends the attempt of the Fetcher it came from as a `NetworkError`. */
  private readonly loopException = (error: unknown, source: ExceptionSource): void => {
    for (const fetcher of this.running.list()) {
      if (!(fetcher instanceof Fetcher) || !fetcher.owns(source)) continue;
      fetcher.close();
      return fetcher.onFetched(fetcher, "NetworkError"); // Its callback, fetched, carries its job.
    }
    throw error; // Not from a Fetcher: a bug in the crawler itself, so let it be seen.
  };

  /** The signal's abort: the core stops, and so does the loop, whose end closes the Fetchers in flight. */
  private readonly aborted = (): void => {
    this.core.stop();
    this.loop.stop();
  };

  /**
   * Runs once the loop has stopped: closes what still runs and hands every
   * job out back to the core (a URL cut short stays to do; a `robots.txt`
   * cut short is reported, as in every stage); then nothing is registered
   * and no timer is left.
   */
  private readonly loopStopped = (): void => {
    this.core.options.signal?.removeEventListener("abort", this.aborted);
    for (const each of this.running.list()) {
      if (each instanceof Fetcher) each.close();
      else each.cancel();
    }
    for (const job of this.out) this.core.finish(job);
    this.out.clear();
    this.connections.close();
    this.loop.selector.close();
    let result: CrawlResult;
    try {
      result = this.core.end();
    } catch (error) {
      return this.onFailed(error);
    }
    this.onDone(result);
  };
}

function rethrow(error: unknown): never {
  throw error;
}
