/**
 * From a trace to what a timeline draws: one {@link FetchAttempt} per
 * `fetch-start`, and the step series of fetches in flight and of URLs queued.
 *
 * @module
 */
import type { TraceEvent } from "../events.js";

/**
 * One attempt at one URL, rebuilt from its `fetch-start`, `connect`,
 * `first-byte`, `read` and `fetch-end` events. Times are the trace's
 * milliseconds since the crawl started.
 */
export interface FetchAttempt {
  url: string;
  /** The slot (stages 1 and 2) or worker (stage 3) that ran it. */
  slot: number;
  /** 1 for the first try, 2 for the first retry, … */
  attempt: number;
  start: number;
  /** When the connection was ready; null when the attempt failed before. */
  connect: number | null;
  /** When the first response byte arrived; null when none did. */
  firstByte: number | null;
  /** When the attempt ended; the trace's last time when it never did (an aborted crawl). */
  end: number;
  /** The response status, or null. */
  status: number | null;
  /** The error name (`ConnectionRefused`, …), or null. */
  error: string | null;
  /** Response bytes read, as the `read` events counted them. */
  bytes: number;
}

/** A value that changes in steps: `[t, value]` pairs in time order, each holding until the next. */
export type StepSeries = Array<[number, number]>;

/**
 * Pairs each `fetch-start` with the later events of the same slot until its
 * `fetch-end`. A slot runs one attempt at a time in every stage, so the slot
 * is the key: `connect` and `first-byte` carry no attempt number.
 */
export function fetchAttempts(events: readonly TraceEvent[]): FetchAttempt[] {
  const attempts: FetchAttempt[] = [];
  const open = new Map<number, FetchAttempt>();
  const lastTime = events.length === 0 ? 0 : events[events.length - 1].t;
  for (const event of events) {
    switch (event.type) {
      case "fetch-start": {
        const attempt: FetchAttempt = {
          url: event.url,
          slot: event.slot,
          attempt: event.attempt,
          start: event.t,
          connect: null,
          firstByte: null,
          end: lastTime,
          status: null,
          error: null,
          bytes: 0,
        };
        attempts.push(attempt);
        open.set(event.slot, attempt);
        break;
      }
      case "connect":
      case "first-byte":
      case "read":
      case "fetch-end": {
        const attempt = open.get(event.slot);
        if (attempt === undefined || attempt.url !== event.url) break;
        if (event.type === "connect") attempt.connect = event.t;
        else if (event.type === "first-byte") attempt.firstByte = event.t;
        else if (event.type === "read") attempt.bytes += event.bytes;
        else {
          attempt.end = event.t;
          attempt.status = event.status;
          attempt.error = event.error;
          open.delete(event.slot);
        }
        break;
      }
      default:
        break;
    }
  }
  return attempts;
}

/**
 * Fetches in flight over time, counted from the attempts themselves (+1 at a
 * start, −1 at an end), so every stage is measured the same way.
 */
export function inFlightSeries(attempts: readonly FetchAttempt[]): StepSeries {
  const changes: Array<[number, number]> = [];
  for (const attempt of attempts) {
    // An attempt that ends as it starts (an unfinished one at the trace's end) is never in flight.
    if (attempt.end > attempt.start) changes.push([attempt.start, 1], [attempt.end, -1]);
  }
  // At equal times, ends before starts: a slot handed on is not two fetches.
  changes.sort(function byTimeEndsFirst(a, b) {
    return a[0] - b[0] || a[1] - b[1];
  });
  const series: StepSeries = [[0, 0]];
  let inFlight = 0;
  for (const [t, change] of changes) {
    inFlight += change;
    series.push([t, inFlight]);
  }
  return series;
}

/** URLs waiting in the queue over time, as the fetch events' `queued` counter reported it. */
export function queuedSeries(events: readonly TraceEvent[]): StepSeries {
  const series: StepSeries = [[0, 0]];
  for (const event of events) {
    if (event.type === "fetch-start" || event.type === "fetch-end") series.push([event.t, event.queued]);
  }
  return series;
}

/** The highest value a series reaches. */
export function peak(series: StepSeries): number {
  let highest = 0;
  for (const [, value] of series) highest = Math.max(highest, value);
  return highest;
}
