import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TimerHandle, TimerHeap } from "../../src/kernel/timers.js";

function noop(): void {}

describe("TimerHeap", () => {
  it("pops timers by moment, then by sequence, whatever was cancelled", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -20, max: 20 }), fc.boolean()), { maxLength: 400 }), // past the rebuild threshold (64 cancelled)
        function popsInOrder(specs) {
          const heap = new TimerHeap();
          const handles = specs.map(function make([when], sequence) {
            return new TimerHandle(when, sequence, noop);
          });
          for (const handle of handles) heap.push(handle);
          const kept = handles.filter(function removeSome(handle, index) {
            if (specs[index]?.[1] === true) {
              handle.cancel();
              return false;
            }
            return true;
          });
          expect(heap.size).toBe(kept.length);
          const popped: TimerHandle[] = [];
          for (let handle = heap.popDue(Infinity); handle !== undefined; handle = heap.popDue(Infinity)) popped.push(handle);
          const expected = [...kept].sort(function byMoment(a, b) {
            return a.when - b.when || a.sequence - b.sequence;
          });
          expect(popped).toEqual(expected);
          expect(popped.every(function detached(handle) {
            return !handle.scheduled() && handle.heap === null;
          })).toBe(true);
        },
      ),
    );
  });

  it("pops only the timers due by now, ties in the order they were set", () => {
    const heap = new TimerHeap();
    const order: string[] = [];
    const specs = [[30, "c"], [10, "a1"], [20, "b"], [10, "a2"], [5, "first"], [50, "later"]] as const;
    specs.forEach(function add([when, name], sequence) {
      heap.push(new TimerHandle(when, sequence, () => order.push(name)));
    });
    for (let timer = heap.popDue(30); timer !== undefined; timer = heap.popDue(30)) timer.callback();
    expect(order).toEqual(["first", "a1", "a2", "b", "c"]);
    expect(heap.size).toBe(1);
    expect(heap.peek()?.when).toBe(50);
  });

  it("counts only the timers still to run after many are cancelled", () => {
    const heap = new TimerHeap();
    const timers = Array.from({ length: 200 }, (_, index) => new TimerHandle(index, index, noop));
    for (const timer of timers) heap.push(timer);
    for (const timer of timers.slice(0, 150)) timer.cancel();
    timers[0]?.cancel(); // twice: no effect
    expect(heap.size).toBe(50);
    expect(heap.popDue(1000)?.when).toBe(150);
    expect(heap.size).toBe(49);
  });

  it("drops a cancelled timer's callback, as asyncio does, so the handle waiting in the heap keeps nothing alive", () => {
    let calls = 0;
    function fire(): void {
      calls += 1;
    }
    const heap = new TimerHeap();
    const handle = new TimerHandle(10, 0, fire);
    heap.push(handle);
    expect(handle.callback).toBe(fire);
    handle.cancel();
    expect(handle.callback).not.toBe(fire);
    handle.callback();
    expect(calls).toBe(0);
  });

  it("ignores cancelling a handle that already left the heap", () => {
    const heap = new TimerHeap();
    const handle = new TimerHandle(1, 0, noop);
    heap.push(handle);
    expect(heap.popDue(1)).toBe(handle);
    handle.cancel();
    expect(heap.size).toBe(0);
    expect(handle.cancelled()).toBe(true);
  });

  it("skips a cancelled timer lazily, when it reaches the top", () => {
    const heap = new TimerHeap();
    const first = new TimerHandle(1, 0, noop);
    const second = new TimerHandle(2, 1, noop);
    heap.push(first);
    heap.push(second);
    first.cancel();
    expect(heap.size).toBe(1);
    expect(heap.peek()).toBe(second);
    expect(first.heap).toBeNull(); // dropped on the way to the answer
  });
});
