/**
 * The chapter's final crawler in native async/await: up to `maxTasks` workers take
 * jobs from a joinable queue, and the crawl ends when `q.join()` says every
 * job queued has been done.
 *
 * @module
 */
import type { CrawlCore, Job } from "../crawl/core.js";
import type { CrawlOptions } from "../crawl/options.js";
import { skippableBody } from "../crawl/page.js";
import type { CrawlResult } from "../crawl/records.js";
import type { CrawlStore } from "../crawl/store.js";
import { coreFor, listenForAbort } from "../crawl/world.js";
import { CrawlClient } from "../http/crawl-client.js";
import { crawlChannel } from "../observe/channels.js";
import { JoinableQueue, QueueShutDown } from "./joinable-queue.js";

/**
 * Crawls from one or more roots with up to `maxTasks` concurrent workers,
 * each an ordinary `async` function.
 *
 * `crawl()` queues the jobs the crawl core hands out and awaits `q.join()`.
 * A job no worker is free to take starts a new worker, until there are
 * `maxTasks` (asyncio's crawler starts them all up front; started lazily, a
 * crawl's memory follows its work, not its `maxTasks`). Each worker loops:
 * `await q.get()`, `await fetch(job)`, then hands the job back to the core,
 * queues the jobs it hands out now, and calls `q.taskDone()`. `fetch()`
 * makes one attempt after another, each an `await client.attempt(job)`,
 * handing each outcome to the core, which says whether to try again after a
 * pause. When `join()` resolves, every worker is parked in `get()`;
 * `q.shutdown()` wakes them, their `get()` throws `QueueShutDown`, and they
 * end: the chapter's `w.cancel()`.
 *
 * A worker only gives way to others at an `await`. Between two awaits it runs
 * alone, so the core, which never awaits, needs no lock.
 *
 * @remarks Nothing can throw into a suspended `async` function: the caller's
 * signal ends what the workers await instead (the client's requests and
 * pauses, src/http/crawl-client.ts), and the queue's `shutdown()` ends the
 * parked workers, as Python 3.13's queues do. The chapter kept its state in
 * module globals in the earlier stages; here it lives on one `Crawler` per run.
 * @see Chapter, "Coordinating Coroutines"; asyncio `Queue.join`, `Queue.shutdown`; src/crawl/core.ts
 */
export class Crawler {
  /** The crawl's decisions and what it knows: options, policy, seen URLs, records (src/crawl/core.ts). */
  readonly core: CrawlCore;
  private readonly q = new JoinableQueue<Job>();
  /** The workers started so far: one for each job no worker was free to take, `maxTasks` at most. */
  private readonly workers: Promise<void>[] = [];
  /** The HTTP client, built from the crawl's options: its requests and pauses end when the crawl is stopped. */
  private readonly client: CrawlClient;

  /**
   * @param frontier - The store where the URLs wait and the seen set lives,
   * when not in this process's memory: a `RedisFrontier` shares them with
   * other processes. A store serves one crawl.
   * @throws TypeError for a bad option or an unusable root, naming it.
   */
  constructor(roots: string | string[], options?: CrawlOptions, frontier?: CrawlStore) {
    this.core = coreFor("asyncawait", roots, options, frontier);
    this.client = new CrawlClient(this.core.options, skippableBody);
  }

  /** Whether `url` may be crawled: http(s), an allowed host, not excluded (the chapter's `url_allowed`). */
  urlAllowed(url: string): boolean { return this.core.urlAllowed(url); }

  /**
   * Runs the crawl to its end and resolves with every record.
   *
   * @throws InvalidStateError when called a second time on the same Crawler.
   * @throws FrontierError when a shared frontier stopped answering.
   * @example
   * const result = await new Crawler("http://127.0.0.1:8080/", { maxTasks: 100 }).crawl();
   * console.log(result.records.length, "pages");
   */
  async crawl(): Promise<CrawlResult> {
    this.core.begin(null, now);
    const stopListening = listenForAbort(this.core, this.core.options.signal, this.aborted);
    try {
      this.queueJobs();
      await this.q.join(); // Suspends until every job is done.
      this.q.shutdown(); // The idle workers, parked in get(), end.
      await Promise.all(this.workers);
    } finally {
      stopListening();
      await this.client.close();
      await this.core.store.whenDone?.(); // A shared store writes what it holds and reads the crawl's summary.
    }
    return this.core.end();
  }

  /** One worker: take a job, run it, hand it back, queue what the core hands out next; until the queue shuts down. */
  private async work(): Promise<void> {
    try {
      for (;;) {
        const job = await this.q.get(); // An idle worker waits here.
        try {
          if (job.kind === "wait") await this.client.pause(job.delayMs, null, 0, job.woken); // A host's delay, or the store's news, stands in the way.
          else await this.fetch(job);
        } catch {
          // A bug, or the signal ended a pause: finish() records the URL or leaves it to do, and the worker goes on.
        } finally {
          this.core.finish(job);
          this.queueJobs(); // Before taskDone(): join() must not see an empty queue while work is left.
          this.q.taskDone();
          if (job.kind !== "wait" && crawlChannel.hasSubscribers) crawlChannel.publish({ type: "done", crawl: this.core.id, url: job.url });
        }
      }
    } catch (error) {
      if (!(error instanceof QueueShutDown)) throw error; // The chapter's `except asyncio.CancelledError: pass`.
    }
  }

  /** Fetches the job's URL, one attempt after another, with the pause between them the core asks for. */
  private async fetch(job: Job): Promise<void> {
    if (this.core.stopped) return; // Handed to our get() before a stop, resumed after it (a promise job later): left to do.
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "take", crawl: this.core.id, url: job.url });
    while (!this.core.stopped) { // Stopped during a pause (a store that failed): no attempt more.
      this.core.started(job);
      const [outcome, detail] = await this.client.attempt(job);
      const step = this.core.settle(job, outcome, detail);
      if (step.kind === "done") return;
      if (step.kind === "hook") return this.core.hooked(job, await step.hook.settled()); // The onPage hook returned a promise.
      await this.client.pause(step.delayMs, job.url, this.core.id); // Other workers run meanwhile.
    }
  }

  /** Queues every job the core hands out now; a job that no worker holds starts a new worker, up to `maxTasks`. */
  private queueJobs(): void {
    for (let job = this.core.next(); job !== null; job = this.core.next()) {
      this.q.putNowait(job);
      if (this.workers.length < Math.min(this.q.unfinished(), this.core.options.maxTasks)) this.workers.push(this.work());
    }
  }

  /** The signal's abort listener: stop the core, drop the jobs not taken (their URLs stay to do), abandon the requests, end the pauses. */
  private readonly aborted = (): void => {
    this.core.stop();
    while (this.q.size() > 0) {
      this.core.finish(this.q.getNowait());
      this.q.taskDone();
    }
    this.client.abort();
  };
}

/** Stage 3's clock, in milliseconds: Node's own, as its timers are. */
function now(): number {
  return performance.now();
}
