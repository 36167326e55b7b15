/**
 * The one status line the `crawl` command keeps redrawn on a terminal while a
 * crawl runs, and the live figures of the crawl it shows (which `--compare`
 * also reports as peak concurrency), kept from its records and trace events.
 *
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";
import type { FetchStatistic } from "../crawl/records.js";
import { Stats } from "../crawl/report.js";
import type { CrawlMessage } from "../observe/channels.js";
import type { TraceEvent } from "../observe/events.js";

/**
 * Counts a crawl as it runs. `onRecord` is handed to the stage as its
 * `onRecord` option; the fetch events come from the crawl's own channel
 * ({@link countFetches}), or from trace events (`onTrace`).
 *
 * Records give `done` and `errors` in every stage, and the {@link Stats}
 * the report prints when the records were not kept. The queue's figures
 * (`queued`, `inFlight`) only come with the `fetch-start` and `fetch-end`
 * events; until a stage emits one they stay null, which the progress
 * line and the comparison table print as `-`.
 */
export class CrawlCounters {
  /** Every record made so far, counted by kind. */
  readonly stats = new Stats();
  /** URLs waiting at the last fetch event (queued, in a host's line, or pausing before a retry), or null before any. */
  queued: number | null = null;
  /** Fetches in flight at the last fetch event, or null before any. */
  inFlight: number | null = null;
  /** The most fetches in flight at any fetch event, or null before any. */
  peakInFlight: number | null = null;
  /** Fetch attempts started (retries included), from trace events. */
  attempts = 0;

  /** @param startedAt when the crawl started, for {@link CrawlCounters.pagesPerSecond} (ms, `Date.now()`). */
  constructor(readonly startedAt: number) {}

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

  /** Takes the queue's counters from a fetch event (a trace event or a crawl channel message); other events are ignored. */
  onTrace(event: TraceEvent | CrawlMessage): void {
    if (event.type !== "fetch-start" && event.type !== "fetch-end") return;
    if (event.type === "fetch-start") this.attempts += 1;
    this.queued = event.queued;
    this.inFlight = event.inFlight;
    this.peakInFlight = Math.max(this.peakInFlight ?? 0, event.inFlight);
  }

  /** Milliseconds since the crawl started. */
  elapsedMs(now: number): number {
    return Math.max(0, now - this.startedAt);
  }

  /** Records per second since the crawl started. */
  pagesPerSecond(now: number): number {
    const seconds = (now - this.startedAt) / 1000;
    return seconds > 0 ? this.done / seconds : 0;
  }
}

/**
 * Hands `counters` the fetch events of the next crawl to start, read off the
 * crawl's own channel (`coroutine-crawler:crawl`, src/observe/channels.ts),
 * and calls `changed` after each; until the returned function is called.
 *
 * @remarks Not through the crawl's `trace` option, which the progress and
 * stats lines once took: a traced crawl also subscribes to the hand-made
 * loops' channel (stages 1 and 2) and to undici's own channels (stage 3),
 * where every request's steps are then published and matched to the crawl,
 * about 6 % of stage 3's CPU on a `-q` crawl whose stderr is a pipe (issue
 * 39). The figures need only the fetch events: a crawl whose trace nobody
 * shows subscribes to nothing else.
 */
