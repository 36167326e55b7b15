/**
 * The line `crawl -v` prints for each URL as it completes.
 *
 * @module
 */
import type { FetchStatistic } from "../shared/fetch-statistic.js";
import type { FetchEndEvent } from "../shared/trace.js";

/**
 * One record on one line, in the shape of the report's per-URL lines:
 * `url status contentType encoding size numNewUrls/numUrls` for a page,
 * `url status -> nextUrl` for a redirect, `url error Name` for a failure.
 */
export function recordLine(record: FetchStatistic): string {
  if (record.error !== null) return `${record.url} error ${record.error}`;
  if (record.nextUrl !== null) return `${record.url} ${shown(record.status)} -> ${record.nextUrl}`;
  return [
    record.url,
    shown(record.status),
    shown(record.contentType),
    shown(record.encoding),
    record.size,
    `${record.numNewUrls}/${record.numUrls}`,
  ].join(" ");
}

/** The line `crawl -vv` prints for each fetch attempt as it ends (from the stage's trace). */
export function attemptLine(event: FetchEndEvent): string {
  const outcome = event.error ?? String(event.status);
  return `  attempt ${event.attempt} of ${event.url} (slot ${event.slot}): ${outcome}`;
}

function shown(value: string | number | null): string {
  return value === null ? "-" : String(value);
}
