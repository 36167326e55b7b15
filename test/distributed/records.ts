/**
 * What the frontier suites compare of records: a shared crawl's records
 * agree with the expected ones as a set, and in every field but those that
 * depend on which process or page got there first, and when.
 */
import type { FetchStatistic } from "../../src/crawl/records.js";

/** A record without the fields timing decides: `numNewUrls`, `referrer`, `depth` (which page found it first) and `fetchedAt`. */
export function withoutTiming(record: FetchStatistic): Omit<FetchStatistic, "numNewUrls" | "referrer" | "depth" | "fetchedAt"> {
  const { numNewUrls: _n, referrer: _r, depth: _d, fetchedAt: _t, ...rest } = record;
  return rest;
}

/** The records sorted by URL. */
export function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/** How many records and seen URLs a frontier streams out at the end (`recordChunks()` then `seenChunks()`), counted. */
export async function streamedCount(frontier: { recordChunks(): AsyncIterable<unknown[]>; seenChunks(): AsyncIterable<unknown[]> }): Promise<number> {
  let streamed = 0;
  for await (const chunk of frontier.recordChunks()) streamed += chunk.length;
  for await (const chunk of frontier.seenChunks()) streamed += chunk.length;
  return streamed;
}
