/**
 * The stage 1 event loop: select, dispatch the ready sockets' callbacks, run
 * the due timers, again and again.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import { InvalidStateError } from "../kernel/errors.js";
import { Selector, type SelectorKey } from "../kernel/selector.js";
import { fileno } from "../kernel/socket.js";
import { TimerHandle, TimerHeap } from "../kernel/timers.js";
import { loopChannel, nextLoopId } from "../observe/channels.js";

/**
 * What a socket's key carries: the callback to call when the socket is ready,
 * as in the chapter, where `event_key.data` is the callback.
 */
export type IoCallback = (key: SelectorKey<IoCallback>, mask: number) => void;

/**
 * Where an exception that escaped a callback came from: the ready key whose
 * callback threw, or the timer whose callback threw.
 */
export type ExceptionSource = SelectorKey<IoCallback> | TimerHandle;

/**
 * The loop of the chapter's callback stage: it asks the {@link Selector}
 * which sockets are ready and calls the callback registered for each, and
 * runs the {@link TimerHandle timers} set with {@link EventLoop.callLater}.
 * Nothing in a callback is interrupted: a callback runs to its end before the
 * loop takes the next one.
 *
 * One iteration (`runOnce`, asyncio's `_run_once`) selects, dispatches, then
 * runs every timer that is due. JavaScript cannot block in `select()`, so each
 * iteration runs as its own Node macrotask (`setImmediate`): the next one is
 * scheduled at once while sockets are still ready (the selector is
 * level-triggered), and otherwise the loop sleeps in Node's own loop until the
 * selector's wakeup (a socket event) or a `setTimeout` for the earliest timer.
 * While it sleeps, nothing of ours is on the JavaScript stack.
 *
 * An exception thrown by a callback goes to the exception handler, if one is
 * set ({@link EventLoop.setExceptionHandler}, asyncio's
 * `set_exception_handler`). A Fetcher lets none escape: it ends its attempt
 * instead, as asyncio's transports do. With no handler it escapes the iteration, into Node,
 * as an uncaught exception: its stack trace starts at the loop, not at the
 * code that started the fetch. That is stack ripping, shown in example 05.
 *
 * Each select, dispatch and timer is published on `loopChannel` with the
 * loop's {@link EventLoop.id}, for whoever watches (`crawl --trace`).
 *
 * @remarks The chapter's loop is `while not stopped:` over module globals
 * (`selector`, `stopped`); here a run's state lives on one EventLoop, so tests
 * and notebooks can run many. `runForever` returns at once and calls
 * `onStopped` when the loop stops, because it cannot block.
 * @see Chapter, "The Traditional Approach: Callbacks" and "Programming With Callbacks"; asyncio `BaseEventLoop._run_once`
 */
export class EventLoop {
  /** Names this loop in its messages on `loopChannel`. */
  readonly id = nextLoopId();
  /** The selector every socket of this loop is registered with; each key's data is its callback. */
  readonly selector = new Selector<IoCallback>();
  private readonly timers = new TimerHeap();
  /** Numbers timers in the order they were set, so that ties run in that order. */
  private timerSequence = 0;
  private running = false;
  private stopping = false;
  /** True while an iteration runs: it plans the next one itself at its end. */
  private iterating = false;
  private onStopped: (() => void) | undefined;
  /** The next iteration, when one is scheduled as a macrotask. */
  private scheduled: NodeJS.Immediate | null = null;
  /** The `setTimeout` that wakes the sleeping loop for its earliest timer. */
  private sleepTimer: NodeJS.Timeout | null = null;
  private exceptionHandler: ((error: unknown, source: ExceptionSource) => void) | null = null;

  constructor() {
    const loop = this;
    this.selector.setWakeup(function wakeup(): void {
      if (loop.running) loop.schedule();
    });
  }

  /** Timers set and neither cancelled nor run yet. */
  get pendingTimers(): number { return this.timers.size; }

  /** Whether the loop is running (between `runForever` and the moment it stops). */
  isRunning(): boolean { return this.running; }

