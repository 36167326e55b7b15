/**
 * The result of a whole crawl, and how each record joins it. The record
 * itself (the chapter's `FetchStatistic` namedtuple, and its three shapes)
 * lives in `fetch-statistic.ts`, below the options; it is re-exported here,
 * where the stages and the package root import it from.
 *
 * @module
 */
import type { FetchStatistic } from "./fetch-statistic.js";
import type { ResolvedCrawlOptions } from "./options.js";
import type { CrawlItem } from "./page-hook.js";
import type { RobotsFetch } from "./robots.js";

export { errorRecord, pageRecord, redirectRecord, type FetchStatistic, type RecordAt } from "./fetch-statistic.js";
export { FETCH_ERRORS, type FetchError } from "../kernel/errors.js";

/** What stopped a crawl early: see {@link CrawlResult.stoppedBy}. */
export type StoppedBy = "maxPages" | "signal";

/** What `crawl()` resolves to, in every stage. */
export interface CrawlResult {
  /** One per URL fetched, in completion order; empty when `keepRecords` was false. */
  records: FetchStatistic[];
  /** Records made, kept or not: `records.length` unless `keepRecords` was false. */
  recorded: number;
  /** Every URL ever queued, in the order it was first queued. */
  seen: string[];
  /**
   * URLs seen that have no record, wherever they wait (the queue, a host's
   * line, a pause before a retry): non-zero only when the crawl stopped early
   * (`maxPages` or `signal`).
   */
  todo: number;
  /**
   * Why the crawl stopped with URLs left to do: `"maxPages"` (that many
   * pages were fetched; run it again with a larger one, and a `state`, to go
   * on), `"signal"` (the caller's signal aborted, or `stop()`); null when it
   * ran to its end.
   */
  stoppedBy: StoppedBy | null;
  /** `Date.now()` when the crawl started. */
  startedAt: number;
  /** `Date.now()` when the crawl finished. */
  finishedAt: number;
  /** The options in force, defaults filled in. */
  options: ResolvedCrawlOptions;
  /**
   * Each origin's `robots.txt`, in the order they were read (option
   * `robots`; empty without it). They are not records: the records stay one
   * per URL queued.
   */
  robots: RobotsFetch[];
  /** The items the `onPage` hook gave, with their pages' URLs, in the order made; empty when `keepRecords` was false. */
  items?: CrawlItem[]; // Stand-in: optional until helper "hook"'s core fills it.
}

/**
 * The result of a crawl that has ended, however it ended: `todo` counts the
 * URLs queued but never recorded (zero when the crawl ran to its end), of
 * the `recorded` records made (kept in `records` or not).
 */
export function crawlResult(
  seenUrls: ReadonlySet<string>,
  records: FetchStatistic[],
  recorded: number,
  startedAt: number,
  options: ResolvedCrawlOptions,
  robots: RobotsFetch[] = [],
  stoppedBy: StoppedBy | null = null,
): CrawlResult {
  return {
    records,
    recorded,
    seen: [...seenUrls],
    todo: seenUrls.size - recorded,
    stoppedBy,
    startedAt,
    finishedAt: Date.now(),
    options,
    robots,
  };
}

/**
 * Whether the record is of a page fetched: its URL was requested (`tries`
 * over 0), unlike a URL `robots.txt` refused, which has a record but was
 * never requested. What `maxPages` counts.
 */
export function isFetchedPage(record: FetchStatistic): boolean {
  return record.tries > 0;
}

/**
 * Appends `record` to `records` (unless `keepRecords` is false) and tells
 * `onRecord` about it. A throwing `onRecord` is ignored: the record stands
 * and the crawl goes on (docs/behaviour.md).
 */
export function appendRecord(
  records: FetchStatistic[],
  record: FetchStatistic,
  { onRecord, keepRecords }: Pick<ResolvedCrawlOptions, "onRecord" | "keepRecords">,
): void {
  if (keepRecords) records.push(record);
  try {
    onRecord?.(record);
  } catch {
    // The caller's progress callback failed; watching must not break the crawl.
  }
}
