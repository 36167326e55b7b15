import { describe, expect, it } from "vitest";
import { SlotMap, Slots } from "../../src/crawl/slots.js";

describe("Slots", () => {
  it("gives a freed slot to the next item added, and frees a slot only for the item that holds it", () => {
    const slots = new Slots<string>();
    const a = slots.add("a");
    const b = slots.add("b");
    slots.remove(a, "not a");
    expect(slots.list().sort()).toEqual(["a", "b"]);
    slots.remove(a, "a");
    expect(slots.add("c")).toBe(a);
    expect(slots.list().sort()).toEqual(["b", "c"]);
    expect(b).toBe(1);
  });
});

describe("SlotMap", () => {
  it("sets, replaces and deletes entries by key, with no slot number to carry", () => {
    const map = new SlotMap<{ name: string }, number>();
    const [x, y, z] = [{ name: "x" }, { name: "y" }, { name: "z" }];
    map.set(x, 1);
    map.set(y, 2);
    map.set(x, 3); // replaces x's value in x's slot
    expect(map.entries()).toEqual([
      [x, 3],
      [y, 2],
    ]);
    map.delete(x);
    map.delete(x); // a key no longer in the map: nothing happens
    map.set(z, 4); // takes the slot x freed
    expect(map.entries()).toEqual([
      [z, 4],
      [y, 2],
    ]);
  });
});
