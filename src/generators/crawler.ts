/** crawler.ts ↔ crawling.py of the chapter (`Crawler.crawl`, `work`, `fetch`): the stage 2 Crawler,
 * worker coroutines sharing a joinable queue.
 *
 * @module
 */
import type { CrawlCore, Job } from "../crawl/core.js";
import type { CrawlOptions, ResolvedCrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { coreFor, listenForAbort } from "../crawl/world.js";
import { CrawlRequests } from "../http/crawl-requests.js";
import { CancelledError } from "../kernel/errors.js";
import { getRunningLoop } from "./events.js";
import { wrapFuture, type Coroutine } from "./futures.js";
import { JoinableQueue } from "./queues.js";
import { attempt } from "./sockets.js";
import { Task, cancelAndWait, sleep } from "./tasks.js";

/**
 * Crawls from the roots with up to `maxTasks` worker coroutines. `crawl()`
 * queues the jobs the crawl core hands out and waits on `yield* q.join()`.
 * A job no worker holds starts a new worker, until there are `maxTasks` (the
 * chapter starts them all up front; started lazily, a crawl's memory
 * follows its work, not its `maxTasks`). Each worker loops on `q.get()`,
 * `fetch()`, `q.taskDone()`, and before that last step queues the jobs the
 * core hands out now. When the last job is done, `join()` returns and
 * `crawl()` cancels the workers, now idle in `get()`.
 *
 * A job's whole story (its attempts, its response) lives in the locals of
 * one `fetch()` call: there is no Fetcher class. A coroutine can only be
 * interrupted at a `yield*`, and there is none between asking the core and
 * queueing what it hands out, so nothing needs a lock.
 *
 * @remarks The chapter's workers take URLs and decide in `fetch()` what a
 * response means; here the core decides (src/crawl/core.ts), so its jobs
 * include an origin's `robots.txt` and a wait while URLs wait only for their
 * host's delay: that wait keeps `join()` from returning early. The chapter
 * lets a non-network exception end a worker, which leaves `join()` waiting
 * forever; here `taskDone()` is in a `finally`, and the core records the URL.
 * The loop is not a global: run `crawl()` in any EventLoop.
 * @see Chapter, "Coordinating Coroutines"; src/crawl/core.ts
 * @example
 * ```ts
 * const loop = new EventLoop();
 * const result = await loop.runUntilComplete(new Crawler("http://127.0.0.1:8080/").crawl());
 * loop.close();
 * ```
 */
export class Crawler {
  /** The crawl's decisions and what it knows: options, policy, seen URLs, records (src/crawl/core.ts). */
  readonly core: CrawlCore;
  private readonly q = new JoinableQueue<Job>();
  /** The workers started so far: one for each job no worker held, `maxTasks` at most. */
  private readonly workers: Array<Task<void>> = [];
  /** The options of each job's request, and the connections kept for the next (src/http/crawl-requests.ts). */
  private readonly requests: CrawlRequests<ResolvedCrawlOptions>;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    this.core = coreFor("generators", roots, options);
    this.requests = new CrawlRequests(this.core.options);
  }

  /** The chapter's `url_allowed`: http(s), an allowed host, and not excluded. */
  urlAllowed(url: string): boolean { return this.core.urlAllowed(url); }

  /**
   * Runs the crawl until all work is done (or `maxPages`, or the signal),
   * and returns the result. Run it in a Task: `loop.runUntilComplete(crawler.crawl())`.
   *
   * @throws {@link shared!InvalidStateError} when called a second time: a Crawler crawls once.
   */
  *crawl(): Coroutine<CrawlResult> {
    this.core.begin(getRunningLoop()); // The loop's time() is the crawl's clock.
    const stopListening = listenForAbort(this.core, this.core.options.signal, this.aborted);
    let result: CrawlResult;
    try {
      this.queueJobs();
      yield* this.q.join(); // When all work is done, exit.
    } finally {
      stopListening();
      this.aborted(); // Done, or cancelled from outside: the core stops (a fetch cut short now makes no record).
      try {
        yield* cancelAndWait(this.workers); // Even if we are cancelled again meanwhile; their finally blocks close every socket.
      } finally {
        this.requests.close();
        result = this.core.end(); // Even when cancelled: the trace lets go of the crawl.
      }
    }
    return result;
  }

  /** A worker: take a job, run it, hand it back, and queue what the core hands out next; until cancelled. */
  private *work(): Coroutine<void> {
    for (;;) {
      const job = yield* this.q.get(); // Idle workers wait here, and are cancelled here.
      try {
        if (job.kind === "wait") yield* sleep(job.delayMs / 1000); // Only a host's delay stands in the way.
        else yield* this.fetch(job);
      } catch (error) {
        if (error instanceof CancelledError) throw error; // A bug, else: finish() records the URL, and the worker goes on.
      } finally {
        this.core.finish(job);
        this.queueJobs(); // Before taskDone(): join() must not see an empty queue while work is left.
        this.q.taskDone();
      }
    }
  }

  /** Fetches the job's URL, one attempt after another, with the pause between them the core asks for; none once the crawl has stopped. */
  private *fetch(job: Job): Coroutine<void> {
    while (!this.core.stopped) {
      this.core.started(job);
      const [outcome, detail] = yield* attempt(job.url, this.requests.optionsFor(job), this.core.options.timeoutMs, this.core.id);
      const step = this.core.settle(job, outcome, detail); // No yield* since the request: nothing ran in between.
      if (step.kind === "done") return;
      if (step.kind === "hook") return this.core.hooked(job, yield* wrapFuture(step.hook)); // The onPage hook returned a promise.
      yield* sleep(step.delayMs / 1000); // Other workers run meanwhile.
    }
  }

  /** Queues every job the core hands out now; a job that no worker holds starts a new worker, up to `maxTasks`. */
  private queueJobs(): void {
    for (let job = this.core.next(); job !== null; job = this.core.next()) {
      this.q.putNowait(job);
      if (this.workers.length < Math.min(this.q.unfinishedTasks, this.core.options.maxTasks)) this.workers.push(new Task(this.work(), getRunningLoop(), "work"));
    }
  }

  /** The signal's abort listener, and the crawl's end: stop the core, hand back the jobs not taken (their URLs stay to do), cancel every worker. */
  private readonly aborted = (): void => {
    this.core.stop();
    while (!this.q.empty()) {
      this.core.finish(this.q.getNowait());
      this.q.taskDone();
    }
    for (const worker of this.workers) worker.cancel(); // A fetch ends at its yield*, without a record; its finally calls taskDone().
  };
}
