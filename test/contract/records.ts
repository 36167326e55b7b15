/**
 * Expected records, written out field by field (not with the shared record
 * constructors the stages use, so a slip there cannot hide on both sides).
 */
import type { FetchError, FetchStatistic } from "../../src/crawl/records.js";
import { linksHtml } from "../../src/site/html.js";

/** The record of a page served by `FixtureSite#addPage(path, links)`. */
export function linksPageRecord(url: string, links: readonly string[], numUrls: number, numNewUrls: number): FetchStatistic {
  return pageRecordOf(url, { size: Buffer.byteLength(linksHtml(links)), numUrls, numNewUrls });
}

/** The record of an ordinary response; defaults: 200, text/html, utf-8, no links. */
export function pageRecordOf(
  url: string,
  fields: Partial<Pick<FetchStatistic, "status" | "size" | "contentType" | "encoding" | "numUrls" | "numNewUrls">> = {},
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
    ...fields,
  };
}

/** The record of a redirect. */
export function redirectRecordOf(url: string, status: number, nextUrl: string): FetchStatistic {
  return { url, nextUrl, status, error: null, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0 };
}

/** The record of a URL whose every attempt failed. */
export function errorRecordOf(url: string, error: FetchError): FetchStatistic {
  return { url, nextUrl: null, status: null, error, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0 };
}
