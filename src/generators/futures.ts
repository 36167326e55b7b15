/** futures.ts ↔ Lib/asyncio/futures.py: the Future, a result that is not there yet,
 * and the `Coroutine` type of the generators that wait on Futures.
 *
 * @module
 */
import { CancelledError, InvalidStateError } from "../kernel/errors.js";
import { loopChannel } from "../observe/channels.js";
import { runningLoopOrNull } from "./events.js";
import type { EventLoop } from "./event-loop.js";

/**
 * A generator-based coroutine: it yields Futures to the {@link Task} that
 * drives it and returns `T`. `const x = yield* coroutine` runs it to its end
 * and evaluates to `T`.
 *
 * @remarks The third parameter, what `next()` sends in, is `undefined`: the
 * Task resumes a coroutine with a bare `next()`, and a Future's own iterator
 * reads the Future's result (see {@link Future}).
 */
export type Coroutine<T> = Generator<Future<unknown>, T, undefined>;

/** A Future's state, as asyncio names them. */
export type FutureState = "pending" | "finished" | "cancelled";

/** Futures made so far in this process: each gets the next number, for debugging and traces. */
let futureCount = 0;

/** The done callbacks of every Future that has none: one shared array, since a Future only ever replaces its list. */
const NO_CALLBACKS: ReadonlyArray<never> = Object.freeze([]);

/**
 * A result that will exist later. A coroutine waits for one with
 * `const value = yield* future`; whoever has the answer calls
 * {@link Future.setResult} (or {@link Future.setException}), and the Future
 * runs its done callbacks, one of which resumes the waiting {@link Task}.
 *
 * A Future starts `pending` and ends once, `finished` (with a value or an
 * exception) or `cancelled`. Its done callbacks are not called in the middle of
 * `setResult`: they are handed to the event loop with `callSoon`, as asyncio
 * does, so whoever resolves a Future is never re-entered by the code that
 * waited for it, and each callback starts on a clean stack, inside a loop
 * iteration. A Future made outside any loop (in a notebook, say) takes the
 * loop of the first Task that waits on it, so it may be resolved from a plain
 * Node timer or socket listener and the Task still steps inside its loop.
 * Only a Future that no loop ever reached calls its callbacks at once: there
 * is no loop to hand them to.
 *
 * @remarks The chapter's Future has a public `result` field and calls its
 * callbacks inside `set_result`; this one is closer to asyncio's `Future`:
 * states, `InvalidStateError`, cancellation, and callbacks through the loop.
 * The value lives in the field `value`, the method is `result()`. The
 * callbacks are stored as `(f: Future<unknown>) => void`, so a
 * `Future<number>` is still a `Future<unknown>` to TypeScript: storing
 * `(f: Future<T>) => void` would make `Future<T>` invariant and `yield this`
 * would not type-check (`addDoneCallback` says why its cast is sound).
 * @see Chapter, "Building Coroutines With Generators"; asyncio `Future`
 */
export class Future<T> {
  /** A number for this Future, unique in the process (shown in traces). */
  readonly id = ++futureCount;
  private state: FutureState = "pending";
  private value: T | undefined = undefined;
  private error: unknown = undefined;
  private failed = false;
  /** The done callbacks, in the order they were added (asyncio's `_callbacks`). */
  private callbacks: ReadonlyArray<(future: Future<unknown>) => void> = NO_CALLBACKS;
  /** The loop that runs the done callbacks (declared last, so `console.log` shows the state first). */
  protected loop: EventLoop | null;

  /**
   * @param loop - The loop that will run the done callbacks. By default the
   * loop running now, if any; with none, the first Task that waits on the
   * Future lends it its loop (see {@link Future.attachLoop}).
   * @param label - What the Future stands for (`"read"`, `"sleep"`, …), for debugging and traces.
   */
  constructor(loop: EventLoop | null = runningLoopOrNull(), readonly label = "future") {
    this.loop = loop;
  }

  /** The loop that runs this Future's done callbacks, or null if none has yet (asyncio `get_loop()`). */
  getLoop(): EventLoop | null { return this.loop; }

