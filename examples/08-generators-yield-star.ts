/**
 * Example 08: `read` and `readAll` factored out with `yield*`.
 *
 * Example 07 wrote every wait by hand: make a Future, register a callback,
 * yield, unregister. Stage 2's `src/generators/sockets.ts` puts each of those
 * in a coroutine of its own (`connect`, `sendAll`, `read`, `readAll`), and
 * the fetch below just delegates to them with `yield*`, Python's
 * `yield from`. Three things make this work:
 *
 * - `yield*` passes the inner coroutine's yields (the Futures) straight up
 *   to the Task, so the Task never knows how deep the call chain is;
 * - it evaluates to the inner coroutine's return value, so
 *   `const bytes = yield* readAll(socket)` reads like a blocking call;
 * - `yield* future` works too, because a Future is iterable: it yields
 *   itself once and returns its result.
 *
 * Then the same `fetch` runs several times at once, each in its own Task,
 * with `gather`.
 *
 * Run it: `npx tsx examples/08-generators-yield-star.ts [URL]`
 *
 * @see Chapter, "Factoring Coroutines With yield from"
 * @module
 */
import { fileURLToPath } from "node:url";
import { connect, gather, readAll, sendAll, type Coroutine } from "../src/generators/index.js";
import { parseResponse } from "../src/http/parser.js";
import { formatGetRequest } from "../src/http/request.js";
import { DEFAULT_OPTIONS } from "../src/crawl/options.js";
import { readPage, type Page } from "../src/crawl/page.js";
import { openRoot } from "./open-root.js";
import { runCoroutine } from "./run-coroutine.js";

/**
 * Fetches one page. Each `yield*` is a place where this coroutine may pause;
 * everything between two of them runs without interruption.
 */
function* fetch(url: string): Coroutine<Page> {
  const socket = yield* connect(new URL(url));
  try {
    yield* sendAll(socket, formatGetRequest(new URL(url), DEFAULT_OPTIONS.userAgent));
    const bytes = yield* readAll(socket); // Until the server closes: the request said `Connection: close`.
    return readPage(url, parseResponse(bytes, DEFAULT_OPTIONS), DEFAULT_OPTIONS.maxBodyBytes);
  } finally {
    socket.destroy();
  }
}

/** Fetches the root, then its first links all at once, and prints what came back. */
function* fetchRootAndLinks(rootUrl: string): Coroutine<void> {
  const rootPage = yield* fetch(rootUrl);
  console.log(`${rootUrl}: status ${rootPage.status}, ${rootPage.size} bytes, ${rootPage.links.length} links`);
  const links = rootPage.links.slice(0, 4);
  const pages = yield* gather(...links.map(fetch)); // One Task per link, all in flight together.
  console.log(`Its first ${links.length} links, fetched at once with gather, each in a Task of its own:`);
  for (const [i, page] of pages.entries()) {
    const what = page.nextUrl === null ? `${page.size} bytes` : `redirect to ${page.nextUrl}`;
    console.log(`  ${links[i]}: status ${page.status}, ${what}`);
  }
}

/** Runs the coroutine on a fresh loop. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 2, generators: a coroutine waits with yield*, which passes its Futures up to its Task; gather waits for several");
  const root = await openRoot(rootUrl);
  try {
    await runCoroutine(fetchRootAndLinks(root.url));
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
