/**
 * `crawl --trace-url REGEX`: one URL's life, picked out of a crawl's trace.
 * `--trace` prints every event the stage reports (some 1,500 lines for the
 * demo site in stage 2, the root's `connect` a hundred lines down);
 * {@link UrlTrace} keeps the lines of the URLs a regular expression matches,
 * in the order they happened, and the record each one ended in.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import type { StageName, TraceEvent } from "./events.js";
import { timeAndStage, traceLine } from "./trace-lines.js";

/**
 * What a `record` line shows of a crawl's record: the fields it reads. A
 * crawl's `FetchStatistic` has them all, so {@link UrlTrace.record} serves as
 * the `onRecord` option; they are named here because tracing stands below
 * the crawl and imports nothing of it.
 */
export interface TracedRecord {
  url: string;
  nextUrl: string | null;
  status: number | null;
  /** The `FetchError` name, or null. */
  error: string | null;
  size: number;
  contentType: string | null;
  numUrls: number;
  numNewUrls: number;
  referrer: string | null;
}

/**
 * Follows the URLs that `pattern` matches through a crawl: give its
 * {@link UrlTrace.trace} as the crawl's `trace` option and its
 * {@link UrlTrace.record} as `onRecord`, and it writes one line (as
 * {@link traceLine} formats it) for each event of those URLs: `take` (stage
 * 3), `fetch-start`, `connect`, `send`, `first-byte`, each `read`,
 * `fetch-end` with the status, then a `record` line with what the page gave
 * (its type, size, the links found and how many of them were new, so
 * queued), and stage 3's `done`. A retry shows as a second `fetch-start`.
 *
 * The loop's own events name no URL; two kinds are tied to one exactly and
 * kept, the rest are left out:
 * - stage 1: a `dispatch` names its socket's URL (the tracer looks it up by
 *   file number), and the `select N ready` after it closes the loop turn that
 *   dispatched it, so it is kept too: it says how many sockets were ready
 *   together.
 * - stage 2: a `step` message is published when a Task's coroutine has
 *   yielded, so the events since the previous `step` are what that one Task
 *   did in that run (nothing else runs between two yields). A `step` is kept
 *   when a matching URL's event came in its run: the lines above it are that
 *   Task's work. A step that published nothing of the URL (the request
 *   Task's first, which only starts connecting) cannot be told apart, and
 *   neither can a `resolve`, whose Future names no socket.
 * - stage 3 has no loop of ours: its `await` and `resume` name the URL.
 *
 * Call {@link UrlTrace.end} after the crawl: if nothing matched, it writes
 * a line saying so, with the number of URLs that were fetched.
 *
 * @example
 * ```ts
 * const follow = new UrlTrace(/\/p\/3$/, console.log);
 * await crawl(root, { trace: follow.trace, onRecord: follow.record });
 * follow.end();
 * ```
 */
export class UrlTrace {
  private readonly pattern: RegExp;
  /** Whether `pattern` matches each URL met so far. */
  private readonly verdicts = new Map<string, boolean>();
  /** The URLs that matched, in the order they were first met. */
  private readonly matchedUrls = new Set<string>();
  /** Every URL a `fetch-start` named: how many the line for no match counts. */
  private readonly fetched = new Set<string>();
  private stage: StageName | null = null;
  /** `performance.now()` at the crawl's t = 0, read off the last event: a record's time. */
  private origin = performance.now();
  /** Stage 2: a matching URL's event came since the last `step`. */
  private ranSinceStep = false;
  /** Stage 1: a matching URL's socket was dispatched since the last `select`. */
  private dispatchedSinceSelect = false;

  /**
   * @param pattern - tested against each URL, as `--include` is; a string is compiled as a RegExp.
   * @param write - called with each line, without a newline.
   * @throws TypeError when `pattern` is a string that is not a valid regular expression.
   */
  constructor(
    pattern: RegExp | string,
    private readonly write: (line: string) => void,
  ) {
    this.pattern = compiled(pattern);
  }

  /** How many URLs matched so far. */
  get matched(): number {
    return this.matchedUrls.size;
  }

  /** The crawl's `trace` option: writes the event's line if it belongs to a matching URL. */
  readonly trace = (event: TraceEvent): void => {
    this.stage = event.stage;
    this.origin = performance.now() - event.t;
    if (event.type === "fetch-start") this.fetched.add(event.url);
    if (event.type === "step") {
      if (this.ranSinceStep) this.write(traceLine(event));
      this.ranSinceStep = false;
      return;
    }
    if (event.type === "select") {
      if (this.dispatchedSinceSelect) this.write(traceLine(event));
      this.dispatchedSinceSelect = false;
      return;
    }
    const url = "url" in event ? event.url : null;
    if (url === null || !this.matches(url)) return;
    this.ranSinceStep = true;
    if (event.type === "dispatch") this.dispatchedSinceSelect = true;
    this.write(traceLine(event));
  };

  /** The crawl's `onRecord` option: writes a `record` line for a matching URL's record. */
  readonly record = (record: TracedRecord): void => {
    if (!this.matches(record.url)) return;
    this.ranSinceStep = true;
    const t = performance.now() - this.origin;
    this.write(`${timeAndStage(t, this.stage ?? "callbacks")}record ${recordDetails(record)}`);
  };

  /** After the crawl: when no URL matched, writes a line that says so. */
  end(): void {
    if (this.matchedUrls.size > 0) return;
    const fetched = `${this.fetched.size} URL${this.fetched.size === 1 ? "" : "s"} fetched`;
    const line = `no URL matched ${String(this.pattern)} (of the ${fetched})`;
    this.write(this.stage === null ? line : `${timeAndStage(performance.now() - this.origin, this.stage)}${line}`);
  }

  private matches(url: string): boolean {
    let verdict = this.verdicts.get(url);
    if (verdict === undefined) {
      verdict = this.pattern.test(url);
      this.verdicts.set(url, verdict);
    }
    if (verdict) this.matchedUrls.add(url);
    return verdict;
  }
}

/**
 * A record in words: `URL 200 text/html 407 bytes, 6 links found, 5 queued`
 * (queued: the links not seen before), `URL 301 -> TARGET`, or
 * `URL error Timeout`; then `(from PAGE)`, the page that queued it.
 */
function recordDetails(record: TracedRecord): string {
  const from = record.referrer === null ? "" : ` (from ${record.referrer})`;
  if (record.error !== null) return `${record.url} error ${record.error}${from}`;
  if (record.nextUrl !== null) return `${record.url} ${record.status} -> ${record.nextUrl}${from}`;
  const links = `${record.numUrls} link${record.numUrls === 1 ? "" : "s"} found, ${record.numNewUrls} queued`;
  return `${record.url} ${record.status} ${record.contentType ?? "-"} ${record.size} bytes, ${links}${from}`;
}

/** The pattern as a RegExp without the g and y flags, so that `test()` keeps no `lastIndex` between URLs. */
function compiled(pattern: RegExp | string): RegExp {
  if (pattern instanceof RegExp) return new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ""));
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new TypeError(`Expected \`pattern\` to be a valid regular expression, got ${JSON.stringify(pattern)}`, { cause: error });
  }
}
