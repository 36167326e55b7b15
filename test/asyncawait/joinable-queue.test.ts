import { describe, expect, it } from "vitest";
import { JoinableQueue } from "../../src/asyncawait/joinable-queue.js";
import { CancelledError } from "../../src/kernel/errors.js";
import { within } from "../helpers/within.js";

/** How long a join() or a waiting get() may take before the test fails as hung: generous, machines are shared. */
const HANG_MS = 5_000;

/** Lets every pending promise job run, so "has it resolved yet?" can be asked. */
async function flushJobs(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
}

describe("JoinableQueue", () => {
  it("gives items back in the order they were put", async () => {
    const queue = new JoinableQueue<number>();
    await queue.put(1);
    queue.putNowait(2);
    queue.putNowait(3);
    expect(queue.size()).toBe(3);
    expect(await queue.get()).toBe(1);
    expect(queue.getNowait()).toBe(2);
    expect(await queue.get()).toBe(3);
    expect(queue.size()).toBe(0);
  });

  it("keeps FIFO order across thousands of items", async () => {
    const queue = new JoinableQueue<number>();
    const taken: number[] = [];
    for (let i = 0; i < 5000; i++) queue.putNowait(i);
    for (let i = 0; i < 2500; i++) taken.push(queue.getNowait());
    for (let i = 5000; i < 6000; i++) queue.putNowait(i);
    while (queue.size() > 0) taken.push(await queue.get());
    expect(taken).toEqual(Array.from({ length: 6000 }, (_, i) => i));
  });

  it("hands a put item to the oldest waiting get", async () => {
    const queue = new JoinableQueue<string>();
    const first = queue.get();
    const second = queue.get();
    queue.putNowait("a");
    queue.putNowait("b");
    expect(await within(HANG_MS, first, "the first waiting get()")).toBe("a");
    expect(await within(HANG_MS, second, "the second waiting get()")).toBe("b");
    expect(queue.size()).toBe(0);
  });

  it("throws RangeError from getNowait() on an empty queue", () => {
    expect(() => new JoinableQueue<number>().getNowait()).toThrow(RangeError);
  });

  it("resolves join() at once when nothing was put", async () => {
    const queue = new JoinableQueue<number>();
    await expect(within(HANG_MS, queue.join(), "join() of a queue nothing was put in")).resolves.toBeUndefined();
  });

  it("resolves join() only after taskDone() was called once per item", async () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    queue.putNowait(2);
    let joined = false;
    void queue.join().then(function markJoined() {
      joined = true;
    });
    queue.getNowait();
    queue.getNowait();
    await flushJobs();
    expect(joined).toBe(false); // both taken, neither marked done
    queue.taskDone();
    await flushJobs();
    expect(joined).toBe(false);
    queue.taskDone();
    await flushJobs();
    expect(joined).toBe(true);
  });

  it("keeps join() waiting for items put while it waits", async () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    let joined = false;
    void queue.join().then(function markJoined() {
      joined = true;
    });
    queue.getNowait();
    queue.putNowait(2); // a consumer found a new item before finishing the first
    queue.taskDone();
    await flushJobs();
    expect(joined).toBe(false);
    queue.getNowait();
    queue.taskDone();
    await flushJobs();
    expect(joined).toBe(true);
  });

  it("resolves every join() caller", async () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    const joins = [queue.join(), queue.join(), queue.join()];
    queue.getNowait();
    queue.taskDone();
    await expect(within(HANG_MS, Promise.all(joins), "three join() calls")).resolves.toHaveLength(3);
  });

  it("throws RangeError when taskDone() is called more times than items were put", () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    queue.getNowait();
    queue.taskDone();
    expect(() => queue.taskDone()).toThrow(RangeError);
    expect(() => queue.taskDone()).toThrow("taskDone() called too many times");
  });

  it("rejects a waiting get with the signal's reason when the signal aborts", async () => {
    const queue = new JoinableQueue<number>();
    const controller = new AbortController();
    const waiting = queue.get(controller.signal);
    const reason = new CancelledError();
    controller.abort(reason);
    await expect(within(HANG_MS, waiting, "a get() whose signal aborted")).rejects.toBe(reason);
  });

  it("leaves no waiter behind when a waiting get is cancelled", async () => {
    const queue = new JoinableQueue<number>();
    const controller = new AbortController();
    const cancelled = queue.get(controller.signal);
    controller.abort(new CancelledError());
    await expect(within(HANG_MS, cancelled, "a get() whose signal aborted")).rejects.toBeInstanceOf(CancelledError);
    queue.putNowait(7); // no cancelled getter swallows it
    expect(queue.size()).toBe(1);
    expect(await queue.get()).toBe(7);
  });

  it("serves the next getter when the oldest one is cancelled", async () => {
    const queue = new JoinableQueue<number>();
    const controller = new AbortController();
    const cancelled = queue.get(controller.signal);
    const next = queue.get();
    controller.abort(new CancelledError());
    queue.putNowait(5);
    await expect(within(HANG_MS, cancelled, "a get() whose signal aborted")).rejects.toBeInstanceOf(CancelledError);
    expect(await within(HANG_MS, next, "the get() after a cancelled one")).toBe(5);
  });

  it("rejects get at once when the signal is already aborted, even with items waiting", async () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    const reason = new CancelledError();
    await expect(queue.get(AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(queue.size()).toBe(1);
  });

  it("lets N workers drain the queue and join() end the run, like the chapter's crawler", async () => {
    const queue = new JoinableQueue<number>();
    const controller = new AbortController();
    const processed: number[] = [];
    for (let i = 0; i < 3; i++) queue.putNowait(i);
    async function work(): Promise<void> {
      for (;;) {
        const item = await queue.get(controller.signal);
        try {
          processed.push(item);
          if (item < 20) queue.putNowait(item + 3);
        } finally {
          queue.taskDone();
        }
      }
    }
    const workers = Array.from({ length: 4 }, work);
    await within(HANG_MS, queue.join(), "join() while 4 workers drain the queue");
    controller.abort(new CancelledError());
    const outcomes = await within(HANG_MS, Promise.allSettled(workers), "4 workers parked in get() after their signal aborted");
    expect(outcomes.every((outcome) => outcome.status === "rejected")).toBe(true);
    expect(processed.sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i));
  });
});
