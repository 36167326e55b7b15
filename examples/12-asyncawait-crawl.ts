/**
 * Example 12: the crawl with native async/await (stage 3): `maxTasks`
 * workers on a joinable queue, and `join()` to know when all is done.
 *
 * The shape is the chapter's last one. `crawl()` queues the jobs the crawl
 * core hands out (the root first), starting a worker for each job no worker
 * holds (up to `maxTasks`), and awaits `join()`.
 * A worker is an ordinary `async` function: `await q.get()`,
 * `await fetch(job)` (the core says what each response means: the record,
 * the links to queue), then it queues the core's next jobs and marks its own
 * done (`taskDone()`). Each `put` counts one more unfinished task, so
 * `join()` resolves only when every job ever queued has been done. The
 * engine's promise jobs now do what stage 2's Task and EventLoop did by hand.
 *
 * A `trace` function counts how the workers waited: each fetch is one
 * `await` on the HTTP client, and the most fetches in flight at once (the
 * `inFlight` counter of the `fetch-start` and `fetch-end` events) is never
 * more than `maxTasks`. With the demo site the example also asks the server
 * how many requests it ever had in flight at once: the same bound, seen from
 * the other end. Then two lines of the trace, as `crawl --trace` prints them:
 * the worker that took the root suspending at `await client.get(url)`, and
 * resuming once the response is in.
 *
 * Run it: `npx tsx examples/12-asyncawait-crawl.ts [URL]`
 *
 * @see Chapter, "Coordinating Coroutines"
 * @module
 */
import { fileURLToPath } from "node:url";
import { Crawler } from "../src/asyncawait/index.js";
import { report } from "../src/crawl/report.js";
import type { TraceEvent } from "../src/observe/events.js";
import { traceLine } from "../src/observe/trace-lines.js";
import { openRoot } from "./open-root.js";

/** Crawls the root with stage 3 and prints the report's summary and how the workers waited. */
export async function main(rootUrl?: string): Promise<void> {
  const root = await openRoot(rootUrl);
  try {
    const maxTasks = 5;
    let awaits = 0;
    let peakInFlight = 0;
    const workers = new Set<number>(); // The trace's worker numbers: the most workers that held a job at once.
    let rootAwait: string | null = null;
    let rootResume: string | null = null;
    function watch(event: TraceEvent): void {
      if (event.type === "take") workers.add(event.worker);
      if (event.type === "await") awaits += 1;
      else if (event.type === "fetch-start" || event.type === "fetch-end") peakInFlight = Math.max(peakInFlight, event.inFlight);
      if (event.type === "await" && event.url === root.url) rootAwait ??= traceLine(event);
      else if (event.type === "resume" && event.url === root.url) rootResume ??= traceLine(event);
    }
    console.log(`Stage 3, async/await: crawling ${root.url} with maxTasks ${maxTasks}; each worker suspends at \`await client.get(url)\``);
    const result = await new Crawler(root.url, { maxTasks, trace: watch }).crawl();
    console.log(report(result, { quiet: true }));
    console.log(
      `How stage 3 waited: ${workers.size} workers suspended ${awaits} times at \`await client.get(url)\`; ` +
        `at most ${peakInFlight} fetches were in flight at once (maxTasks ${maxTasks}).`,
    );
    const serverPeak = root.demo?.site.peakRequestsInFlight;
    if (serverPeak !== undefined) console.log(`Seen from the other end, the demo site had at most ${serverPeak} requests in flight at once.`);
    console.log(
      "Two lines of the trace: the worker that took the root suspended at its await, and the engine resumed it " +
        "once the response was in\n(`npm run crawl -- --demo --stage asyncawait --trace` prints every event):",
    );
    for (const line of [rootAwait, rootResume]) if (line !== null) console.log(line);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
