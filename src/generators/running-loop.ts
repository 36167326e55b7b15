/**
 * Which {@link EventLoop} is iterating right now, so a coroutine such as
 * `sleep()` can reach it without being handed it.
 *
 * @module
 */
import type { EventLoop } from "./event-loop.js";

// Set only while an EventLoop runs one iteration (JS has one thread, so one
// slot is enough). The chapter used module-level globals for its loop and
// selector; this is the one global stage 2 keeps, as asyncio keeps
// `_running_loop`, and it is empty whenever no loop is iterating.
let runningLoop: EventLoop | null = null;

/**
 * The loop whose iteration is running now. Every coroutine step, timer and
 * I/O callback runs inside an iteration, so code in a coroutine always finds
 * its loop here.
 *
 * @throws Error when called outside a loop iteration.
 * @see asyncio `get_running_loop()` (Lib/asyncio/events.py)
 */
export function getRunningLoop(): EventLoop {
  if (runningLoop === null) {
    throw new Error("No running event loop: run this coroutine in a Task (loop.runUntilComplete(coro))");
  }
  return runningLoop;
}

/**
 * The loop whose iteration is running now, or null outside of one: the
 * default loop of a new Future or Task.
 *
 * @see asyncio `_get_running_loop()` (Lib/asyncio/events.py)
 */
export function runningLoopOrNull(): EventLoop | null {
  return runningLoop;
}

/**
 * Records the loop that starts (or, with null, ends) an iteration. Only
 * {@link EventLoop} calls this; it returns the previous value so nested
 * calls restore it.
 */
export function setRunningLoop(loop: EventLoop | null): EventLoop | null {
  const previous = runningLoop;
  runningLoop = loop;
  return previous;
}
