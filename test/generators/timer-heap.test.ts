import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TimerHandle, TimerHeap } from "../../src/generators/timer-heap.js";

function noop(): void {}

describe("TimerHeap", () => {
  it("pops timers by moment, then by sequence, whatever was removed", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.boolean()), { maxLength: 60 }),
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
          for (let handle = heap.pop(); handle !== undefined; handle = heap.pop()) popped.push(handle);
          const expected = [...kept].sort(function byMoment(a, b) {
            return a.when - b.when || a.sequence - b.sequence;
          });
          expect(popped).toEqual(expected);
          expect(popped.every(function detached(handle) {
            return !handle.scheduled() && handle.heapIndex === -1;
          })).toBe(true);
        },
      ),
    );
  });

  it("ignores cancelling a handle that already left the heap", () => {
    const heap = new TimerHeap();
    const handle = new TimerHandle(1, 0, noop);
    heap.push(handle);
    expect(heap.pop()).toBe(handle);
    handle.cancel();
    expect(heap.size).toBe(0);
  });
});