  /** The loop's clock, in milliseconds (`performance.now()`), on which its timers are set: asyncio's `loop.time()`, in ms. */
  time(): number { return performance.now(); }

  /**
   * Calls `callback` after `delayMs` milliseconds, from the loop. Timers due
   * at the same moment run in the order they were set; a negative delay is a
   * moment already past, so its timer runs before one set with `callLater(0)`,
   * as asyncio's `call_later` (`call_at(time() + delay)`) orders them.
   */
  callLater(delayMs: number, callback: () => void): TimerHandle {
    const timer = new TimerHandle(performance.now() + delayMs, this.timerSequence++, callback);
    this.timers.push(timer);
    // A sleeping loop must re-plan its sleep for the new timer; a running iteration plans at its end.
    if (this.running && !this.iterating) this.schedule();
    return timer;
  }

  /**
   * Sets the function that gets an exception a callback threw, with the key or
   * timer whose callback threw it; `null` lets such exceptions escape.
   */
  setExceptionHandler(handler: ((error: unknown, source: ExceptionSource) => void) | null): void {
    this.exceptionHandler = handler;
  }

  /**
   * Starts the loop and returns at once; the iterations run as Node
   * macrotasks until {@link stop} is called, then `onStopped` is called.
   *
   * @throws InvalidStateError if the loop is already running (Python: `RuntimeError`).
   */
  runForever(onStopped?: () => void): void {
    if (this.running) throw new InvalidStateError("This event loop is already running");
    this.running = true;
    this.stopping = false;
    this.onStopped = onStopped;
    this.schedule();
  }

  /**
   * Stops the loop at the end of an iteration: the one running now, or, if
   * the loop sleeps, one more that `stop()` schedules at once, which selects
   * (calling the callbacks of the sockets ready) and runs the timers due
   * before the loop stops, as asyncio's `stop()` lets `run_forever` finish
   * one more `_run_once`. Sockets and timers stay as they are: closing them
   * is their owners' job.
   */
  stop(): void {
    this.stopping = true;
    if (this.running) this.schedule();
  }

  /**
   * Plans the next iteration as soon as Node gets a turn: cancels the sleep
   * for the earliest timer, if any, and schedules `runOnce` with
   * `setImmediate`, once (a second call before it runs does nothing). The
   * selector's wakeup calls it when a socket event arrives while the loop
   * sleeps; `runOnce` calls it while sockets are still ready or a timer is
   * due.
   *
   * @remarks asyncio never needs this: its loop blocks in `select()` and
   * simply goes round. Protected so that the reference shows it.
   * @see docs/guide-callbacks.md, "2. The loop"
   */
  protected schedule(): void {
    if (this.scheduled !== null) return;
    if (this.sleepTimer !== null) clearTimeout(this.sleepTimer);
    this.sleepTimer = null;
    this.scheduled = setImmediate(this.runOnce);
  }

