/**
 * The bridge the stage 2 examples use to run a coroutine from `async` code:
 * a new {@link EventLoop}, `runUntilComplete`, one native `await` on the Task,
 * and the loop closed afterwards.
 *
 * Not an example itself; the numbered files import it. It is what
 * `crawl()` in `src/generators/index.ts` does around the Crawler.
 *
 * @module
 */
import { EventLoop, type Coroutine } from "../src/generators/index.js";

/**
 * Runs `coro` in a Task on a fresh loop and resolves (or rejects) with its
 * outcome.
 *
 * @remarks Python's `loop.run_until_complete(coro)` blocks and returns the
 * result. JavaScript cannot block, so `runUntilComplete` returns the Task at
 * once and we `await` it: a Future is a thenable.
 */
export async function runCoroutine<T>(coro: Coroutine<T>): Promise<T> {
  const loop = new EventLoop();
  try {
    return await loop.runUntilComplete(coro);
  } finally {
    closeWhenStopped(loop);
  }
}

/**
 * Closes the loop once it has stopped. Usually it already has: the Task's
 * done callbacks (the stop and the one that settles our `await`) run in one
 * iteration, and the `await` resumes after it. If the loop still runs (the
 * `await` was rejected by something else), stop it and close it a turn later.
 */
function closeWhenStopped(loop: EventLoop): void {
  if (loop.isRunning()) {
    loop.stop();
    setImmediate(closeWhenStopped, loop);
  } else {
    loop.close();
  }
}
