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
