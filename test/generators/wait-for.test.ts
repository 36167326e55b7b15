import { describe, expect, it } from "vitest";
import { FetchFailure, errorName } from "../../src/kernel/errors.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import { Future, type Coroutine } from "../../src/generators/futures.js";
import { sleep, Task, waitFor } from "../../src/generators/tasks.js";
import { onLoopMessage } from "./messages.js";
import { outcome } from "./outcome.js";

describe("waitFor", () => {
  it("returns the result when the coroutine finishes in time, leaving no timer", async () => {
    const loop = new EventLoop();
    function* quick(): Coroutine<string> {
      yield* sleep(0);
      return "fast enough";
    }
    expect(await loop.runUntilComplete(waitFor(quick(), 10_000))).toBe("fast enough");
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("cancels the coroutine at the deadline, runs its finally, and throws a Timeout", async () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    function* stuck(): Coroutine<string> {
      try {
        yield* new Future<string>(); // never resolved
        return "unreachable";
      } finally {
        trail.push("finally");
      }
    }
    function* main(): Coroutine<string> {
      try {
        return yield* waitFor(stuck(), 5);
      } catch (error) {
        trail.push(`caught ${errorName(error)}`);
        expect(error).toBeInstanceOf(FetchFailure);
        return "timed out";
      }
    }
    expect(await loop.runUntilComplete(main())).toBe("timed out");
    expect(trail).toEqual(["finally", "caught Timeout"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("passes the coroutine's own error through", async () => {
    const loop = new EventLoop();
    const error = new RangeError("own");
    function* failing(): Coroutine<void> {
      yield* sleep(0);
      throw error;
    }
    await expect(loop.runUntilComplete(waitFor(failing(), 10_000))).rejects.toBe(error);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("takes the inner coroutine down, and waits for it, when its caller is cancelled", async () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    function* inner(): Coroutine<void> {
      try {
        yield* sleep(3600);
      } finally {
        trail.push("inner finally");
      }
    }
    function* outer(): Coroutine<void> {
      try {
        yield* waitFor(inner(), 60_000);
      } finally {
        trail.push("outer finally");
      }
    }
    function* main(): Coroutine<boolean> {
      const task = new Task(outer());
      yield* sleep(0);
      task.cancel();
      expect(yield* outcome(task)).toBe("CancelledError");
      return task.cancelled();
    }
    expect(await loop.runUntilComplete(main())).toBe(true);
    expect(trail).toEqual(["inner finally", "outer finally"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("ends cancelled, not timed out, when its caller is cancelled in the turn the timer fires", async () => {
    const loop = new EventLoop();
    function* stuck(): Coroutine<void> {
      yield* new Future<void>(); // never resolved
    }
    function* outer(): Coroutine<void> {
      yield* waitFor(stuck(), 5);
    }
    const task = new Task(outer(), loop);
    // The loop publishes a due timer before it runs it: cancel our Task in that same turn.
    const stopListening = onLoopMessage(function cancelWithTheTimer(message) {
      if (message.loop === loop.id && message.type === "timer" && message.callback === "timeIsUp") task.cancel();
    });
    try {
      expect(await loop.runUntilComplete(outcome(task))).toBe("CancelledError");
    } finally {
      stopListening();
    }
    expect(loop.timerCount).toBe(0);
    loop.close();
  });

  it("keeps waiting for the inner coroutine, and stays cancelled, when its caller is cancelled twice", async () => {
    const loop = new EventLoop();
    const trail: string[] = [];
    function* inner(): Coroutine<void> {
      try {
        yield* sleep(3600);
      } finally {
        for (let turn = 0; turn < 3; turn++) yield* sleep(0); // slow to clean up
        trail.push("inner finally");
      }
    }
    function* outer(): Coroutine<void> {
      try {
        yield* waitFor(inner(), 60_000);
      } finally {
        trail.push("outer finally");
      }
    }
    function* main(): Coroutine<string> {
      const task = new Task(outer());
      yield* sleep(0);
      task.cancel();
      yield* sleep(0); // outer now waits for inner's finally
      task.cancel();
      return yield* outcome(task);
    }
    expect(await loop.runUntilComplete(main())).toBe("CancelledError");
    expect(trail).toEqual(["inner finally", "outer finally"]);
    expect(loop.timerCount).toBe(0);
    loop.close();
  });
});

