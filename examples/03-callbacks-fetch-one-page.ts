/**
 * Example 03: one page fetched with callbacks on stage 1's event loop.
 *
 * A {@link Fetcher} starts a non-blocking connect and registers its
 * `connected` callback with the loop's selector; when the socket is
 * writable, the loop calls it; it sends the request and registers
 * `readResponse`; the loop calls that once per chunk until the response is
 * complete. Nothing waits anywhere: between two callbacks the fetch exists
 * only as the fields of the Fetcher object.
 *
 * The example prints each step the Fetcher publishes on the crawl channel
 * (`node:diagnostics_channel`, the way `crawl --trace` watches), between the
 * moment it starts the fetch and the moment its continuation gets the
 * outcome, so the chain of callbacks can be seen; then the page's status and
 * links.
 *
 * Run it: `npx tsx examples/03-callbacks-fetch-one-page.ts [URL]`
 * Step through it: set a breakpoint in `Fetcher.connected`
 * (`src/callbacks/fetcher.ts`) and look at the call stack: the loop, not this
 * file, is what calls it (docs/debugging.md).
 *
 * @see Chapter, "Async" (the selector loop) and "Programming With Callbacks"
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";
import { fileURLToPath } from "node:url";
import { EventLoop, Fetcher } from "../src/callbacks/index.js";
import type { FetchOutcome } from "../src/callbacks/fetcher.js";
import { resolveOptions } from "../src/crawl/options.js";
import { readPage } from "../src/crawl/page.js";
import { nextCrawlId } from "../src/observe/channels.js";
import { openRoot } from "./open-root.js";

/**
 * Fetches `url` with one Fetcher, running the loop until its last callback
 * stops it. The Promise is only for the caller: inside, all is callbacks.
 */
function fetchOnePage(url: string, steps: string[]): Promise<FetchOutcome> {
  const options = resolveOptions({});
  const loop = new EventLoop();
  const crawl = nextCrawlId(); // names this fetch in the messages it publishes
  let outcome: FetchOutcome = "NetworkError";

  function onMessage(message: unknown): void {
    if (typeof message !== "object" || message === null || !("crawl" in message) || message.crawl !== crawl) return;
    if ("bytes" in message) steps.push(`read ${String(message.bytes)} bytes`);
    else if ("type" in message) steps.push(String(message.type));
  }
  function fetched(_fetcher: Fetcher, result: FetchOutcome): void {
    steps.push("fetch-end");
    outcome = result; // The continuation: the last link of the chain.
    loop.stop();
  }

  diagnostics_channel.subscribe("coroutine-crawler:crawl", onMessage);
  return new Promise<FetchOutcome>(function runLoop(resolve) {
    const fetcher = new Fetcher(url, loop, options, fetched, crawl);
    steps.push("fetch-start");
    fetcher.fetch(); // Starts connecting and returns at once.
    loop.runForever(function loopStopped() {
      diagnostics_channel.unsubscribe("coroutine-crawler:crawl", onMessage);
      loop.selector.close();
      resolve(outcome);
    });
  });
}

/** Fetches the root page and prints the callback chain and the result. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 1, callbacks: one page, fetched by callbacks the loop calls when the socket is ready");
  const root = await openRoot(rootUrl);
  try {
    const steps: string[] = [];
    const outcome = await fetchOnePage(root.url, steps);
    console.log(`Steps: ${steps.join(" → ")}`);
    if (typeof outcome === "string") {
      console.log(`${root.url}: the attempt failed with ${outcome}`);
      return;
    }
    const page = readPage(root.url, outcome, resolveOptions({}).maxBodyBytes);
    console.log(`${root.url}: status ${page.status}, ${page.contentType ?? "no content type"}, ${page.size} bytes, ${page.links.length} links`);
    for (const link of page.links.slice(0, 5)) console.log(`  ${link}`);
    if (page.links.length > 5) console.log(`  … and ${page.links.length - 5} more`);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
