import { describe, expect, expectTypeOf, it } from "vitest";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { gather, sleep, Task } from "../../src/generators/tasks.js";
import { outcome } from "./outcome.js";

describe("gather", () => {
  it("runs coroutines at once and returns their results in the order given", async () => {
    const loop = new EventLoop();
    const finished: string[] = [];
    function* finishAfter(turns: number, label: string): Coroutine<string> {
      for (let turn = 0; turn < turns; turn++) yield* sleep(0); // one loop iteration each
      finished.push(label);
      return label;
    }
    function* count(): Coroutine<number> {
      yield* sleep(0);
      finished.push("count");
      return 3;
    }
    function* main(): Coroutine<[string, number, string]> {
      const results = yield* gather(finishAfter(3, "slow"), count(), finishAfter(2, "fast"));
      expectTypeOf(results).toEqualTypeOf<[string, number, string]>();
      return results;
    }
    expect(await loop.runUntilComplete(main())).toEqual(["slow", 3, "fast"]);
    expect(finished).toEqual(["count", "fast", "slow"]);
    loop.close();
  });

  it("returns an empty list for no coroutines", async () => {
    const loop = new EventLoop();
    expect(await loop.runUntilComplete(gather())).toEqual([]);
    loop.close();
  });

  it("throws the first failure and cancels the coroutines still running", async () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    const error = new Error("first failure");
    function* fails(): Coroutine<number> {
      yield* sleep(0.001);
      throw error;
    }
    function* slow(): Coroutine<number> {
      try {
        yield* sleep(3600);
        return 1;
      } finally {
        trail.push("slow finally");
      }
    }
    await expect(loop.runUntilComplete(gather(slow(), fails()))).rejects.toBe(error);
    expect(trail).toEqual(["slow finally"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("waits for its coroutines to finish, and stays cancelled, when its caller is cancelled twice", async () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    function* slowToStop(): Coroutine<void> {
      try {
        yield* sleep(3600);
      } finally {
        for (let turn = 0; turn < 3; turn++) yield* sleep(0); // slow to clean up
        trail.push("gathered finally");
      }
    }
    function* outer(): Coroutine<void> {
      try {
        yield* gather(slowToStop());
      } finally {
        trail.push("outer finally");
      }
    }
    function* main(): Coroutine<boolean> {
      const task = new Task(outer());
      yield* sleep(0);
      task.cancel();
      yield* sleep(0); // outer now waits for the gathered coroutine's finally
      task.cancel();
      expect(yield* outcome(task)).toBe("CancelledError");
      return task.cancelled();
    }
    expect(await loop.runUntilComplete(main())).toBe(true);
    expect(trail).toEqual(["gathered finally", "outer finally"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });
});
