/**
 * `crawl --compare`: the side-by-side table of the three stages' crawls, and
 * the check that they crawled identically.
 *
 * @module
 */
import { FETCH_ERRORS } from "../crawl/records.js";
import type { CrawlResult, FetchError, FetchStatistic } from "../crawl/records.js";
import type { Stats } from "../crawl/report.js";
import type { RobotsFetch } from "../crawl/robots.js";
import type { StageName } from "../observe/events.js";

/** One stage's crawl, with the concurrency figures seen while it ran. */
export interface StageRun {
  /** The stage that crawled. */
  stage: StageName;
  /** What its `crawl()` resolved to. */
  result: CrawlResult;
  /** Its records, counted as `onRecord` saw them (kept in `result.records` or not). */
  stats: Stats;
  /** The most fetches in flight, from the stage's trace events; null when it emitted none. */
  peakInFlight: number | null;
  /** The most requests in flight at once as the demo site counted them; null when not crawling the demo site. */
  serverPeak: number | null;
}

/** What each error row of the table counts: why those URLs got no response. */
const ERROR_MEANINGS: Readonly<Record<FetchError, string>> = {
  ConnectionRefused: "nothing listened on the port",
  ConnectionReset: "the connection closed before any byte of a response",
  HostNotFound: "the host name did not resolve",
  Timeout: "no whole response within the time allowed",
  BadResponse: "bytes that are not HTTP, or a response cut short",
  BodyTooLarge: "a body longer than the most accepted",
  TlsError: "the TLS handshake or the certificate check failed",
  NetworkError: "another failure of the network",
  RobotsDisallowed: "robots.txt forbids them, so they were never requested",
  RobotsUnreachable: "robots.txt answered a 5xx or a 429 on every attempt, so nothing at that origin was requested",
  ExtractError: "the page came, and the onPage hook failed on it",
};

/** Below this wall time (the shortest of the stages'), the legend says the timings are noise. */
const NOISE_MS = 1000;

/** The width the legend is wrapped to. */
const LEGEND_WIDTH = 100;

/**
 * The table `--compare` prints: one column per stage, one row per figure
 * (records; html pages, other pages, redirects and each other status that
 * occurred; errors and each error name that occurred; the URLs left to do
 * and the origins whose robots.txt was read, when any; wall time, pages per
 * second, peak concurrency and the server's peak). A figure nobody could
 * measure prints as `-`.
 *
 * Under the table, a legend says what each row shown counts, that the
 * timings of a crawl under a second are noise (when one was), and what the
 * verdict printed next ({@link firstDifference}) compares and leaves out.
 */
export function comparisonTable(runs: readonly StageRun[]): string {
  const rows: Array<[string, ...string[]]> = [["", ...runs.map((run) => run.stage)]];
  const legend: Array<[string, string]> = [];
  const addRow = (label: string, meaning: string, figure: (run: StageRun) => string): void => {
    rows.push([label, ...runs.map(figure)]);
    legend.push([label, meaning]);
  };
  addRow("records", "URLs the crawl finished, one record each, whatever the outcome", (run) => String(run.result.recorded));
  addRow("html pages", "200 responses of type text/html: the pages whose links were followed", (run) => String(run.stats.htmlPages));
  if (runs.some((run) => run.stats.otherPages > 0)) {
    addRow("other pages", "200 responses of another type: no links to follow", (run) => String(run.stats.otherPages));
  }
  addRow("redirects", "3xx responses: their target was queued as a URL of its own", (run) => String(run.stats.redirects));
  const statuses = [...new Set(runs.flatMap((run) => [...run.stats.statuses.keys()]))].sort((x, y) => x - y);
  for (const status of statuses) {
    addRow(`status ${status}`, "responses with that status: an answer, but not a page", (run) => String(run.stats.statuses.get(status) ?? 0));
  }
  const failed = runs.some((run) => run.stats.failures > 0);
  addRow("errors", `URLs that got no response at all${failed ? ", by kind below" : ""}`, (run) => String(run.stats.failures));
  for (const name of FETCH_ERRORS) {
    if (runs.some((run) => run.stats.errorCount(name) > 0)) addRow(`  ${name}`, ERROR_MEANINGS[name], (run) => String(run.stats.errorCount(name)));
  }
  if (runs.some((run) => run.result.todo > 0)) {
    addRow("todo", "URLs still queued when the crawl stopped (a limit, or Ctrl-C)", (run) => String(run.result.todo));
  }
  if (runs.some((run) => run.result.robots.length > 0)) {
    addRow("robots.txt read", "origins whose robots.txt was read, once each, before their first page", (run) => String(run.result.robots.length));
  }
  const shortestMs = Math.min(...runs.map((run) => wallMs(run.result)));
  addRow(
    "wall time",
    shortestMs < NOISE_MS
      ? `from crawl() to its result. A crawl under ${NOISE_MS / 1000} s, as here, makes this row and the next noise ` +
          "(start-up, JIT compilation, garbage collection): run again and the order may change. To compare speeds, " +
          "crawl a bigger site (npm\u00a0run\u00a0site\u00a0--\u00a0--pages\u00a020000) or see npm\u00a0run\u00a0bench."
      : "from crawl() to its result",
    (run) => `${(wallMs(run.result) / 1000).toFixed(3)} s`,
  );
  addRow("pages/s", "records per second of wall time", (run) => pagesPerSecond(run.result));
  addRow(
    "peak concurrency",
    "the most URLs in flight at once, as the stage counts them in its trace: from taking a URL to making its " +
      "record (connect, wait, read, parse). Never above maxTasks; lower while few links are known.",
    (run) => shown(run.peakInFlight),
  );
  if (runs.some((run) => run.serverPeak !== null)) {
    addRow(
      "  seen by server",
      "the most requests the demo site answered at once, from a request's arrival to the end of its response: " +
        "usually lower, as the crawler's connecting and parsing are left out",
      (run) => shown(run.serverPeak),
    );
  }
  return `${formatColumns(rows)}\n${legendText(legend)}\n${verdictText()}`;
}

