import { describe, expect, it } from "vitest";
import { main } from "../../examples/10-generators-countdown.js";

/** The lines of one launch, in the order they appear. */
function linesOf(label: string, lines: readonly string[]): string[] {
  return lines.filter((line) => line.startsWith(`${label} `));
}

describe("countdown example", () => {
  it("interleaves three countdowns in one thread, each in its own order", async () => {
    const printed: string[] = [];
    const lines = await main({ secondsPerTick: 0.02, print: (line) => printed.push(line) });
    expect(lines).toHaveLength(21);
    expect(printed).toHaveLength(22); // and the elapsed time
    expect(linesOf("A", lines)).toEqual([
      "A waiting 0 seconds before starting countdown",
      "A starting after waiting 0 seconds",
      "A T-minus 5",
      "A T-minus 4",
      "A T-minus 3",
      "A T-minus 2",
      "A T-minus 1",
      "A lift-off!",
    ]);
    expect(linesOf("B", lines)).toEqual([
      "B waiting 2 seconds before starting countdown",
      "B starting after waiting 2 seconds",
      "B T-minus 3",
      "B T-minus 2",
      "B T-minus 1",
      "B lift-off!",
    ]);
    expect(linesOf("C", lines)).toHaveLength(7);
    // All three start waiting before any of them goes on: none blocks the others.
    expect(lines.slice(0, 3)).toEqual([
      "A waiting 0 seconds before starting countdown",
      "B waiting 2 seconds before starting countdown",
      "C waiting 1 seconds before starting countdown",
    ]);
    expect(lines[3]).toBe("A starting after waiting 0 seconds");
    // The launches interleave: C starts while A counts, B after C.
    expect(lines.indexOf("C starting after waiting 1 seconds")).toBeLessThan(lines.indexOf("A T-minus 3"));
    expect(lines.indexOf("C starting after waiting 1 seconds")).toBeLessThan(
      lines.indexOf("B starting after waiting 2 seconds"),
    );
    expect(lines.indexOf("B starting after waiting 2 seconds")).toBeLessThan(lines.indexOf("A T-minus 1"));
    // All three lift off together, last.
    expect(lines.slice(-3).sort()).toEqual(["A lift-off!", "B lift-off!", "C lift-off!"]);
  });
});
