/**
 * Brett Cannon's countdown, on stage 2's event loop: three launches counting
 * down at once, in one thread, each written as if it simply slept.
 *
 * In the essay, a toy `SleepingLoop` drives `async def countdown(...)`
 * coroutines that `await sleep(...)`. Here the loop is stage 2's
 * {@link EventLoop}, `sleep` is its coroutine, and `yield*` plays `await`.
 * The essay's `main` blocks in `run_until_complete`; ours gets a Task back
 * and uses native `await` on it: a Future is a thenable, the JavaScript
 * counterpart of Python's `__await__`.
 *
 * Run it: `npx tsx examples/10-generators-countdown.ts` (about five seconds).
 *
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?" (the
 * example at its end)
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, gather, sleep, type Coroutine } from "../src/generators/index.js";

/** How to run the example: `secondsPerTick` shrinks time for tests; `print` gets each line. */
export interface CountdownOptions {
  /** Real seconds per countdown second. Default 1. */
  secondsPerTick?: number;
  /** Where each line goes. Default `console.log`. */
  print?: (line: string) => void;
}

/**
 * Counts a launch down from `length`, one tick a second, after waiting
 * `delay` seconds. What a user would write: it reads like blocking code.
 */
function* countdown(
  label: string,
  length: number,
  delay: number,
  secondsPerTick: number,
  say: (line: string) => void,
): Coroutine<void> {
  say(`${label} waiting ${delay} seconds before starting countdown`);
  yield* sleep(delay * secondsPerTick);
  say(`${label} starting after waiting ${delay} seconds`);
  for (let left = length; left > 0; left--) {
    say(`${label} T-minus ${left}`);
    yield* sleep(secondsPerTick);
  }
  say(`${label} lift-off!`);
}

/**
 * Runs the three countdowns of the essay (A: 5, B: 3 after 2 s, C: 4 after
 * 1 s) together, prints each line as it happens, and returns the lines in
 * the order they were printed.
 */
export async function main(options: CountdownOptions = {}): Promise<string[]> {
  const secondsPerTick = options.secondsPerTick ?? 1;
  const print = options.print ?? console.log;
  const lines: string[] = [];
  function say(line: string): void {
    lines.push(line);
    print(line);
  }
  const loop = new EventLoop();
  const start = loop.time();
  const launches = loop.runUntilComplete(
    gather(
      countdown("A", 5, 0, secondsPerTick, say),
      countdown("B", 3, 2, secondsPerTick, say),
      countdown("C", 4, 1, secondsPerTick, say),
    ),
  );
  await launches; // Native await on our Future: the thenable bridge.
  print(`Total elapsed time is ${((loop.time() - start) / 1000).toFixed(2)} seconds`);
  setImmediate(function closeLoop() {
    loop.close(); // runForever returns after the iteration that resolved `launches`.
  });
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
