import diagnostics_channel from "node:diagnostics_channel";
import net from "node:net";
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { describe, expect, it, vi } from "vitest";
import { EventLoop } from "../../src/callbacks/event-loop.js";
import type { ExceptionSource, IoCallback } from "../../src/callbacks/event-loop.js";
import { InvalidStateError } from "../../src/kernel/errors.js";
import { EVENT_READ, EVENT_WRITE } from "../../src/kernel/selector.js";
import { connect, fileno, recv } from "../../src/kernel/socket.js";
import type { LoopMessage } from "../../src/observe/channels.js";
import { countSelects, nodeTurns } from "../helpers/loop-turns.js";

/** Runs the loop until it stops, resolving then. */
function run(loop: EventLoop): Promise<void> {
  return new Promise((resolve) => loop.runForever(resolve));
}

/**
 * Calls `schedule` with the loop's clock held at one instant, so the timers
 * it sets are due at their delays from that instant, however long the calls
 * take on a loaded machine.
 */
function atOneInstant(schedule: () => void): void {
  const instant = performance.now();
  const clock = vi.spyOn(performance, "now").mockReturnValue(instant);
  try {
    schedule();
  } finally {
    clock.mockRestore();
  }
}

describe("EventLoop", () => {
  it("runs timers in the order they are due, then stops", async () => {
    const loop = new EventLoop();
    const order: string[] = [];
    atOneInstant(function setTimers() {
      loop.callLater(30, function third() {
        order.push("third");
        loop.stop();
      });
      loop.callLater(0, function first() {
        order.push("first");
      });
      loop.callLater(10, function second() {
        order.push("second");
      });
    });
    await run(loop);
    expect(order).toEqual(["first", "second", "third"]);
    expect(loop.pendingTimers).toBe(0);
    expect(loop.isRunning()).toBe(false);
  });

  it("runs a timer set with a negative delay before one set earlier with callLater(0), as asyncio does", async () => {
    const loop = new EventLoop();
    const order: string[] = [];
    atOneInstant(function setTimers() {
      loop.callLater(0, function zero() {
        order.push("zero");
        loop.stop();
      });
      loop.callLater(-1, function negative() {
        order.push("negative"); // asyncio's call_later is call_at(time() + delay): a moment before the other's
      });
    });
    await run(loop);
    expect(order).toEqual(["negative", "zero"]);
  });

  it("does not run a cancelled timer", async () => {
    const loop = new EventLoop();
    let ran = 0;
    const timer = loop.callLater(5, function cancelledBeforeDue() {
      ran += 1;
    });
    loop.callLater(15, function stopLoop() {
      loop.stop();
    });
    timer.cancel();
    expect(loop.pendingTimers).toBe(1);
    await run(loop);
    expect(ran).toBe(0);
  });

  it("stops after the current iteration and leaves later timers pending", async () => {
    const loop = new EventLoop();
    let late = 0;
    loop.callLater(0, function stopSoon() {
      loop.stop();
    });
    const later = loop.callLater(60_000, function tooLate() {
      late += 1;
    });
    await run(loop);
    expect(late).toBe(0);
    expect(loop.pendingTimers).toBe(1);
    later.cancel();
    expect(loop.pendingTimers).toBe(0);
  });

  it("wakes from sleep for a timer set while it sleeps", async () => {
    const loop = new EventLoop();
    const stopped = run(loop);
    let calls = 0;
    setTimeout(function setTimerFromOutside() {
      loop.callLater(1, function fromOutside() {
        calls += 1;
        loop.stop();
      });
    }, 5);
    await stopped;
    expect(calls).toBe(1);
  });

  it("runs a timer that re-arms itself with callLater(0) once per iteration, letting Node poll in between", async () => {
    const loop = new EventLoop();
    const nodeHadATurn: boolean[] = [];
    let polled = true;
    let runs = 0;
    loop.callLater(0, function rearm() {
      nodeHadATurn.push(polled);
      polled = false;
      setImmediate(function nodeTurn() {
        polled = true; // Node's loop ran (and polled for I/O) since the last run
      });
      runs += 1;
      if (runs < 5) loop.callLater(0, rearm);
      else loop.stop();
    });
    await run(loop);
    expect(nodeHadATurn).toEqual([true, true, true, true, true]);
  });

  it("refuses to run twice at once", () => {
    const loop = new EventLoop();
    loop.runForever();
    expect(() => loop.runForever()).toThrow(InvalidStateError);
    loop.stop();
  });

  it("dispatches the callback registered for a ready socket with its key and mask", async () => {
    const server = net.createServer(function greet(socket) {
      socket.end("hi");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const loop = new EventLoop();
    const socket: Socket = connect(new URL(`http://127.0.0.1:${port}/`));
    const calls: string[] = [];
    const received: Buffer[] = [];
    const readResponse: IoCallback = function readResponse(key, mask) {
      calls.push(`readResponse ${mask}`);
      const chunk = recv(key.socket);
      if (chunk.length > 0) {
        received.push(chunk);
        return;
      }
      loop.selector.unregister(key.socket);
      loop.stop();
    };
    const connected: IoCallback = function connected(key, mask) {
      calls.push(`connected ${mask}`);
      loop.selector.unregister(key.socket);
      loop.selector.register(key.socket, EVENT_READ, readResponse);
    };
    loop.selector.register(socket, EVENT_WRITE, connected);
    await run(loop);
    socket.destroy();
    server.close();
    expect(calls[0]).toBe(`connected ${EVENT_WRITE}`);
    expect(calls.at(-1)).toBe(`readResponse ${EVENT_READ}`);
    expect(Buffer.concat(received).toString()).toBe("hi");
    expect(loop.selector.size).toBe(0);
  });

  it("runs a timer that a socket callback sets with callLater(0) in the next iteration, as asyncio does", async () => {
    const server = net.createServer(function hold() {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const loop = new EventLoop();
    const socket: Socket = connect(new URL(`http://127.0.0.1:${port}/`));
    let nodeHadATurn = false;
    const seen: boolean[] = [];
    loop.selector.register(socket, EVENT_WRITE, function connected(key) {
      loop.selector.unregister(key.socket);
      setImmediate(function nodeTurn() {
        nodeHadATurn = true;
      });
      loop.callLater(0, function soon() {
        seen.push(nodeHadATurn); // false would mean: run in the iteration that set it
        loop.stop();
      });
    });
    await run(loop);
    socket.destroy();
    server.close();
    expect(seen).toEqual([true]);
  });

  it("sleeps until a timer further away than setTimeout allows without spinning", async () => {
    const loop = new EventLoop();
    let iterations = 0;
    const count = (message: unknown): void => {
      if ((message as { loop: number }).loop === loop.id) iterations += 1;
    };
    diagnostics_channel.subscribe("coroutine-crawler:loop", count);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    try {
      const far = loop.callLater(30 * 24 * 3600 * 1000, function inThirtyDays() {});
      loop.callLater(50, function stopSoon() {
        far.cancel();
        loop.stop();
      });
      await run(loop);
    } finally {
      diagnostics_channel.unsubscribe("coroutine-crawler:loop", count);
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
    expect(iterations).toBeLessThan(10); // the overflowing setTimeout fired at once, again and again
  });

  it("publishes its selects, dispatches and timers on the loop channel, with its id and the socket's fileno", async () => {
    const server = net.createServer(function hold() {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const loop = new EventLoop();
    const other = new EventLoop();
    expect(other.id).not.toBe(loop.id);
    const messages: unknown[] = [];
    function collect(message: unknown): void {
      if (typeof message === "object" && message !== null && "loop" in message && message.loop === loop.id) messages.push(message);
    }
    diagnostics_channel.subscribe("coroutine-crawler:loop", collect);
    const socket = connect(new URL(`http://127.0.0.1:${port}/`));
    loop.selector.register(socket, EVENT_WRITE, function connected(key) {
      loop.selector.unregister(key.socket);
      loop.callLater(0, function stopLoop() {
        loop.stop();
      });
    });
    try {
      await run(loop);
    } finally {
      diagnostics_channel.unsubscribe("coroutine-crawler:loop", collect);
      socket.destroy();
      server.close();
    }
    const dispatch: LoopMessage = { type: "dispatch", loop: loop.id, callback: "connected", fd: fileno(socket) };
    const select: LoopMessage = { type: "select", loop: loop.id, ready: 1 };
    const timer: LoopMessage = { type: "timer", loop: loop.id, callback: "stopLoop" };
    const idle: LoopMessage = { type: "select", loop: loop.id, ready: 0 };
    // The dispatch, then its select (which counts it); the timer the callback set runs in the next iteration.
    expect(messages.slice(-4)).toEqual([dispatch, select, idle, timer]);
  });

  it("hands an exception thrown by a callback to the exception handler and keeps running", async () => {
    const loop = new EventLoop();
    const seen: Array<{ error: unknown; source: ExceptionSource }> = [];
    loop.setExceptionHandler(function exceptionHandler(error, source) {
      seen.push({ error, source });
    });
    const failing = loop.callLater(0, function buggyCallback() {
      throw new Error("bug");
    });
    loop.callLater(0, function afterTheBug() { // due with the bug and set after it: runs after it, in the same iteration
      loop.stop();
    });
    await run(loop);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.source).toBe(failing);
    expect(seen[0]?.error).toMatchObject({ message: "bug" });
  });

  it("hands the key of a socket whose callback threw to the exception handler", async () => {
    const server = net.createServer(function hold() {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    const loop = new EventLoop();
    const socket = connect(new URL(`http://127.0.0.1:${port}/`));
    const sources: ExceptionSource[] = [];
    loop.setExceptionHandler(function exceptionHandler(_error, source) {
      sources.push(source);
      loop.selector.unregister(socket);
      loop.stop();
    });
    const key = loop.selector.register(socket, EVENT_WRITE, function connected() {
      throw new Error("a bug in connected");
    });
    await run(loop);
    socket.destroy();
    server.close();
    expect(sources).toEqual([key]);
  });
});

/** An EventLoop whose `runOnce` a test can call by hand, outside `runForever`, to see what escapes it. */
class TurnByHand extends EventLoop {
  turnOnce(): void {
    this.runOnce();
  }
}

/** A server that accepts and sends `greeting` (if any), then holds the connection open; the client socket, connected. */
async function heldConnection(greeting = ""): Promise<{ socket: Socket; close: () => void }> {
  const server = net.createServer(function hold(socket) {
    if (greeting !== "") socket.write(greeting);
  });
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

describe("EventLoop: the lesson's points (runOnce and dispatch)", () => {
  it("runOnce sleeps while nothing is ready and the next timer is far: a few iterations, not one per Node turn", async () => {
    const { socket, close } = await heldConnection(); // registered for reading, never readable
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    loop.selector.register(socket, EVENT_READ, function neverReady() {});
    const far = loop.callLater(60_000, function farAway() {});
    const stopped = run(loop);
    await nodeTurns(30); // Thirty turns of Node's loop: a loop that spins or polls iterates at each.
    loop.stop();
    await stopped;
    far.cancel();
    close();
    expect(selects(), "runOnce went on iterating while it should have slept").toBeLessThanOrEqual(5);
  });

  it("runOnce sleeps until its next timer, then runs it: a few iterations, however many Node turns the wait takes", async () => {
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    loop.callLater(300, function stopLoop() {
      loop.stop();
    });
    await run(loop);
    // The first iteration, then the one its sleep ends in (and one more or two when Node's timer fires a
    // moment early, as it may); a loop that polls (setImmediate, or a short setTimeout) iterates many times in 300 ms.
    expect(selects(), "runOnce did not sleep until its timer").toBeLessThanOrEqual(6);
  });

  it("runOnce runs every timer that is due in one iteration", async () => {
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    const seen: number[] = [];
    atOneInstant(function setTimers() {
      for (let i = 0; i < 3; i++) loop.callLater(-1, function due() { seen.push(selects()); });
      loop.callLater(-1, function stopLoop() { loop.stop(); });
    });
    await run(loop);
    expect(seen, "runOnce ran the due timers over several iterations").toEqual([1, 1, 1]);
  });

  it("runOnce dispatches a socket that is still ready again in the next iteration, with no new event (level-triggered)", async () => {
    const { socket, close } = await heldConnection("hello");
    const loop = new EventLoop();
    const read: string[] = [];
    loop.selector.register(socket, EVENT_READ, function readOneByte(key) {
      read.push(recv(key.socket, 1).toString()); // One byte a call: the other four stay ready in Node's buffer.
      if (read.length === 5) loop.stop();
    });
    const hangGuard = loop.callLater(5_000, function giveUp() {
      loop.stop();
    });
    await run(loop);
    hangGuard.cancel();
    close();
    expect(read.join(""), "runOnce did not dispatch a socket that was still ready").toBe("hello");
  });

  it("runs nothing after stop(): no timer, no socket callback, no iteration", async () => {
    const { socket, close } = await heldConnection("ready");
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    const late: string[] = [];
    loop.callLater(0, function stopNow() {
      loop.stop();
      loop.callLater(0, function tooLate() { late.push("timer"); });
      loop.selector.register(socket, EVENT_READ, function readTooLate() { late.push("socket"); });
    });
    let stoppedAt = -1;
    await new Promise<void>((resolve) => {
      loop.runForever(function onStopped() {
        stoppedAt = selects();
        resolve();
      });
    });
    await nodeTurns(5);
    loop.selector.unregister(socket);
    close();
    expect({ late, iterationsAfterStop: selects() - stoppedAt, running: loop.isRunning() }, "runOnce went on after stop()").toEqual({ late: [], iterationsAfterStop: 0, running: false });
  });

  it("runOnce does not call a ready socket's callback once an earlier callback of the same select has unregistered it", async () => {
    // Collecting the ready keys and dispatching them after select() returns (which passed the other checks) skips the
    // selector's guard: the second socket's callback runs although the first one unregistered it.
    const first = await heldConnection();
    const second = await heldConnection();
    const loop = new TurnByHand();
    const called: string[] = [];
    function unregisterBoth(): void {
      loop.selector.unregister(first.socket);
      loop.selector.unregister(second.socket);
    }
    loop.selector.register(first.socket, EVENT_WRITE, function firstConnected() {
      called.push("first");
      unregisterBoth();
    });
    loop.selector.register(second.socket, EVENT_WRITE, function secondConnected() {
      called.push("second");
      unregisterBoth();
    });
    try {
      loop.turnOnce(); // Both are connected and writable: both are ready at this select.
      expect(called, "runOnce called the callback of a socket unregistered by an earlier callback: hand dispatch to select()").toHaveLength(1);
    } finally {
      first.close();
      second.close();
    }
  });

  it("runOnce sleeps until a timer further away than setTimeout allows, when it is the only one", async () => {
    // Without the clamp to 2^31 - 1 ms (which passed while another timer was due first), Node warns and fires the
    // setTimeout after 1 ms, again and again: the loop iterates at every turn.
    const loop = new EventLoop();
    const selects = countSelects(loop.selector);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on("warning", onWarning);
    try {
      const far = loop.callLater(30 * 24 * 3600 * 1000, function inThirtyDays() {});
      const stopped = run(loop);
      await nodeTurns(30);
      loop.stop();
      await stopped;
      far.cancel();
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings, "runOnce asked setTimeout for more than 2 ** 31 - 1 ms").not.toContain("TimeoutOverflowWarning");
    expect(selects(), "runOnce iterated while it should have slept until its timer").toBeLessThanOrEqual(5);
  });

  it("runOnce lets a timer callback's exception escape when no exception handler is set (stack ripping, on purpose)", () => {
    const loop = new TurnByHand();
    const bug = new Error("a bug in a timer callback");
    loop.callLater(-1, function buggyTimer() {
      throw bug;
    });
    expect(() => loop.turnOnce(), "runOnce swallowed the exception").toThrow(bug);
  });

  it("dispatch lets a socket callback's exception escape when no exception handler is set", async () => {
    const { socket, close } = await heldConnection();
    const loop = new TurnByHand();
    const bug = new Error("a bug in connected");
    loop.selector.register(socket, EVENT_WRITE, function connected() {
      throw bug;
    });
    try {
      expect(() => loop.turnOnce(), "dispatch swallowed the exception").toThrow(bug);
    } finally {
      loop.selector.unregister(socket);
      close();
    }
  });
});
