/** crawler.ts ↔ crawling.py of the chapter (`Crawler.crawl`, `work`, `fetch`): the stage 2 Crawler,
 * worker coroutines sharing a joinable queue.
 *
 * @module
 */
import { CrawlCore, type Job } from "../crawl/core.js";
import { resolveOptions, type CrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { worldFor } from "../crawl/world.js";
import { IdleConnections } from "../http/idle-connections.js";
import type { HttpResponse } from "../http/parser.js";
import { CancelledError, errorDetail, errorName, type AttemptError } from "../kernel/errors.js";
import { getRunningLoop } from "./events.js";
import type { Coroutine } from "./futures.js";
import { JoinableQueue } from "./queues.js";
import { request, type RequestOptions } from "./sockets.js";
import { Task, cancelAndWait, sleep, waitFor } from "./tasks.js";

/**
 * Crawls from the roots with `maxTasks` worker coroutines. `crawl()` queues
 * the jobs the crawl core hands out, starts the workers and waits on
 * `yield* q.join()`; each worker loops on `q.get()`, `fetch()`,
 * `q.taskDone()`, and before that last step queues the jobs the core hands
 * out now. When the last job is done, `join()` returns and `crawl()` cancels
 * the workers, now idle in `get()`.
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
  private readonly workers: Array<Task<void>> = [];
  /** Connections kept open for the next request to their origin, closed when the crawl ends. */
  private readonly connections = new IdleConnections();
  private readonly pageOptions: RequestOptions;
  private readonly robotsOptions: RequestOptions;

  /** @throws TypeError for an unusable root or a bad option, naming it. */
  constructor(roots: string | string[], options: CrawlOptions = {}) {
    const settings = resolveOptions(options);
    this.core = new CrawlCore("generators", roots, settings, worldFor(settings));
    this.pageOptions = { ...this.core.options, connections: this.connections };
    this.robotsOptions = { ...this.pageOptions, skipNonHtml: false }; // A robots.txt or a sitemap is read whole.
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
    const loop = getRunningLoop();
    this.core.begin(loop.id, function time() { return loop.time(); });
    const signal = this.core.options.signal;
    if (signal?.aborted === true) this.core.stop(); // Aborted before it began: no job is handed out.
    signal?.addEventListener("abort", this.aborted, { once: true });
    let result: CrawlResult;
    try {
      this.queueJobs();
      for (let i = 0; i < this.core.options.maxTasks; i++) this.workers.push(new Task(this.work(), loop, "work"));
      yield* this.q.join(); // When all work is done, exit.
    } finally {
      signal?.removeEventListener("abort", this.aborted);
      this.core.stop(); // Done, or cancelled from outside: a fetch cut short now makes no record.
      this.dropQueued();
      try {
        yield* cancelAndWait(this.workers); // Even if we are cancelled again meanwhile; their finally blocks close every socket.
      } finally {
        this.connections.close();
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
      let [outcome, detail]: [HttpResponse | AttemptError, string | null] = ["NetworkError", null];
      try {
        const options = job.kind === "page" ? this.pageOptions : this.robotsOptions;
        outcome = yield* waitFor(request(new URL(job.url), options, this.core.id), this.core.options.timeoutMs);
      } catch (caught) {
        if (caught instanceof CancelledError) throw caught; // We are cancelled, not the attempt.
        [outcome, detail] = [errorName(caught), errorDetail(caught)];
      }
      const step = this.core.settle(job, outcome, detail); // No yield* since the request: nothing ran in between.
      if (step.kind === "done") return;
      yield* sleep(step.delayMs / 1000); // Other workers run meanwhile.
    }
  }

  /** Queues every job the core hands out now. */
  private queueJobs(): void {
    for (let job = this.core.next(); job !== null; job = this.core.next()) this.q.putNowait(job);
  }

  /** The signal's abort listener: stop the core, drop the jobs not taken and cancel every worker. */
  private readonly aborted = (): void => {
    this.core.stop();
    this.dropQueued();
    for (const worker of this.workers) worker.cancel(); // A fetch ends at its yield*, without a record; its finally calls taskDone().
  };

  /** Hands the jobs not taken back to the core (their URLs stay to do), each done for the queue. */
  private dropQueued(): void {
    while (!this.q.empty()) {
      this.core.finish(this.q.getNowait());
      this.q.taskDone();
    }
  }
}
