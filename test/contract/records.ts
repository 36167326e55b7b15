/**
 * Expected records, written out field by field (not with the shared record
 * constructors the stages use, so a slip there cannot hide on both sides).
 */
import { expect } from "vitest";
import type { FetchError, FetchStatistic } from "../../src/crawl/records.js";
import { linksHtml } from "../../src/site/html.js";

/**
 * What a builder expects of `referrer` when the scenario names none: a URL or
 * null, unchecked. The scenarios that are about referrers pass the URL (or
 * null for a root); the others leave it open, as which page first queued a
 * URL depends on timing when several pages are fetched at once.
 */
const ANY_REFERRER: string | null = expect.toSatisfy(function isReferrer(value: unknown) {
  return value === null || typeof value === "string";
}, "a referrer: a URL or null");

/** Any text that is not empty. */
const ANY_TEXT: string = expect.toSatisfy(function isText(value: unknown) {
  return typeof value === "string" && value !== "";
}, "a text");

/** What a builder expects of `depth` and `tries` when the scenario names none: a whole number, unchecked. */
const ANY_COUNT: number = expect.toSatisfy(function isCount(value: unknown) {
  return Number.isInteger(value) && (value as number) >= 0;
}, "a whole number");

/** What every builder expects of `fetchedAt`: an ISO 8601 time in UTC, as `Date#toISOString` writes it. */
export const ISO_TIME: string = expect.toSatisfy(function isIsoTime(value: unknown) {
  return typeof value === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(value) && new Date(value).toISOString() === value;
}, "an ISO time");

/** The fields every record has besides its outcome, unchecked but for their form. */
const ANY_WHERE = { depth: ANY_COUNT, tries: ANY_COUNT, fetchedAt: ISO_TIME };

/** The record of a page served by `FixtureSite#addPage(path, links)`. */
export function linksPageRecord(
  url: string,
  links: readonly string[],
  numUrls: number,
  numNewUrls: number,
  referrer: string | null = ANY_REFERRER,
): FetchStatistic {
  return pageRecordOf(url, { size: Buffer.byteLength(linksHtml(links)), numUrls, numNewUrls, referrer });
}

/** The record of an ordinary response; defaults: 200, text/html, utf-8, no links, any referrer. */
export function pageRecordOf(
  url: string,
  fields: Partial<Pick<FetchStatistic, "status" | "size" | "contentType" | "encoding" | "numUrls" | "numNewUrls" | "referrer" | "depth" | "tries">> = {},
): FetchStatistic {
  return {
    url,
    nextUrl: null,
    status: 200,
    error: null,
    size: 0,
    contentType: "text/html",
    encoding: "utf-8",
    numUrls: 0,
    numNewUrls: 0,
    referrer: ANY_REFERRER,
    detail: null,
    ...ANY_WHERE,
    ...fields,
  };
}

/** The record of a redirect. */
export function redirectRecordOf(url: string, status: number, nextUrl: string, referrer: string | null = ANY_REFERRER): FetchStatistic {
  return { url, nextUrl, status, error: null, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0, referrer, detail: null, ...ANY_WHERE };
}

/**
 * The record of a URL whose every attempt failed. Its `detail` is null unless
 * given, but for a `BadResponse`, whose detail says what was bad in the words
 * of the stage's parser: any text, unless given.
 */
export function errorRecordOf(url: string, error: FetchError, referrer: string | null = ANY_REFERRER, detail: string | null = error === "BadResponse" ? ANY_TEXT : null): FetchStatistic {
  return { url, nextUrl: null, status: null, error, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0, referrer, detail, ...ANY_WHERE };
}

/** Records without `fetchedAt`, to compare two crawls' records: they were fetched at different times. */
export function untimed(records: readonly FetchStatistic[]): Array<Omit<FetchStatistic, "fetchedAt">> {
  return records.map(function withoutTime({ fetchedAt: _when, ...rest }) {
    return rest;
  });
}