  /**
   * One iteration, run as its own Node macrotask: the body of the chapter's
   * `while not stopped:` loop.
   *
   * 1. Read the clock once, for the whole iteration.
   * 2. `selector.select(this.dispatch)`: the callback of each ready socket
   *    runs now, one after the other, through `dispatch`.
   * 3. Run every timer due by that clock (`runTimer`), earliest first.
   * 4. Plan the next iteration: if `stop()` was called, end the loop and
   *    call `onStopped`; if sockets were ready, schedule the next iteration
   *    at once (they may still be); otherwise sleep in Node until the
   *    earliest timer (`setTimeout`), if there is one, or until the
   *    selector's wakeup.
   *
   * Nothing in a callback is interrupted: the loop takes the next one only
   * when the last has returned. In a stack trace it is the bottom frame of
   * ours (`Immediate.runOnce`), under `select`, `dispatch` and the callback.
   *
   * @remarks Unlike stage 2's public `runOnce()`, this one is the loop's own
   * macrotask, not something to call by hand. asyncio's `_run_once` blocks
   * in `select()` with a timeout until the next timer; this one cannot
   * block, so it plans its successor instead. Protected so that the
   * reference shows it.
   * @see Chapter, "Programming With Callbacks" (the event loop); asyncio `BaseEventLoop._run_once`; docs/guide-callbacks.md, "2. The loop"
   */
  protected readonly runOnce = (): void => {
    this.scheduled = null;
    this.sleepTimer = null;
    this.iterating = true;
    let ready = 0;
    // The clock is read once per iteration, before any callback runs, as
    // asyncio's `_run_once` fixes `end_time`: a timer set by this iteration's
    // callbacks, even with callLater(0), waits for the next one, so timers
    // cannot starve the sockets.
    const now = performance.now();
    try {
      ready = this.selector.select(this.dispatch);
      if (loopChannel.hasSubscribers) loopChannel.publish({ type: "select", loop: this.id, ready });
      for (let timer = this.timers.popDue(now); timer !== undefined; timer = this.timers.popDue(now)) {
        this.runTimer(timer);
      }
    } finally {
      this.iterating = false;
    }
    if (this.stopping) {
      if (this.scheduled !== null) clearImmediate(this.scheduled); // Set by stop() during this iteration.
      this.scheduled = null;
      this.running = false;
      this.stopping = false;
      this.onStopped?.();
      return;
    }
    if (ready > 0) {
      this.schedule(); // Level-triggered: what was ready may still be.
      return;
    }
    const next = this.timers.peek();
    if (this.scheduled === null && next !== undefined) {
      const wait = next.when - performance.now();
      // Due already: the next iteration runs once Node has polled for I/O (setImmediate), as asyncio's select(0) polls;
      // a setTimeout(0) would run in Node's timers phase, before its poll.
      if (wait <= 0) return this.schedule();
      // Asleep: only the selector's wakeup or this timer runs the next iteration.
      // Node's longest setTimeout is 2^31 - 1 ms (about 24.8 days): a later timer wakes the loop early, and it sleeps again.
      this.sleepTimer = setTimeout(this.runOnce, Math.min(2 ** 31 - 1, wait));
    }
  };

  /**
   * Calls the callback registered for a ready key with the key and the
   * ready events: the chapter's `callback = event_key.data;
   * callback(event_key, event_mask)`. `runOnce` hands it to
   * `selector.select()`, which calls it once per ready socket.
   *
   * An exception the callback throws goes to the exception handler with the
   * key, or, with no handler set, straight out of the iteration into Node:
   * an uncaught exception whose stack starts at the loop (stack ripping).
   *
   * @remarks asyncio queues each ready handle and runs it after the select
   * (`_process_events`, then the ready queue); the chapter's loop, like this
   * one, calls it on the spot. Protected so that the reference shows it.
   * @see Chapter, "Programming With Callbacks"; docs/guide-callbacks.md, "2. The loop" and "4. Stack ripping (example 05)"
   */
  protected readonly dispatch = (key: SelectorKey<IoCallback>, mask: number): void => {
    if (loopChannel.hasSubscribers) loopChannel.publish({ type: "dispatch", loop: this.id, callback: key.data.name, fd: fileno(key.socket) });
    try {
      key.data(key, mask);
    } catch (error) {
      if (this.exceptionHandler === null) throw error; // Into Node, with a ripped stack: visible on purpose.
      this.exceptionHandler(error, key);
    }
  };

  /**
   * Runs one due timer's callback, published as a `timer` message. Its
   * exception goes to the exception handler with the timer, or, with no
   * handler set, out of the iteration into Node, as `dispatch` does.
   *
   * @remarks asyncio moves due `TimerHandle`s to its ready queue and runs
   * them with the other handles; here timers run after the sockets, in the
   * order of the heap. Protected so that the reference shows it.
   * @see asyncio `BaseEventLoop._run_once` (the `_scheduled` heap); docs/guide-callbacks.md, "2. The loop"
   */
  protected runTimer(timer: TimerHandle): void {
    if (loopChannel.hasSubscribers) loopChannel.publish({ type: "timer", loop: this.id, callback: timer.callback.name });
    try {
      timer.callback();
    } catch (error) {
      if (this.exceptionHandler === null) throw error;
      this.exceptionHandler(error, timer);
    }
  }

}
