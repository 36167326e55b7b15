/**
 * The record of one URL's fetch (the chapter's `FetchStatistic` namedtuple)
 * and the result of a whole crawl.
 *
 * @module
 */
import type { ResolvedCrawlOptions } from "./options.js";
import type { RobotsFetch } from "./robots.js";

import type { FetchError } from "../kernel/errors.js";
export { FETCH_ERRORS, type FetchError } from "../kernel/errors.js";


/**
 * One record per URL: its final attempt's outcome. Like the chapter's
 * `FetchStatistic`, it is plain data, so it prints, compares and serialises.
 *
 * Invariants: `error !== null` exactly when `status === null`; redirect records
 * have `nextUrl`, `size: 0` and `contentType`/`encoding` null, like the chapter.
 */
export interface FetchStatistic {
  /** The URL fetched (absolute, without fragment or `user:pass@`). */
  url: string;
  /** Redirect target (absolute, without fragment or `user:pass@`), else null. */
  nextUrl: string | null;
  /** HTTP status, or null when every try failed. */
  status: number | null;
  /** Why the last try failed, or null. */
  error: FetchError | null;
  /** Body bytes after content decoding. */
  size: number;
  /** Media type only, lowercased (`text/html`), or null. */
  contentType: string | null;
  /** Charset the response names (header, else `<meta>`), lowercased; `utf-8` when none. Null for errors and redirects. */
  encoding: string | null;
  /** Distinct allowed links on the page. */
  numUrls: number;
  /** Of those, the ones not seen before this page. */
  numNewUrls: number;
  /**
   * The page whose links (or whose redirect) queued this URL: the first
   * page processed that found it unseen. Null for a root. With one task this
   * is the breadth-first walk's; with several, when two pages fetched at once
   * both link here, it is whichever of them finished first.
   */
  referrer: string | null;
  /**
   * Why the last try failed, in Node's words, when `error` is `TlsError`:
   * the code and message of the certificate or handshake failure, e.g.
   * `CERT_HAS_EXPIRED: certificate has expired`. Null otherwise.
   */
  detail: string | null;
}

/** What `crawl()` resolves to, in every stage. */
export interface CrawlResult {
  /** One per URL fetched, in completion order; empty when `keepRecords` was false. */
  records: FetchStatistic[];
  /** Records made, kept or not: `records.length` unless `keepRecords` was false. */
  recorded: number;
  /** Every URL ever queued, in the order it was first queued. */
  seen: string[];
  /** URLs left in the queue: non-zero only when the crawl stopped early (`maxPages` or `signal`). */
  todo: number;
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
}

/** The record for a URL whose every attempt failed; `detail` says why, for a `TlsError`. */
export function errorRecord(url: string, error: FetchError, referrer: string | null = null, detail: string | null = null): FetchStatistic {
  return {
    url,
    nextUrl: null,
    status: null,
    error,
    size: 0,
    contentType: null,
    encoding: null,
    numUrls: 0,
    numNewUrls: 0,
    referrer,
    detail,
  };
}

/** The record for a redirect, like the chapter's: no size, no type, no links. */
export function redirectRecord(url: string, status: number, nextUrl: string, referrer: string | null = null): FetchStatistic {
  return {
    url,
    nextUrl,
    status,
    error: null,
    size: 0,
    contentType: null,
    encoding: null,
    numUrls: 0,
    numNewUrls: 0,
    referrer,
    detail: null,
  };
}

/** The record for an ordinary response: what was read, and how many links it gave. */
export function pageRecord(
  url: string,
  page: { status: number; size: number; contentType: string | null; encoding: string | null },
  numUrls: number,
  numNewUrls: number,
  referrer: string | null = null,
): FetchStatistic {
  return {
    url,
    nextUrl: null,
    status: page.status,
    error: null,
    size: page.size,
    contentType: page.contentType,
    encoding: page.encoding,
    numUrls,
    numNewUrls,
    referrer,
    detail: null,
  };
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
): CrawlResult {
  return {
    records,
    recorded,
    seen: [...seenUrls],
    todo: seenUrls.size - recorded,
    startedAt,
    finishedAt: Date.now(),
    options,
    robots,
  };
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
