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
 * `sleep(0)` sets no timer: it only lets every other ready callback run once.
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?"; asyncio `sleep` (Lib/asyncio/tasks.py)
 */
export function* sleep(seconds: number): Coroutine<void> {
  const loop = getRunningLoop();
  if (seconds <= 0) {
    // asyncio's sleep(0) is a bare `yield`: the Task steps again on the next
    // iteration. A Future that is already done does the same here: the Task
    // adds its done callback, which the loop runs at once, on its next turn.
    const now = new Future<void>(loop, "sleep");
    now.setResult(undefined);
    yield now;
    return;
  }
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
