/**
 * `CrawlRun`: what every crawl does at its start and end besides crawling:
 * take a crawl id, say so on the crawl channel, and subscribe the `trace`
 * option to what it publishes.
 *
 * @module
 */
import { crawlChannel, nextCrawlId, type StageName } from "../observe/channels.js";
import type { TraceEvent } from "../observe/events.js";
import { traceCrawl } from "../observe/trace.js";

/**
 * One crawl, seen from outside: its id for every message it publishes, and
 * the `trace` subscription, if any, that ends with it.
 */
export class CrawlRun {
  /** The crawl id every message of this crawl carries. */
  readonly id = nextCrawlId();
  private stopTracing: (() => void) | null;

  /**
   * @param stage - The stage that crawls.
   * @param trace - `CrawlOptions.trace`: subscribed to this crawl's messages until {@link CrawlRun.end}.
   * @param loop - The id of the hand-made loop the crawl runs in (stages 1 and 2), else null.
   */
  constructor(stage: StageName, trace: ((event: TraceEvent) => void) | null, loop: number | null) {
    this.stopTracing = trace === null ? null : traceCrawl(this.id, trace);
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "crawl-start", crawl: this.id, stage, loop });
  }

  /** Says the crawl ended and ends its trace subscription; a second call does nothing. */
  end(): void {
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "crawl-end", crawl: this.id });
    this.stopTracing?.();
    this.stopTracing = null;
  }
}
