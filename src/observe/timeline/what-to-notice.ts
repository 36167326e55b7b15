/**
 * The caption under each panel's heading on the timeline page: what to
 * notice in that stage's chart, in a few sentences, some read off the trace
 * itself (the bars that ran alone, the peak against `maxTasks`, the failed
 * attempts).
 *
 * @module
 */
import type { StageName } from "../events.js";
import { fetchAttempts, inFlightSeries, peak } from "./fetch-attempts.js";
import type { FetchAttempt } from "./fetch-attempts.js";
import type { TimelinePanel } from "./stage-panel.js";

/** How each stage waits, as its bars show it. */
const HOW_IT_WAITS: ReadonlyMap<StageName, string> = new Map([
  [
    "callbacks",
    "One thread runs every bar. While a bar is blue or yellow its Fetcher runs no code: it waits for its socket, " +
      "and meanwhile the loop's select() finds other sockets ready and calls their Fetchers' callbacks. " +
      "A row is a slot, taken again as soon as its Fetcher ends.",
  ],
  [
    "generators",
    "Each bar is a worker Task paused at a yield* on a Future while it is blue or yellow; the same kind of loop " +
      "as stage 1's resolves the Future when the socket is ready and steps the Task on. Set it beside stage 1: " +
      "the waiting has the same shape, though the code that waits now reads from top to bottom.",
  ],
  [
    "asyncawait",
    "A row is a worker holding a URL from take() to done(). For most of its bar (connecting, waiting, reading) " +
      "the worker is suspended at await client.get(url), until the engine's promise jobs resume it. A gap in a " +
      "row is a worker with nothing to do, waiting in take().",
  ],
]);

/** What a stage of another name is told: how a bar reads, whatever the stage. */
const HOW_ANY_STAGE_WAITS = "Each bar is one attempt, from its start to its end: blue while it connects, yellow while it waits for the first byte, green while it reads.";

/**
 * The sentences of `panel`'s caption: how its stage waits, then what its
 * trace shows: the first bars that ran one after the other (a crawl has one
 * URL to fetch until the root's links are read, and with `robots` on it
 * reads `robots.txt` before that), whether the fetches in flight reached
 * `maxTasks`, and how many attempts failed.
 */
export function whatToNotice(panel: TimelinePanel): string[] {
  const attempts = fetchAttempts(panel.events);
  const notes = [HOW_IT_WAITS.get(panel.stage) ?? HOW_ANY_STAGE_WAITS];
  if (attempts.length === 0) return notes;
  const alone = aloneAtFirst(attempts);
  if (alone.length > 0 && alone.length < attempts.length) {
    const which = alone.length <= 3 ? ` (${alone.map(pathOf).join(", ")})` : "";
    const bars = alone.length === 1 ? "The first bar runs alone" : `The first ${alone.length} bars run one after the other`;
    notes.push(`${bars}${which}: each had to be read before anything else could be fetched. Then the queue fills and the bars fan out.`);
  }
  const highest = peak(inFlightSeries(attempts));
  const limit = panel.maxTasks;
  if (limit !== undefined && highest >= limit) {
    notes.push(`The fetches in flight reach maxTasks (${limit}) and go no higher: the limit set how many overlapped.`);
  } else if (limit !== undefined) {
    notes.push(
      `At most ${highest} fetches overlapped, under maxTasks (${limit}): the URLs known at each moment, not the limit, ` +
        "bounded them.",
    );
  }
  const failed = attempts.filter(hasFailed).length;
  if (failed > 0) notes.push(`${failed} attempt${failed === 1 ? "" : "s"} failed (outlined in red): click one to see why.`);
  return notes;
}

/** The attempts at the start of the trace that each ended before the next one started. */
function aloneAtFirst(attempts: readonly FetchAttempt[]): FetchAttempt[] {
  const byStart = [...attempts].sort(function earlierFirst(x, y) {
    return x.start - y.start;
  });
  let count = 0;
  while (count < byStart.length - 1 && byStart[count].end <= byStart[count + 1].start) count += 1;
  // Each of the first `count` ended before the next started; with no overlap at all, so did the last.
  return byStart.slice(0, count === byStart.length - 1 ? byStart.length : count);
}

/** A URL's path and query, enough to tell the first bars apart (`/robots.txt`, `/`). */
function pathOf(attempt: FetchAttempt): string {
  if (!URL.canParse(attempt.url)) return attempt.url;
  const url = new URL(attempt.url);
  return `${url.pathname}${url.search}`;
}

function hasFailed(attempt: FetchAttempt): boolean {
  return attempt.error !== null;
}
