/**
 * The one status line the `crawl` command keeps redrawn on a terminal while a
 * crawl runs.
 *
 * @module
 */
import type { CrawlCounters } from "./crawl-counters.js";

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
