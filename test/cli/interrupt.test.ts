import { afterEach, describe, expect, it, vi } from "vitest";
import { Interrupt, signalExitStatus, STOP_SIGNALS } from "../../src/cli/interrupt.js";
import { CancelledError } from "../../src/kernel/errors.js";

// process.emit("SIGINT") calls the SIGINT listeners as a real Ctrl-C would,
// without signalling the test runner's own process.
describe("Interrupt", () => {
  let interrupt: Interrupt | null = null;
  afterEach(() => interrupt?.dispose());

  it("aborts its signal with a CancelledError on the first Ctrl-C", () => {
    const onFirst = vi.fn();
    const onSecond = vi.fn();
    interrupt = new Interrupt(onFirst, onSecond);
    interrupt.listen();
    process.emit("SIGINT", "SIGINT");
    expect(interrupt.signal.aborted).toBe(true);
    expect(interrupt.signal.reason).toBeInstanceOf(CancelledError);
    expect(interrupt.interrupted).toBe(true);
    expect(onFirst).toHaveBeenCalledTimes(1);
    expect(onSecond).not.toHaveBeenCalled();
  });

  it("calls the exit-at-once handler on the second Ctrl-C", () => {
    const onFirst = vi.fn();
    const onSecond = vi.fn();
    interrupt = new Interrupt(onFirst, onSecond);
    interrupt.listen();
    process.emit("SIGINT", "SIGINT");
    process.emit("SIGINT", "SIGINT");
    expect(onFirst).toHaveBeenCalledTimes(1);
    expect(onSecond).toHaveBeenCalledTimes(1);
  });

  it("stops listening once disposed", () => {
    const before = STOP_SIGNALS.map((signal) => process.listenerCount(signal));
    interrupt = new Interrupt(vi.fn(), vi.fn());
    interrupt.listen();
    expect(STOP_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before.map((count) => count + 1));
    interrupt.dispose();
    expect(STOP_SIGNALS.map((signal) => process.listenerCount(signal))).toEqual(before);
  });

  it("stops at SIGTERM and SIGHUP too, and says which signal came first and which came second", () => {
    const onFirst = vi.fn();
    const onSecond = vi.fn();
    interrupt = new Interrupt(onFirst, onSecond);
    interrupt.listen();
    process.emit("SIGTERM", "SIGTERM");
    // SIGTERM lets the fetches in flight finish first: only `finishing` is aborted until FINISH_IN_FLIGHT_MS have passed.
    expect(interrupt.finishing.aborted).toBe(true);
    expect(interrupt.signal.aborted).toBe(false);
    expect((interrupt.finishing.reason as Error).message).toBe("interrupted by SIGTERM");
    expect(interrupt.received).toBe("SIGTERM");
    process.emit("SIGHUP", "SIGHUP");
    expect(onFirst.mock.calls).toEqual([["SIGTERM"]]);
    expect(onSecond.mock.calls).toEqual([["SIGHUP"]]);
    expect(interrupt.received).toBe("SIGTERM");
  });

  it("gives the exit status a shell reports for each signal: 128 + its number", () => {
    expect(STOP_SIGNALS.map(signalExitStatus)).toEqual([130, 143, 129]);
  });
});
