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
 * The example prints each step as the Fetcher reports it, so the chain of
 * callbacks can be seen, then the page's status and links.
 *
 * Run it: `npx tsx examples/03-callbacks-fetch-one-page.ts [URL]`
 * Step through it: set a breakpoint in `Fetcher.connected`
 * (`src/callbacks/fetcher.ts`) and look at the call stack: the loop, not this
 * file, is what calls it (docs/debugging.md).
 *
 * @see Chapter, "Async" (the selector loop) and "Programming With Callbacks"
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, Fetcher } from "../src/callbacks/index.js";
import type { FetchOutcome, FetcherStep } from "../src/callbacks/fetcher.js";
import { resolveOptions } from "../src/crawl/options.js";
import { readPage } from "../src/crawl/page.js";
import { openRoot } from "./open-root.js";

/** What the fetch produced. */
export interface FetchOnePageSummary {
  /** The steps the Fetcher went through, in order (`read` once per chunk). */
  steps: string[];
  /** The status, or null if every attempt failed. */
  status: number | null;
  /** The error name, when every attempt failed. */
  error: string | null;
  /** The links found on the page. */
  links: string[];
}

/**
 * Fetches `url` with one Fetcher, running the loop until its last callback
 * stops it. The Promise is only for the caller: inside, all is callbacks.
 */
function fetchOnePage(url: string, steps: string[]): Promise<FetchOutcome> {
  const options = resolveOptions({});
  const loop = new EventLoop();
  let outcome: FetchOutcome = { response: null, error: "NetworkError" };

  function onStep(_fetcher: Fetcher, step: FetcherStep): void {
    steps.push(step.type === "read" ? `read ${step.bytes} bytes` : step.type);
  }
  function fetched(_fetcher: Fetcher, result: FetchOutcome): void {
    outcome = result; // The continuation: the last link of the chain.
    loop.stop();
  }

  return new Promise<FetchOutcome>(function runLoop(resolve) {
    const fetcher = new Fetcher(url, loop, options, fetched, onStep);
    fetcher.fetch(); // Starts connecting and returns at once.
    loop.runForever(function loopStopped() {
      loop.selector.close();
      resolve(outcome);
    });
  });
}

/** Fetches the root page and prints the callback chain and the result. */
export async function main(rootUrl?: string): Promise<FetchOnePageSummary> {
  const root = await openRoot(rootUrl);
  try {
    const steps: string[] = [];
    const outcome = await fetchOnePage(root.url, steps);
    console.log(`Steps: ${steps.join(" → ")}`);
    if (outcome.error !== null) {
      console.log(`${root.url}: every attempt failed with ${outcome.error}`);
      return { steps, status: null, error: outcome.error, links: [] };
    }
    const page = readPage(root.url, outcome.response, resolveOptions({}).maxBodyBytes);
    console.log(`${root.url}: ${page.status} ${page.contentType ?? "-"}, ${page.size} bytes, ${page.links.length} links`);
    for (const link of page.links.slice(0, 5)) console.log(`  ${link}`);
    if (page.links.length > 5) console.log(`  … and ${page.links.length - 5} more`);
    return { steps, status: page.status, error: null, links: page.links };
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
