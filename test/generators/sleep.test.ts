import { describe, expect, it } from "vitest";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { sleep, Task } from "../../src/generators/tasks.js";
import { outcome } from "./outcome.js";

describe("sleep", () => {
  it("wakes shorter sleepers first while all sleep at once", async () => {
    const loop = new EventLoop();
    const woke: string[] = [];
    function* sleeper(label: string, seconds: number): Coroutine<void> {
      yield* sleep(seconds);
      woke.push(label);
    }
    function* main(): Coroutine<void> {
      const tasks = [new Task(sleeper("slow", 0.03)), new Task(sleeper("fast", 0.001)), new Task(sleeper("mid", 0.015))];
      for (const task of tasks) yield* task;
    }
    await loop.runUntilComplete(main());
    expect(woke).toEqual(["fast", "mid", "slow"]);
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
