import { describe, expect, it } from "vitest";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { JoinableQueue, QueueEmpty } from "../../src/generators/queues.js";
import { sleep, Task } from "../../src/generators/tasks.js";
import { within } from "../helpers/within.js";
import { outcome } from "./outcome.js";

/** How long a join() may take before the test fails as hung: generous, machines are shared. */
const HANG_MS = 5_000;

function run<T>(coro: Coroutine<T>): Promise<T> {
  const loop = new EventLoop();
  const task = loop.runUntilComplete(coro);
  return Promise.resolve(task).finally(function closeLoop() {
    setImmediate(function afterStop() {
      loop.close();
    });
  });
}

describe("JoinableQueue", () => {
  it("gives items back first in, first out", () => {
    const queue = new JoinableQueue<string>();
    queue.putNowait("a");
    queue.putNowait("b");
    queue.putNowait("c");
    expect(queue.qsize()).toBe(3);
    expect([queue.getNowait(), queue.getNowait(), queue.getNowait()]).toEqual(["a", "b", "c"]);
    expect(queue.empty()).toBe(true);
  });

  it("throws QueueEmpty from getNowait() on an empty queue", () => {
    expect(() => new JoinableQueue<number>().getNowait()).toThrow(QueueEmpty);
  });

  it("throws RangeError when taskDone() is called more times than items were put", () => {
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    queue.getNowait();
    queue.taskDone();
    expect(() => queue.taskDone()).toThrow(RangeError);
    expect(queue.unfinishedTasks).toBe(0);
  });

  it("returns from join() at once when nothing is unfinished", async () => {
    const queue = new JoinableQueue<number>();
    function* main(): Coroutine<string> {
      yield* queue.join();
      return "joined";
    }
    expect(await within(HANG_MS, run(main()), "join() of a queue with nothing unfinished")).toBe("joined");
  });

  it("resumes join() only after taskDone() for every item put, including items put by workers", async () => {
    const queue = new JoinableQueue<number>();
    const events: string[] = [];
    function* worker(): Coroutine<void> {
      for (;;) {
        const n = yield* queue.get();
        yield* sleep(0);
        if (n > 0) queue.putNowait(n - 1); // new work, put before this item is done
        events.push(`done ${n}`);
        queue.taskDone();
      }
    }
    function* main(): Coroutine<void> {
      queue.putNowait(3);
      const workers = [new Task(worker()), new Task(worker())];
      yield* queue.join();
      events.push("joined");
      for (const w of workers) w.cancel();
    }
    await within(HANG_MS, run(main()), "join() while 2 workers put and finish items");
    expect(events).toEqual(["done 3", "done 2", "done 1", "done 0", "joined"]);
    expect(queue.unfinishedTasks).toBe(0);
  });

  it("can be joined again after more work", async () => {
    const queue = new JoinableQueue<string>();
    let joins = 0;
    function* finishSoon(): Coroutine<void> {
      yield* sleep(0);
      queue.getNowait();
      queue.taskDone();
    }
    function* main(): Coroutine<void> {
      for (const item of ["first", "second"]) {
        queue.putNowait(item);
        const finisher = new Task(finishSoon());
        yield* queue.join();
        joins += 1;
        yield* finisher;
      }
    }
    await within(HANG_MS, run(main()), "the second join() after more work");
    expect(joins).toBe(2);
  });

  it("wakes waiting getters in the order they started waiting", async () => {
    const queue = new JoinableQueue<string>();
    const got: string[] = [];
    function* getter(name: string): Coroutine<void> {
      got.push(`${name} got ${yield* queue.get()}`);
    }
    function* main(): Coroutine<void> {
      const first = new Task(getter("first"));
      const second = new Task(getter("second"));
      yield* sleep(0); // both are waiting now
      yield* queue.put("x");
      yield* queue.put("y");
      yield* first;
      yield* second;
    }
    await run(main());
    expect(got).toEqual(["first got x", "second got y"]);
  });

  it("does not strand an item when the getter it woke is cancelled", async () => {
    const queue = new JoinableQueue<string>();
    const got: string[] = [];
    function* getter(name: string): Coroutine<void> {
      got.push(`${name} got ${yield* queue.get()}`);
    }
    function* main(): Coroutine<void> {
      const cancelled = new Task(getter("cancelled"));
      const patient = new Task(getter("patient"));
      yield* sleep(0);
      queue.putNowait("item"); // wakes `cancelled`...
      cancelled.cancel(); // ...which is cancelled before it can take the item
      expect(yield* outcome(cancelled)).toBe("CancelledError");
      yield* patient;
    }
    await within(HANG_MS, run(main()), "the patient getter, after the woken one was cancelled");
    expect(got).toEqual(["patient got item"]);
  });

  // CPython 3.11 serves A<-x, C<-y, D<-z in both cases (queues.py wakes the next
  // getter only when the cancelled one had been handed an item).
  it.each([
    ["has ended before x arrives", true],
    ["has not run its cancellation yet when x arrives", false],
  ])("keeps first-come order when the getter B, never woken, is cancelled and %s", async (_when, settleFirst) => {
    const queue = new JoinableQueue<string>();
    const got: string[] = [];
    function* getter(name: string): Coroutine<void> {
      got.push(`${name}<-${yield* queue.get()}`);
    }
    function* main(): Coroutine<void> {
      const tasks = ["A", "B", "C", "D"].map((name) => new Task(getter(name)));
      yield* sleep(0); // all four are waiting
      tasks[1].cancel();
      if (settleFirst) yield* sleep(0); // B has ended, cancelled
      queue.putNowait("x");
      yield* sleep(0); // A has taken x...
      yield* sleep(0); // ...and a getter that B's cancel woke (wrongly: C) has run, found the queue empty and queued again
      queue.putNowait("y");
      queue.putNowait("z");
      for (const task of tasks) yield* outcome(task);
    }
    await run(main());
    expect(got).toEqual(["A<-x", "C<-y", "D<-z"]);
  });

  it("keeps its order across many items", () => {
    const queue = new JoinableQueue<number>();
    const out: number[] = [];
    for (let i = 0; i < 5000; i++) {
      queue.putNowait(i);
      if (i % 3 === 0) out.push(queue.getNowait());
    }
    while (!queue.empty()) out.push(queue.getNowait());
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });
});

