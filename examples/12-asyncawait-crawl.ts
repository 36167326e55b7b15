/**
 * Example 12: the crawl with native async/await (stage 3): `maxTasks`
 * workers on a joinable queue, and `join()` to know when all is done.
 *
 * The shape is the chapter's last one. `crawl()` puts the roots in the
 * queue, starts the workers, and awaits `q.join()`. A worker is an ordinary
 * `async` function: `await q.get()`, `await fetch(url)`, then `q.taskDone()`
 * in a `finally`. `fetch()` queues the new links it finds, and each `put`
 * counts one more unfinished task, so `join()` resolves only when every URL
 * ever queued has been fetched and handled. The engine's promise jobs now do
 * what stage 2's Task and EventLoop did by hand.
 *
 * With the demo site the example also asks the server how many requests it
 * ever had in flight at once: never more than `maxTasks`.
 *
 * Run it: `npx tsx examples/12-asyncawait-crawl.ts [URL]`
 *
 * @see Chapter, "Coordinating Coroutines"
 * @module
 */
import { fileURLToPath } from "node:url";
import { Crawler } from "../src/asyncawait/index.js";
import type { CrawlResult } from "../src/crawl/records.js";
import { report } from "../src/crawl/report.js";
import { openRoot } from "./open-root.js";

/** The crawl, and the concurrency the server saw. */
export interface AsyncAwaitCrawlSummary {
  /** The crawl's result. */
  result: CrawlResult;
  /** The workers. */
  maxTasks: number;
  /** The most requests the demo site had in flight at once (null: no demo site). */
  serverPeak: number | null;
}

/** Crawls the root with stage 3 and prints the report's summary. */
export async function main(rootUrl?: string): Promise<AsyncAwaitCrawlSummary> {
  const root = await openRoot(rootUrl);
  try {
    const maxTasks = 5;
    const result = await new Crawler(root.url, { maxTasks }).crawl();
    console.log(report(result, { quiet: true }));
    const serverPeak = root.demo?.site.peakRequestsInFlight ?? null;
    if (serverPeak !== null) console.log(`The server had at most ${serverPeak} requests in flight (maxTasks = ${maxTasks}).`);
    return { result, maxTasks, serverPeak };
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
