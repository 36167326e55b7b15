/**
 * `sleep`: the simplest coroutine that waits, on a timer instead of a socket.
 *
 * @module
 */
import { Future, type Coroutine } from "./future.js";
import { getRunningLoop } from "./running-loop.js";

/**
 * Pauses the calling coroutine for `seconds`, letting every other Task run
 * meanwhile.
 *
 * It makes a Future, asks the loop to resolve it when the time is up, and
 * waits on it. If the Task is cancelled while it sleeps, the `finally`
 * cancels the timer, so nothing is left scheduled.
 *
 * @remarks Brett Cannon's essay's `sleep` yields the wake-up time itself to a
 * loop that only knows timers, and returns how long it really slept; this
 * one waits on a Future like every other coroutine here, as `asyncio.sleep`
 * does. Seconds, like Python; the loop's own clock counts milliseconds.
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?"; asyncio `sleep` (Lib/asyncio/tasks.py)
 */
export function* sleep(seconds: number): Coroutine<void> {
  const loop = getRunningLoop();
  const wakeUp = new Future<void>(loop, "sleep");
  const timer = loop.callLater(seconds * 1000, function timeIsUp() {
    wakeUp.setResult(undefined);
  });
  try {
    yield* wakeUp;
  } finally {
    timer.cancel(); // Cancelled while asleep: leave no timer behind.
  }
}
