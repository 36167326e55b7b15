// biome-ignore-all lint/correctness/useYield: several Tasks here drive coroutines that return or throw on their first step, without yielding.
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError } from "../../src/kernel/errors.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import { runningLoopOrNull } from "../../src/generators/events.js";
import { Future, type Coroutine } from "../../src/generators/futures.js";
import { allTasks, sleep, Task } from "../../src/generators/tasks.js";

/** Steps the loop `turns` times (asyncio test_utils.run_briefly). */
function runBriefly(loop: EventLoop, turns = 1): void {
  for (let i = 0; i < turns; i++) loop.runOnce();
}

let loop = new EventLoop();
afterEach(() => {
  loop.close();
  loop = new EventLoop();
});

describe("Task", () => {
  it("does not start its coroutine before the loop runs", () => {
    let started = 0;
    function* coro(): Coroutine<void> {
      started += 1;
    }
    const task = new Task(coro(), loop);
    expect(started).toBe(0);
    runBriefly(loop);
    expect(started).toBe(1);
    expect(task.done()).toBe(true);
  });

  it("drives a coroutine from Future to Future and resolves with its return value", () => {
    const first = new Future<number>(loop);
    const second = new Future<number>(loop);
    const trail: string[] = [];
    function* coro(): Coroutine<number> {
      trail.push("start");
      const a = yield* first;
      trail.push(`got ${a}`);
      const b = yield* second;
      trail.push(`got ${b}`);
      return a + b;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop);
    expect(trail).toEqual(["start"]);
    first.setResult(1);
    runBriefly(loop); // the done callback (wakeUp) runs and steps
    expect(trail).toEqual(["start", "got 1"]);
    expect(task.done()).toBe(false);
    second.setResult(2);
    runBriefly(loop);
    expect(task.result()).toBe(3);
  });

  it("propagates an exception up through yield* delegation", () => {
    const future = new Future<number>(loop);
    const caught: string[] = [];
    function* inner(): Coroutine<number> {
      return yield* future;
    }
    function* middle(): Coroutine<number> {
      return yield* inner();
    }
    function* outer(): Coroutine<string> {
      try {
        yield* middle();
        return "no error";
      } catch (error) {
        caught.push((error as Error).message);
        return "caught";
      }
    }
    const task = new Task(outer(), loop);
    runBriefly(loop);
    future.setException(new Error("ECONNRESET"));
    runBriefly(loop);
    expect(caught).toEqual(["ECONNRESET"]);
    expect(task.result()).toBe("caught");
  });

  it("fails with the exception its coroutine does not catch", () => {
    const error = new TypeError("bug");
    function* coro(): Coroutine<void> {
      throw error;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop);
    expect(task.exception()).toBe(error);
  });

  it("throws CancelledError in at the paused yield* and runs finally blocks", () => {
    const future = new Future<number>(loop);
    const trail: string[] = [];
    function* inner(): Coroutine<number> {
      try {
        return yield* future;
      } finally {
        trail.push("inner finally");
      }
    }
    function* outer(): Coroutine<number> {
      try {
        return yield* inner();
      } finally {
        trail.push("outer finally");
      }
    }
    const task = new Task(outer(), loop);
    runBriefly(loop);
    expect(task.cancel()).toBe(true);
    expect(trail).toEqual([]); // not re-entered: the throw happens on the loop's next turn
    runBriefly(loop);
    expect(trail).toEqual(["inner finally", "outer finally"]);
    expect(task.cancelled()).toBe(true);
    expect(future.cancelled()).toBe(false); // the Future it waited on is left alone
  });

  it("keeps running when its coroutine catches the cancellation", () => {
    const future = new Future<number>(loop);
    const later = new Future<string>(loop);
    function* coro(): Coroutine<string> {
      try {
        yield* future;
        return "not cancelled";
      } catch (error) {
        if (!(error instanceof CancelledError)) throw error;
      }
      return yield* later;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop);
    task.cancel();
    runBriefly(loop);
    expect(task.done()).toBe(false);
    later.setResult("cleaned up");
    runBriefly(loop);
    expect(task.result()).toBe("cleaned up");
  });

  it("throws the cancel in, not the value, at the wake-up of a Future resolved just before cancel(), and steps once", () => {
    const future = new Future<number>(loop);
    const next = new Future<number>(loop);
    const got: string[] = [];
    function* coro(): Coroutine<number> {
      try {
        got.push(`value ${yield* future}`);
      } catch (error) {
        if (!(error instanceof CancelledError)) throw error;
        got.push("cancelled");
      }
      return yield* next;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop);
    future.setResult(1); // its wake-up is now scheduled
    task.cancel(); // and throws the cancel in there, as asyncio's _must_cancel: no step of its own
    runBriefly(loop);
    runBriefly(loop);
    expect(got).toEqual(["cancelled"]);
    expect(task.done()).toBe(false); // waiting on `next`, not stepped twice
    next.setResult(2);
    runBriefly(loop);
    expect(task.result()).toBe(2);
  });

  it("resumes Tasks cancelled together in the order asyncio does when one's Future was already resolved", () => {
    const futures = [new Future<string>(loop), new Future<string>(loop), new Future<string>(loop)];
    const resumed: string[] = [];
    function* waiter(name: string, future: Future<string>): Coroutine<void> {
      try {
        yield* future;
        resumed.push(`${name} got its value`);
      } catch (error) {
        if (!(error instanceof CancelledError)) throw error;
        resumed.push(`${name} cancelled`);
      }
    }
    const tasks = ["A", "B", "C"].map((name, index) => new Task(waiter(name, futures[index] as Future<string>), loop));
    runBriefly(loop); // all three wait
    futures[1]?.setResult("b"); // B's wake-up is scheduled now
    for (const task of tasks) task.cancel();
    runBriefly(loop);
    // asyncio: B's Future is done, so cancel() sets _must_cancel and B's scheduled __wakeup throws it in, first.
    expect(resumed).toEqual(["B cancelled", "A cancelled", "C cancelled"]);
    expect(tasks.every((task) => task.done())).toBe(true);
  });

  it("is cancelled without running a coroutine that had not started", () => {
    let started = 0;
    function* coro(): Coroutine<void> {
      started += 1;
    }
    const task = new Task(coro(), loop);
    task.cancel();
    runBriefly(loop);
    expect(started).toBe(0);
    expect(task.cancelled()).toBe(true);
  });

  it("can be cancelled by its own coroutine", () => {
    const future = new Future<number>(loop);
    let finallyRan = 0;
    const holder: { task: Task<void> | null } = { task: null };
    function* coro(): Coroutine<void> {
      try {
        holder.task?.cancel();
        yield* future;
      } finally {
        finallyRan += 1;
      }
    }
    holder.task = new Task(coro(), loop);
    runBriefly(loop, 2);
    expect(finallyRan).toBe(1);
    expect(holder.task.cancelled()).toBe(true);
  });

  it("ends cancelled when its coroutine cancels it and then returns", () => {
    const holder: { task: Task<string> | null } = { task: null };
    function* coro(): Coroutine<string> {
      holder.task?.cancel();
      return "value"; // asyncio: StopIteration while _must_cancel is set cancels the Task
    }
    holder.task = new Task(coro(), loop);
    runBriefly(loop);
    expect(holder.task.cancelled()).toBe(true);
    expect(() => holder.task?.result()).toThrow(CancelledError);
  });

  it("steps inside its loop when a Future made with no loop is resolved from a plain Node timer", async () => {
    const future = new Future<number>(null); // as a notebook user makes one
    const running: Array<EventLoop | null> = [];
    function* coro(): Coroutine<number> {
      const value = yield* future;
      running.push(runningLoopOrNull()); // sleep(), get() and the rest need it
      return value * 2;
    }
    const task = loop.runUntilComplete(coro());
    expect(future.getLoop()).toBeNull();
    const resolvedIn: Array<boolean> = [];
    setTimeout(function resolveFromNode() {
      future.setResult(21);
      resolvedIn.push(task.done()); // the Task must not step inside setResult
    }, 5);
    expect(await task).toBe(42);
    expect(resolvedIn).toEqual([false]);
    expect(running).toEqual([loop]);
    expect(future.getLoop()).toBe(loop);
  });

  it("fails with a TypeError when its coroutine waits on a Future of another loop", () => {
    const other = new EventLoop();
    const foreign = new Future<number>(other);
    function* coro(): Coroutine<number> {
      return yield* foreign;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop, 2);
    expect(() => task.result()).toThrow(TypeError); // Its wording is the Task's own: the workshop asks for the class only.
    other.close();
  });

  it("refuses to cancel a Task that is done", () => {
    function* coro(): Coroutine<number> {
      return 1;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop);
    expect(task.cancel()).toBe(false);
    expect(task.result()).toBe(1);
  });

  it("throws a TypeError in at the yield when the coroutine yields something else, one that says to use yield*", () => {
    function* coro(): Generator<unknown, string, undefined> {
      try {
        yield 42;
        return "accepted";
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    }
    // A plain JS coroutine can yield anything; the cast stands for that.
    const task = new Task(coro() as Coroutine<string>, loop);
    runBriefly(loop, 2);
    expect(task.result()).toMatch(/^TypeError: .*yield\*/); // The workshop's hint says to name yield*; the rest of the wording is free.
  });

  it("fails with that TypeError when the coroutine does not catch it", () => {
    const future = new Future<number>(loop);
    function* coro(): Coroutine<void> {
      // @ts-expect-error -- a bare `yield` of a number is what the TypeError is for
      yield 7;
      yield* future;
    }
    const task = new Task(coro(), loop);
    runBriefly(loop, 2);
    expect(task.exception()).toBeInstanceOf(TypeError);
  });

  it("throws only the CancelledError, not a pending bad-yield TypeError later, when cancelled after a bad yield", () => {
    const future = new Future<string>(loop);
    const caught: string[] = [];
    function* coro(): Generator<unknown, string, undefined> {
      try {
        yield 42;
      } catch (error) {
        caught.push((error as Error).name);
      }
      try {
        return yield* future; // an unrelated yield*: nothing is pending for it
      } catch (error) {
        caught.push((error as Error).name);
        return "failed";
      }
    }
    // A plain JS coroutine can yield anything; the cast stands for that.
    const task = new Task(coro() as Coroutine<string>, loop);
    runBriefly(loop); // the bad yield: its TypeError is pending
    task.cancel(); // before the step that would throw it
    runBriefly(loop);
    future.setResult("resumed");
    runBriefly(loop, 2);
    expect(caught).toEqual(["CancelledError"]);
    expect(task.result()).toBe("resumed");
  });

  it("wakes a coroutine waiting on another Task when that Task finishes", () => {
    const future = new Future<string>(loop);
    function* child(): Coroutine<string> {
      return (yield* future).toUpperCase();
    }
    function* parent(): Coroutine<string> {
      const task = new Task(child());
      return `child said ${yield* task}`;
    }
    const task = new Task(parent(), loop);
    runBriefly(loop, 2);
    future.setResult("hi");
    runBriefly(loop, 3);
    expect(task.result()).toBe("child said HI");
  });

  it("is listed by allTasks() until it is done", () => {
    const gate = new Future<void>(loop);
    function* waits(): Coroutine<void> {
      yield* gate;
    }
    function* returns(): Coroutine<void> {}
    const ids = (): number[] => allTasks(loop).map((task) => task.id).sort((a, b) => a - b);
    const waiting = new Task(waits(), loop);
    const quick = new Task(returns(), loop);
    expect(ids()).toEqual([waiting.id, quick.id]);
    runBriefly(loop);
    expect(ids()).toEqual([waiting.id]);
    const later = new Task(waits(), loop); // in the place `quick` left
    expect(ids()).toEqual([waiting.id, later.id]);
    gate.setResult(undefined);
    runBriefly(loop, 2);
    expect(ids()).toEqual([]);
  });

  it("step leaves allTasks() when its coroutine throws or is cancelled, as when it returns", () => {
    const gate = new Future<void>(loop);
    function* throws(): Coroutine<void> {
      throw new Error("failed");
    }
    function* waits(): Coroutine<void> {
      yield* gate;
    }
    const failing = new Task(throws(), loop);
    const cancelled = new Task(waits(), loop);
    runBriefly(loop);
    cancelled.cancel();
    runBriefly(loop, 2);
    expect([failing.exception(), cancelled.cancelled()]).toEqual([expect.objectContaining({ message: "failed" }), true]);
    expect(allTasks(loop), "step did not end the Task (ended()) when its coroutine threw").toEqual([]);
  });

  it("waits a loop iteration for a Future that is already done when yielded, so two Tasks in sleep(0) take turns", () => {
    // A step that goes on at once when the yielded Future is done already (a shortcut that passed these checks and
    // the contract suite) runs A to its end first: A0 A1 A2 B0 B1 B2. asyncio's bare yield gives every Task a turn.
    const trail: string[] = [];
    function* polite(name: string): Coroutine<void> {
      for (let i = 0; i < 3; i++) {
        trail.push(`${name}${i}`);
        yield* sleep(0);
      }
    }
    new Task(polite("A"), loop);
    new Task(polite("B"), loop);
    runBriefly(loop);
    expect(trail, "Task.step went on at once with a Future already done: it must wait for its wake-up from the loop").toEqual(["A0", "B0"]);
    runBriefly(loop, 3);
    expect(trail).toEqual(["A0", "B0", "A1", "B1", "A2", "B2"]);
  });

  it("refuses setResult and setException from outside", () => {
    function* coro(): Coroutine<number> {
      return 1;
    }
    const task = new Task(coro(), loop);
    expect(() => task.setResult(2)).toThrow(TypeError);
    expect(() => task.setException(new Error("x"))).toThrow(TypeError);
  });

  it("needs a loop", () => {
    function* coro(): Coroutine<number> {
      return 1;
    }
    expect(() => new Task(coro())).toThrow(/event loop/);
  });
});
