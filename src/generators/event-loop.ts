/** event-loop.ts ↔ Lib/asyncio/base_events.py: stage 2's event loop (ready callbacks, a heap of
 * timers, the shared {@link shared!Selector} for socket readiness).
 *
 * @module
 */
import { InvalidStateError, reportCallbackError } from "../kernel/errors.js";
import { Slots } from "../crawl/slots.js";
import { Selector, type SelectorKey } from "../kernel/selector.js";
import { TimerHandle, TimerHeap } from "../kernel/timers.js";
import { loopChannel, nextLoopId } from "../observe/channels.js";
import { Future, type Coroutine } from "./futures.js";
import { Task } from "./tasks.js";
import { runningLoopOrNull, setRunningLoop } from "./events.js";

/**
 * Called with an exception a loop callback threw and that callback (asyncio
 * passes a `context` dict with `exception` and `handle`).
 */
export type ExceptionHandler = (error: unknown, callback: () => void) => void;


/**
 * Runs callbacks: the ones handed to {@link EventLoop.callSoon}, timers whose
 * moment has come, and the callbacks registered with {@link EventLoop.selector}
 * for sockets that became ready. Tasks and Futures are built on it: a Future
 * schedules its done callbacks here, and a Task's step is such a callback.
 *
 * One iteration ({@link EventLoop.runOnce}) asks the selector which sockets
 * are ready and queues their callbacks, queues the timers that are due, then
 * runs every callback that was ready when the iteration began. Callbacks they
 * schedule wait for the next iteration, so no callback can starve the others.
 * An exception thrown by a callback (a done callback, a timer, a socket's
 * callback) does not stop the loop: it goes to the exception handler, as in
 * asyncio, and the next callback runs. A Task's own coroutine never throws
 * here: its exception fails the Task.
 *
 * @remarks JavaScript cannot block its thread, so this loop cannot sit in
 * `select()` the way Python's does. {@link EventLoop.runForever} runs one
 * iteration per Node macrotask: `setImmediate` while callbacks are ready,
 * `setTimeout` until the next timer is due, and otherwise nothing until the
 * selector's wakeup (a socket event) or a `callSoon` from outside schedules
 * the next one. For the same reason {@link EventLoop.runUntilComplete}
 * cannot return the result: it starts the loop and returns the Task, a Future
 * that is done when the loop stops. The chapter's loop is a `while` around
 * `select`; asyncio's is `BaseEventLoop._run_once`. Times are milliseconds
 * (`performance.now()`), not asyncio's seconds.
 * @see Chapter, "Coordinating Coroutines" (the `run_until_complete` sketch)
 */
export class EventLoop {
  /** A number for this loop, unique in the process: the `loop` of its messages on the loop channel. */
  readonly id = nextLoopId();
  /** Sockets the coroutines wait on; each key's data is the callback to call when it is ready. */
  readonly selector = new Selector<() => void>();
  /** Its Tasks not done yet (asyncio keeps them in a WeakSet; src/crawl/slots.ts says why these are slots): see `allTasks()`. */
  readonly tasks = new Slots<Future<unknown>>();
  private ready: Array<() => void> = [];
  private readonly timers = new TimerHeap();
  private timerSequence = 0;
  private running = false;
  private stopping = false;
  private iterating = false;
  private closed = false;
  /** The Node macrotask that will run the next iteration, when one is scheduled. */
  private nextImmediate: NodeJS.Immediate | undefined = undefined;
  private nextTimeout: NodeJS.Timeout | undefined = undefined;
  private exceptionHandler: ExceptionHandler | null = null;

  /** The loop's clock, in milliseconds: monotonic, unlike `Date.now()`. */
  time(): number { return performance.now(); }

  /** Whether {@link EventLoop.runForever} is driving the loop. */
  isRunning(): boolean { return this.running; }

  /** Whether {@link EventLoop.close} was called. */
  isClosed(): boolean { return this.closed; }

  /** How many timers are scheduled and not yet run or cancelled. */
  get timerCount(): number { return this.timers.size; }

  /**
   * Sets what is called with an exception a callback threw, and the callback
   * (asyncio `set_exception_handler`); `null` restores the default handler,
   * which prints it with `console.error`, as asyncio's default handler logs
   * it. Either way the loop goes on with the next callback.
   */
  setExceptionHandler(handler: ExceptionHandler | null): void { this.exceptionHandler = handler; }

  /**
   * Reports an exception that no coroutine can catch: one thrown by a
   * callback the loop ran (asyncio `call_exception_handler`). A handler that
   * throws itself is reported by the default handler.
   */
  callExceptionHandler(error: unknown, callback: () => void): void { reportCallbackError(this.exceptionHandler, error, callback); }

