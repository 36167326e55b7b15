/**
 * Example 09: the whole crawl with generator coroutines (stage 2).
 *
 * `Crawler.crawl()` is a coroutine: it queues the roots, starts `maxTasks`
 * worker Tasks, and waits on `yield* q.join()`. Each worker loops on
 * `yield* q.get()`, `yield* fetch(url)`, `q.taskDone()`. When the last URL is
 * done, `join()` returns and the crawl cancels its workers, idle in `get()`,
 * by throwing `CancelledError` into them.
 *
 * The example runs it with the loop in view (`run-coroutine.ts`):
 * `loop.runUntilComplete(crawler.crawl())`, one `await` on the Task, then
 * `loop.close()`; `crawl()` in `src/generators/index.ts` does the same.
 *
 * A `trace` function counts how it waited: the Task steps (each runs a
 * coroutine from one `yield*` to the next) and the most fetches in flight at
 * once, never more than `maxTasks`.
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
import { openRoot } from "./open-root.js";
import { runCoroutine } from "./run-coroutine.js";

/** Crawls the root with stage 2 and prints the report's summary and how the Tasks waited. */
export async function main(rootUrl?: string): Promise<void> {
  const root = await openRoot(rootUrl);
  try {
    const maxTasks = 10;
    let steps = 0;
    let peakInFlight = 0;
    function watch(event: TraceEvent): void {
      if (event.type === "step") steps += 1;
      else if (event.type === "fetch-start") peakInFlight = Math.max(peakInFlight, event.inFlight);
    }
    console.log(`Stage 2, generators: crawling ${root.url} with maxTasks ${maxTasks}`);
    const crawler = new Crawler(root.url, { maxTasks, trace: watch });
    const result = await runCoroutine(crawler.crawl()); // the chapter's loop.run_until_complete(crawler.crawl())
    console.log(report(result, { quiet: true }));
    console.log(
      `How it waited: ${maxTasks} worker Tasks, ${steps} Task steps, each running a coroutine to its next yield*; ` +
        `at most ${peakInFlight} fetches were in flight at once.`,
    );
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
