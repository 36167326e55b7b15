import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlockFifo } from "../../src/crawl/block-fifo.js";

describe("BlockFifo", () => {
  it("gives items back in the order they were pushed", () => {
    const fifo = new BlockFifo<string>();
    fifo.push("a");
    fifo.push("b");
    expect(fifo.length).toBe(2);
    expect(fifo.shift()).toBe("a");
    fifo.push("c");
    expect(fifo.shift()).toBe("b");
    expect(fifo.shift()).toBe("c");
    expect(fifo.length).toBe(0);
  });

  it("keeps the order across many blocks, pushed and shifted in turns", () => {
    const fifo = new BlockFifo<number>();
    const taken: number[] = [];
    for (let i = 0; i < 5000; i++) fifo.push(i);
    for (let i = 0; i < 2500; i++) taken.push(fifo.shift());
    for (let i = 5000; i < 6000; i++) fifo.push(i);
    expect(fifo.length).toBe(3500);
    while (fifo.length > 0) taken.push(fifo.shift());
    expect(taken).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });

  it("takes items again after it was emptied, at a block's end or in its middle", () => {
    const fifo = new BlockFifo<number>();
    for (const count of [1024, 1, 2048, 700]) {
      for (let i = 0; i < count; i++) fifo.push(i);
      for (let i = 0; i < count; i++) expect(fifo.shift()).toBe(i);
      expect(fifo.length).toBe(0);
    }
    fifo.push(7);
    expect(fifo.shift()).toBe(7);
  });

  it("throws RangeError from shift() when empty", () => {
    const fifo = new BlockFifo<number>();
    expect(() => fifo.shift()).toThrow(RangeError);
    fifo.push(1);
    fifo.shift();
    expect(() => fifo.shift()).toThrow(RangeError);
  });

  it("answers as an array used as a queue does, for any run of pushes and shifts", () => {
    // Each step pushes that many items, or (negative) shifts up to that many: enough to cross blocks of 1,024.
    const steps = fc.array(fc.integer({ min: -2500, max: 2500 }), { maxLength: 12 });
    fc.assert(
      fc.property(steps, (counts) => {
        const fifo = new BlockFifo<number>();
        const expected: number[] = []; // What the queue holds, oldest at `head`.
        let head = 0;
        for (const count of counts) {
          for (let i = 0; i < count; i++) {
            fifo.push(expected.length);
            expected.push(expected.length);
          }
          const taken: number[] = [];
          for (let i = 0; i < -count && fifo.length > 0; i++) taken.push(fifo.shift());
          expect(taken).toEqual(expected.slice(head, head + taken.length));
          head += taken.length;
          expect(fifo.length).toBe(expected.length - head);
        }
      }),
      { numRuns: 100 },
    );
  });
});
