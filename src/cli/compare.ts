/**
 * `crawl --compare`: the side-by-side table of the three stages' crawls, and
 * the check that they crawled identically.
 *
 * @module
 */
import { FETCH_ERRORS } from "../crawl/records.js";
import type { CrawlResult, FetchStatistic } from "../crawl/records.js";
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

/**
 * The table `--compare` prints: one column per stage, one row per figure
 * (records, html pages, redirects, errors and each error name that occurred,
 * the origins whose robots.txt was read, wall time, pages per second, peak
 * concurrency). A figure nobody could measure prints as `-`.
 */
export function comparisonTable(runs: readonly StageRun[]): string {
  const rows: Array<[string, ...string[]]> = [["", ...runs.map((run) => run.stage)]];
  const addRow = (label: string, figure: (run: StageRun) => string): void => {
    rows.push([label, ...runs.map(figure)]);
  };
  addRow("records", (run) => String(run.result.recorded));
  addRow("html pages", (run) => String(run.stats.htmlPages));
  addRow("redirects", (run) => String(run.stats.redirects));
  addRow("errors", (run) => String(run.stats.failures));
  for (const name of FETCH_ERRORS) {
    const counts = runs.map((run) => run.stats.errorCount(name));
    if (counts.some((n) => n > 0)) rows.push([`  ${name}`, ...counts.map(String)]);
  }
  if (runs.some((run) => run.result.todo > 0)) addRow("todo", (run) => String(run.result.todo));
  if (runs.some((run) => run.result.robots.length > 0)) addRow("robots.txt read", (run) => String(run.result.robots.length));
  addRow("wall time", (run) => `${(wallMs(run.result) / 1000).toFixed(3)} s`);
  addRow("pages/s", (run) => pagesPerSecond(run.result));
  addRow("peak concurrency", (run) => shown(run.peakInFlight));
  if (runs.some((run) => run.serverPeak !== null)) addRow("  seen by server", (run) => shown(run.serverPeak));
  return formatColumns(rows);
}

/**
 * Whether every stage crawled like the first: null when they did, else a
 * description of the first difference, with the two records involved.
 *
 * Records are compared as sets, matched by URL, field by field except
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
  for (const other of others) {
    const difference = differenceBetween(reference, other);
    if (difference !== null) return difference;
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
