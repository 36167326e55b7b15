/**
 * The live figures of one crawl, kept from its records and trace events: what
 * the progress line shows and what `--compare` reports as peak concurrency.
 *
 * @module
 */
import type { FetchStatistic } from "../crawl/records.js";
import type { TraceEvent } from "../observe/events.js";

/**
 * Counts a crawl as it runs. `onRecord` and `onTrace` are handed to the
 * stage as its `onRecord` and `trace` options.
 *
 * Records give `done` and `errors` in every stage. The queue's figures
 * (`queued`, `inFlight`) only come with the `fetch-start` and `fetch-end`
 * trace events; until a stage emits one they stay null, which the progress
 * line and the comparison table print as `-`.
 */
export class CrawlCounters {
  /** Records made so far. */
  done = 0;
  /** Records with an error. */
  errors = 0;
  /** URLs waiting in the queue at the last fetch event, or null before any. */
  queued: number | null = null;
  /** Fetches in flight at the last fetch event, or null before any. */
  inFlight: number | null = null;
  /** The most fetches in flight at any fetch event, or null before any. */
  peakInFlight: number | null = null;
  /** Fetch attempts started (retries included), from trace events. */
  attempts = 0;

  /** @param startedAt when the crawl started, for {@link CrawlCounters.pagesPerSecond} (ms, `Date.now()`). */
  constructor(private readonly startedAt: number) {}

  /** Counts one record. */
  onRecord(record: FetchStatistic): void {
    this.done += 1;
    if (record.error !== null) this.errors += 1;
  }

  /** Takes the queue's counters from a fetch event; other events are ignored. */
  onTrace(event: TraceEvent): void {
    if (event.type !== "fetch-start" && event.type !== "fetch-end") return;
    if (event.type === "fetch-start") this.attempts += 1;
    this.queued = event.queued;
    this.inFlight = event.inFlight;
    this.peakInFlight = Math.max(this.peakInFlight ?? 0, event.inFlight);
  }

  /** Records per second since the crawl started. */
  pagesPerSecond(now: number): number {
    const seconds = (now - this.startedAt) / 1000;
    return seconds > 0 ? this.done / seconds : 0;
  }
}
