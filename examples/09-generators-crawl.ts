/**
 * Example 09: the whole crawl with generator coroutines (stage 2).
 *
 * `Crawler.crawl()` is a coroutine: it queues the jobs the crawl core hands
 * out (the root first), starting a worker Task for each job no worker holds
 * (up to `maxTasks`), and waits on `yield* q.join()`. Each worker loops on `yield* q.get()`,
 * `yield* fetch(job)`, then queues the core's next jobs and calls
 * `q.taskDone()`. When the last job is done, `join()` returns and the crawl
 * cancels its workers, idle in `get()`, by throwing `CancelledError` into them.
 *
 * The example runs it with the loop in view (`run-coroutine.ts`):
 * `loop.runUntilComplete(crawler.crawl())`, one `await` on the Task, then
 * `loop.close()`; `crawl()` in `src/generators/index.ts` does the same.
 *
 * A `trace` function counts how it waited: the Task steps (each runs a
 * coroutine from one `yield*` to the next) and the most fetches in flight at
 * once (the `inFlight` counter of the `fetch-start` and `fetch-end` events),
 * never more than `maxTasks`; with the demo site, the server's own count of
 * requests in flight beside it. Then two lines of the trace, as
 * `crawl --trace` prints them: the root's request Task pausing at a `yield*`
 * on a Future once its request is sent, and the loop resolving that Future
 * when the socket is ready, which steps the Task on.
 *
 * Run it: `npx tsx examples/09-generators-crawl.ts [URL]`
 *
 * @see Chapter, "Coordinating Coroutines"
 * @module
 */
import { fileURLToPath } from "node:url";
import { Crawler } from "../src/generators/index.js";
import { report } from "../src/crawl/report.js";
import type { TraceEvent } from "../src/observe/events.js";
import { traceLine } from "../src/observe/trace-lines.js";
import { openRoot } from "./open-root.js";
import { runCoroutine } from "./run-coroutine.js";

/** Crawls the root with stage 2 and prints the report's summary and how the Tasks waited. */
export async function main(rootUrl?: string): Promise<void> {
  const root = await openRoot(rootUrl);
  try {
    const maxTasks = 10;
    let steps = 0;
    let peakInFlight = 0;
    const workers = new Set<number>(); // The worker Tasks started: one for each job no worker held, up to maxTasks.
    const events: TraceEvent[] = [];
    function watch(event: TraceEvent): void {
      if (event.type === "step") steps += 1;
      if (event.type === "step" && event.coroutine === "work") workers.add(event.task);
      else if (event.type === "fetch-start" || event.type === "fetch-end") peakInFlight = Math.max(peakInFlight, event.inFlight);
      events.push(event);
    }
    console.log(`Stage 2, generators: crawling ${root.url} with maxTasks ${maxTasks}; each worker Task pauses at a yield* until its Future is done`);
    const crawler = new Crawler(root.url, { maxTasks, trace: watch });
    const result = await runCoroutine(crawler.crawl()); // the chapter's loop.run_until_complete(crawler.crawl())
    console.log(report(result, { quiet: true }));
    console.log(
      `How stage 2 waited: ${workers.size} worker Tasks, ${steps} Task steps, each running a coroutine to its next yield*; ` +
        `at most ${peakInFlight} fetches were in flight at once (maxTasks ${maxTasks}).`,
    );
    const serverPeak = root.demo?.site.peakRequestsInFlight;
    if (serverPeak !== undefined) console.log(`Seen from the other end, the demo site had at most ${serverPeak} requests in flight at once.`);
    console.log(
      "Two lines of the trace: once the root's request was sent, its Task paused at a yield* on a Future, and the loop " +
        "resolved that Future when the socket was ready\n(`npm run crawl -- --demo --stage generators --trace` prints every event):",
    );
    for (const line of rootWait(events, root.url)) console.log(line);
  } finally {
    await root.close();
  }
}

/**
 * Two lines of the trace: after the root's `send`, the first Task step that
 * paused at a Future, and the next `resolve` of a Future with that label.
 * The root is fetched alone (no other URL is known yet), so both are its own.
 */
function rootWait(events: readonly TraceEvent[], rootUrl: string): string[] {
  const lines: string[] = [];
  let sent = false;
  let awaited: string | null = null;
  for (const event of events) {
    if (event.type === "send" && event.url === rootUrl) {
      sent = true;
    } else if (sent && awaited === null && event.type === "step" && event.yielded !== null) {
      awaited = event.yielded;
      lines.push(traceLine(event));
    } else if (awaited !== null && event.type === "resolve" && event.label === awaited) {
      lines.push(traceLine(event));
      break;
    }
  }
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
