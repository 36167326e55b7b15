/**
 * The record of one URL's fetch: the chapter's `FetchStatistic` namedtuple,
 * and the three shapes it takes (a failure, a redirect, a page). Plain data
 * that needs nothing of the crawl around it, so the options (whose
 * `onRecord` is handed one) and the crawl's result can both stand on it.
 *
 * @module
 */
import type { FetchError } from "../kernel/errors.js";

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
   * Why the last try failed, when `error`'s name alone does not say (see
   * `errorDetail`): for a `TlsError` Node's words, e.g.
   * `CERT_HAS_EXPIRED: certificate has expired`; for a `HostNotFound`, the
   * resolver's code; for a `BadResponse`, what was bad; for a URL never
   * requested because its origin's `robots.txt` could not be read, that
   * failure, starting `robots.txt`; for a sitemap that could not be read
   * (option `sitemaps`), why: `Not a sitemap: …`, or the limit a gzip bomb
   * ran into. Null otherwise.
   */
  detail: string | null;
  /** Links followed from a root to reach the URL (a redirect's target lies as deep as the redirect): 0 for a root. */
  depth: number;
  /**
   * Attempts made at the URL: 1 when the first answered, more when network
   * errors or statuses retried it (`maxTries` at most); 0 when it was never
   * requested (`robots.txt` refused it, or could not be read).
   */
  tries: number;
  /** When the response (or the last attempt's failure) came, or the URL was refused: an ISO 8601 time in UTC. */
  fetchedAt: string;
  /**
   * Items the `onPage` hook made from the page (`CrawlResult.items`). Only
   * on a page record (no error, no redirect) of a crawl with a hook: the
   * records of a crawl without one have no such field.
   */
  items?: number;
}

/** Where a record's URL lay and how it was fetched: the fields of a record a crawl fills in besides the outcome. */
export interface RecordAt {
  /** Links from a root; default 0. */
  depth?: number;
  /** Attempts made; default 1. */
  tries?: number;
  /** ISO time; default now. */
  fetchedAt?: string;
}

/** The last time `now()` formatted, in ms since the epoch, and its ISO string. */
let formattedMs = NaN;
let formatted = "";

/**
 * The time now as an ISO 8601 string, formatted once a millisecond: records
 * made in the same millisecond share it (`toISOString` costs more than the
 * rest of a record; docs/benchmarks.md, "Issue 29, third round").
 */
function now(): string {
  const ms = Date.now();
  if (ms !== formattedMs) {
    formattedMs = ms;
    formatted = new Date(ms).toISOString();
  }
  return formatted;
}

/** The record for a URL whose every attempt failed; `detail` says why, when the name does not. */
export function errorRecord(url: string, error: FetchError, referrer: string | null = null, detail: string | null = null, where: RecordAt = {}): FetchStatistic {
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
    depth: where.depth ?? 0,
    tries: where.tries ?? 1,
    fetchedAt: where.fetchedAt ?? now(),
  };
}

/** The record for a redirect, like the chapter's: no size, no type, no links. */
export function redirectRecord(url: string, status: number, nextUrl: string, referrer: string | null = null, where: RecordAt = {}): FetchStatistic {
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
    depth: where.depth ?? 0,
    tries: where.tries ?? 1,
    fetchedAt: where.fetchedAt ?? now(),
  };
}

/** The record for an ordinary response: what was read, and how many links it gave. */
export function pageRecord(
  url: string,
  page: { status: number; size: number; contentType: string | null; encoding: string | null },
  numUrls: number,
  numNewUrls: number,
  referrer: string | null = null,
  where: RecordAt = {},
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
    depth: where.depth ?? 0,
    tries: where.tries ?? 1,
    fetchedAt: where.fetchedAt ?? now(),
  };
}
