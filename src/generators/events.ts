/** events.ts ↔ Lib/asyncio/events.py: which loop is running, so a coroutine such as `sleep()`
 * finds its loop without being handed it.
 *
 * @remarks asyncio keeps `get_running_loop()` in events.py, apart from the loop itself; so do we,
 * and so futures.ts and tasks.ts need not import the loop, and the stage's modules form no circle
 * that breaks when one of them is imported first.
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
 * its loop here, without being handed it.
 *
 * @throws Error when called outside a loop iteration.
 * @see asyncio `get_running_loop()` (Lib/asyncio/events.py)
 */
export function getRunningLoop(): EventLoop {
  if (runningLoop === null) throw new Error("No running event loop: run this coroutine in a Task (loop.runUntilComplete(coro))");
  return runningLoop;
}

/**
 * The loop whose iteration is running now, or null outside of one: the
 * default loop of a new Future or Task.
 *
 * @see asyncio `_get_running_loop()` (Lib/asyncio/events.py)
 */
export function runningLoopOrNull(): EventLoop | null { return runningLoop; }

/**
 * Records the loop that starts an iteration (or, with the loop that ran
 * before it, usually null, ends one). Only {@link EventLoop} calls this.
 *
 * @see asyncio `_set_running_loop()` (Lib/asyncio/events.py)
 */
export function setRunningLoop(loop: EventLoop | null): void { runningLoop = loop; }