  /** Runs `callback` in the next iteration, after the ones already scheduled (first in, first out). */
  callSoon(callback: () => void): void {
    this.ready.push(callback);
    if (!this.iterating) this.wake(); // During an iteration, its end schedules the next one.
  }

  /**
   * Runs `callback` once `delayMs` milliseconds have passed; timers due at the
   * same moment run in the order they were scheduled. A negative delay is a
   * moment already past, so its timer runs before one set with `callLater(0)`,
   * as with asyncio's `call_later`, which is `call_at(time() + delay)`.
   *
   * @returns a handle whose `cancel()` removes the timer.
   */
  callLater(delayMs: number, callback: () => void): TimerHandle {
    const handle = new TimerHandle(this.time() + delayMs, this.timerSequence++, callback);
    this.timers.push(handle);
    if (!this.iterating) this.wake(); // The next iteration decides how long to sleep.
    return handle;
  }

  /**
   * Runs one iteration now, without waiting: ready sockets and due timers
   * queue their callbacks, then the callbacks that were ready when the
   * iteration began run. For notebooks, debuggers and tests that step the
   * loop by hand; between two calls Node must get a turn (an `await`) for
   * socket events to arrive.
   *
   * @throws {@link shared!InvalidStateError} if `runForever()` is driving the loop,
   * or an iteration is already running. A callback's exception is not thrown
   * here: it goes to the exception handler.
   */
  runOnce(): void {
    if (this.running) throw new InvalidStateError("runOnce() while runForever() is driving the loop");
    this.iterate();
  }

  /**
   * Starts running iterations, one per Node macrotask, until
   * {@link EventLoop.stop} is called. Returns at once: JavaScript cannot block.
   *
   * @throws {@link shared!InvalidStateError} if the loop is already running or closed.
   */
  runForever(): void {
    if (this.closed) throw new InvalidStateError("The event loop is closed");
    if (this.running) throw new InvalidStateError("The event loop is already running");
    this.running = true;
    this.stopping = false;
    this.selector.setWakeup(this.wake);
    this.wake();
  }

  /**
   * Wraps `work` in a {@link Task} (a Future is taken as it is), runs the loop
   * until it is done, and returns it.
   *
   * @remarks Python's `run_until_complete` blocks and returns the result; this
   * one returns the Task at once and the loop keeps turning in Node
   * macrotasks. Read the result when the Task is done: from another coroutine
   * with `yield* task`, or from `async` code with `await task` (a Future is a
   * thenable).
   * @example
   * ```ts
   * const loop = new EventLoop();
   * const task = loop.runUntilComplete(countdown("A", 3));
   * await task; // the only await: the bridge from our loop to Node's
   * ```
   */
  runUntilComplete<T>(work: Coroutine<T> | Future<T>): Future<T> {
    const future = work instanceof Future ? work : new Task(work, this);
    future.addDoneCallback(this.stopWhenDone);
    this.runForever();
    return future;
  }

  /**
   * Asks `runForever()` to return after the iteration in progress, or, if
   * none is (the loop sleeps), after one more that `stop()` schedules at
   * once: it selects and runs the callbacks ready and the timers due, as
   * asyncio's `stop()` lets `run_forever` finish one more `_run_once`.
   */
  stop(): void {
    this.stopping = true;
    if (!this.iterating) this.wake();
  }

  /**
   * Drops every callback and timer and closes the selector. Closing sockets is
   * their owners' job, as it is in Python.
   *
   * @throws {@link shared!InvalidStateError} while the loop is running.
   */
  close(): void {
    if (this.running) throw new InvalidStateError("Cannot close a running event loop");
    this.closed = true;
    this.ready = [];
    this.timers.clear();
    this.selector.close();
  }

  /** The done callback `runUntilComplete` adds: the chapter's `stop_callback`, without an exception. */
  private readonly stopWhenDone = (): void => this.stop();

  /**
   * Queues the callback of a ready socket: the function the loop hands to
   * `selector.select()`, which calls it once per ready key. The callback (a
   * coroutine's `onReadable`, say, which resolves the Future its Task waits
   * on) does not run here but with the other ready callbacks of the same
   * iteration, in order.
   *
   * @remarks Protected so that the reference shows it.
   * @see asyncio `BaseSelectorEventLoop._process_events`, which likewise only queues the ready handles; docs/guide-generators.md, "3. The loop"
   */
  protected readonly socketReady = (key: SelectorKey<() => void>): void => { this.ready.push(key.data); };

