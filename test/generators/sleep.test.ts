import { describe, expect, it, vi } from "vitest";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { sleep, Task } from "../../src/generators/tasks.js";
import { within } from "../helpers/within.js";
import { outcome } from "./outcome.js";
import { countSelects, nodeTurns } from "../helpers/loop-turns.js";
import net from "node:net";
import { EVENT_READ } from "../../src/kernel/selector.js";
import { connect } from "../../src/kernel/socket.js";

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

describe("sleep: the lesson's points (callLater and turn)", () => {
  it("a Task's sleep takes a few iterations of the loop: turn sleeps in Node until the timer instead of spinning", async () => {
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    function* sleeper(): Coroutine<string> {
      yield* sleep(0.3);
      return "awake";
    }
    const task = loop.runUntilComplete(sleeper());
    expect(await task).toBe("awake");
    loop.close();
    // Start the Task, start the sleep, wake at the timer (once or twice more if Node's timer fires a moment early), resume
    // the Task: a loop that spins iterates at every Node turn, one that polls every few milliseconds dozens of times in 300 ms.
    expect(selects(), "turn went on iterating while the only Task slept").toBeLessThanOrEqual(8);
  });

  it("turn sleeps while only a far timer waits, however many times Node's loop goes round", async () => {
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    const far = loop.callLater(60_000, function farAway() {});
    loop.runForever();
    await nodeTurns(30);
    loop.stop();
    await nodeTurns(2);
    far.cancel();
    expect(loop.isRunning()).toBe(false);
    loop.close();
    expect(selects(), "turn iterated while it should have slept until its timer").toBeLessThanOrEqual(4);
  });

  it("callLater wakes a loop that sleeps until a far timer, for a timer due sooner", async () => {
    const loop = new EventLoop();
    const far = loop.callLater(60_000, function farAway() {});
    loop.runForever();
    await nodeTurns(2); // The loop is asleep now, until its timer in a minute.
    const ran = await within(5_000, new Promise<string>((resolve) => loop.callLater(1, function soon() { resolve("ran"); })), "a timer set with callLater(1) on a sleeping loop");
    loop.stop();
    await nodeTurns(2);
    far.cancel();
    loop.close();
    expect(ran, "callLater did not wake the sleeping loop").toBe("ran");
  });

  it("turn sleeps until a timer further away than setTimeout allows, when it is the only one", async () => {
    // Without the clamp to 2^31 - 1 ms, Node warns and fires the setTimeout after 1 ms, again and again.
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    try {
      const far = loop.callLater(30 * 24 * 3600 * 1000, function inThirtyDays() {});
      loop.runForever();
      await nodeTurns(30);
      loop.stop();
      await nodeTurns(2);
      far.cancel();
    } finally {
      process.off("warning", onWarning);
    }
    expect(loop.isRunning()).toBe(false);
    loop.close();
    expect(warnings, "turn asked setTimeout for more than 2 ** 31 - 1 ms").not.toContain("TimeoutOverflowWarning");
    expect(selects(), "turn iterated while it should have slept until its timer").toBeLessThanOrEqual(4);
  });

  it("callLater and turn leave no setTimeout behind: one planned wake-up at a time, none once the loop has stopped", async () => {
    // A wake-up that drops nextTimeout without clearing it (which passed every check of this exercise) leaves a Node
    // timer that runs turn later, on a loop stopped or closed by then: only stage 2's contract suite saw it.
    const pending = new Set<unknown>();
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    const planted = vi.spyOn(globalThis, "setTimeout").mockImplementation(function trackedSetTimeout(callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) {
      const handle = realSetTimeout(function fired() {
        pending.delete(handle);
        callback(...args);
      }, ms);
      pending.add(handle);
      return handle;
    } as typeof setTimeout);
    const cleared = vi.spyOn(globalThis, "clearTimeout").mockImplementation(function trackedClearTimeout(handle?: Parameters<typeof clearTimeout>[0]) {
      pending.delete(handle);
      realClearTimeout(handle);
    });
    const loop = new EventLoop();
    try {
      const far = loop.callLater(60_000, function farAway() {});
      loop.runForever();
      await nodeTurns(2); // Asleep until the far timer: one setTimeout.
      for (let i = 0; i < 3; i++) {
        await new Promise<void>((resolve) => loop.callLater(1, function soon() { resolve(); })); // Wakes it, runs, sleeps again.
        await nodeTurns(2);
        expect(pending.size, "the loop has more than one setTimeout planned: an earlier one was dropped without clearTimeout").toBeLessThanOrEqual(1);
      }
      // A socket registered during an iteration wakes the loop (the selector's wakeup plans a setImmediate): turn
      // must not plan a setTimeout as well, a second wake-up that the next turn forgets.
      const { socket, close } = await heldConnection();
      loop.callSoon(function registerInAnIteration() {
        loop.selector.register(socket, EVENT_READ, function neverReady() {});
      });
      await nodeTurns(2);
      expect(pending.size, "turn planned a setTimeout while a socket event had planned the next iteration already").toBeLessThanOrEqual(1);
      loop.selector.unregister(socket);
      close();
      loop.stop();
      await nodeTurns(2);
      far.cancel();
      expect(loop.isRunning()).toBe(false);
      expect(pending.size, "a setTimeout of the loop is left behind after stop(): it would run turn on a stopped loop").toBe(0);
    } finally {
      planted.mockRestore();
      cleared.mockRestore();
      for (const handle of pending) realClearTimeout(handle as Parameters<typeof clearTimeout>[0]);
      loop.close();
    }
  });

  it("callLater runs timers due at the same moment first in, first out, however many there are", () => {
    const loop = new EventLoop();
    vi.spyOn(loop, "time").mockReturnValue(1000); // One instant for every callLater and for the run.
    const order: number[] = [];
    for (let i = 0; i < 40; i++) loop.callLater(0, function tie() { order.push(i); });
    loop.runOnce();
    expect(order, "callLater did not keep the order of timers with the same deadline").toEqual(Array.from({ length: 40 }, (_, i) => i));
    loop.close();
  });
});

/** A server that accepts and holds the connection open, never writing; the client socket, connected. */
async function heldConnection(): Promise<{ socket: net.Socket; close: () => void }> {
  const server = net.createServer(function hold() {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const socket = connect(new URL(`http://127.0.0.1:${port}/`));
  await new Promise((resolve) => socket.once("connect", resolve));
  return {
    socket,
    close() {
      socket.destroy();
      server.close();
    },
  };
}
