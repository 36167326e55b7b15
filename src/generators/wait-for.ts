/**
 * `waitFor`: run a coroutine with a time limit.
 *
 * @module
 */
import { CancelledError, FetchFailure } from "../kernel/errors.js";
import type { Coroutine } from "./future.js";
import { getRunningLoop } from "./running-loop.js";
import { Task } from "./task.js";
import { cancelAndWait, waitDone } from "./wait-done.js";

/**
 * Runs `coro` in a Task of its own and returns its result, unless
 * `timeoutMs` milliseconds pass first: then that Task is cancelled (its
 * `finally` blocks close what it opened) and `waitFor` throws.
 *
 * Whatever ends it (a result, an error, the timeout, or the caller being
 * cancelled), `waitFor` does not return before the inner Task is done and its
 * timer is cancelled, so it leaves nothing running behind.
 *
 * @throws {@link shared!FetchFailure} of kind `Timeout` when the time is up (the
 * record's error name; JavaScript has no built-in `TimeoutError` class).
 * @throws whatever `coro` throws.
 * A Timeout is only ever the inner Task's own cancellation: if our Task is
 * cancelled, even in the same turn as the timer fires, `waitFor` ends
 * cancelled (see `waitDone` in wait-done.ts), so a crawl that is stopped does not
 * mistake the stop for a timeout and retry.
 *
 * @remarks asyncio `wait_for` raises `TimeoutError` and, like this one, waits
 * for the cancelled Task to finish; it tells the two cancellations apart by
 * counting cancel requests (`Task.cancelling()`/`uncancel()`), we by where the
 * CancelledError is thrown.
 * @see asyncio `wait_for` (Lib/asyncio/tasks.py)
 */
export function* waitFor<T>(coro: Coroutine<T>, timeoutMs: number): Coroutine<T> {
  const loop = getRunningLoop();
  const inner = new Task(coro, loop, "waitFor");
  let timedOut = false;
  const timer = loop.callLater(timeoutMs, function timeIsUp() {
    timedOut = true;
    inner.cancel();
  });
  try {
    yield* waitDone(inner);
  } catch (error) {
    // Only a cancel of our own Task is thrown in at that yield, perhaps just
    // after the timer fired: take the inner Task down, wait until it is, and
    // end cancelled, not timed out.
    timer.cancel();
    yield* cancelAndWait([inner]);
    throw error;
  }
  timer.cancel();
  try {
    return inner.result(); // Its value, or what its coroutine threw.
  } catch (error) {
    // The inner Task really ended cancelled, and only our timer cancels it.
    if (timedOut && error instanceof CancelledError) {
      throw new FetchFailure("Timeout", `No result after ${timeoutMs} ms`, { cause: error });
    }
    throw error;
  }
}
