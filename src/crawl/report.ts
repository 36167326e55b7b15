/**
 * The text report of a crawl, after the chapter's `reporting.py`.
 *
 * @module
 */
import { errorHint } from "../kernel/errors.js";
import { FETCH_ERRORS } from "./records.js";
import type { CrawlResult, FetchError, FetchStatistic } from "./records.js";
import type { RobotsFetch } from "./robots.js";

/** What {@link report} prints besides the counters and the summary. */
export interface ReportOptions {
  /** Print only the error lines among the per-URL lines. */
  quiet?: boolean;
  /**
   * Also print the options in force and when the crawl started and finished,
   * and end each per-URL line with the page that linked to it (`(from URL)`).
   */
  verbose?: boolean;
  /**
   * The records counted as `onRecord` saw them, for a crawl that did not keep
   * them (`keepRecords: false`): the counters come from it then. When the
   * records were kept, the report counts them itself and ignores this.
   */
  stats?: Stats;
  /**
   * Where the records went when they were not kept (`records.jsonl`,
   * `stdout`), named in the line that stands for the per-URL lines.
   */
  recordsIn?: string;
}

/** What {@link urlLine} adds to the chapter's line. */
export interface UrlLineOptions {
  /** End the line with ` (from REFERRER)` when the record has a referrer (roots have none). */
  referrer?: boolean;
}

/**
 * The counts the report prints, gathered one record at a time, so they can
 * be kept while a crawl runs (in `onRecord`) when its records are not.
 *
 * Each record counts once, by kind: an error by its name, a redirect, a
 * `200` as an HTML page (`text/html`) or another page, any other response by
 * its status; `bytes` sums every record's `size`.
 *
 * @remarks The chapter's `Stats` is a `Counter` of string keys that
 * `url_report` adds to as it prints each line; this one is fed whole
 * records, so it can count while the crawl runs, apart from any printing.
 * @see The chapter's `reporting.py`: `Stats`
 * @example
 * ```ts
 * const stats = new Stats();
 * const result = await crawl(root, { keepRecords: false, onRecord: (record) => stats.add(record) });
 * console.log(report(result, { stats }));
 * ```
 */
export class Stats {
  /** Records counted. */
  records = 0;
  /** Records of a failed fetch (no response), whatever the error. */
  failures = 0;
  /** `200` responses of type `text/html`. */
  htmlPages = 0;
  /** `200` responses of any other type (or none). */
  otherPages = 0;
  /** Redirect records. */
  redirects = 0;
  /** Records of a response that is neither a `200` nor a redirect, by status. */
  readonly statuses = new Map<number, number>();
  /** Records of a failed fetch, by error name. */
  readonly errors = new Map<FetchError, number>();
  /**
   * Records of URLs never requested because of their origin's `robots.txt`:
   * it disallowed them (`RobotsDisallowed`), or answered a 5xx or a 429 on
   * every attempt (`RobotsUnreachable`).
   *
   * @remarks A network failure met while reading `robots.txt` (a host that
   * does not resolve, a refused port: `HostNotFound`, `ConnectionRefused`…,
   * with a `detail` that starts `robots.txt`) is not counted: the page would
   * have failed the same way, and robots.txt is only where it was met first.
   */
  robotsRefused = 0;
  /** The sum of the records' `size`. */
  bytes = 0;
  /** The items the `onPage` hook made: the sum of the page records' `items` (0 without a hook). */
  items = 0;

  /** The stats of records already made (a kept crawl's `result.records`). */
  static of(records: Iterable<FetchStatistic>): Stats {
    const stats = new Stats();
    for (const record of records) stats.add(record);
    return stats;
  }

  /** Counts one record. */
  add(record: FetchStatistic): void {
    this.records += 1;
    this.bytes += record.size;
    if (record.items !== undefined) this.items += record.items;
    if (record.error !== null) {
      this.failures += 1;
      this.errors.set(record.error, this.errorCount(record.error) + 1);
      if (record.error === "RobotsDisallowed" || record.error === "RobotsUnreachable") this.robotsRefused += 1;
    } else if (record.nextUrl !== null) {
      this.redirects += 1;
    } else if (record.status === 200) {
      if (record.contentType === "text/html") this.htmlPages += 1;
      else this.otherPages += 1;
    } else if (record.status !== null) {
      this.statuses.set(record.status, (this.statuses.get(record.status) ?? 0) + 1);
    }
  }

  /** Records that failed with the error `name`. */
  errorCount(name: FetchError): number {
    return this.errors.get(name) ?? 0;
  }
}