describe("JoinableQueue: the lesson's points (taskDone and join)", () => {
  /** A Task that joins `queue` and says when join() returned; the loop is turned by hand. */
  function joiner(queue: JoinableQueue<number>, loop: EventLoop): { joined: () => boolean } {
    let joined = false;
    function* join(): Coroutine<void> {
      yield* queue.join();
      joined = true;
    }
    new Task(join(), loop);
    return { joined: () => joined };
  }

  /** A few iterations: enough for a Task whose Future is resolved to resume. */
  function turns(loop: EventLoop): void {
    for (let i = 0; i < 4; i++) loop.runOnce();
  }

  it("join waits for taskDone() of every item taken, though the queue is empty", () => {
    const loop = new EventLoop();
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    queue.putNowait(2);
    queue.getNowait();
    queue.getNowait(); // The queue is empty; both items are still in work.
    const { joined } = joiner(queue, loop);
    turns(loop);
    expect(joined(), "join returned while items taken from the queue were not done").toBe(false);
    queue.taskDone();
    turns(loop);
    expect(joined(), "join returned before taskDone() of every item").toBe(false);
    queue.taskDone();
    turns(loop);
    expect(joined(), "taskDone() of the last item did not resume join").toBe(true);
    loop.close();
  });

  it("join waits again after new puts, once an earlier join returned (no stale join Future)", () => {
    const loop = new EventLoop();
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    const first = joiner(queue, loop);
    turns(loop);
    queue.getNowait();
    queue.taskDone();
    turns(loop);
    expect(first.joined()).toBe(true);
    queue.putNowait(2);
    const second = joiner(queue, loop);
    turns(loop);
    expect(second.joined(), "join returned at once after new puts: a join Future left resolved from the last join").toBe(false);
    queue.getNowait();
    queue.taskDone();
    turns(loop);
    expect(second.joined(), "taskDone() did not resume the second join").toBe(true);
    loop.close();
  });

  it("join resumes every Task that joins, not only the last", () => {
    const loop = new EventLoop();
    const queue = new JoinableQueue<number>();
    queue.putNowait(1);
    const joiners = [joiner(queue, loop), joiner(queue, loop), joiner(queue, loop)];
    turns(loop);
    queue.getNowait();
    queue.taskDone();
    turns(loop);
    expect(joiners.map(({ joined }) => joined()), "join resumed only some of the Tasks joining").toEqual([true, true, true]);
    loop.close();
  });

  it("taskDone throws a RangeError when called more times than items were put, and leaves the count at zero", () => {
    const queue = new JoinableQueue<number>();
    expect(() => queue.taskDone(), "taskDone() on a queue nothing was put in").toThrow(RangeError);
    queue.putNowait(1);
    queue.getNowait();
    queue.taskDone();
    expect(() => queue.taskDone(), "taskDone() once too often").toThrow(RangeError);
    expect(queue.unfinishedTasks).toBe(0);
  });
});
