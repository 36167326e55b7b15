/**
 * Example 05: stack ripping. The same bug, in a callback and in a coroutine,
 * and the two stack traces it leaves.
 *
 * The bug: code that expects JSON parses an HTML page, and `JSON.parse`
 * throws. In both stages the call that fails sits in a function
 * `parseBody`, called when the response has arrived, and the fetch was
 * started by a function `fetchPage`, called by `crawlOne`.
 *
 * - Stage 1 (callbacks): `fetchPage` registered a callback and returned long
 *   ago. When the response arrives, the event loop calls the Fetcher's
 *   `readResponse`, which calls our `pageFetched`, which calls `parseBody`.
 *   The stack trace shows the loop and the callbacks, but neither
 *   `fetchPage` nor `crawlOne`: the "why were we here" part of the stack has
 *   been ripped away.
 * - Stage 2 (generators): the same two functions are coroutines
 *   (`crawlOneCoroutine` delegates to `fetchPageCoroutine` with `yield*`),
 *   and they are paused, not gone. When the Task resumes them, their frames
 *   are put back on the stack, so the trace reads `parseBody` ←
 *   `fetchPageCoroutine` ← `crawlOneCoroutine` ← the Task's step.
 *
 * Run it: `npx tsx examples/05-stack-ripping.ts [URL]`
 *
 * @see Chapter, "Programming With Callbacks" (stack ripping) and
 * "Building Coroutines With Generators"
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, Fetcher } from "../src/callbacks/index.js";
import type { FetchOutcome } from "../src/callbacks/fetcher.js";
import { request, type Coroutine } from "../src/generators/index.js";
import type { HttpResponse } from "../src/http/parser.js";
import { resolveOptions } from "../src/crawl/options.js";
import { openRoot } from "./open-root.js";
import { runCoroutine } from "./run-coroutine.js";

const options = resolveOptions({});

/** The bug: treats an HTML page as JSON. */
function parseBody(response: HttpResponse): unknown {
  return JSON.parse(Buffer.from(response.body).toString("utf8"));
}

// ---- Stage 1: callbacks ----------------------------------------------------

/** Starts a Fetcher whose continuation has the bug, and returns at once. */
function fetchPage(url: string, loop: EventLoop): void {
  function pageFetched(_fetcher: Fetcher, outcome: FetchOutcome): void {
    if (typeof outcome !== "string") parseBody(outcome); // throws, with `fetchPage` long gone
    loop.stop();
  }
  new Fetcher(url, loop, options, pageFetched).fetch();
}

/** What starts the fetch. Its name will not appear in the trace. */
function crawlOne(url: string, loop: EventLoop): void {
  fetchPage(url, loop);
}

/** Runs the stage 1 version and returns the error that reached the loop. */
function failWithCallbacks(url: string): Promise<unknown> {
  const loop = new EventLoop();
  let caught: unknown = null;
  // Without a handler the error would escape into Node as an uncaught exception, with the same stack.
  loop.setExceptionHandler(function exceptionInCallback(error: unknown): void {
    caught = error;
    loop.stop();
  });
  return new Promise<unknown>(function runLoop(resolve) {
    crawlOne(url, loop);
    loop.runForever(function loopStopped() {
      loop.selector.close();
      resolve(caught);
    });
  });
}

// ---- Stage 2: generators ---------------------------------------------------

/** Fetches and parses: one coroutine, paused at its `yield*`, never gone. */
function* fetchPageCoroutine(url: URL): Coroutine<unknown> {
  const response = yield* request(url, options);
  return parseBody(response); // throws, and this frame is on the stack
}

/** What starts the fetch, delegating with `yield*`. Its name will appear in the trace. */
function* crawlOneCoroutine(url: URL): Coroutine<unknown> {
  return yield* fetchPageCoroutine(url);
}

/** Runs the stage 2 version and returns the error the Task failed with. */
async function failWithGenerators(url: string): Promise<unknown> {
  try {
    await runCoroutine(crawlOneCoroutine(new URL(url)));
    return null;
  } catch (error) {
    return error;
  }
}

// ---- Both ------------------------------------------------------------------

/** The function names of a stack trace, innermost first, without Node's internals. */
function frames(error: unknown): string[] {
  const stack = error instanceof Error && error.stack !== undefined ? error.stack : "";
  const names: string[] = [];
  for (const line of stack.split("\n")) {
    const match = /^\s+at (?:async )?([^\s(]+)/.exec(line);
    if (match !== null && !line.includes("node:internal")) names.push(match[1]);
  }
  return names;
}

/** Triggers the bug in both stages and prints the two traces. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 1, callbacks: a callback runs on the loop's stack, so who started its fetch is lost (a stage 2 coroutine keeps it)");
  const root = await openRoot(rootUrl);
  try {
    const callbacksError = await failWithCallbacks(root.url);
    const generatorsError = await failWithGenerators(root.url);
    const callbacksFrames = frames(callbacksError);
    const generatorsFrames = frames(generatorsError);
    console.log(`Both stages fail with: ${String(callbacksError)}`);
    console.log(`\nStage 1 (callbacks) stack, innermost first:\n  ${callbacksFrames.join("\n  ")}`);
    console.log(`\nStage 2 (generators) stack, innermost first:\n  ${generatorsFrames.join("\n  ")}`);
    console.log(`\nWho started the fetch? Stage 1's stack ${callers(callbacksFrames)}; stage 2's ${callers(generatorsFrames)}.`);
  } finally {
    await root.close();
  }
}

/** Which of the functions that started the fetch (`fetchPage`, `crawlOne`, or their coroutines) a stack still shows. */
function callers(names: readonly string[]): string {
  const found = names.filter(function isCaller(name) {
    return /^(fetchPage|crawlOne)\w*$/.test(name); // not `crawlOneCoroutine.next`, the generator's own frame
  });
  return found.length === 0 ? "shows neither fetchPage nor crawlOne: it was ripped" : `still shows ${found.join(" and ")}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
