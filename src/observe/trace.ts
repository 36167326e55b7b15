/**
 * `traceCrawl`: turns one crawl's channel messages into the `trace` option's
 * {@link TraceEvent}s.
 *
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import type { CrawlMessage, LoopMessage, StageName } from "./channels.js";
import type { TraceEvent } from "./events.js";

/**
 * Subscribes `trace` to the messages of crawl `crawl` (and of the loop it
 * runs in) and hands it each as a {@link TraceEvent}: times counted from the
 * crawl's start, slots and workers worked out here. A `trace` that throws is
 * ignored: watching must not break the crawl.
 *
 * @returns the function that unsubscribes.
 */
export function traceCrawl(crawl: number, trace: (event: TraceEvent) => void): () => void {
  const tracer = new CrawlTracer(crawl, trace);
  diagnostics_channel.subscribe("coroutine-crawler:crawl", tracer.onCrawlMessage);
  diagnostics_channel.subscribe("coroutine-crawler:loop", tracer.onLoopMessage);
  return function stopTracing(): void {
    diagnostics_channel.unsubscribe("coroutine-crawler:crawl", tracer.onCrawlMessage);
    diagnostics_channel.unsubscribe("coroutine-crawler:loop", tracer.onLoopMessage);
  };
}

/** One crawl's subscriber: filters its messages and adds what the trace events need. */
class CrawlTracer {
  private start = performance.now();
  private stage: StageName = "callbacks";
  private loop: number | null = null;

  constructor(
    private readonly crawl: number,
    private readonly trace: (event: TraceEvent) => void,
  ) {}

  readonly onCrawlMessage = (message: unknown): void => {
    const m = message as CrawlMessage; // The one cast: only our stages publish on this channel.
    if (m.crawl !== this.crawl) return;
    if (m.type === "crawl-start") {
      this.start = performance.now();
      this.stage = m.stage;
      this.loop = m.loop;
      return;
    }
    if (m.type === "fetch-start" || m.type === "fetch-end") {
      this.emit({ ...m, t: performance.now() - this.start, stage: this.stage, slot: -1 });
    }
  };

  private emit(event: TraceEvent): void {
    try {
      this.trace(event);
    } catch {
      // The caller's trace function failed; the crawl goes on.
    }
  }

  readonly onLoopMessage = (message: unknown): void => {
    const m = message as LoopMessage; // The one cast: only our loops publish on this channel.
    if (m.loop !== this.loop) return;
  };
}
