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
  fields: Partial<Pick<FetchStatistic, "status" | "size" | "contentType" | "encoding" | "numUrls" | "numNewUrls" | "referrer">> = {},
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
    ...fields,
  };
}

/** The record of a redirect. */
export function redirectRecordOf(url: string, status: number, nextUrl: string, referrer: string | null = ANY_REFERRER): FetchStatistic {
  return { url, nextUrl, status, error: null, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0, referrer, detail: null };
}

/** The record of a URL whose every attempt failed. */
export function errorRecordOf(url: string, error: FetchError, referrer: string | null = ANY_REFERRER): FetchStatistic {
  return { url, nextUrl: null, status: null, error, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0, referrer, detail: null };
}
