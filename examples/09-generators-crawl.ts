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
 * Run it: `npx tsx examples/09-generators-crawl.ts [URL]`
 *
 * @see Chapter, "Coordinating Coroutines"
 * @module
 */
import { fileURLToPath } from "node:url";
import { Crawler } from "../src/generators/index.js";
import type { CrawlResult } from "../src/crawl/records.js";
import { report } from "../src/crawl/report.js";
import { openRoot } from "./open-root.js";
import { runCoroutine } from "./run-coroutine.js";

/** Crawls the root with stage 2 and prints the report's summary. */
export async function main(rootUrl?: string): Promise<CrawlResult> {
  const root = await openRoot(rootUrl);
  try {
    const crawler = new Crawler(root.url, { maxTasks: 10 });
    const result = await runCoroutine(crawler.crawl()); // the chapter's loop.run_until_complete(crawler.crawl())
    console.log(report(result, { quiet: true }));
    return result;
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
