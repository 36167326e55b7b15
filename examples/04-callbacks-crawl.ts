/**
 * Example 04: the whole crawl with callbacks (stage 1).
 *
 * The {@link Crawler} keeps a list of URLs waiting for a free slot and a map
 * of the Fetchers running; each Fetcher's last callback records its URL,
 * queues the new links and starts the next Fetchers. The crawl is over when
 * nothing runs and nothing waits; then the loop stops and `crawl`'s callback
 * gets the result.
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
import { openRoot } from "./open-root.js";

/** Crawls the root with stage 1 and prints the report's summary. */
export async function main(rootUrl?: string): Promise<CrawlResult> {
  const root = await openRoot(rootUrl);
  try {
    const crawler = new Crawler(root.url, { maxTasks: 10 });
    // Stage 1 reports the end with a callback; the Promise is only for main().
    const result = await new Promise<CrawlResult>(function startCrawl(resolve) {
      crawler.crawl(resolve); // Returns at once; the loop does the work.
    });
    console.log(report(result, { quiet: true })); // quiet: only the errors among the per-URL lines
    return result;
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
