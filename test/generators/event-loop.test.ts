import { describe, expect, it, vi } from "vitest";
import { InvalidStateError } from "../../src/kernel/errors.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import { getRunningLoop, runningLoopOrNull } from "../../src/generators/events.js";
import { Future, type Coroutine } from "../../src/generators/futures.js";
import { Task } from "../../src/generators/tasks.js";
import type { TimerHandle } from "../../src/kernel/timers.js";
import { onLoopMessage } from "./messages.js";

/**
 * Gives `loop` a clock that moves only when the test advances it, so a test
 * counts iterations instead of waiting (asyncio test_utils.TestLoop's
 * `advance_time`).
 */
function manualClock(loop: EventLoop): { advance(ms: number): void } {
  let now = 1000;
  vi.spyOn(loop, "time").mockImplementation(function manualTime() {
    return now;
  });
  return {
    advance(ms: number): void {
      now += ms;
    },
  };
}

describe("EventLoop", () => {
  it("runs callSoon callbacks first in, first out", () => {
    const loop = new EventLoop();
    const order: number[] = [];
    for (const n of [1, 2, 3]) {
      loop.callSoon(function record() {
        order.push(n);
      });
    }
    loop.runOnce();
    expect(order).toEqual([1, 2, 3]);
    loop.close();
  });

  it("runs a callback scheduled during an iteration in the next one", () => {
    const loop = new EventLoop();
    const order: string[] = [];
    loop.callSoon(function outer() {
      order.push("outer");
      loop.callSoon(function inner() {
        order.push("inner");
      });
    });
    loop.runOnce();
    expect(order).toEqual(["outer"]);
    loop.runOnce();
    expect(order).toEqual(["outer", "inner"]);
    loop.close();
  });

  it("is the running loop only during an iteration", () => {
    const loop = new EventLoop();
    const seen: Array<EventLoop | null> = [];
    loop.callSoon(function look() {
      seen.push(getRunningLoop());
    });
    expect(runningLoopOrNull()).toBeNull();
    expect(() => getRunningLoop()).toThrow(/No running event loop/);
    loop.runOnce();
    expect(seen).toEqual([loop]);
    expect(runningLoopOrNull()).toBeNull();
    loop.close();
  });

  it("reports a callback that throws to its exception handler and runs the others", () => {
    const loop = new EventLoop();
    const reported: Array<[unknown, string]> = [];
    loop.setExceptionHandler(function collect(error, callback) {
      reported.push([error, callback.name]);
    });
    let after = 0;
    const error = new Error("callback bug");
    loop.callSoon(function broken() {
      throw error;
    });
    loop.callSoon(function fine() {
      after += 1;
    });
    expect(() => loop.runOnce()).not.toThrow();
    expect(after).toBe(1);
    expect(reported).toEqual([[error, "broken"]]);
    loop.close();
  });

  it("keeps running its Tasks after a done callback throws", async () => {
    const loop = new EventLoop();
    const spy = vi.spyOn(console, "error").mockImplementation(function quiet() {});
    const first = new Future<number>(loop);
    first.addDoneCallback(function buggy() {
      throw new Error("done-callback bug");
    });
    function* main(): Coroutine<number> {
      loop.callLater(1, function resolveFirst() {
        first.setResult(1);
      });
      const a = yield* first;
      const second = new Future<number>(loop);
      loop.callLater(1, function resolveSecond() {
        second.setResult(2);
      });
      return a + (yield* second);
    }
    try {
      expect(await loop.runUntilComplete(main())).toBe(3);
      // The default handler reports it, as asyncio's logs it.
      expect(spy).toHaveBeenCalledWith(expect.stringContaining("Exception in callback"), expect.objectContaining({ message: "done-callback bug" }));
    } finally {
      spy.mockRestore();
    }
    loop.close();
  });

  it("runs timers in order of their moment, ties in scheduling order", () => {
    const loop = new EventLoop();
    const clock = manualClock(loop);
    const order: string[] = [];
    function record(label: string): () => void {
      return function fire() {
        order.push(label);
      };
    }
    loop.callLater(20, record("20ms"));
    loop.callLater(0, record("0ms a"));
    loop.callLater(5, record("5ms"));
    loop.callLater(0, record("0ms b"));
    expect(loop.timerCount).toBe(4);
    loop.runOnce();
    expect(order).toEqual(["0ms a", "0ms b"]);
    clock.advance(4);
    loop.runOnce(); // nothing is due yet
    expect(order).toEqual(["0ms a", "0ms b"]);
    clock.advance(1);
    loop.runOnce();
    expect(order).toEqual(["0ms a", "0ms b", "5ms"]);
    clock.advance(15);
    loop.runOnce();
    expect(order).toEqual(["0ms a", "0ms b", "5ms", "20ms"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("runs a timer set with a negative delay before one set earlier with callLater(0), as asyncio does", () => {
    const loop = new EventLoop();
    manualClock(loop);
    const order: string[] = [];
    loop.callLater(0, function zero() {
      order.push("zero");
    });
    loop.callLater(-1, function negative() {
      order.push("negative"); // asyncio's call_later is call_at(time() + delay): a moment before the other's
    });
    loop.runOnce();
    expect(order).toEqual(["negative", "zero"]);
    loop.close();
  });

  it("never runs a cancelled timer and stops counting it at once", async () => {
    const loop = new EventLoop();
    const fired: string[] = [];
    const finished = new Future<void>(loop);
    const cancelled = loop.callLater(1, function cancelledTimer() {
      fired.push("cancelled");
    });
    loop.callLater(10, function lastTimer() {
      fired.push("last");
      finished.setResult(undefined);
    });
    expect(cancelled.scheduled()).toBe(true);
    cancelled.cancel();
    cancelled.cancel(); // twice is harmless
    expect(cancelled.scheduled()).toBe(false);
    expect(loop.timerCount).toBe(1);
    await loop.runUntilComplete(finished);
    expect(fired).toEqual(["last"]);
    loop.close();
  });

  it("does not run a due timer that an earlier callback of the same iteration cancels", () => {
    const loop = new EventLoop();
    manualClock(loop);
    let ran = 0;
    const handles: TimerHandle[] = [];
    handles.push(
      loop.callLater(0, function cancelTheOther() {
        handles[1]?.cancel();
      }),
    );
    handles.push(
      loop.callLater(0, function cancelledMeanwhile() {
        ran += 1;
      }),
    );
    loop.runOnce(); // both are due: the clock has not moved
    expect(ran).toBe(0);
    loop.close();
  });

  it("steps a coroutine one iteration at a time with runOnce", () => {
    const loop = new EventLoop();
    const gates = [new Future<void>(loop), new Future<void>(loop), new Future<void>(loop)];
    let steps = 0;
    function* coro(): Coroutine<number> {
      for (const gate of gates) {
        steps += 1;
        yield* gate;
      }
      return steps;
    }
    const task = new Task(coro(), loop);
    loop.runOnce();
    expect(steps).toBe(1);
    gates[0]?.setResult(undefined);
    loop.runOnce();
    expect(steps).toBe(2);
    loop.runOnce(); // nothing ready: nothing happens
    expect(steps).toBe(2);
    gates[1]?.setResult(undefined);
    gates[2]?.setResult(undefined);
    loop.runOnce();
    loop.runOnce();
    expect(task.result()).toBe(3);
    loop.close();
  });

  it("runs a coroutine to its end in Node macrotasks and stops", async () => {
    const loop = new EventLoop();
    function* coro(): Coroutine<string> {
      const future = new Future<string>();
      loop.callLater(1, function resolveLater() {
        future.setResult("done");
      });
      return yield* future;
    }
    const task = loop.runUntilComplete(coro());
    expect(loop.isRunning()).toBe(true);
    expect(task.done()).toBe(false); // it cannot block: the Task comes back at once
    expect(await task).toBe("done");
    await new Promise(setImmediate);
    expect(loop.isRunning()).toBe(false);
    loop.close();
  });

  it("stops runForever after the iteration in progress", async () => {
    const loop = new EventLoop();
    let iterations = 0;
    const stopped = new Future<number>(null);
    function tick(): void {
      iterations += 1;
      if (iterations === 3) {
        loop.stop();
        loop.callSoon(function afterStop() {
          stopped.setResult(iterations);
        });
      } else {
        loop.callSoon(tick);
      }
    }
    loop.callSoon(tick);
    loop.runForever();
    await new Promise(setImmediate);
    await new Promise(setImmediate);
    await new Promise(setImmediate);
    await new Promise(setImmediate);
    expect(loop.isRunning()).toBe(false);
    expect(iterations).toBe(3);
    expect(stopped.done()).toBe(false); // scheduled for an iteration that did not happen
    loop.runOnce();
    expect(stopped.result()).toBe(3);
    loop.close();
  });

  it("refuses runOnce and a second runForever while runForever drives it", () => {
    const loop = new EventLoop();
    loop.runForever();
    expect(() => loop.runOnce()).toThrow(InvalidStateError);
    expect(() => loop.runForever()).toThrow(InvalidStateError);
    expect(() => loop.close()).toThrow(InvalidStateError);
    loop.stop();
    return new Promise<void>(function later(resolve) {
      setImmediate(function check() {
        expect(loop.isRunning()).toBe(false);
        loop.close();
        resolve();
      });
    });
  });

  it("drops its timers when closed and cannot run again", () => {
    const loop = new EventLoop();
    const handle = loop.callLater(1000, function never() {});
    loop.close();
    expect(loop.timerCount).toBe(0);
    expect(handle.scheduled()).toBe(false);
    expect(loop.isClosed()).toBe(true);
    expect(() => loop.runForever()).toThrow(InvalidStateError);
    expect(() => loop.runOnce()).toThrow(InvalidStateError);
  });

  it("publishes its timers, its Tasks' steps and its resolved Futures on the loop channel, with its id", async () => {
    const loop = new EventLoop();
    const types: string[] = [];
    const stopListening = onLoopMessage(function collect(message) {
      if (message.loop === loop.id) types.push(`${message.type}${message.type === "timer" ? ` ${message.callback}` : ""}`);
    });
    function* coro(): Coroutine<void> {
      const future = new Future<void>(loop, "tick");
      loop.callLater(0, function tick() {
        future.setResult(undefined);
      });
      yield* future;
    }
    try {
      await loop.runUntilComplete(new Task(coro(), loop, "ticker"));
    } finally {
      stopListening();
    }
    expect(types).toEqual(["step", "timer tick", "resolve", "step", "resolve"]);
    await new Promise(setImmediate);
    loop.close();
  });
});
