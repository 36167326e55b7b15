/**
 * The stage 1 Crawler: Fetchers started and called back, with no queue and
 * no coroutines.
 *
 * @module
 */
import type { CrawlCore, Job } from "../crawl/core.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { coreFor, listenForAbort } from "../crawl/world.js";
import { EventLoop } from "./event-loop.js";
import { Fetcher, type FetchOutcome } from "./fetcher.js";
import { JobsOut } from "./jobs-out.js";

/**
 * Crawls from the roots with callbacks. `crawl()` asks the crawl core for
 * jobs and starts a Fetcher for each (a timer for a wait; the core never has
 * more than `maxTasks` out); each Fetcher's callback, `fetched`, hands its
 * outcome to the core, which says whether to try again after a pause (on the
 * Fetcher's own timer) or what the URL gave; then the job is done, and the
 * next Fetchers start. When the core has nothing left, the loop stops, and
 * every socket and timer is gone.
 *
 * Between two callbacks nothing runs, so the core's decisions need no lock:
 * each callback runs to its end (the chapter's point about non-preemptive
 * multitasking).
 *
 * The state of a fetch lives on its Fetcher (`this`) and in the closures of
 * its callbacks: `fetched` and `pauseOver` carry the job they work for. That
 * is the state a callback chain must carry by hand. Each attempt has its own
 * Fetcher, since a `robots.txt` redirect moves the job to another URL. An
 * exception in a Fetcher's callback ends its attempt inside the Fetcher
 * (`failed`), since the loop, not `crawl()`, would get it (stack ripping).
 * What runs for each job out, and how its requests are made, is kept by
 * hand too, in a `JobsOut` (jobs-out.ts).
 *
 * @remarks The chapter's callback crawler has no concurrency limit, no
 * redirects and no end but `stopped = True` in a global; here the core keeps
 * count, and an abort stops the loop, whose end closes the Fetchers in flight
 * and hands their jobs back to the core.
 * @see Chapter, "Programming With Callbacks"; `crawling.py` (`Crawler`); src/crawl/core.ts
 */
export class Crawler {
  /** The crawl's decisions and what it knows: options, policy, seen URLs, records (src/crawl/core.ts). */
  readonly core: CrawlCore;
  /** The loop this crawl runs on: its selector and timers are empty again at the end. */
  readonly loop = new EventLoop();

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    this.core = coreFor("callbacks", roots, options);
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean { return this.core.urlAllowed(url); }

  /**
   * Crawls, and calls `onDone` with the result when the crawl has ended, or
   * `onFailed` with the store's error when it could not keep the crawl (a
   * `state` that could not be written), or with what `onDone` threw; unless
   * given, it is thrown into the loop. Returns at once: the work happens in
   * the loop's callbacks, the functions below.
   *
   * @throws InvalidStateError when called a second time: a Crawler crawls once.
   */
  crawl(onDone: (result: CrawlResult) => void, onFailed: (error: unknown) => void = rethrow): void {
    const { core, loop } = this;
    const out = new JobsOut<Job>(core.options); // The jobs out, with their Fetchers or timers, and how their requests are made.
    core.begin(loop); // The loop's time() is the crawl's clock.
    const stopListening = listenForAbort(core, core.options.signal, aborted);
    loop.runForever(function loopStopped() {
      stopListening();
      for (const job of out.close()) core.finish(job); // Every Fetcher and timer closed; a URL cut short stays to do.
      try {
        onDone(core.end());
      } catch (error) {
        onFailed(error);
      }
    });
    startFetchers();

    /** The signal's abort: the core stops, and so does the loop, whose end closes the Fetchers in flight. */
    function aborted(): void {
      core.stop();
      loop.stop();
    }

    /** Starts a Fetcher (a timer for a wait) for each job the core hands out; stops the loop when nothing is left. */
    function startFetchers(): void {
      for (let job = core.next(); job !== null; job = core.next()) start(job);
      if (core.done) loop.stop();
    }

    /** Starts the job: a wait on a timer of the loop, else an attempt with a new Fetcher, whose callback, `fetched`, carries the job. */
    function start(job: Job): void {
      if (job.kind === "wait") return out.set(job, loop.callLater(job.delayMs, function waited() { jobDone(job); }));
      const fetcher = new Fetcher(job.url, loop, out.optionsFor(job), function fetched(_, outcome) { settle(job, fetcher, outcome); }, core.id);
      out.set(job, fetcher);
      core.started(job);
      fetcher.fetch();
    }

    /** An attempt ended: the core says try again (at `job.url`) after a pause, on the Fetcher's own timer, wait for the page hook's promise (a callback), or the job is done. */
    function settle(job: Job, fetcher: Fetcher, outcome: FetchOutcome): void {
      const step = core.settle(job, outcome, fetcher.detail);
      if (step.kind === "done") jobDone(job);
      else if (step.kind === "hook") out.set(job, step.hook.whenSettled(function hooked(settled) { core.hooked(job, settled); jobDone(job); })); // The onPage hook returned a promise.
      else fetcher.later(step.delayMs, function pauseOver() { if (core.stopped) jobDone(job); else start(job); }); // A store that failed meanwhile stopped the crawl: no next attempt.
    }

    /** A job is over: the core takes it back, and the next Fetchers start. */
    function jobDone(job: Job): void {
      out.delete(job);
      core.finish(job);
      startFetchers();
    }
  }
}

function rethrow(error: unknown): never {
  throw error;
}