export function countFetches(counters: CrawlCounters, changed: () => void): () => void {
  let crawl: number | null = null;
  function counted(message: unknown): void {
    const m = message as CrawlMessage; // The channel carries CrawlMessages only (src/observe/channels.ts).
    if (m.type === "crawl-start") crawl ??= m.crawl;
    if (m.crawl !== crawl || (m.type !== "fetch-start" && m.type !== "fetch-end")) return;
    counters.onTrace(m);
    changed();
  }
  diagnostics_channel.subscribe("coroutine-crawler:crawl", counted);
  return function stopCounting(): void {
    diagnostics_channel.unsubscribe("coroutine-crawler:crawl", counted);
  };
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
 * Draws `done 12 · queued 30 · in flight 10 · errors 1 · 35.2 pages/s · 0:04`
 * on stderr, in place.
 *
 * `update()` redraws at most once per {@link REDRAW_INTERVAL_MS}; an update
 * that comes sooner schedules one redraw for the end of the interval (an
 * unref'd timer, so it never keeps the process alive). `clear()` wipes the
 * line and must be called before anything else is printed on the terminal, so
 * a `-v` line or the report never lands in the middle of the status; the next
 * `update()` draws it again below. On a stream that is not a terminal (a pipe,
 * a file), or on a terminal whose `TERM` is `dumb` (which cannot erase
 * a line), the line does nothing at all: {@link StatsLines} prints plain
 * lines there instead.
 */
export class ProgressLine {
  /** Whether the line is drawn at all: only on a terminal that can erase a line. */
  readonly enabled: boolean;
  private visible = false;
  private lastDrawAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;

  /**
   * @param stream where to draw: stderr.
   * @param label put before the figures, e.g. the stage's name.
   * @param now the clock, injectable for tests.
   * @param env the environment, whose `TERM` says whether the terminal can erase a line.
   */
  constructor(
    private readonly stream: StatusStream,
    private readonly counters: CrawlCounters,
    private readonly label: string,
    private readonly now: () => number = Date.now,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.enabled = canRedraw(stream, env);
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
      elapsedText(counters.elapsedMs(this.now())),
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

/** Whether a line can be drawn in place on `stream`: a terminal, and one whose `TERM` is not `dumb`. */
export function canRedraw(stream: StatusStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && env.TERM !== "dumb";
}

/** A duration as a clock shows it: `0:07`, `12:30`, `1:02:03` (hours only once there are any). */
export function elapsedText(ms: number): string {
  const total = Math.floor(ms / 1000);
  const seconds = String(total % 60).padStart(2, "0");
  const minutes = Math.floor(total / 60) % 60;
  const hours = Math.floor(total / 3600);
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/**
 * Prints a plain line of progress every so often, for a stderr that is no
 * terminal to redraw on (a log file, a pipe, `nohup`, systemd's journal) or
 * a dumb one: `crawl: 120 pages, 3 errors, 40 queued, 1.8 pages/s, 1:05
 * elapsed`, as Scrapy logs its stats every 60 seconds. Nothing moves the
 * cursor. The timer is unref'd, so it never keeps the process alive, and
 * {@link StatsLines.stop} ends it with the crawl.
 */
export class StatsLines {
  /** Whether lines are printed at all: an interval was given and the stream cannot take a {@link ProgressLine}. */
  readonly enabled: boolean;
  private timer: NodeJS.Timeout | null = null;

  /**
   * @param write prints one line (the printer's stderr).
   * @param intervalMs how often; 0 for never.
   * @param label put before the figures with `--compare`: the stage's name; "" for none.
   * @param redraws whether a {@link ProgressLine} is drawn instead.
   * @param now the clock, injectable for tests.
   */
  constructor(
    private readonly write: (line: string) => void,
    private readonly counters: CrawlCounters,
    private readonly intervalMs: number,
    private readonly label: string,
    redraws: boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.enabled = intervalMs > 0 && !redraws;
  }

  /** Starts printing, one line per interval. */
  start(): void {
    if (!this.enabled || this.timer !== null) return;
    this.timer = setInterval(this.print, this.intervalMs);
    this.timer.unref();
  }

  /** Stops printing: the crawl is over. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The line, without its newline. */
  text(): string {
    const counters = this.counters;
    const now = this.now();
    const errors = counters.errors === 1 ? "1 error" : `${counters.errors} errors`;
    const pages = counters.done === 1 ? "1 page" : `${counters.done} pages`;
    const label = this.label === "" ? "" : `${this.label}: `;
    return `crawl: ${label}${pages}, ${errors}, ${shown(counters.queued)} queued, ${counters.pagesPerSecond(now).toFixed(1)} pages/s, ${elapsedText(counters.elapsedMs(now))} elapsed`;
  }

  /** An arrow field, so `this` stays bound when the timer calls it. */
  private readonly print = (): void => {
    this.write(`${this.text()}\n`);
  };
}
