import { describe, expect, it, vi } from "vitest";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { sleep, Task } from "../../src/generators/tasks.js";
import { outcome } from "./outcome.js";

describe("sleep", () => {
  it("wakes shorter sleepers first while all sleep at once", () => {
    const loop = new EventLoop();
    let now = 1000;
    vi.spyOn(loop, "time").mockImplementation(function manualClock() {
      return now; // moved by the test, not by the wall clock (asyncio test_utils.TestLoop's advance_time)
    });
    const woke: string[] = [];
    function* sleeper(label: string, seconds: number): Coroutine<void> {
      yield* sleep(seconds);
      woke.push(label);
    }
    new Task(sleeper("slow", 0.03), loop);
    new Task(sleeper("fast", 0.001), loop);
    new Task(sleeper("mid", 0.015), loop);
    loop.runOnce(); // each one starts its sleep
    expect(loop.timerCount).toBe(3);
    const wokenBy = (ms: number): string[] => {
      now = 1000 + ms;
      loop.runOnce(); // the due timers resolve their Futures
      loop.runOnce(); // and the Tasks waiting on them resume
      return [...woke];
    };
    expect(wokenBy(0)).toEqual([]);
    expect(wokenBy(1)).toEqual(["fast"]);
    expect(wokenBy(14)).toEqual(["fast"]);
    expect(wokenBy(15)).toEqual(["fast", "mid"]);
    expect(wokenBy(30)).toEqual(["fast", "mid", "slow"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("cancels its timer when its Task is cancelled", async () => {
    const loop = new EventLoop();
    function* main(): Coroutine<number> {
      const sleeper = new Task(sleep(3600));
      yield* sleep(0);
      const during = loop.timerCount;
      sleeper.cancel();
      expect(yield* outcome(sleeper)).toBe("CancelledError");
      return during;
    }
    expect(await loop.runUntilComplete(main())).toBe(1);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("yields for exactly one loop iteration with sleep(0), setting no timer", () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    function* sleeper(): Coroutine<void> {
      trail.push("before");
      yield* sleep(0);
      trail.push("after");
    }
    new Task(sleeper(), loop);
    loop.runOnce(); // the first step: "before", then it yields
    expect(trail).toEqual(["before"]);
    expect(loop.timerCount).toBe(0);
    loop.runOnce(); // asyncio: a bare yield resumes on the next iteration
    expect(trail).toEqual(["before", "after"]);
    loop.close();
  });

  it("needs a running loop", () => {
    expect(() => sleep(1).next()).toThrow(/No running event loop/);
  });
});
