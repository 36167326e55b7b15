import { describe, expect, it } from "vitest";
import { sideBySide } from "./side-by-side.js";

describe("sideBySide", () => {
  it("prints two orders in columns and marks only the first difference", () => {
    const table = sideBySide("yours", ["a", "c", "b"], "logged", ["a", "b", "c", "d"]).split("\n");
    expect(table).toEqual([
      "     yours      logged",
      "  1  a          a",
      "  2  c          b   ← the first difference",
      "  3  b          c",
      "  4  (nothing)  d",
    ]);
  });

  it("is empty when the orders are the same", () => {
    expect(sideBySide("yours", ["a"], "logged", ["a"])).toBe("");
  });
});
