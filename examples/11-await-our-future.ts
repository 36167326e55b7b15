/**
 * Example 11: native `await` on stage 2's hand-made Future.
 *
 * `await x` does not need a Promise: it accepts any object with a `then`
 * method (a "thenable"), calls `x.then(resolve, reject)` and resumes the
 * `async` function with what it is given. Our {@link Future} has such a
 * method, so `async` code can wait for it, and so for a {@link Task}, which is
 * a Future. That is the JavaScript counterpart of Python's `__await__`: the
 * hook that lets `await` accept an object that is not a coroutine, which is
 * how asyncio's Future works with `await` in Python 3.5 and later.
 *
 * The Future only settles if its loop keeps turning, so the example runs the
 * loop (`runForever`) while it awaits, and stops it at the end.
 *
 * Run it: `npx tsx examples/11-await-our-future.ts [URL]`
 *
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?";
 * Chapter, "Factoring Coroutines With yield from" (`Future.__iter__`)
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, Future, Task, request } from "../src/generators/index.js";
import { DEFAULT_OPTIONS } from "../src/crawl/options.js";
import { openRoot } from "./open-root.js";

/** An object with nothing but a `then` method: enough for `await`. */
const answer = {
  // biome-ignore lint/suspicious/noThenProperty: this object is a thenable on purpose; it is what the example shows.
  then(resolve: (value: number) => void): void {
    resolve(42);
  },
};

/** Awaits a Future, a Task and a failed Future on a running stage 2 loop. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 3, async/await: await waits for anything with a then method, stage 2's Future and Task too");
  const root = await openRoot(rootUrl);
  const loop = new EventLoop();
  loop.runForever(); // Returns at once; iterations run as Node macrotasks while we await.
  try {
    const later = new Future<string>(loop);
    loop.callLater(10, function resolveLater() {
      later.setResult("resolved by a timer on our loop");
    });
    console.log(`later.then is a ${typeof later.then}: await treats the Future as a thenable`);
    const timerValue = await later;
    console.log(`await later → ${JSON.stringify(timerValue)}`);

    const fetching = new Task(request(new URL(root.url), DEFAULT_OPTIONS), loop);
    const response = await fetching; // A Task is a Future, so it is awaitable too.
    console.log(`await new Task(request(url)) → status ${response.status}, ${response.body.length} body bytes`);

    const failing = new Future<string>(loop);
    loop.callLater(0, function failLater() {
      failing.setException(new RangeError("failed on our loop"));
    });
    try {
      await failing;
    } catch (error) {
      console.log(`await failing → throws ${String(error)}, right at the await`);
    }

    const thenableValue = await answer;
    console.log(`await { then(resolve) { resolve(42) } } → ${thenableValue}: await only looks for a then method`);
  } finally {
    loop.stop();
    await root.close(); // Gives Node turns: the loop has stopped by the time this resolves.
    if (!loop.isRunning()) loop.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
