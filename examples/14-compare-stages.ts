/**
 * Example 14: the three stages crawl the same site, and their records are
 * compared.
 *
 * Only how they wait differs, so what they record must not. With one task
 * at a time (`maxTasks: 1`) the crawl is a breadth-first walk and the three
 * lists of records must be equal, in order, field by field but `fetchedAt`
 * (when each came). With ten tasks the records arrive in a different order
 * each time, and `numNewUrls`, `referrer` and `depth` depend on which page
 * saw a link first, so the records are compared as a set, by URL, without
 * those three fields (docs/behaviour.md, "The queue, concurrency and the end").
 *
 * Each crawl is traced, to show one thing about how its stage waited: the
 * most fetches it had in flight at once. The table shows it for the
 * ten-task crawls: never more than ten.
 *
 * Run it: `npx tsx examples/14-compare-stages.ts [URL]` (`npm start` prints
 * a fuller comparison table).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { crawl as crawlWithAsyncAwait } from "../src/asyncawait/index.js";
import { crawl as crawlWithCallbacks } from "../src/callbacks/index.js";
import { crawl as crawlWithGenerators } from "../src/generators/index.js";
import type { CrawlResult, FetchStatistic } from "../src/crawl/records.js";
import type { CrawlOptions } from "../src/crawl/options.js";
import type { TraceEvent } from "../src/observe/events.js";
import { openRoot } from "./open-root.js";

/** One stage's `crawl` function. */
type Crawl = (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;

const STAGES: ReadonlyArray<[name: string, crawl: Crawl]> = [
  ["callbacks", crawlWithCallbacks],
  ["generators", crawlWithGenerators],
  ["asyncawait", crawlWithAsyncAwait],
];

/** One stage's crawl, and the most fetches it had in flight at once. */
interface StageRun {
  result: CrawlResult;
  peakInFlight: number;
}

/** Runs every stage on `url` with `options`, one after the other, tracing each. */
async function crawlWithEveryStage(url: string, options: CrawlOptions): Promise<StageRun[]> {
  const runs: StageRun[] = [];
  for (const [, crawl] of STAGES) {
    let peakInFlight = 0;
    function watch(event: TraceEvent): void {
      if (event.type === "fetch-start") peakInFlight = Math.max(peakInFlight, event.inFlight);
    }
    const result = await crawl(url, { ...options, trace: watch });
    runs.push({ result, peakInFlight });
  }
  return runs;
}

/** The records as one string, in order, every field but `fetchedAt`. */
function inOrder(result: CrawlResult): string {
  return JSON.stringify(
    result.records.map(function dropWhen(record: FetchStatistic) {
      const { fetchedAt: _fetchedAt, ...rest } = record;
      return rest;
    }),
  );
}

/** The records as one string, sorted by URL, without `numNewUrls`, `referrer`, `depth` and `fetchedAt`. */
function asSet(result: CrawlResult): string {
  const withoutNew = result.records.map(function dropWhoSawItFirst(record: FetchStatistic) {
    const { numNewUrls: _numNewUrls, referrer: _referrer, depth: _depth, fetchedAt: _fetchedAt, ...rest } = record;
    return rest;
  });
  withoutNew.sort(function byUrl(a, b) {
    return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
  });
  return JSON.stringify(withoutNew);
}

function allEqual(values: string[]): boolean {
  return values.every(function sameAsFirst(value) {
    return value === values[0];
  });
}

/** The run's result. */
function resultOf(run: StageRun): CrawlResult {
  return run.result;
}

/** Crawls with each stage twice (one task, then ten) and prints the comparison. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("All three stages: one crawl, waited for with callbacks, with yield* and with await, and their records compared");
  const root = await openRoot(rootUrl);
  try {
    const sequential = (await crawlWithEveryStage(root.url, { maxTasks: 1 })).map(resultOf);
    const concurrent = await crawlWithEveryStage(root.url, { maxTasks: 10 });
    const identicalInOrder = allEqual(sequential.map(inOrder));
    const identicalAsSet = allEqual(concurrent.map(resultOf).map(asSet));

    console.log(
      `${"stage".padEnd(12)}${"records".padStart(8)}${"errors".padStart(8)}${"ms (1 task)".padStart(13)}` +
        `${"ms (10)".padStart(9)}${"peak in flight (10)".padStart(21)}`,
    );
    for (const [i, [name]] of STAGES.entries()) {
      const one = sequential[i];
      const ten = concurrent[i];
      const errors = one.records.filter(function failed(record) {
        return record.error !== null;
      }).length;
      console.log(
        `${name.padEnd(12)}${String(one.records.length).padStart(8)}${String(errors).padStart(8)}` +
          `${String(one.finishedAt - one.startedAt).padStart(13)}${String(ten.result.finishedAt - ten.result.startedAt).padStart(9)}` +
          `${String(ten.peakInFlight).padStart(21)}`,
      );
    }
    console.log(`maxTasks 1: same records in the same order: ${identicalInOrder ? "yes" : "NO"}`);
    console.log(`maxTasks 10: same records as a set (numNewUrls, referrer and depth aside): ${identicalAsSet ? "yes" : "NO"}`);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
