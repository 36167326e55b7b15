/**
 * The line `crawl -vv` prints for each fetch attempt (the per-URL line of
 * `-v` is the report's own `urlLine`).
 *
 * @module
 */
import type { FetchEndEvent } from "../observe/events.js";

/** The line `crawl -vv` prints for each fetch attempt as it ends (from the stage's trace). */
export function attemptLine(event: FetchEndEvent): string {
  const outcome = event.error ?? String(event.status);
  return `  attempt ${event.attempt} of ${event.url} (slot ${event.slot}): ${outcome}`;
}
