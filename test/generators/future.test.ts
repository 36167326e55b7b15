import { describe, expect, it } from "vitest";
import { CancelledError, InvalidStateError } from "../../src/kernel/errors.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import { Future, type Coroutine } from "../../src/generators/futures.js";

describe("Future", () => {
  it("starts pending and refuses to give a result or exception", () => {
    const future = new Future<number>(null);
    expect(future.done()).toBe(false);
    expect(future.cancelled()).toBe(false);
    expect(() => future.result()).toThrow(InvalidStateError);
    expect(() => future.exception()).toThrow(InvalidStateError);
  });

  it("holds the result it is resolved with", () => {
    const future = new Future<string>(null);
    future.setResult("page");
    expect(future.done()).toBe(true);
    expect(future.result()).toBe("page");
    expect(future.exception()).toBeNull();
  });

  it("throws its exception from result()", () => {
    const future = new Future<string>(null);
    const error = new RangeError("bad");
    future.setException(error);
    expect(future.done()).toBe(true);
    expect(future.exception()).toBe(error);
    expect(() => future.result()).toThrow(error);
  });

  it("throws InvalidStateError when resolved twice", () => {
    const future = new Future<number>(null);
    future.setResult(1);
    expect(() => future.setResult(2)).toThrow(InvalidStateError);
    expect(() => future.setException(new Error("late"))).toThrow(InvalidStateError);
    expect(future.result()).toBe(1);
  });

  it("throws InvalidStateError when resolving a cancelled Future", () => {
    const future = new Future<number>(null);
    expect(future.cancel()).toBe(true);
    expect(() => future.setResult(1)).toThrow(InvalidStateError);
  });

  it("throws CancelledError from result() and exception() once cancelled", () => {
    const future = new Future<number>(null);
    future.cancel();
    expect(future.cancelled()).toBe(true);
    expect(future.done()).toBe(true);
    expect(() => future.result()).toThrow(CancelledError);
    expect(() => future.exception()).toThrow(CancelledError);
  });

  it("refuses to cancel a Future that is done", () => {
    const future = new Future<number>(null);
    future.setResult(1);
    expect(future.cancel()).toBe(false);
    expect(future.cancelled()).toBe(false);
  });

  it("runs done callbacks in the order they were added, with the Future", () => {
    const future = new Future<number>(null);
    const calls: string[] = [];
    future.addDoneCallback(function first(f) {
      calls.push(`first ${f.result()}`);
    });
    future.addDoneCallback(function second(f) {
      calls.push(`second ${f.result()}`);
    });
    expect(calls).toEqual([]);
    future.setResult(7);
    expect(calls).toEqual(["first 7", "second 7"]);
  });

  it("runs done callbacks added after the result is set", () => {
    const future = new Future<number>(null);
    future.setResult(3);
    const seen: number[] = [];
    future.addDoneCallback(function late(f) {
      seen.push(f.result());
    });
    expect(seen).toEqual([3]);
  });

  it("runs done callbacks on cancellation", () => {
    const future = new Future<number>(null);
    let calls = 0;
    future.addDoneCallback(function onDone(f) {
      calls += 1;
      expect(f.cancelled()).toBe(true);
    });
    future.cancel();
    expect(calls).toBe(1);
  });

  it("forgets a removed done callback", () => {
    const future = new Future<number>(null);
    let calls = 0;
    function onDone(): void {
      calls += 1;
    }
    future.addDoneCallback(onDone);
    future.addDoneCallback(onDone);
    expect(future.removeDoneCallback(onDone)).toBe(2);
    future.setResult(1);
    expect(calls).toBe(0);
  });

  it("lets go of its done callbacks once done: finish empties the list, so none can be removed or run twice", () => {
    // A finish that schedules the callbacks and keeps the list (which passed the other checks) holds every waiting
    // Task's wakeUp for as long as the Future lives, and removeDoneCallback finds callbacks already handed to the loop.
    for (const settle of ["setResult", "setException", "cancel"] as const) {
      const loop = new EventLoop();
      const future = new Future<number>(loop);
      let calls = 0;
      function onDone(): void {
        calls += 1;
      }
      future.addDoneCallback(onDone);
      if (settle === "setResult") future.setResult(1);
      else if (settle === "setException") future.setException(new RangeError("bad"));
      else future.cancel();
      expect(future.removeDoneCallback(onDone), `finish kept its done callbacks after ${settle}`).toBe(0);
      loop.runOnce();
      expect(calls).toBe(1);
      loop.close();
    }
  });

  it("hands its done callbacks to its loop instead of calling them inside setResult", () => {
    const loop = new EventLoop();
    const future = new Future<number>(loop);
    let calls = 0;
    future.addDoneCallback(function onDone() {
      calls += 1;
    });
    future.setResult(1);
    expect(calls).toBe(0);
    loop.runOnce();
    expect(calls).toBe(1);
    loop.close();
  });

  it("addDoneCallback on a Future already done hands the callback to its loop too, never calling it at once", () => {
    const loop = new EventLoop();
    const future = new Future<number>(loop);
    future.setResult(5);
    loop.runOnce();
    const seen: number[] = [];
    future.addDoneCallback(function late(f) {
      seen.push(f.result());
    });
    expect(seen, "addDoneCallback called a late callback synchronously").toEqual([]);
    loop.runOnce();
    expect(seen, "addDoneCallback lost a callback added once the Future was done").toEqual([5]);
    loop.close();
  });

  it("setException hands the done callbacks to the loop, and each runs once, in the order they were added", () => {
    const loop = new EventLoop();
    const future = new Future<number>(loop);
    const calls: string[] = [];
    for (const name of ["a", "b", "c"]) future.addDoneCallback(function onDone(f) { calls.push(`${name} ${(f.exception() as Error).message}`); });
    future.setException(new Error("failed"));
    expect(calls, "setException called the done callbacks synchronously").toEqual([]);
    loop.runOnce();
    loop.runOnce();
    expect(calls).toEqual(["a failed", "b failed", "c failed"]);
    expect(future.done()).toBe(true);
    loop.close();
  });

  it("takes the running loop by default", () => {
    const loop = new EventLoop();
    let made: Future<number> | null = null;
    loop.callSoon(function makeFuture() {
      made = new Future<number>();
    });
    loop.runOnce();
    const future: Future<number> = made ?? new Future<number>(null);
    let calls = 0;
    future.addDoneCallback(function onDone() {
      calls += 1;
    });
    future.setResult(1);
    expect(calls).toBe(0); // scheduled on the loop, not called at once
    loop.runOnce();
    expect(calls).toBe(1);
    loop.close();
  });

  it("pauses yield* while pending and then evaluates to the result", () => {
    const future = new Future<number>(null);
    function* waiter(): Coroutine<number> {
      const value = yield* future;
      return value * 2;
    }
    const coro = waiter();
    const first = coro.next();
    expect(first.done).toBe(false);
    expect(first.value).toBe(future); // the Future itself reaches the Task
    future.setResult(21);
    expect(coro.next()).toEqual({ done: true, value: 42 });
  });

  it("does not pause yield* on a Future that is already done", () => {
    const future = new Future<number>(null);
    future.setResult(5);
    const coro = future[Symbol.iterator]();
    expect(coro.next()).toEqual({ done: true, value: 5 });
  });

  it("throws a failed Future's exception at the yield* inside the coroutine", () => {
    const future = new Future<number>(null);
    const caught: unknown[] = [];
    function* waiter(): Coroutine<string> {
      try {
        yield* future;
        return "no";
      } catch (error) {
        caught.push(error);
        return "caught";
      }
    }
    const coro = waiter();
    coro.next();
    const error = new Error("refused");
    future.setException(error);
    expect(coro.next()).toEqual({ done: true, value: "caught" });
    expect(caught).toEqual([error]);
  });

  it("gives the same value and the same error to await as to yield*", async () => {
    const resolved = new Future<string>(null);
    const failed = new Future<string>(null);
    const error = new Error("boom");
    setImmediate(function settle() {
      resolved.setResult("value");
      failed.setException(error);
    });
    expect(await resolved).toBe("value");
    await expect(failed).rejects.toBe(error);
    // The same Futures through yield*: same value, same error, at the same place.
    expect(resolved[Symbol.iterator]().next()).toEqual({ done: true, value: "value" });
    expect(() => failed[Symbol.iterator]().next()).toThrow(error);
  });

  it("settles then() on a Future that finished after its loop stopped", async () => {
    const loop = new EventLoop();
    const late = new Future<string>(loop);
    loop.runForever();
    loop.stop();
    await new Promise(setImmediate); // the iteration that stops it
    expect(loop.isRunning()).toBe(false);
    late.setResult("late"); // its done callbacks go to a loop that no longer turns
    const seen: string[] = [];
    late.then(function settled(value) {
      seen.push(value);
    });
    await new Promise(setImmediate); // one Node turn: no iteration of our loop in it
    expect(seen).toEqual(["late"]);
    loop.close();
  });

  it("rejects await with CancelledError when cancelled", async () => {
    const future = new Future<number>(null);
    future.cancel();
    await expect(future).rejects.toBeInstanceOf(CancelledError);
  });
});
