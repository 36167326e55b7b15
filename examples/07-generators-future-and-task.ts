/**
 * Example 07: a Future and a Task fetching one page, written the way the
 * chapter first writes it, before `yield*` tidies it up.
 *
 * The coroutine makes a {@link Future}, registers a selector callback that
 * resolves it, and yields the Future to its {@link Task}. The Task adds its
 * wake-up as the Future's done callback; when the socket is ready, the
 * callback resolves the Future, the loop runs the wake-up, and the Task
 * resumes the coroutine right after its `yield`. Compare with example 03:
 * the same steps, but as one function whose state is in local variables.
 *
 * The bare `yield f` appears here once, on purpose. The chapter writes
 * `chunk = yield f` and its Task sends the result in with `send`. Ours
 * resumes with a bare `next()` (like modern asyncio), so the value of
 * `yield f` is `undefined`, and TypeScript knows it: the coroutine's type
 * says `next()` sends `undefined`, so assigning it to a `Uint8Array` is a
 * type error (TS2322), silenced below with `@ts-expect-error` to show what
 * really arrives. The fix is to ask the Future: `f.result()`, or better,
 * `yield* f`, which does both at once and has the right type. Example 08
 * takes that step.
 *
 * Run it: `npx tsx examples/07-generators-future-and-task.ts [URL]`
 *
 * @see Chapter, "Building Coroutines With Generators"
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, Future, Task, getRunningLoop, type Coroutine } from "../src/generators/index.js";
import { ResponseParser, type HttpResponse } from "../src/http/parser.js";
import { formatGetRequest } from "../src/http/request.js";
import { DEFAULT_OPTIONS } from "../src/crawl/options.js";
import { EVENT_READ, EVENT_WRITE } from "../src/kernel/selector.js";
import { connect, recv, send } from "../src/kernel/socket.js";
import { openRoot } from "./open-root.js";

/** Fetches `url` with bare `yield`s: the chapter's `Fetcher.fetch` as a generator. */
function* fetch(url: URL, seen: { pauses: number; sentIn: string[] }): Coroutine<HttpResponse> {
  const loop = getRunningLoop();
  const socket = connect(url);
  try {
    const connected = new Future<void>(loop);
    loop.selector.register(socket, EVENT_WRITE, function onConnected() {
      if (!connected.done()) connected.setResult(undefined);
    });
    seen.pauses += 1;
    const sentInOnConnect: unknown = yield connected; // Paused until the socket is writable; nothing is needed back.
    seen.sentIn.push(String(sentInOnConnect));
    loop.selector.unregister(socket); // Skipped if the Task were cancelled at the yield: see sockets.ts.

    send(socket, formatGetRequest(url, DEFAULT_OPTIONS.userAgent));
    const parser = new ResponseParser({ maxBodyBytes: DEFAULT_OPTIONS.maxBodyBytes });
    while (!parser.done) {
      const f = new Future<Uint8Array>(loop);
      loop.selector.register(socket, EVENT_READ, function onReadable() {
        if (f.done()) return;
        try {
          f.setResult(recv(socket, 4096));
        } catch (error) {
          f.setException(error);
        }
      });
      seen.pauses += 1;
      // @ts-expect-error TS2322: a bare `yield` evaluates to what `next()` sends in, typed `undefined` here.
      const sentIn: Uint8Array = yield f; // The chapter's `chunk = yield f`.
      loop.selector.unregister(socket);
      seen.sentIn.push(String(sentIn));
      const chunk = f.result(); // What `yield* f` would have given us directly.
      if (chunk.length > 0) parser.feed(chunk);
      else parser.end();
    }
    return parser.response();
  } finally {
    socket.destroy();
  }
}

/** One line of a Task as `console.log` would show it, without the loop it points to. */
function describeTask(task: Task<unknown>): string {
  return `Task { done: ${task.done()}, cancelled: ${task.cancelled()} }`;
}

/** Wraps the coroutine in a Task on a new loop, runs the loop until the Task is done, prints the result. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 2, generators: a Task resumes its coroutine when the Future it yielded is done");
  const root = await openRoot(rootUrl);
  const loop = new EventLoop();
  try {
    const seen: { pauses: number; sentIn: string[] } = { pauses: 0, sentIn: [] };
    const task = new Task(fetch(new URL(root.url), seen), loop); // The chapter's Task(fetcher.fetch())
    console.log(`Made: ${describeTask(task)}; its first step is scheduled on the loop.`);
    loop.runUntilComplete(task); // Returns at once: the loop turns in Node's macrotasks.
    const response = await task; // The bridge to async code: a Future is a thenable (example 11).
    console.log(`Done: ${describeTask(task)}: status ${response.status}, ${response.body.length} body bytes.`);
    console.log(`The coroutine yielded ${seen.pauses} Futures, and its Task paused it at each one.`);
    console.log(
      `Each bare \`yield\` evaluated to: ${seen.sentIn.join(", ")}. ` +
        "Our Task resumes with next(), sending nothing in; the chunk is in f.result().",
    );
  } finally {
    if (!loop.isRunning()) loop.close();
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
