/**
 * `CrawlRun`: what a crawl says about itself besides crawling: it takes a
 * crawl id, publishes its start, each attempt's start and end, and its end
 * on the crawl channel, and subscribes the `trace` option to what it
 * publishes. The crawl core's public calls call it, one line each; the
 * decisions never publish.
 *
 * @module
 */
import { crawlChannel, nextCrawlId, type QueueCounters, type StageName } from "../observe/channels.js";
import type { TraceEvent } from "../observe/events.js";
import { traceCrawl } from "../observe/trace.js";
import type { Outcome } from "./job.js";

/**
 * One crawl, seen from outside: its id for every message it publishes, the
 * messages the core's calls publish, and the `trace` subscription, if any,
 * that ends with it. With nobody subscribed, each message costs one check.
 *
 * @remarks A subscriber runs inside `publish()`, so inside the core's call:
 * one that aborts the crawl calls the stage's abort handling there, which
 * calls `core.stop()` (docs/crawl-core.md, "stop() at any time").
 */
export class CrawlRun {
  /** The crawl id every message of this crawl carries. */
  readonly id = nextCrawlId();
  private stopTracing: (() => void) | null;

  /**
   * @param stage - The stage that crawls.
   * @param trace - `CrawlOptions.trace`: subscribed to this crawl's messages until {@link CrawlRun.end}.
   * @param loop - The id of the hand-made loop the crawl runs in (stages 1 and 2), else null.
   * @param counters - The queue's counters now, read only when somebody listens.
   */
  constructor(
    stage: StageName,
    trace: ((event: TraceEvent) => void) | null,
    loop: number | null,
    private readonly counters: () => QueueCounters,
  ) {
    this.stopTracing = trace === null ? null : traceCrawl(this.id, trace);
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "crawl-start", crawl: this.id, stage, loop });
  }

  /** An attempt at `url` starts: `fetch-start`. */
  fetchStart(url: string, attempt: number): void {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "fetch-start", crawl: this.id, url, attempt, ...this.counters() });
  }

  /** An attempt at `url` ended with `outcome`: `fetch-end`, with the status or the error's name and `detail`. */
  fetchEnd(url: string, attempt: number, outcome: Outcome, detail: string | null): void {
    if (!crawlChannel.hasSubscribers) return;
    const [status, error] = typeof outcome === "string" ? [null, outcome] : [outcome.status, null];
    crawlChannel.publish({ type: "fetch-end", crawl: this.id, url, attempt, status, error, detail: error === null ? null : detail, ...this.counters() });
  }

  /** Says the crawl ended and ends its trace subscription; a second call does nothing. */
  end(): void {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "crawl-end", crawl: this.id });
    this.stopTracing?.();
    this.stopTracing = null;
  }
}
