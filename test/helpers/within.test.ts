import { afterEach, describe, expect, it, vi } from "vitest";
import { within } from "./within.js";

describe("within", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("resolves with the promise's value and leaves no timer behind", async () => {
    vi.useFakeTimers();
    const settled = within(5_000, Promise.resolve("done"), "a quick job");
    await expect(settled).resolves.toBe("done");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with the promise's own error and leaves no timer behind", async () => {
    vi.useFakeTimers();
    const failure = new Error("it broke");
    await expect(within(5_000, Promise.reject(failure), "a failing job")).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects naming what hung when the promise is still pending at the limit", async () => {
    vi.useFakeTimers();
    const settled = within(5_000, new Promise<never>(() => {}), "queue.join()");
    const checked = expect(settled).rejects.toThrow("Hung: queue.join() did not finish within 5000 ms");
    await vi.advanceTimersByTimeAsync(5_000);
    await checked;
    expect(vi.getTimerCount()).toBe(0);
  });
});
