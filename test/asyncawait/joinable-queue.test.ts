import { describe, expect, it } from "vitest";
import { JoinableQueue, QueueShutDown } from "../../src/asyncawait/joinable-queue.js";
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

  it("keeps a join() made after new puts waiting, once an earlier join() resolved (no stale promise)", async () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    const first = queue.join();
    queue.getNowait();
    queue.taskDone();
    await within(HANG_MS, first, "the first join()");
    queue.putNowait(2);
    let joined = false;
    void queue.join().then(function markJoined() {
      joined = true;
    });
    await flushJobs();
    expect(joined, "join() resolved at once after new puts: the promise of the last join() was kept").toBe(false);
    queue.getNowait();
    queue.taskDone();
    await flushJobs();
    expect(joined, "taskDone() did not resolve the second join()").toBe(true);
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
  });

  describe("shutdown()", () => {
    it("makes put() and putNowait() throw QueueShutDown", async () => {
      const queue = new JoinableQueue<number>();
      queue.shutdown();
      expect(() => queue.putNowait(1)).toThrow(QueueShutDown);
      await expect(queue.put(1)).rejects.toBeInstanceOf(QueueShutDown);
      expect(queue.isShutdown()).toBe(true);
      expect(queue.unfinished()).toBe(0);
    });

    it("still gives the items waiting, then makes get() and getNowait() throw QueueShutDown", async () => {
      const queue = new JoinableQueue<number>();
      queue.putNowait(1);
      queue.putNowait(2);
      queue.shutdown();
      expect(await queue.get()).toBe(1);
      expect(queue.getNowait()).toBe(2);
      await expect(queue.get()).rejects.toBeInstanceOf(QueueShutDown);
      expect(() => queue.getNowait()).toThrow(QueueShutDown);
    });

    it("wakes every waiting get, which throws QueueShutDown", async () => {
      const queue = new JoinableQueue<number>();
      const waiting = [queue.get(), queue.get(), queue.get()];
      await flushJobs();
      queue.shutdown();
      const outcomes = await within(HANG_MS, Promise.allSettled(waiting), "three waiting get() calls after shutdown()");
      expect(outcomes.map((outcome) => (outcome.status === "rejected" ? outcome.reason : outcome.value))).toEqual([
        expect.any(QueueShutDown),
        expect.any(QueueShutDown),
        expect.any(QueueShutDown),
      ]);
    });

    it("with immediate, drops the items waiting and marks each done, so join() waits only for those being processed", async () => {
      const queue = new JoinableQueue<number>();
      for (let i = 0; i < 5; i++) queue.putNowait(i);
      queue.getNowait(); // one item is being processed
      let joined = false;
      void queue.join().then(function markJoined() {
        joined = true;
      });
      queue.shutdown(true);
      expect(queue.size()).toBe(0);
      expect(queue.unfinished()).toBe(1);
      await expect(queue.get()).rejects.toBeInstanceOf(QueueShutDown);
      await flushJobs();
      expect(joined).toBe(false);
      queue.taskDone();
      await flushJobs();
      expect(joined).toBe(true);
    });

    it("with immediate, still gives a waiting get the item a put handed it before, and rejects the next get", async () => {
      const queue = new JoinableQueue<string>();
      const waiting = queue.get();
      queue.putNowait("handed over just before the stop");
      queue.shutdown(true);
      await expect(within(HANG_MS, waiting, "a get() handed an item before shutdown(true)")).resolves.toBe("handed over just before the stop");
      await expect(queue.get()).rejects.toBeInstanceOf(QueueShutDown);
      expect(queue.unfinished()).toBe(1); // its consumer still owes a taskDone()
    });
  });

  it("lets N workers drain the queue, join() end the run and shutdown() end the workers, like the chapter's crawler", async () => {
    const queue = new JoinableQueue<number>();
    const processed: number[] = [];
    for (let i = 0; i < 3; i++) queue.putNowait(i);
    async function work(): Promise<void> {
      for (;;) {
        const item = await queue.get();
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
    queue.shutdown();
    const outcomes = await within(HANG_MS, Promise.allSettled(workers), "4 workers parked in get() after shutdown()");
    expect(outcomes.every((outcome) => outcome.status === "rejected" && outcome.reason instanceof QueueShutDown)).toBe(true);
    expect(processed.sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i));
  });
});
