import { afterEach, describe, expect, it, vi } from "vitest";
import { Interrupt } from "../../src/cli/interrupt.js";
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
    const before = process.listenerCount("SIGINT");
    interrupt = new Interrupt(vi.fn(), vi.fn());
    interrupt.listen();
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    interrupt.dispose();
    expect(process.listenerCount("SIGINT")).toBe(before);
  });
});
