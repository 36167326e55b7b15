/**
 * `waitFor`: run a coroutine with a time limit.
 *
 * @module
 */
import { CancelledError, FetchFailure } from "../shared/errors.js";
import type { Coroutine } from "./future.js";
import { getRunningLoop } from "./running-loop.js";
import { Task } from "./task.js";

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
 * @remarks asyncio `wait_for` raises `TimeoutError` and, like this one, waits
 * for the cancelled Task to finish.
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
    return yield* inner;
  } catch (error) {
    if (timedOut && error instanceof CancelledError) {
      throw new FetchFailure("Timeout", `No result after ${timeoutMs} ms`, { cause: error });
    }
    throw error;
  } finally {
    timer.cancel();
    if (!inner.done()) {
      // We were cancelled ourselves: take the inner Task down, and wait until it is.
      inner.cancel();
      try {
        yield* inner;
      } catch {
        // Its outcome no longer matters; ours is already decided.
      }
    }
  }
}