/** The legend's rows: each label, then its meaning wrapped under itself. */
function legendText(legend: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...legend.map(([label]) => label.length)) + 2;
  return legend.map(([label, meaning]) => wrapped(meaning, width, label.padEnd(width))).join("");
}

/** What the verdict after the table compares, in the words of {@link firstDifference}. */
function verdictText(): string {
  return wrapped(
    "The verdict below checks that no stage recorded a URL twice, then compares the records as sets matched by URL, field by field (status, redirect target, " +
      "error, size, content type, encoding, links found), the URLs queued and each robots.txt answer. It leaves " +
      "out numNewUrls (how many of a page's links were new when it was read) and referrer (the page that first " +
      "found the URL): with several fetches in flight, which of two pages linking to one URL is read first " +
      "depends on timing (on a crawl without redirects, the total of numNewUrls must still agree). Timings and " +
      "peaks are not compared.",
    0,
    "",
  );
}

/**
 * `first`, then `text` broken at its spaces into lines of at most
 * {@link LEGEND_WIDTH} columns, the next ones indented by `indent`. A
 * no-break space (`\u00a0`) keeps a command on one line, and prints as a space.
 */
function wrapped(text: string, indent: number, first: string): string {
  const lines: string[] = [];
  let line = first;
  let empty = true; // no word on the line yet
  for (const word of text.split(" ")) {
    if (!empty && line.length + 1 + word.length > LEGEND_WIDTH) {
      lines.push(line);
      line = " ".repeat(indent);
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.join("\n").replaceAll("\u00a0", " ") + "\n";
}

/**
 * Whether every stage crawled like the first: null when they did, else a
 * description of the first difference, with the two records involved.
 *
 * No stage may record a URL twice. Records are compared as sets, matched by URL, field by field except
 * `numNewUrls` and `referrer`: with several fetches in flight, which page
 * first sees a link depends on timing. The set of URLs seen must be equal,
 * and on a crawl without redirects so must the sum of `numNewUrls` (every
 * URL queued from a page). With redirects that sum may differ: when a link
 * and a redirect race to one URL, the one that queues it first depends on
 * timing too. Each origin's `robots.txt` fetch must be the same, field by
 * field, whatever the order they were read in.
 *
 * @see docs/behaviour.md, "The queue, concurrency and the end"
 */
export function firstDifference(runs: readonly StageRun[]): string | null {
  const [reference, ...others] = runs;
  if (reference === undefined) return null;
  for (const run of runs) {
    const twice = recordedTwice(run.result.records);
    if (twice !== null) return `${run.stage} recorded ${twice} more than once: a URL has one record`;
  }
  for (const other of others) {
    const difference = differenceBetween(reference, other);
    if (difference !== null) return difference;
  }
  return null;
}

/** The first URL with two records, or null: comparing the records as sets keyed by URL would not see it. */
function recordedTwice(records: readonly FetchStatistic[]): string | null {
  const urls = new Set<string>();
  for (const record of records) {
    if (urls.has(record.url)) return record.url;
    urls.add(record.url);
  }
  return null;
}

function differenceBetween(a: StageRun, b: StageRun): string | null {
  const names = [a.stage, b.stage];
  const width = Math.max(...names.map((name) => name.length)) + 1;
  const label = (name: string): string => `  ${`${name}:`.padEnd(width)} `;

  const left = byUrl(a.result.records);
  const right = byUrl(b.result.records);
  const urls = [...new Set([...left.keys(), ...right.keys()])].sort();
  for (const url of urls) {
    const x = left.get(url);
    const y = right.get(url);
    if (x !== undefined && y !== undefined && sameRecord(x, y)) continue;
    return [
      `${a.stage} and ${b.stage} differ at ${url}:`,
      `${label(a.stage)}${recordText(x)}`,
      `${label(b.stage)}${recordText(y)}`,
    ].join("\n");
  }

  const leftRobots = byOrigin(a.result.robots);
  const rightRobots = byOrigin(b.result.robots);
  const origins = [...new Set([...leftRobots.keys(), ...rightRobots.keys()])].sort();
  for (const origin of origins) {
    const x = leftRobots.get(origin);
    const y = rightRobots.get(origin);
    if (x !== undefined && y !== undefined && sameRobotsFetch(x, y)) continue;
    return [
      `${a.stage} and ${b.stage} differ at ${origin}/robots.txt:`,
      `${label(a.stage)}${x === undefined ? "(not read)" : JSON.stringify(x)}`,
      `${label(b.stage)}${y === undefined ? "(not read)" : JSON.stringify(y)}`,
    ].join("\n");
  }

  const sums = [sumOfNewUrls(a.result), sumOfNewUrls(b.result)];
  const redirects = a.result.records.some(isRedirect) || b.result.records.some(isRedirect);
  if (!redirects && sums[0] !== sums[1]) {
    return `${a.stage} and ${b.stage} differ in the sum of numNewUrls: ${sums[0]} and ${sums[1]}`;
  }
  const seenA = new Set(a.result.seen);
  const seenB = new Set(b.result.seen);
  const onlyA = a.result.seen.find((url) => !seenB.has(url));
  const onlyB = b.result.seen.find((url) => !seenA.has(url));
  if (onlyA !== undefined) return `${a.stage} queued ${onlyA}, ${b.stage} did not`;
  if (onlyB !== undefined) return `${b.stage} queued ${onlyB}, ${a.stage} did not`;
  return null;
}

function byUrl(records: readonly FetchStatistic[]): Map<string, FetchStatistic> {
  return new Map(records.map((record) => [record.url, record]));
}

/** Every field but `numNewUrls` and `referrer`, which depend on timing. */
function sameRecord(x: FetchStatistic, y: FetchStatistic): boolean {
  return (
    x.url === y.url &&
    x.nextUrl === y.nextUrl &&
    x.status === y.status &&
    x.error === y.error &&
    x.size === y.size &&
    x.contentType === y.contentType &&
    x.encoding === y.encoding &&
    x.numUrls === y.numUrls
  );
}

function byOrigin(fetches: readonly RobotsFetch[]): Map<string, RobotsFetch> {
  return new Map(fetches.map((fetch) => [fetch.origin, fetch]));
}

/** Every field: what a robots.txt fetch gives does not depend on timing. */
function sameRobotsFetch(x: RobotsFetch, y: RobotsFetch): boolean {
  return (
    x.url === y.url &&
    x.status === y.status &&
    x.error === y.error &&
    x.verdict === y.verdict &&
    x.crawlDelayMs === y.crawlDelayMs &&
    x.attempts === y.attempts
  );
}

function recordText(record: FetchStatistic | undefined): string {
  return record === undefined ? "(no record)" : JSON.stringify(record);
}

function sumOfNewUrls(result: CrawlResult): number {
  return result.records.reduce((sum, record) => sum + record.numNewUrls, 0);
}

function isRedirect(record: FetchStatistic): boolean {
  return record.nextUrl !== null;
}

function wallMs(result: CrawlResult): number {
  return Math.max(0, result.finishedAt - result.startedAt);
}

function pagesPerSecond(result: CrawlResult): string {
  const ms = wallMs(result);
  return ms > 0 ? (result.recorded / (ms / 1000)).toFixed(0) : "-";
}

function shown(value: number | null): string {
  return value === null ? "-" : String(value);
}

/** Left-aligns the first column and right-aligns the others. */
function formatColumns(rows: ReadonlyArray<readonly string[]>): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  const lines = rows.map((row) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column] + 2)))
      .join("")
      .trimEnd(),
  );
  return lines.join("\n") + "\n";
}
