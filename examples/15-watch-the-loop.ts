/**
 * Example 15: watch the loop. Each stage crawls the demo site with a trace
 * function, and the trace shows the chapter's three points:
 *
 * 1. the fetches overlap: several are in flight at once, on one thread;
 * 2. concurrency never exceeds `maxTasks`;
 * 3. a coroutine is interrupted only where it says so: between two Task
 *    steps (stage 2) only one worker's code runs, from one `yield*` to the
 *    next; a stage-3 worker runs none of its own code between its `await`
 *    and its resumption. (Stage 1 has no coroutines: each callback runs to
 *    its end, and the loop only dispatches between callbacks.)
 *
 * It also prints one URL's journey, the lines `crawl --trace` prints.
 * `crawl --demo --compare --timeline out.html` draws the same traces.
 *
 * Run it: `npx tsx examples/15-watch-the-loop.ts [URL]`
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { crawl as crawlWithAsyncAwait } from "../src/asyncawait/index.js";
import { crawl as crawlWithCallbacks } from "../src/callbacks/index.js";
import { traceLine } from "../src/observe/trace-lines.js";
import { crawl as crawlWithGenerators } from "../src/generators/index.js";
import type { CrawlResult } from "../src/crawl/records.js";
import type { CrawlOptions } from "../src/crawl/options.js";
import type { StageName, TraceEvent } from "../src/observe/events.js";
import { fetchAttempts, inFlightSeries, peak } from "../src/observe/timeline/index.js";
import { openRoot } from "./open-root.js";

const MAX_TASKS = 5;

const STAGES: ReadonlyArray<[StageName, (roots: string, options?: CrawlOptions) => Promise<CrawlResult>]> = [
  ["callbacks", crawlWithCallbacks],
  ["generators", crawlWithGenerators],
  ["asyncawait", crawlWithAsyncAwait],
];

/** What the trace of one stage showed. */
interface LoopWatch {
  stage: StageName;
  /** Fetch attempts in the trace. */
  attempts: number;
  /** Attempts that were in flight while another one was. */
  overlapping: number;
  /** The most fetches in flight at once. */
  peakInFlight: number;
  /** Places where the stage's code was interrupted other than at a yield*, an await or a callback's end (always 0). */
  interruptions: number;
}

/** Crawls with every stage, tracing, and prints what each trace shows. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("All three stages: each crawl's trace shows where its code waits (a callback's end, a yield*, an await)");
  const root = await openRoot(rootUrl);
  try {
    const watches: LoopWatch[] = [];
    for (const [stage, crawl] of STAGES) {
      const events: TraceEvent[] = [];
      await crawl(root.url, {
        maxTasks: MAX_TASKS,
        trace: function collect(event) {
          events.push(event);
        },
      });
      if (stage === "callbacks") printJourney(events, root.url);
      watches.push(watch(stage, events));
    }
    console.log(`\n${"stage".padEnd(12)}${"fetches".padStart(8)}${"overlapping".padStart(13)}${"peak".padStart(6)}  interrupted elsewhere`);
    for (const w of watches) {
      console.log(
        `${w.stage.padEnd(12)}${String(w.attempts).padStart(8)}${String(w.overlapping).padStart(13)}` +
          `${String(w.peakInFlight).padStart(6)}  ${w.stage === "callbacks" ? "-" : w.interruptions}`,
      );
    }
    const over = watches.filter(function tooMany(w) {
      return w.peakInFlight > MAX_TASKS;
    });
    console.log(
      over.length === 0
        ? `maxTasks is ${MAX_TASKS}: no stage ever had more fetches in flight.`
        : `maxTasks is ${MAX_TASKS}, but ${over.map((w) => w.stage).join(" and ")} had more in flight!`,
    );
    console.log("(A callback always runs to its end, so stage 1 has no interruptions to count: shown as -.)");
  } finally {
    await root.close();
  }
}

/** Prints the trace lines that name `url`: fetch-start, connect, send, reads, fetch-end. */
function printJourney(events: readonly TraceEvent[], url: string): void {
  console.log(`One URL's journey through the callbacks stage (crawl --trace prints every event):`);
  for (const event of events) {
    if ("url" in event && event.url === url) console.log(traceLine(event));
  }
}

/** Reads the three points off one stage's trace. */
function watch(stage: StageName, events: readonly TraceEvent[]): LoopWatch {
  const attempts = fetchAttempts(events);
  const overlapping = attempts.filter(function overlapsAnother(attempt) {
    return attempts.some(function other(candidate) {
      return candidate !== attempt && candidate.start < attempt.end && attempt.start < candidate.end;
    });
  }).length;
  return {
    stage,
    attempts: attempts.length,
    overlapping,
    peakInFlight: peak(inFlightSeries(attempts)),
    interruptions: stage === "generators" ? mixedSteps(events) : stage === "asyncawait" ? workerRunsWhileSuspended(events) : 0,
  };
}

/**
 * Stage 2: a Task step runs its coroutine from one `yield*` to the next. The
 * events between two `step` events therefore come from one worker (one slot);
 * counts the steps in which two workers' events mixed.
 */
function mixedSteps(events: readonly TraceEvent[]): number {
  let mixed = 0;
  let slots = new Set<number>();
  for (const event of events) {
    if (event.type === "step") {
      if (slots.size > 1) mixed += 1;
      slots = new Set();
    } else if ("slot" in event) {
      slots.add(event.slot);
    }
  }
  return mixed;
}

/** Stage 3: counts a worker's own events (take, fetch-start, fetch-end, done) between its `await` and its `resume`. */
function workerRunsWhileSuspended(events: readonly TraceEvent[]): number {
  const suspended = new Set<number>();
  let interruptions = 0;
  for (const event of events) {
    if (event.type === "await") suspended.add(event.worker);
    else if (event.type === "resume") suspended.delete(event.worker);
    else if ((event.type === "take" || event.type === "done") && suspended.has(event.worker)) interruptions += 1;
    else if ((event.type === "fetch-start" || event.type === "fetch-end") && suspended.has(event.slot)) interruptions += 1;
  }
  return interruptions;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