  /**
   * Lends the Future a loop if it has none: a {@link Task} calls this on each
   * Future its coroutine waits on, so callbacks always run in a loop iteration.
   *
   * @returns false if the Future already belongs to another loop.
   */
  attachLoop(loop: EventLoop): boolean {
    this.loop ??= loop;
    return this.loop === loop;
  }

  /** True once the Future has a result, an exception, or was cancelled. */
  done(): boolean { return this.state !== "pending"; }

  /** True if the Future was cancelled. */
  cancelled(): boolean { return this.state === "cancelled"; }

  /**
   * The result.
   *
   * @throws the Future's exception, if it has one.
   * @throws {@link shared!CancelledError} if it was cancelled.
   * @throws {@link shared!InvalidStateError} if it is still pending.
   */
  result(): T {
    const error = this.exception(); // Throws while pending, or once cancelled.
    if (this.failed) throw error;
    return this.value as T; // A cast: "finished" without failure means setResult stored a T.
  }

  /**
   * The exception the Future failed with, or null if it has a result.
   *
   * @throws {@link shared!CancelledError} if it was cancelled.
   * @throws {@link shared!InvalidStateError} if it is still pending.
   */
  exception(): unknown {
    if (this.state === "pending") throw new InvalidStateError("The Future is pending: it has no result or exception yet");
    if (this.state === "cancelled") throw new CancelledError();
    return this.failed ? this.error : null;
  }

  /**
   * Resolves the Future with `value` and schedules its done callbacks.
   *
   * @throws {@link shared!InvalidStateError} if the Future is already done.
   */
  setResult(value: T): void {
    if (this.done()) throw new InvalidStateError(`setResult() on a Future that is already ${this.state}`);
    this.value = value;
    this.finish("finished");
  }

  /**
   * Fails the Future with `error`: `result()` and `yield*` will throw it.
   *
   * @throws {@link shared!InvalidStateError} if the Future is already done.
   */
  setException(error: unknown): void {
    if (this.done()) throw new InvalidStateError(`setException() on a Future that is already ${this.state}`);
    this.error = error;
    this.failed = true;
    this.finish("finished");
  }

  /**
   * Cancels the Future if it is pending and schedules its done callbacks; a
   * coroutine waiting on it gets a {@link shared!CancelledError} at its `yield*`.
   *
   * @returns false if the Future was already done, else true.
   */
  cancel(): boolean {
    if (this.state !== "pending") return false;
    this.finish("cancelled");
    return true;
  }

  /**
   * Calls `fn(this)` when the Future is done. A callback added after that
   * still runs (scheduled at once), so nobody can miss the moment.
   *
   * It replaces the list with a new one, one callback longer, and never
   * pushes onto it: every Future with no callback shares one frozen empty
   * array (`NO_CALLBACKS`), and a new list of the exact length is smaller
   * than a pushed-onto one (most Futures get one callback, and a push
   * reserves room for 16).
   */
  addDoneCallback(fn: (future: Future<T>) => void): void {
    const callback = fn as (future: Future<unknown>) => void; // A sound cast: it is only ever called with this Future.
    if (this.state !== "pending") return this.schedule(callback);
    // A new list of the exact length (most Futures get one callback), where a push would reserve room for 16.
    this.callbacks = this.callbacks.length === 0 ? [callback] : [...this.callbacks, callback];
  }

  /**
   * Forgets every registration of `fn` that has not been scheduled yet.
   *
   * @returns how many were removed.
   */
  removeDoneCallback(fn: (future: Future<T>) => void): number {
    const before = this.callbacks.length;
    this.callbacks = this.callbacks.filter((callback) => callback !== fn);
    return before - this.callbacks.length;
  }

