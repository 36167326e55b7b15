/**
 * Example 04: the whole crawl with callbacks (stage 1).
 *
 * The {@link Crawler} asks the crawl core for jobs and starts a Fetcher for
 * each; each Fetcher's last callback hands the outcome to the core (which
 * records the URL and queues the new links) and starts the next Fetchers.
 * The crawl is over when the core has nothing left; then the loop stops and
 * `crawl`'s callback gets the result.
 *
 * A `trace` function counts how the crawl waited: the turns of the loop
 * (each `select` reports the ready sockets) and the callbacks it dispatched,
 * and the most fetches in flight at once (the `inFlight` counter of the
 * `fetch-start` and `fetch-end` events), never more than `maxTasks`; with the
 * demo site, the server's own count of requests in flight beside it. Then
 * two lines of the trace, as `crawl --trace` prints them: the first two
 * callbacks the loop called for the root's Fetcher, `connected` when its
 * socket could be written and `readResponse` when it could be read.
 *
 * Run it: `npx tsx examples/04-callbacks-crawl.ts [URL]`
 * Debug it: `node --inspect-brk --import tsx examples/04-callbacks-crawl.ts`
 * (docs/debugging.md).
 *
 * @see Chapter, "Programming With Callbacks"
 * @module
 */
import { fileURLToPath } from "node:url";
import { Crawler } from "../src/callbacks/index.js";
import type { CrawlResult } from "../src/crawl/records.js";
import { report } from "../src/crawl/report.js";
import type { TraceEvent } from "../src/observe/events.js";
import { traceLine } from "../src/observe/trace-lines.js";
import { openRoot } from "./open-root.js";

/** Crawls the root with stage 1 and prints the report's summary and how the loop waited. */
export async function main(rootUrl?: string): Promise<void> {
  const root = await openRoot(rootUrl);
  try {
    const maxTasks = 10;
    let turns = 0;
    let callbacks = 0;
    let peakInFlight = 0;
    const rootCallbacks: string[] = [];
    function watch(event: TraceEvent): void {
      if (event.type === "select") turns += 1;
      else if (event.type === "dispatch") callbacks += 1;
      else if (event.type === "fetch-start" || event.type === "fetch-end") peakInFlight = Math.max(peakInFlight, event.inFlight);
      if (event.type === "dispatch" && event.url === root.url && rootCallbacks.length < 2) rootCallbacks.push(traceLine(event));
    }
    console.log(`Stage 1, callbacks: crawling ${root.url} with maxTasks ${maxTasks}; the loop calls each Fetcher back when its socket is ready`);
    const crawler = new Crawler(root.url, { maxTasks, trace: watch });
    // Stage 1 reports the end with a callback; the Promise is only for main().
    const result = await new Promise<CrawlResult>(function startCrawl(resolve) {
      crawler.crawl(resolve); // Returns at once; the loop does the work.
    });
    console.log(report(result, { quiet: true })); // quiet: only the errors among the per-URL lines
    console.log(
      `How stage 1 waited: the loop turned ${turns} times (one select() each) and called ${callbacks} callbacks ` +
        `on ready sockets; at most ${peakInFlight} fetches were in flight at once (maxTasks ${maxTasks}).`,
    );
    const serverPeak = root.demo?.site.peakRequestsInFlight;
    if (serverPeak !== undefined) console.log(`Seen from the other end, the demo site had at most ${serverPeak} requests in flight at once.`);
    console.log(
      "Two lines of the trace: the first two callbacks the loop called for the root's Fetcher, each when select() " +
        "found its socket ready\n(`npm run crawl -- --demo --stage callbacks --trace` prints every event):",
    );
    for (const line of rootCallbacks) console.log(line);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
