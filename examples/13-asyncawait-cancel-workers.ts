/**
 * Example 13: ending idle workers in async/await.
 *
 * The chapter ends its crawl with `yield from self.q.join()` and then
 * `w.cancel()` for each worker: the workers are idle, parked in `q.get()`,
 * and cancelling throws `CancelledError` in at that point. Nothing can throw
 * into a suspended `async` function, so stage 3 lets the queue do it, as
 * Python 3.13 does: `q.shutdown()` wakes every parked `get()`, which finds the
 * queue empty and shut down and throws `QueueShutDown`; the worker's loop ends
 * there.
 *
 * Part 1 does this with the bare {@link JoinableQueue}: three workers, six
 * items, `join()`, then one `shutdown()`. Note the `finally` around
 * `taskDone()`: without it, a worker that failed on an item would never
 * mark it done and `join()` would wait forever, a hole in the chapter's
 * crawler that every stage here closes.
 *
 * Part 2 cancels a whole crawl from outside: the caller's `signal` aborts
 * after ten records; the crawler shuts its queue down at once (the URLs still
 * queued are dropped), the fetches in flight are cancelled and make no
 * record, and `crawl()` resolves with what it has, the rest counted as `todo`.
 *
 * Run it: `npx tsx examples/13-asyncawait-cancel-workers.ts [URL]`
 *
 * @see Chapter, "Coordinating Coroutines" (`q.join()`, then `w.cancel()`)
 * @module
 */
import { fileURLToPath } from "node:url";
import { crawl, JoinableQueue } from "../src/asyncawait/index.js";
import { CancelledError } from "../src/kernel/errors.js";
import type { FetchStatistic } from "../src/crawl/records.js";
import { openRoot } from "./open-root.js";

/** Part 1: workers on a joinable queue, joined, then sent home with shutdown() while idle. */
async function joinThenCancel(): Promise<void> {
  const q = new JoinableQueue<number>();

  async function worker(name: string): Promise<void> {
    for (;;) {
      const item = await q.get(); // Idle workers wait here, and throw QueueShutDown here after shutdown().
      try {
        console.log(`  ${name} handles item ${item}`);
      } finally {
        q.taskDone(); // Always: a worker that skips this on an error makes join() wait forever.
      }
    }
  }

  const workers = ["w1", "w2", "w3"].map(worker);
  for (let item = 1; item <= 6; item++) q.putNowait(item);
  await q.join(); // Every item put has been marked done.
  console.log("  join() resolved; the workers are parked in get(): shut the queue down");
  q.shutdown();
  const endings = await Promise.allSettled(workers);
  const workerEndings = endings.map(function ending(outcome): string {
    return outcome.status === "rejected" && outcome.reason instanceof Error ? outcome.reason.name : outcome.status;
  });
  console.log(`  the workers ended with: ${workerEndings.join(", ")}`);
}

/** Part 2: a crawl cancelled from outside after ten records. */
async function cancelCrawl(url: string): Promise<void> {
  const controller = new AbortController();
  let seen = 0;
  function onRecord(_record: FetchStatistic): void {
    seen += 1;
    if (seen === 10) controller.abort(new CancelledError("enough for this example"));
  }
  const result = await crawl(url, { maxTasks: 3, signal: controller.signal, onRecord });
  const why = controller.signal.aborted ? "the signal aborted at the 10th record" : "the crawl ended before its 10th record";
  console.log(`  ${why}; crawl() resolved with ${result.records.length} records and ${result.todo} URLs left to do`);
}

/** Runs both parts. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Stage 3, async/await: idle workers wait at `await q.get()` until shutdown() or an AbortSignal ends them");
  const root = await openRoot(rootUrl);
  try {
    console.log("Part 1: three workers, six items; join(), then shutdown() ends the idle workers");
    await joinThenCancel();
    console.log("Part 2: cancel a crawl with an AbortSignal");
    await cancelCrawl(root.url);
    if (root.demo !== null) console.log(`  (a whole crawl of the demo site makes ${root.demo.expected.records.length} records)`);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
