/**
 * `waitDone`: wait for a Future to finish without taking on its outcome.
 *
 * @module
 */
import { CancelledError } from "../kernel/errors.js";
import type { Coroutine, Future } from "./future.js";

/**
 * Pauses until `future` is done, and returns without reading its result, so
 * its error (a CancelledError included) is not thrown here.
 *
 * Anything thrown out of `waitDone` was therefore thrown into the caller's
 * own Task at its `yield`: a {@link shared!CancelledError} here always means
 * the caller itself was cancelled. `waitFor` and `gather` rely on this to tell
 * their own cancellation from that of the Tasks they started.
 *
 * @remarks This is the one helper outside `Future[Symbol.iterator]` that uses
 * a bare `yield`: it must not call `future.result()`. asyncio's
 * `wait([task])` likewise waits without raising the task's exception, and
 * asyncio's `timeouts` tell the two cancellations apart by counting cancel
 * requests (`Task.cancelling()`/`uncancel()`) instead.
 * @see asyncio `wait` (Lib/asyncio/tasks.py)
 */
export function* waitDone(future: Future<unknown>): Coroutine<void> {
  if (!future.done()) {
    yield future; // Resumed when it is done; a cancel of our Task is thrown in here.
  }
}

/**
 * Cancels each of `tasks` and waits until all of them are done, whatever
 * their outcomes, so none is left running behind the caller.
 *
 * If the caller's own Task is cancelled while it waits here, the wait goes on
 * (returning early would leave a Task running) and the
 * {@link shared!CancelledError} is thrown once all are done, so that
 * cancellation is not lost either.
 *
 * @throws {@link shared!CancelledError} if the caller was cancelled meanwhile.
 * @remarks A bare `catch` around `yield* task` would swallow the caller's
 * cancellation along with the Task's outcome (STYLE §5): here only the
 * caller's cancellation can be thrown, and it is caught by name.
 */
export function* cancelAndWait(tasks: ReadonlyArray<Future<unknown>>): Coroutine<void> {
  for (const task of tasks) task.cancel(); // No-op for the finished ones.
  let cancelled: CancelledError | null = null;
  for (const task of tasks) {
    while (!task.done()) {
      try {
        yield* waitDone(task);
      } catch (error) {
        if (!(error instanceof CancelledError)) throw error;
        cancelled = error; // Ours: remember it, and go on waiting.
      }
    }
  }
  if (cancelled !== null) throw cancelled;
}