/**
 * Renders a crawl result as text, one line per URL (sorted by URL), then the
 * counters, then the chapter's summary lines. A pure function: it returns the
 * text and prints nothing.
 *
 * Per-URL lines, by kind of record:
 * - page: `url status contentType encoding size numNewUrls/numUrls` (`-` for a null field);
 * - redirect: `url status -> nextUrl`;
 * - error: `url error ErrorName`.
 *
 * A crawl that did not keep its records (`keepRecords: false`) has one line
 * instead, `N records not listed here: see WHERE` (`recordsIn`, else `they
 * were not kept`), and its counters come from `stats`, the {@link Stats} its
 * `onRecord` gathered; without them there are no counters, and the line says
 * `N records not kept: neither listed nor counted here`.
 *
 * Then, when the crawl obeyed `robots.txt` (option `robots`), its lines,
 * apart from the records and sorted by origin: one per origin whose
 * `robots.txt` was not simply read ({@link robotsLine}: unreachable,
 * everything allowed, or a `Crawl-delay`), then
 * `N URLs disallowed by robots.txt (read at M origins)` (without a count,
 * `robots.txt read at M origins`, when records were neither kept nor counted).
 *
 * Counters (right-aligned in ten columns like the chapter's, only those that
 * are not zero): `html pages` and `other pages` (status 200, `text/html` or
 * not), `redirects`, `status N` for each other status, each error name in
 * {@link FETCH_ERRORS} order (`ExtractError` among them: pages whose `onPage`
 * hook failed), `items` (what the hook made), and always `bytes` (the sum of `size`). Then
 * `Finished N urls in S secs (max_tasks=T) (R urls/sec/task)` (or, when
 * `maxPages` stopped the crawl with URLs left, `Stopped at maxPages (P pages
 * fetched) after N urls in …`), `Todo: N` and `Done: N`.
 *
 * `quiet` keeps only the error lines among the per-URL lines, and only the
 * unreachable origins among the `robots.txt` lines. `verbose` adds a block
 * after the header with the options in force and the start and finish times
 * (ISO 8601, UTC), ends each per-URL line with ` (from URL)`, the page that
 * linked to it, for finding broken links, and lists every origin's
 * `robots.txt`; the two combine.
 *
 * @remarks The chapter counts a non-200 `text/html` page as `html`, and a
 * non-200 page of any other type as `error` plus `status_N`; here every
 * non-200, non-redirect response counts as `status N` and `error` only counts
 * failed fetches, by name. The chapter's `Date:` line (the local time of the
 * report) is left out so the same result always gives the same text;
 * `verbose` shows the crawl's own timestamps instead.
 * @see The chapter's `reporting.py`: `report`, `url_report` and `Stats`
 * @example
 * ```ts
 * const result = await crawl("xkcd.com");
 * console.log(report(result, { quiet: true }));
 * ```
 * For a crawl that keeps no records, count them as they come:
 * ```ts
 * const stats = new Stats();
 * const result = await crawl("xkcd.com", { keepRecords: false, onRecord: (record) => stats.add(record) });
 * console.log(report(result, { stats }));
 * ```
 */
export function report(result: CrawlResult, options: ReportOptions = {}): string {
  const lines: string[] = ["*** Report ***"];
  if (options.verbose === true) lines.push(...settingsLines(result));

  const kept = result.records.length === result.recorded;
  const stats = kept ? Stats.of(result.records) : (options.stats ?? null);
  if (kept) {
    // Only the lines printed are sorted: `quiet` lists the errors alone, and a
    // sort of every record compares every URL, which makes V8 flatten each one
    // still held as two joined strings: a new copy of every URL at the end of a
    // big crawl (docs/benchmarks.md, "Issue 39: memory with records kept").
    const listed = options.quiet === true ? result.records.filter(isFailure) : [...result.records];
    for (const record of listed.sort(byUrl)) lines.push(urlLine(record, { referrer: options.verbose === true }));
  } else {
    lines.push(unlistedLine(result.recorded, stats, options.recordsIn));
  }

  if (result.options.robots) lines.push(...robotsLines(result, stats, options));
  if (stats !== null) lines.push(...counterLines(stats));
  lines.push(summaryLine(result), `Todo: ${result.todo}`, `Done: ${result.recorded}`);
  return lines.join("\n") + "\n";
}

/**
 * The line that stands for the per-URL lines of records that were not kept:
 * `4 records not listed here: see records.jsonl`, or, without their
 * {@link Stats}, `4 records not kept: neither listed nor counted here`.
 */
