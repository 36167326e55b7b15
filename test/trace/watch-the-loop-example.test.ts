/**
 * Example 15 runs, and its trace shows what it says: overlapping fetches,
 * never more than maxTasks, interruptions only at yield* or await.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main as watchTheLoop } from "../../examples/15-watch-the-loop.js";

let printed: string[] = [];

beforeEach(() => {
  printed = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed.push(args.map(String).join(" "));
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("example 15", () => {
  it("shows overlapping fetches, within maxTasks, interrupted only at yield* or await, in every stage", async () => {
    const watches = await watchTheLoop();
    expect(watches.map((w) => w.stage)).toEqual(["callbacks", "generators", "asyncawait"]);
    for (const w of watches) {
      expect(w.attempts).toBeGreaterThan(60);
      expect(w.overlapping).toBeGreaterThan(w.attempts / 2);
      expect(w.peakInFlight).toBeGreaterThan(1);
      expect(w.peakInFlight).toBeLessThanOrEqual(5);
      expect(w.interruptions).toBe(0);
    }
    const output = printed.join("\n");
    expect(output).toMatch(/fetch-start http:\/\/127\.0\.0\.1:\d+\/ slot 0 try 1/);
    expect(output).toMatch(/dispatch connected .* socket#1\n.*connect .*\n.*send /);
    expect(output).toContain("maxTasks is 5: no stage ever had more fetches in flight.");
  });
});
