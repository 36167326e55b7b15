/**
 * `gather`: run coroutines concurrently and collect their results.
 *
 * @module
 */
import { Future, type Coroutine } from "./future.js";
import { getRunningLoop } from "./running-loop.js";
import { Task } from "./task.js";
import { cancelAndWait } from "./wait-done.js";

/**
 * Runs each coroutine in a Task of its own, all at once, and returns their
 * results in the order given.
 *
 * One Future, `all`, counts the Tasks down: each Task's done callback either
 * fails it with the first error or, at the last result, resolves it.
 *
 * @throws the first error any of them throws. Then, or if the caller is
 * cancelled, the Tasks still running are cancelled and waited for before
 * `gather` throws, so none is left running.
 * @remarks asyncio's `gather` leaves the other Tasks running after a failure;
 * cancelling them is what asyncio's newer `TaskGroup` does, and it keeps a
 * crawl from leaking sockets.
 * @see asyncio `gather` and `TaskGroup` (Lib/asyncio/tasks.py, taskgroups.py)
 */
export function* gather<T extends unknown[]>(...coros: { [K in keyof T]: Coroutine<T[K]> }): Coroutine<T> {
  const loop = getRunningLoop();
  const tasks: Array<Task<unknown>> = [];
  for (const coro of coros) tasks.push(new Task<unknown>(coro, loop, "gathered"));
  const all = new Future<void>(loop, "gather");
  let pending = tasks.length;
  function childDone(task: Future<unknown>): void {
    if (all.done()) return;
    try {
      task.result();
    } catch (error) {
      all.setException(error); // The first failure (or cancellation) decides.
      return;
    }
    pending -= 1;
    if (pending === 0) all.setResult(undefined);
  }
  for (const task of tasks) task.addDoneCallback(childDone);
  if (pending === 0) all.setResult(undefined);
  try {
    yield* all;
    const results: unknown[] = [];
    for (const task of tasks) results.push(task.result());
    return results as T; // The one cast: results[i] is what coros[i], a Coroutine<T[i]>, returned.
  } finally {
    // On a failure, or when we are cancelled: none of them is left running.
    yield* cancelAndWait(tasks);
  }
}