  /**
   * One iteration: the body of the chapter's `while True: events =
   * selector.select()` loop, and what `runOnce()` and each `turn` run.
   *
   * 1. `selector.select(this.socketReady)` queues the callback of each ready socket.
   * 2. Every timer due by now is queued, wrapped in a `runTimer` that skips
   *    it if an earlier callback of this iteration cancels it.
   * 3. The ready queue is swapped for an empty one and the batch runs in
   *    order. A callback's exception goes to the exception handler and the
   *    next callback runs; whatever the batch schedules (a Future's done
   *    callbacks, a Task's next step) waits for the next iteration.
   *
   * While it runs, this loop is the running loop (`getRunningLoop()`), so
   * Futures and Tasks made by the callbacks find it.
   *
   * @throws {@link shared!InvalidStateError} if an iteration is already running or the loop is closed.
   * @remarks Protected so that the reference shows it; call `runOnce()` to
   * step the loop by hand.
   * @see asyncio `BaseEventLoop._run_once`; docs/guide-generators.md, "3. The loop"; docs/debugging.md, "Stepping the loop by hand"
   */
  protected iterate(): void {
    if (this.iterating) throw new InvalidStateError("An iteration of this loop is already running");
    if (this.closed) throw new InvalidStateError("The event loop is closed");
    this.iterating = true;
    const previousLoop = runningLoopOrNull(); // Another loop's, when one loop's callback steps another loop.
    setRunningLoop(this);
    try {
      this.selector.select(this.socketReady);
      const now = this.time();
      for (let timer = this.timers.popDue(now); timer !== undefined; timer = this.timers.popDue(now)) {
        if (loopChannel.hasSubscribers) loopChannel.publish({ type: "timer", loop: this.id, callback: timer.callback.name });
        this.ready.push(function runTimer(): void {
          if (!timer.cancelled()) timer.callback(); // An earlier callback of this iteration may cancel a due timer.
        });
      }
      // Run only what is ready now; what these callbacks schedule waits a turn.
      const batch = this.ready;
      this.ready = [];
      for (const callback of batch) {
        try {
          callback();
        } catch (error) {
          this.callExceptionHandler(error, callback); // Report it and go on: one bug stops no other Task.
        }
      }
    } finally {
      setRunningLoop(previousLoop);
      this.iterating = false;
    }
  }

  /**
   * Runs one iteration from a Node macrotask, then schedules the next: at
   * once if callbacks are ready, at the next timer if one is scheduled,
   * otherwise not at all: a socket event (through the selector's wakeup) or
   * a `callSoon` will. When `stop()` was called, it ends `runForever`
   * instead. In a stack trace it is the frame under `iterate`
   * (`Immediate.turn`).
   *
   * @remarks This is the part of asyncio's `run_forever` that JavaScript
   * forces apart: asyncio loops `while True: _run_once()` and blocks in
   * `select()` between iterations; this loop cannot block, so each iteration
   * plans the next one as a macrotask and returns to Node. Protected so that
   * the reference shows it.
   * @see asyncio `BaseEventLoop.run_forever`; docs/guide-generators.md, "3. The loop"; docs/debugging.md, "Who called this? The stack starts at the loop"
   */
  protected readonly turn = (): void => {
    this.nextImmediate = this.nextTimeout = undefined;
    this.iterate();
    if (this.stopping) {
      clearImmediate(this.nextImmediate); // A socket event may have woken us during the iteration.
      this.nextImmediate = undefined;
      this.running = this.stopping = false;
      return this.selector.setWakeup(null);
    }
    if (this.ready.length > 0) return this.wake();
    const next = this.timers.peek();
    if (next === undefined || this.nextImmediate !== undefined) return;
    const wait = next.when - this.time();
    if (wait <= 0) return this.wake(); // Due already: run once Node has polled (setImmediate), not in its timers phase before the poll.
    this.nextTimeout = setTimeout(this.turn, Math.min(2 ** 31 - 1, wait)); // setTimeout's longest wait
  };

  /**
   * Makes the next iteration run as soon as Node gets a turn, if
   * `runForever` drives the loop: it cancels the sleep for the next timer
   * and schedules `turn` with `setImmediate`. The selector calls it when a
   * socket event arrives (its wakeup); `runForever`, and `callSoon`,
   * `callLater` or `stop()` called between iterations, call it too, and so
   * does `turn` when callbacks are ready.
   *
   * @remarks asyncio's `_write_to_self` wakes a loop blocked in `select()`
   * by writing a byte to its self-pipe; here the loop is not blocked, only
   * not scheduled, so waking it means scheduling a macrotask. Protected so
   * that the reference shows it.
   * @see docs/guide-generators.md, "3. The loop"
   */
  protected readonly wake = (): void => {
    if (!this.running || this.nextImmediate !== undefined) return;
    clearTimeout(this.nextTimeout);
    this.nextTimeout = undefined;
    this.nextImmediate = setImmediate(this.turn);
  };
}
