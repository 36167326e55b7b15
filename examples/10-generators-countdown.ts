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
 * Run it: `npx tsx examples/10-generators-countdown.ts [SECONDS_PER_TICK]`
 * (about five seconds; give `0.1` for a countdown ten times faster).
 *
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?" (the
 * example at its end)
 * @module
 */
import { fileURLToPath } from "node:url";
import { EventLoop, gather, sleep, type Coroutine } from "../src/generators/index.js";

/**
 * Counts a launch down from `length`, one tick a second, after waiting
 * `delay` seconds. What a user would write: it reads like blocking code.
 */
function* countdown(label: string, length: number, delay: number, secondsPerTick: number): Coroutine<void> {
  console.log(`${label} waiting ${delay} seconds before starting countdown`);
  yield* sleep(delay * secondsPerTick);
  console.log(`${label} starting after waiting ${delay} seconds`);
  for (let left = length; left > 0; left--) {
    console.log(`${label} T-minus ${left}`);
    yield* sleep(secondsPerTick);
  }
  console.log(`${label} lift-off!`);
}

/**
 * Runs the three countdowns of the essay (A: 5, B: 3 after 2 s, C: 4 after
 * 1 s) together and prints each line as it happens. `secondsPerTick`: real
 * seconds per countdown second, 1 unless given.
 */
export async function main(secondsPerTick?: string): Promise<void> {
  console.log("Stage 2, generators: three countdowns on one loop, each Task paused at a yield* sleep() between its lines");
  const tick = secondsPerTick === undefined || secondsPerTick === "" ? 1 : Number(secondsPerTick);
  if (!(tick > 0 && tick < 3600)) throw new RangeError(`Expected seconds per tick above 0 and below 3600, got ${secondsPerTick}`);
  const loop = new EventLoop();
  const start = loop.time();
  const launches = loop.runUntilComplete(gather(countdown("A", 5, 0, tick), countdown("B", 3, 2, tick), countdown("C", 4, 1, tick)));
  await launches; // Native await on our Future: the thenable bridge.
  console.log(`Total elapsed time is ${((loop.time() - start) / 1000).toFixed(2)} seconds`);
  setImmediate(function closeLoop() {
    loop.close(); // runForever returns after the iteration that resolved `launches`.
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
