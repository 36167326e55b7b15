/**
 * A test helper for generator coroutines: wait for a Task whatever its
 * outcome, as a test does after cancelling it.
 */
import type { Coroutine } from "../../src/generators/futures.js";
import type { Task } from "../../src/generators/tasks.js";
import { FetchFailure } from "../../src/kernel/errors.js";

/**
 * Waits until `task` is done and says how it ended: `"result"`, a
 * FetchFailure's kind (`"Timeout"`, …), or the name of the error it threw
 * (`"CancelledError"`). Never throws, so a test can check the answer.
 */
export function* outcome(task: Task<unknown>): Coroutine<string> {
  try {
    yield* task;
    return "result";
  } catch (error) {
    if (error instanceof FetchFailure) return error.kind;
    return error instanceof Error ? error.name : String(error);
  }
}
