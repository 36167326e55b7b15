/**
 * A frontier in memory: the chapter's `Queue` and `seen_urls` set behind the
 * promise-based {@link Frontier} interface that a `RedisFrontier`
 * (`coroutine-crawler/redis`) also keeps. A crawl keeps its URLs in the
 * crawl core's `MemoryStore` unless given a frontier; this one is the
 * in-process yardstick of the interface, for its tests and the benchmark.
 *
 * @module
 */
import type { Frontier, FrontierSummary } from "../crawl/frontier.js";

export type { Frontier, FrontierSummary } from "../crawl/frontier.js";
import type { FetchStatistic } from "../crawl/records.js";
import type { QueueItem, Visit } from "../crawl/visit.js";
import { JoinableQueue } from "./joinable-queue.js";

/**
 * The default frontier: the chapter's queue and `seen_urls` set in this
 * process's memory, a {@link JoinableQueue} and a `Set`, used as they are.
 */
export class MemoryFrontier implements Frontier {
  /** The URLs ever queued: `visit()` reads it to leave seen links out. */
  readonly seenUrls = new Set<string>();
  private readonly q = new JoinableQueue<QueueItem>();
  private finished = 0;

  async add(items: readonly QueueItem[]): Promise<number> {
    return this.queueUnseen(items);
  }

  take(): Promise<QueueItem> {
    return this.q.get();
  }

  putBack(item: QueueItem): void {
    this.q.putNowait(item); // Back in the queue for any worker,
    this.q.taskDone(); // and done as the item that was taken.
  }

  async finish(_item: QueueItem, visit: Visit): Promise<FetchStatistic> {
    this.queueUnseen(visit.next); // visit() left seen URLs out, and nothing ran since: every one is new.
    this.finished += 1;
    this.q.taskDone();
    return visit.record;
  }

  release(_item: QueueItem): void {
    this.q.taskDone();
  }

  join(): Promise<void> {
    return this.q.join();
  }

  shutdown(immediate = false): void {
    this.q.shutdown(immediate);
  }

  isShutdown(): boolean {
    return this.q.isShutdown();
  }

  counters(): { queued: number; unfinished: number } {
    return { queued: this.q.size(), unfinished: this.q.unfinished() };
  }

  async summary(_keepRecords: boolean): Promise<FrontierSummary> {
    return { seen: [...this.seenUrls], todo: this.seenUrls.size - this.finished, records: null, recorded: null };
  }

  /** Marks each unseen URL seen and queues it (after a shutdown it stays `todo`); returns how many were new. */
  private queueUnseen(items: readonly QueueItem[]): number {
    let added = 0;
    for (const item of items) {
      if (this.seenUrls.has(item.url)) continue;
      this.seenUrls.add(item.url);
      added += 1;
      if (!this.q.isShutdown()) this.q.putNowait(item);
    }
    return added;
  }
}