function unlistedLine(recorded: number, stats: Stats | null, recordsIn: string | undefined): string {
  const records = `${recorded} record${recorded === 1 ? "" : "s"}`;
  if (stats === null) return `${records} not kept: neither listed nor counted here`;
  return `${records} not listed here: ${recordsIn === undefined ? "they were not kept" : `see ${recordsIn}`}`;
}

/** Whether the record is of a failed fetch: the records `quiet` lists. */
function isFailure(record: FetchStatistic): boolean {
  return record.error !== null;
}

function byUrl(a: FetchStatistic, b: FetchStatistic): number {
  if (a.url === b.url) return 0;
  return a.url < b.url ? -1 : 1;
}

/**
 * The line for one record (the chapter's `url_report`):
 * `url status contentType encoding size numNewUrls/numUrls` for a page,
 * `url status -> nextUrl` for a redirect, `url error Name` for a failure
 * (and, with a `detail`, ` (detail; hint)`, the hint of `errorHint`);
 * with `referrer`, followed by ` (from URL)` naming the page that linked to
 * it: `http://x/missing 404 text/plain utf-8 10 0/0 (from http://x/page)`.
 */
export function urlLine(record: FetchStatistic, options: UrlLineOptions = {}): string {
  const from = options.referrer === true && record.referrer !== null ? ` (from ${record.referrer})` : "";
  if (record.error !== null) {
    const hint = errorHint(record.error, record.detail);
    const why = record.detail ? ` (${record.detail}${hint === null ? "" : `; ${hint}`})` : "";
    return `${record.url} error ${record.error}${why}${from}`;
  }
  if (record.nextUrl !== null) return `${record.url} ${shown(record.status)} -> ${record.nextUrl}${from}`;
  const line = [
    record.url,
    shown(record.status),
    shown(record.contentType),
    shown(record.encoding),
    record.size,
    `${record.numNewUrls}/${record.numUrls}`,
  ].join(" ");
  return line + from;
}

/**
 * The line for one origin's `robots.txt`, by what the crawl did there:
 * - unreachable: `robots.txt http://h:8080: unreachable (500 after 4 attempts); nothing fetched there`,
 *   with the failure's detail and hint when it has one: `(TlsError after 1 attempt: CERT_HAS_EXPIRED: …; …)`;
 * - everything allowed: `robots.txt http://h:8080: 404; everything allowed`;
 * - rules: `robots.txt http://h:8080: 200; rules read` and, when the group
 *   has one, `, Crawl-delay 2000 ms` (`, capped at 30000 ms` beyond `maxCrawlDelayMs`).
 *
 * When redirects led elsewhere, the status is followed by ` at URL`.
 */
export function robotsLine(fetch: RobotsFetch, maxCrawlDelayMs: number): string {
  const start = `robots.txt ${fetch.origin}: `;
  const at = fetch.url === `${fetch.origin}/robots.txt` ? "" : ` at ${fetch.url}`;
  const outcome = `${fetch.error ?? shown(fetch.status)}${at}`;
  if (fetch.verdict === "unreachable") {
    const attempts = `${fetch.attempts} attempt${fetch.attempts === 1 ? "" : "s"}`;
    const hint = fetch.error === null ? null : errorHint(fetch.error, fetch.detail);
    const why = fetch.detail === null ? "" : `: ${fetch.detail}${hint === null ? "" : `; ${hint}`}`;
    return `${start}unreachable (${outcome} after ${attempts}${why}); nothing fetched there`;
  }
  if (fetch.verdict === "allow-all") return `${start}${outcome}; everything allowed`;
  if (fetch.crawlDelayMs === null) return `${start}${outcome}; rules read`;
  const capped = fetch.crawlDelayMs > maxCrawlDelayMs ? `, capped at ${maxCrawlDelayMs} ms` : "";
  return `${start}${outcome}; rules read, Crawl-delay ${fetch.crawlDelayMs} ms${capped}`;
}

/**
 * The `robots.txt` lines: an origin whose file simply set rules is listed
 * only when `verbose`, one that allowed everything or set a `Crawl-delay`
 * unless `quiet`, an unreachable one always; then the count of URLs refused.
 */
