/**
 * The one status line the `crawl` command keeps redrawn on a terminal while a
 * crawl runs, and the live figures of the crawl it shows (which `--compare`
 * also reports as peak concurrency), kept from its records and trace events.
 *
 * @module
 */
import type { FetchStatistic } from "../crawl/records.js";
import { Stats } from "../crawl/report.js";
import type { TraceEvent } from "../observe/events.js";

/**
 * Counts a crawl as it runs. `onRecord` and `onTrace` are handed to the
 * stage as its `onRecord` and `trace` options.
 *
 * Records give `done` and `errors` in every stage, and the {@link Stats}
 * the report prints when the records were not kept. The queue's figures
 * (`queued`, `inFlight`) only come with the `fetch-start` and `fetch-end`
 * trace events; until a stage emits one they stay null, which the progress
 * line and the comparison table print as `-`.
 */
export class CrawlCounters {
  /** Every record made so far, counted by kind. */
  readonly stats = new Stats();
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

  /** Records made so far. */
  get done(): number {
    return this.stats.records;
  }

  /** Records with an error. */
  get errors(): number {
    return this.stats.failures;
  }

  /** Counts one record. */
  onRecord(record: FetchStatistic): void {
    this.stats.add(record);
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

/** The part of a `tty.WriteStream` the progress line uses. */
export interface StatusStream {
  /** True on a terminal; the line is only drawn there. */
  readonly isTTY?: boolean;
  /** The terminal's width, to keep the line on one row. */
  readonly columns?: number;
  /** Writes text as it is (the line brings its own control characters). */
  write(text: string): boolean;
}

/** Carriage return, then ANSI "erase in line": the cursor is back at column 0 on an empty row. */
const CLEAR_LINE = "\r\x1b[K";

/** Redraws at most ten times a second. */
const REDRAW_INTERVAL_MS = 100;

/**
 * Draws `done 12 · queued 30 · in flight 10 · errors 1 · 35.2 pages/s` on
 * stderr, in place.
 *
 * `update()` redraws at most once per {@link REDRAW_INTERVAL_MS}; an update
 * that comes sooner schedules one redraw for the end of the interval (an
 * unref'd timer, so it never keeps the process alive). `clear()` wipes the
 * line and must be called before anything else is printed on the terminal, so
 * a `-v` line or the report never lands in the middle of the status; the next
 * `update()` draws it again below. On a stream that is not a terminal (a pipe,
 * a file) the line does nothing at all.
 */
export class ProgressLine {
  /** Whether the line is drawn at all: only on a terminal. */
  readonly enabled: boolean;
  private visible = false;
  private lastDrawAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;

  /**
   * @param stream where to draw: stderr.
   * @param label put before the figures, e.g. the stage's name.
   * @param now the clock, injectable for tests.
   */
  constructor(
    private readonly stream: StatusStream,
    private readonly counters: CrawlCounters,
    private readonly label: string,
    private readonly now: () => number = Date.now,
  ) {
    this.enabled = stream.isTTY === true;
  }

  /** The counters changed: redraw now, or soon. */
  update(): void {
    if (!this.enabled || this.timer !== null) return;
    const wait = this.lastDrawAt + REDRAW_INTERVAL_MS - this.now();
    if (wait <= 0) {
      this.draw();
      return;
    }
    this.timer = setTimeout(this.redrawLater, wait);
    this.timer.unref();
  }

  /** Wipes the line (if drawn) so the caller can print; the next update redraws it. */
  clear(): void {
    if (!this.visible) return;
    this.stream.write(CLEAR_LINE);
    this.visible = false;
  }

  /** Wipes the line and cancels any pending redraw: the crawl is over. */
  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.clear();
  }

  /** The text of the line, without control characters. */
  text(): string {
    const counters = this.counters;
    const rate = counters.pagesPerSecond(this.now()).toFixed(1);
    return [
      `${this.label}: done ${counters.done}`,
      `queued ${shown(counters.queued)}`,
      `in flight ${shown(counters.inFlight)}`,
      `errors ${counters.errors}`,
      `${rate} pages/s`,
    ].join(" · ");
  }

  /** The scheduled redraw: an arrow field, so `this` stays bound when the timer calls it. */
  private readonly redrawLater = (): void => {
    this.timer = null;
    this.draw();
  };

  private draw(): void {
    // Some terminals (and `script`) report 0 columns: assume 80 then.
    const columns = this.stream.columns !== undefined && this.stream.columns > 0 ? this.stream.columns : 80;
    const width = Math.max(10, columns - 1);
    this.stream.write(CLEAR_LINE + this.text().slice(0, width));
    this.visible = true;
    this.lastDrawAt = this.now();
  }
}

function shown(value: number | null): string {
  return value === null ? "-" : String(value);
}
