/**
 * The Task: a Future that drives a coroutine.
 *
 * @module
 */
import { CancelledError } from "../kernel/errors.js";
import type { EventLoop } from "./event-loop.js";
import { Future, type Coroutine } from "./future.js";
import { getRunningLoop, runningLoopOrNull } from "./running-loop.js";

/** Each loop's Tasks that are not done yet (asyncio keeps `_all_tasks` in tasks.py). */
const pendingTasks = new WeakMap<EventLoop, Set<Task<unknown>>>();

/**
 * The Tasks of `loop` that are not done yet: after a crawl, none should be
 * left. For notebooks and tests that want to see what is still running.
 *
 * @param loop - By default the loop running now.
 * @see asyncio `all_tasks()` (Lib/asyncio/tasks.py)
 */
export function allTasks(loop: EventLoop = getRunningLoop()): Array<Task<unknown>> {
  return [...(pendingTasks.get(loop) ?? [])];
}

/**
 * Drives one coroutine to completion. A Task is a Future that resolves itself
 * with the coroutine's return value, or fails with what it throws.
 *
 * `step()` resumes the coroutine until it yields the next Future, then
 * registers the Task's `wakeUp` as that Future's done callback. Nothing else
 * resumes the coroutine: when the Future is done, the loop calls `wakeUp`,
 * which steps again. Between two steps the coroutine is a paused frame holding
 * its own locals; that is all a "suspended Task" costs.
 *
 * `cancel()` throws a {@link shared!CancelledError} into the coroutine at the
 * `yield*` where it is paused (on the loop's next turn, never in the middle of
 * someone else's step), so its `try`/`finally` blocks run and it can undo
 * its selector registrations. If the coroutine lets the error through, the
 * Task ends cancelled.
 *
 * @remarks The chapter's `step(future)` sends `future.result` into the
 * coroutine; here the Task calls a bare `coro.next()` and
 * `Future[Symbol.iterator]` fetches its own result after the `yield`, as
 * modern asyncio's `__wakeup` does. JS generators finish with
 * `{ done: true, value }` instead of raising StopIteration. asyncio's
 * `Task.cancel()` cancels the Future the Task waits on; this one, like the
 * chapter's, throws straight into the coroutine and leaves that Future alone,
 * so a shared Future (a queue's join, say) is never cancelled for everyone.
 * A coroutine that started a Task of its own cancels it in its `finally`
 * (see `waitFor` and `gather`).
 * @see Chapter, "Building Coroutines With Generators" and "Coordinating Coroutines";
 * asyncio `Task.__step` (Lib/asyncio/tasks.py)
 */
export class Task<T> extends Future<T> {
  // A Task always has a loop (the constructor checks): narrow Future's field.
  protected declare readonly loop: EventLoop;
  private readonly coro: Coroutine<T>;
  /** The Future the coroutine is paused on, or null while it runs or is scheduled. */
  private waitingOn: Future<unknown> | null = null;
  /** Set by `cancel()`: the next step throws CancelledError in. */
  private mustCancel = false;
  /** An error to throw in at the next step (a bad yield), unless a cancel comes first and replaces it. */
  private pendingError: Error | null = null;

  /**
   * Wraps `coro` and schedules its first step on `loop`.
   *
   * @param loop - By default the loop running now.
   * @param name - The coroutine's name, for debugging and traces (a generator
   * object does not know its function's name).
   * @throws Error if no loop is given and none is running.
   */
  constructor(coro: Coroutine<T>, loop: EventLoop | null = runningLoopOrNull(), name = "coroutine") {
    if (loop === null) {
      throw new Error("A Task needs an event loop: pass one, or create the Task from code the loop runs");
    }
    super(loop, name);
    this.coro = coro;
    let tasks = pendingTasks.get(loop);
    if (tasks === undefined) pendingTasks.set(loop, (tasks = new Set()));
    tasks.add(this);
    this.loop.callSoon(this.resume);
  }

  /** A Task resolves itself from its coroutine's return value; nobody else may. */
  override setResult(_value: T): void {
    throw new TypeError("Task does not support setResult(): its coroutine's return value resolves it");
  }