function robotsLines(result: CrawlResult, stats: Stats | null, options: ReportOptions): string[] {
  const lines: string[] = [];
  for (const fetch of [...result.robots].sort(byOrigin)) {
    const shownWhen =
      fetch.verdict === "unreachable" ||
      options.verbose === true ||
      (options.quiet !== true && (fetch.verdict === "allow-all" || fetch.crawlDelayMs !== null));
    if (shownWhen) lines.push(robotsLine(fetch, result.options.maxCrawlDelayMs));
  }
  const origins = `${result.robots.length} origin${result.robots.length === 1 ? "" : "s"}`;
  if (stats === null) {
    lines.push(`robots.txt read at ${origins}`);
    return lines;
  }
  const disallowed = stats.errorCount("RobotsDisallowed");
  lines.push(`${disallowed} URL${disallowed === 1 ? "" : "s"} disallowed by robots.txt (read at ${origins})`);
  return lines;
}

function byOrigin(a: RobotsFetch, b: RobotsFetch): number {
  if (a.origin === b.origin) return 0;
  return a.origin < b.origin ? -1 : 1;
}

function shown(value: string | number | null): string {
  return value === null ? "-" : String(value);
}

function counterLines(stats: Stats): string[] {
  const rows: Array<[number, string]> = [
    [stats.htmlPages, "html pages"],
    [stats.otherPages, "other pages"],
    [stats.redirects, "redirects"],
  ];
  const statuses = [...stats.statuses.keys()].sort((a, b) => a - b);
  for (const status of statuses) rows.push([stats.statuses.get(status) ?? 0, `status ${status}`]);
  for (const name of FETCH_ERRORS) rows.push([stats.errorCount(name), name]);

  rows.push([stats.items, "items"]);
  const lines = rows.filter(([n]) => n !== 0).map(([n, label]) => counterLine(n, label));
  lines.push(counterLine(stats.bytes, "bytes"));
  return lines;
}

function counterLine(n: number, label: string): string {
  return `${String(n).padStart(10)} ${label}`;
}

/**
 * The chapter's `Finished … urls/sec/task` line, with its wording and
 * precision; a crawl that `maxPages` stopped with URLs left says so instead
 * of `Finished`: `Stopped at maxPages (12 pages fetched) after 22 urls in …`.
 */
function summaryLine(result: CrawlResult): string {
  const done = result.recorded;
  const seconds = Math.max(0, result.finishedAt - result.startedAt) / 1000;
  const maxTasks = result.options.maxTasks;
  const speed = seconds > 0 && maxTasks > 0 ? done / seconds / maxTasks : 0;
  const how = result.stoppedBy === "maxPages" ? `Stopped at maxPages (${result.options.maxPages} pages fetched) after` : "Finished";
  return `${how} ${done} urls in ${seconds.toFixed(3)} secs (max_tasks=${maxTasks}) (${speed.toFixed(3)} urls/sec/task)`;
}

/**
 * The `verbose` block: the crawl's timestamps and the options in force,
 * politeness and the crawl controls on lines of their own (the headers by
 * name only: their values can hold cookies or tokens).
 */
function settingsLines(result: CrawlResult): string[] {
  const settings = result.options;
  const exclude = settings.exclude === null ? "-" : String(settings.exclude);
  const maxPages = Number.isFinite(settings.maxPages) ? String(settings.maxPages) : "-";
  const maxPerHost = Number.isFinite(settings.maxPerHost) ? String(settings.maxPerHost) : "-";
  const include = settings.include === null ? "-" : String(settings.include);
  const maxDepth = Number.isFinite(settings.maxDepth) ? String(settings.maxDepth) : "-";
  const headers = Object.keys(settings.headers).join(",") || "-";
  return [
    `Started: ${isoTime(result.startedAt)}`,
    `Ended: ${isoTime(result.finishedAt)}`,
    `Options: maxTasks=${settings.maxTasks} maxRedirect=${settings.maxRedirect} maxTries=${settings.maxTries}` +
      ` strict=${settings.strict} exclude=${exclude} timeoutMs=${settings.timeoutMs} maxPages=${maxPages}` +
      ` maxBodyBytes=${settings.maxBodyBytes} userAgent=${JSON.stringify(settings.userAgent)}`,
    `Politeness: robots=${settings.robots} maxPerHost=${maxPerHost} delayMs=${settings.delayMs}` +
      ` delayJitter=${settings.delayJitter} maxCrawlDelayMs=${settings.maxCrawlDelayMs}` +
      ` maxRetryAfterMs=${settings.maxRetryAfterMs}`,
    `Controls: include=${include} noParent=${settings.noParent} maxDepth=${maxDepth}` +
      ` skipNonHtml=${settings.skipNonHtml} headers=${headers} keepRecords=${settings.keepRecords}`,
  ];
}

function isoTime(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? "-" : date.toISOString();
}
