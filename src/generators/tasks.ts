/** tasks.ts ↔ Lib/asyncio/tasks.py: the Task, a Future that drives a coroutine, and the
 * coroutines built on Tasks: `sleep`, `gather`, `waitFor`, `waitDone` and `cancelAndWait`.
 *
 * @module
 */
import { CancelledError, FetchFailure } from "../kernel/errors.js";
import { loopChannel } from "../observe/channels.js";
import { getRunningLoop, runningLoopOrNull } from "./events.js";
import type { EventLoop } from "./event-loop.js";
import { Future, type Coroutine } from "./futures.js";

/**
 * The Tasks of `loop` that are not done yet: after a crawl, none should be
 * left. For notebooks and tests that want to see what is still running.
 *
 * @param loop - By default the loop running now.
 * @see asyncio `all_tasks()`
 */
export function allTasks(loop: EventLoop = getRunningLoop()): Array<Task<unknown>> {
  return loop.tasks.list() as Array<Task<unknown>>;
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
 * @see Chapter, "Building Coroutines With Generators" and "Coordinating Coroutines"; asyncio `Task.__step`
 */
export class Task<T> extends Future<T> {
  // A Task always has a loop (the constructor checks): narrow Future's field.
  protected declare readonly loop: EventLoop;
  /** The Future the coroutine is paused on, or null while it runs or is scheduled. */
  private waitingOn: Future<unknown> | null = null;
  /**
   * What the next step throws in: a CancelledError from `cancel()`, or the
   * TypeError of a bad yield; a cancel takes the place of that TypeError, as
   * in asyncio (left pending, it would be thrown at some unrelated `yield*`).
   */
  private throwIn: Error | null = null;
  /** Its slot among the loop's pending Tasks. */
  private readonly slot: number;

  /**
   * Wraps `coro` and schedules its first step on `loop`.
   *
   * @param loop - By default the loop running now.
   * @param name - The coroutine's name, for debugging and traces (a generator
   * object does not know its function's name).
   * @throws Error if no loop is given and none is running.
   */
  constructor(private readonly coro: Coroutine<T>, loop: EventLoop | null = runningLoopOrNull(), name = "coroutine") {
    if (loop === null) throw new Error("A Task needs an event loop: pass one, or create the Task from code the loop runs");
    super(loop, name);
    this.slot = loop.tasks.add(this);
    this.loop.callSoon(this.step);
  }

  /** A Task resolves itself from its coroutine's return value; nobody else may. */
  override setResult(_value: T): void { throw new TypeError("Task does not support setResult(): its coroutine's return value resolves it"); }

  /** A Task fails with what its coroutine throws; nobody else may fail it. */
  override setException(_error: unknown): void { throw new TypeError("Task does not support setException(): its coroutine's exception fails it"); }

  /**
   * Asks the coroutine to stop: on the loop's next turn, a
   * {@link shared!CancelledError} is thrown in at its paused `yield*`.
   *
   * @returns false if the Task is already done, else true.
   */
  override cancel(): boolean {
    if (this.done()) return false;
    this.throwIn = new CancelledError();
    if (loopChannel.hasSubscribers) loopChannel.publish({ type: "cancel", loop: this.loop.id, task: this.id });
    if (this.waitingOn !== null && !this.waitingOn.done()) {
      // Stop listening, and step on the next turn instead of when it is done.
      this.waitingOn.removeDoneCallback(this.wakeUp);
      this.waitingOn = null;
      this.loop.callSoon(this.step);
    }
    // Otherwise a step is already scheduled (the wake-up of a Future that is
    // done, as asyncio's `_must_cancel`), or the coroutine is running right
    // now (it cancelled its own Task): that step sees throwIn.
    return true;
  }

  /**
   * The done callback `step` hands to the Future the coroutine yielded: when
   * that Future is done, the loop calls `wakeUp`, and `wakeUp` steps the
   * Task again. A `cancel()` that comes once the Future is done finds this
   * wake-up scheduled already and lets it throw the CancelledError in.
   *
   * It is an arrow function stored on the Task, so the one function keeps
   * its `this` when the Future calls it, and `cancel()` can take it off the
   * Future again with `removeDoneCallback(this.wakeUp)`, which finds it by
   * identity. In a debugger's call stack it is the frame between the loop's
   * `run` and `Task.step`.
   *
   * @remarks Protected so that the reference shows it, not to be overridden.
   * @see asyncio `Task.__wakeup`; docs/guide-generators.md, "2. Task"; docs/debugging.md, "Who called this? The stack starts at the loop"
   */
  protected readonly wakeUp = (): void => {
    this.waitingOn = null;
    this.step();
  };

  /**
   * One step of the coroutine: resumes it with `coro.next()` (or
   * `coro.throw(error)`, when a cancel or a bad yield is pending), lets it
   * run to its next `yield`, and looks at what comes out.
   *
   * - `{ done: true, value }`: the coroutine returned, and `value` resolves
   *   the Task, unless the Task was cancelled during this step (its
   *   coroutine called `cancel()` on its own Task, then returned): then the
   *   cancel wins and the Task ends cancelled, as asyncio's `_must_cancel`
   *   makes it.
   * - An exception out of the coroutine fails the Task; a
   *   {@link shared!CancelledError} that got out cancels it.
   * - A Future: the Task remembers it (`waitingOn`) and registers `wakeUp`
   *   as its done callback, then returns. The coroutine stays paused at that
   *   `yield` until the Future is done; even a Future done already wakes it
   *   only in the next iteration (its done callback goes to the loop), so
   *   `sleep(0)` lets the other Tasks take a turn: never step again at once.
   * - Anything else (a generator passed without `yield*`, a Future of another
   *   loop, the Task itself) is a bad yield: the next step throws a
   *   `TypeError` in at that `yield`.
   *
   * Only the loop runs `step`: the constructor schedules the first with
   * `callSoon`, and each later one comes from `wakeUp`, from `cancel()`, or
   * from a step that met a bad yield. So a
   * coroutine runs only inside a loop iteration, one step at a time, and it
   * can be interrupted nowhere but at a `yield`.
   *
   * @remarks The chapter's `step(future)` sends `future.result` in with
   * `send()`; this one calls a bare `next()` and the Future's iterator reads
   * its own result. Protected so the reference can show it, not to be
   * overridden: the constructor schedules the first step before a subclass's
   * own fields exist.
   * @see Chapter, "Building Coroutines With Generators" (`Task.step`); asyncio `Task.__step`; docs/guide-generators.md, "2. Task"
   */
  protected readonly step = (): void => {
    const error = this.throwIn;
    this.throwIn = null;
    let next: IteratorResult<Future<unknown>, T>;
    try {
      next = error === null ? this.coro.next() : this.coro.throw(error);
    } catch (thrown) {
      this.ended();
      // A CancelledError that got out means the coroutine agreed to be cancelled.
      if (thrown instanceof CancelledError) super.cancel();
      else super.setException(thrown);
      return;
    }
    if (next.done === true) {
      // Cancelled while it ran its last step (it cancelled itself): the cancel wins, as in asyncio's `__step`.
      const cancelled = this.throwIn !== null; // Only cancel() sets throwIn while the coroutine runs; read before ended() publishes.
      this.ended();
      if (cancelled) super.cancel();
      else super.setResult(next.value); // The coroutine returned: resolve the Task.
      return;
    }
    const yielded: unknown = next.value; // Typed Future, but plain JS can yield anything.
    if (loopChannel.hasSubscribers) loopChannel.publish({ type: "step", loop: this.loop.id, task: this.id, coroutine: this.label, yielded: yielded instanceof Future ? yielded.label : String(yielded) });
    if (!(yielded instanceof Future)) this.throwIn ??= new TypeError(`Task got bad yield: ${String(yielded)}; use yield*`);
    else if (yielded === this) this.throwIn ??= new TypeError("Task cannot wait for itself");
    else if (!yielded.attachLoop(this.loop)) this.throwIn ??= new TypeError("Task got a Future attached to a different loop");
    else if (this.throwIn === null) {
      this.waitingOn = yielded;
      yielded.addDoneCallback(this.wakeUp);
      return;
    }
    this.loop.callSoon(this.step); // A bad yield, or cancelled while running: throw in at this yield.
  };

  /** The coroutine has ended: say so on the loop channel, and leave the loop's pending Tasks. */
  private ended(): void {
    if (loopChannel.hasSubscribers) loopChannel.publish({ type: "step", loop: this.loop.id, task: this.id, coroutine: this.label, yielded: null });
    this.loop.tasks.remove(this.slot, this);
  }
}

/**
 * Pauses the calling coroutine for `seconds`, letting every other Task run
 * meanwhile. It makes a Future, asks the loop to resolve it when the time is
 * up, and waits on it; if the Task is cancelled while it sleeps, the
 * `finally` cancels the timer, so nothing is left scheduled.
 *
 * @remarks Brett Cannon's essay's `sleep` yields the wake-up time itself to a
 * loop that only knows timers; this one waits on a Future like every other
 * coroutine here, as `asyncio.sleep` does. Seconds, like Python; the loop's
 * own clock counts milliseconds. `sleep(0)` sets no timer: it only lets every
 * other ready callback run once.
 * @see Brett Cannon, "How the heck does async/await work in Python 3.5?"; asyncio `sleep`
 */
export function* sleep(seconds: number): Coroutine<void> {
  const loop = getRunningLoop();
  const wakeUp = new Future<void>(loop, "sleep");
  // sleep(0) is asyncio's bare `yield`: no timer, and a Future already done wakes the Task on the next iteration.
  if (seconds <= 0) wakeUp.setResult(undefined);
  const timer = seconds <= 0 ? null : loop.callLater(seconds * 1000, function timeIsUp() { wakeUp.setResult(undefined); });
  try {
    yield wakeUp; // A bare yield: `yield* wakeUp` would not pause at all for sleep(0), whose Future is already done.
  } finally {
    timer?.cancel(); // Cancelled while asleep: leave no timer behind.
  }
}

/**
 * Runs each coroutine in a Task of its own, all at once, and returns their
 * results in the order given. One Future, `all`, counts the Tasks down: each
 * Task's done callback either fails it with the first error or, at the last
 * result, resolves it.
 *
 * @throws the first error any of them throws. Then, or if the caller is
 * cancelled, the Tasks still running are cancelled and waited for before
 * `gather` throws, so none is left running.
 * @remarks asyncio's `gather` leaves the other Tasks running after a failure;
 * cancelling them is what asyncio's newer `TaskGroup` does, and it keeps a
 * crawl from leaking sockets.
 * @see asyncio `gather` and `TaskGroup` (Lib/asyncio/taskgroups.py)
 */
export function* gather<T extends unknown[]>(...coros: { [K in keyof T]: Coroutine<T[K]> }): Coroutine<T> {
  const loop = getRunningLoop();
  const tasks = coros.map((coro) => new Task<unknown>(coro, loop, "gathered"));
  const all = new Future<void>(loop, "gather");
  let pending = tasks.length;
  function childDone(task: Future<unknown>): void {
    if (all.done()) return;
    const error = task.cancelled() ? new CancelledError() : task.exception();
    if (error !== null) all.setException(error); // The first failure (or cancellation) decides.
    else if (--pending === 0) all.setResult(undefined);
  }
  for (const task of tasks) task.addDoneCallback(childDone);
  if (pending === 0) all.setResult(undefined);
  try {
    yield* all;
    return tasks.map((task) => task.result()) as T; // The one cast: result i is what coros[i], a Coroutine<T[i]>, returned.
  } finally {
    yield* cancelAndWait(tasks); // On a failure, or when we are cancelled: none of them is left running.
  }
}

/**
 * Runs `coro` in a Task of its own and returns its result, unless
 * `timeoutMs` milliseconds pass first: then that Task is cancelled (its
 * `finally` blocks close what it opened) and `waitFor` throws. Whatever ends
 * it (a result, an error, the timeout, or the caller being cancelled),
 * `waitFor` does not return before the inner Task is done and its timer is
 * cancelled, so it leaves nothing running behind.
 *
 * @throws {@link shared!FetchFailure} of kind `Timeout` when the time is up (the
 * record's error name; JavaScript has no built-in `TimeoutError` class).
 * @throws whatever `coro` throws. A Timeout is only ever the inner Task's own
 * cancellation: if our Task is cancelled, even in the same turn as the timer
 * fires, `waitFor` ends cancelled (see {@link waitDone}), so a crawl that is
 * stopped does not mistake the stop for a timeout and retry.
 * @remarks asyncio `wait_for` raises `TimeoutError` and, like this one, waits
 * for the cancelled Task to finish; it tells the two cancellations apart by
 * counting cancel requests (`Task.cancelling()`/`uncancel()`), we by where the
 * CancelledError is thrown.
 * @see asyncio `wait_for`
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
    if (!inner.done()) yield inner; // waitDone(inner), one generator less: only a cancel of our own Task is thrown in here.
  } finally {
    // Then take the inner Task down and wait until it is: we end cancelled, not timed out.
    timer.cancel();
    if (!inner.done()) yield* cancelAndWait([inner]); // Done already on a result or an error: nothing to wait for.
  }
  // The inner Task ended cancelled, and only our timer cancels it.
  if (timedOut && inner.cancelled()) throw new FetchFailure("Timeout", `No result after ${timeoutMs} ms`);
  return inner.result(); // Its value, or what its coroutine threw.
}

/**
 * Pauses until `future` is done, and returns without reading its result, so
 * its error (a CancelledError included) is not thrown here. Anything thrown
 * out of `waitDone` was therefore thrown into the caller's own Task at its
 * `yield`: a {@link shared!CancelledError} here always means the caller itself
 * was cancelled. `waitFor` and `gather` rely on this to tell their own
 * cancellation from that of the Tasks they started.
 *
 * @remarks A bare `yield`, like `sleep()`'s: `yield* future` would call
 * `future.result()`, which must not happen here. asyncio's `wait([task])`
 * likewise waits without raising the task's exception.
 * @see asyncio `wait`
 */
export function* waitDone(future: Future<unknown>): Coroutine<void> {
  if (!future.done()) yield future; // Resumed when it is done; a cancel of our Task is thrown in here.
}

/**
 * Cancels each of `tasks` and waits until all of them are done, whatever
 * their outcomes, so none is left running behind the caller. If the caller's
 * own Task is cancelled while it waits here, the wait goes on (returning
 * early would leave a Task running) and the {@link shared!CancelledError} is
 * thrown once all are done, so that cancellation is not lost either.
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