  /** A Task fails with what its coroutine throws; nobody else may fail it. */
  override setException(_error: unknown): void {
    throw new TypeError("Task does not support setException(): its coroutine's exception fails it");
  }

  /**
   * Asks the coroutine to stop: on the loop's next turn, a
   * {@link shared!CancelledError} is thrown in at its paused `yield*`.
   *
   * @returns false if the Task is already done, else true.
   */
  override cancel(): boolean {
    if (this.done()) return false;
    this.mustCancel = true;
    this.loop.trace?.({ type: "cancel", t: this.loop.traceTime(), stage: "generators", task: this.id });
    const waitingOn = this.waitingOn;
    if (waitingOn !== null) {
      // Stop listening, and step on the next turn instead of when it is done.
      waitingOn.removeDoneCallback(this.wakeUp);
      this.waitingOn = null;
      this.loop.callSoon(this.resume);
    }
    // Otherwise a step is already scheduled, or the coroutine is running right
    // now (it cancelled its own Task): that step sees mustCancel.
    return true;
  }

  /** Done callback for the Future the coroutine waits on. */
  private readonly wakeUp = (future: Future<unknown>): void => {
    // A wake-up scheduled before cancel() stopped listening is stale.
    if (future !== this.waitingOn) return;
    this.waitingOn = null;
    this.step();
  };

  /** Scheduled through `callSoon`: the first step, and steps after cancel() or a bad yield. */
  private readonly resume = (): void => {
    this.step();
  };

  /** Runs the coroutine to its next `yield`, then waits on what it yielded. */
  private step(): void {
    let next: IteratorResult<Future<unknown>, T>;
    try {
      if (this.mustCancel) {
        // The cancel takes the place of a pending bad-yield error, as in
        // asyncio; left pending, it would be thrown at some unrelated yield*.
        this.mustCancel = false;
        this.pendingError = null;
        next = this.coro.throw(new CancelledError());
      } else if (this.pendingError !== null) {
        const error = this.pendingError;
        this.pendingError = null;
        next = this.coro.throw(error);
      } else {
        next = this.coro.next();
      }
    } catch (error) {
      // The coroutine ended with an exception. A CancelledError that got out
      // means the coroutine agreed to be cancelled.
      this.traceStep(null);
      pendingTasks.get(this.loop)?.delete(this);
      if (error instanceof CancelledError) super.cancel();
      else super.setException(error);
      return;
    }
    if (next.done === true) {
      this.traceStep(null);
      pendingTasks.get(this.loop)?.delete(this);
      if (this.mustCancel) {
        // Cancelled while it ran its last step (it cancelled itself): the
        // cancel wins over the return value, as in asyncio's `__step`.
        this.mustCancel = false;
        super.cancel();
      } else {
        super.setResult(next.value); // The coroutine returned: resolve the Task.
      }
      return;
    }
    const yielded: unknown = next.value; // Typed Future, but plain JS can yield anything.
    if (this.loop.trace !== null) this.traceStep(yielded instanceof Future ? yielded.label : String(yielded));
    if (!(yielded instanceof Future)) {
      this.pendingError = new TypeError(`Task got bad yield: ${String(yielded)}; use yield*`);
      this.loop.callSoon(this.resume);
    } else if (yielded === this) {
      this.pendingError = new TypeError("Task cannot wait for itself");
      this.loop.callSoon(this.resume);
    } else if (!yielded.attachLoop(this.loop)) {
      this.pendingError = new TypeError("Task got a Future attached to a different loop");
      this.loop.callSoon(this.resume);
    } else if (this.mustCancel) {
      this.loop.callSoon(this.resume); // Cancelled while running: throw in at this yield.
    } else {
      this.waitingOn = yielded;
      yielded.addDoneCallback(this.wakeUp);
    }
  }

  /** Reports a step to the loop's trace: what the coroutine yielded, or null when it ended. */
  private traceStep(yielded: string | null): void {
    const trace = this.loop.trace;
    if (trace === null) return;
    trace({ type: "step", t: this.loop.traceTime(), stage: "generators", task: this.id, coroutine: this.label, yielded });
  }
}