  /**
   * Waits for the Future inside a coroutine: `const x = yield* future` pauses
   * the coroutine's Task until the Future is done, then evaluates to its result
   * (or throws its exception right there, inside the coroutine).
   *
   * @remarks The chapter's `__iter__` yields the Future and returns what the
   * Task sends back in; here the Task resumes with a bare `next()` and the
   * iterator fetches the result itself, as modern asyncio's `__await__` does.
   * A Future that is already done does not pause at all (the chapter's
   * footnote on what its sketch lacks).
   * @see Chapter, "Factoring Coroutines With yield from"
   */
  *[Symbol.iterator](): Coroutine<T> {
    if (this.state === "pending") yield this; // Tell the Task to resume us when this Future is done.
    return this.result(); // Throws here, inside the coroutine, if it failed.
  }

  /**
   * Makes the Future a thenable, so native `await future` works too: the
   * JavaScript counterpart of Python's `__await__`, which lets `await` accept
   * an object that is not a coroutine.
   *
   * This is the bridge out of stage 2, not part of it: no code in
   * `src/generators/` awaits a Future, and `crawl()` in `index.ts` uses it once
   * to hand its result to a Promise-based caller. A pending Future settles the
   * Promise only if its loop keeps running.
   *
   * @see Brett Cannon, "How the heck does async/await work in Python 3.5?"
   */
  // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, so that native `await` accepts a Future (see above).
  then<R1 = T, R2 = never>(onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null, onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    const future = this;
    return new Promise<T>(function bridge(resolve, reject) {
      function settle(): void {
        try {
          resolve(future.result());
        } catch (error) {
          reject(error);
        }
      }
      // Done already: settle now, even if the loop has stopped.
      if (future.done()) settle();
      else future.addDoneCallback(settle);
    }).then(onFulfilled, onRejected);
  }

  /**
   * Ends the Future in `state` and hands each of its done callbacks to
   * `schedule`: what `setResult`, `setException` and `cancel()` share once
   * they have checked that the Future is still pending. The list is emptied
   * first, so a callback added from now on is scheduled at once by
   * `addDoneCallback` instead.
   *
   * @remarks Protected so that the reference shows it. It does not check the
   * state: call it only on a pending Future, as the three public methods do.
   * @see asyncio `Future.__schedule_callbacks`; docs/guide-generators.md, "1. Future"
   */
  protected finish(state: FutureState): void {
    this.state = state;
    if (loopChannel.hasSubscribers && this.loop !== null && state === "finished") loopChannel.publish({ type: "resolve", loop: this.loop.id, future: this.id, label: this.label });
    const callbacks = this.callbacks;
    this.callbacks = NO_CALLBACKS;
    for (const fn of callbacks) this.schedule(fn);
  }

  /**
   * Runs one done callback the asyncio way: not now, inside `setResult`, but
   * in the loop's next iteration (`loop.callSoon`). Whoever resolves the
   * Future therefore returns before any waiting coroutine resumes, and each
   * callback (a Task's `wakeUp`, most often) starts on a clean stack inside
   * the loop. Only a Future that no loop has reached yet calls the callback
   * at once: there is nothing to hand it to.
   *
   * This is why a breakpoint in `setResult` does not see the waiting Task
   * resume: put a second one in the Task's `wakeUp`, and it stops in the
   * next iteration (docs/debugging.md, "Stage 2: generators").
   *
   * @remarks The chapter's Future calls its callbacks inside `set_result`.
   * @see asyncio `Future.__schedule_callbacks` and `loop.call_soon`; docs/guide-generators.md, "1. Future"
   */
  protected schedule(fn: (future: Future<unknown>) => void): void {
    const future = this;
    if (this.loop === null) fn(future);
    else this.loop.callSoon(function runDoneCallback() { fn(future); });
  }
}

/**
 * asyncio's `wrap_future`: a Future of ours for a result that comes from
 * outside the loop, through a `whenSettled` callback (src/crawl/page-context.ts's
 * `PendingHook`, an `onPage` hook's promise): the Future takes the result
 * when it comes, and the Task waiting on it resumes in its loop. Cancelled
 * first (its Task was), it ignores the result.
 */
export function wrapFuture<T>(source: { whenSettled(callback: (value: T) => void): unknown }): Future<T> {
  const future = new Future<T>();
  source.whenSettled(function copyResult(value) { if (!future.done()) future.setResult(value); });
  return future;
}
