/**
 * Runs every example's `main()` against the demo site it starts, with the
 * console captured, so none of the examples can rot.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { main as blockingFetch } from "../examples/01-blocking-fetch.js";
import { main as busyLoop } from "../examples/02-nonblocking-busy-loop.js";
import { main as callbacksFetchOnePage } from "../examples/03-callbacks-fetch-one-page.js";
import { main as callbacksCrawl } from "../examples/04-callbacks-crawl.js";
import { main as stackRipping } from "../examples/05-stack-ripping.js";
import { main as generatorsHowTheyWork } from "../examples/06-generators-how-they-work.js";
import { main as futureAndTask } from "../examples/07-generators-future-and-task.js";
import { main as yieldStar } from "../examples/08-generators-yield-star.js";
import { main as generatorsCrawl } from "../examples/09-generators-crawl.js";
import { main as countdown } from "../examples/10-generators-countdown.js";
import { main as awaitOurFuture } from "../examples/11-await-our-future.js";
import { main as asyncAwaitCrawl } from "../examples/12-asyncawait-crawl.js";
import { main as cancelWorkers } from "../examples/13-asyncawait-cancel-workers.js";
import { main as compareStages } from "../examples/14-compare-stages.js";
import { main as watchTheLoop } from "../examples/15-watch-the-loop.js";
import { startDemoSite } from "../src/site/index.js";

/** Records a full crawl of the demo site makes, as the site itself computes them. */
let demoRecords = 0;

beforeAll(async () => {
  const demo = await startDemoSite();
  demoRecords = demo.expected.records.length;
  await demo.close();
});

let printed: string[] = [];

beforeEach(() => {
  printed = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
    printed.push(args.map(String).join(" "));
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function output(): string {
  return printed.join("\n");
}

describe("examples", () => {
  it("01 fetches in a blocked worker while the main thread serves, and cannot fetch from the blocked main thread", async () => {
    const summary = await blockingFetch();
    expect(summary.status).toBe(200);
    expect(summary.bodyBytes).toBeGreaterThan(0);
    expect(summary.answeredMeanwhile).toBe(1);
    expect(summary.mainThreadFetchFailed).toBe(true);
    expect(output()).toContain("gave up");
  });

  it("02 never connects while spinning, then connects and reads by polling", async () => {
    const summary = await busyLoop();
    expect(summary.stillConnectingAfterSpin).toBe(true);
    expect(summary.pollsToConnect).toBeGreaterThanOrEqual(1);
    expect(summary.status).toBe(200);
    expect(output()).toContain("still connecting? true");
  });

  it("03 fetches one page through the chain of callbacks", async () => {
    const summary = await callbacksFetchOnePage();
    expect(summary.status).toBe(200);
    expect(summary.steps[0]).toBe("fetch-start");
    expect(summary.steps.slice(1, 3)).toEqual(["connect", "send"]);
    expect(summary.steps.at(-1)).toBe("fetch-end");
    expect(summary.links.length).toBeGreaterThan(0);
    expect(output()).toContain("Steps: fetch-start → connect → send");
  });

  it("04 crawls the demo site with callbacks", async () => {
    const result = await callbacksCrawl();
    expect(result.records).toHaveLength(demoRecords);
    expect(result.todo).toBe(0);
    expect(output()).toContain(`Done: ${demoRecords}`);
  });

  it("05 loses the caller from the callback's stack and keeps it in the coroutine's", async () => {
    const summary = await stackRipping();
    expect(summary.callbacksFrames).toContain("parseBody");
    expect(summary.callbacksFrames.some((name) => /fetchPage|crawlOne/.test(name))).toBe(false);
    expect(summary.generatorsFrames).toContain("parseBody");
    expect(summary.generatorsFrames).toContain("fetchPageCoroutine");
    expect(summary.generatorsFrames).toContain("crawlOneCoroutine");
  });

  it("06 drives generators with next, throw and return, and delegates with yield*", async () => {
    const summary = await generatorsHowTheyWork();
    expect(summary.delegatedResult).toBe(43);
    expect(summary.lines).toContain("  accumulate received 10");
    expect(summary.lines).toContain("  outer got 42 from yield*");
    expect(summary.lines.filter((line) => line.includes("runs its finally block")).length).toBe(2);
  });

  it("07 fetches one page with a Future and a Task, where a bare yield receives undefined", async () => {
    const summary = await futureAndTask();
    expect(summary.status).toBe(200);
    expect(summary.pauses).toBeGreaterThanOrEqual(2);
    expect(summary.sentIn.length).toBeGreaterThanOrEqual(1);
    expect(new Set(summary.sentIn)).toEqual(new Set(["undefined"]));
    expect(summary.taskBefore).toContain("done: false");
    expect(summary.taskAfter).toContain("done: true");
  });

  it("08 fetches the root and four of its links with yield* and gather", async () => {
    const summary = await yieldStar();
    expect(summary.rootLinks).toBe(6);
    expect(summary.statuses).toHaveLength(4);
    expect(output().split("\n")).toHaveLength(5);
  });

  it("09 crawls the demo site with generator coroutines", async () => {
    const result = await generatorsCrawl();
    expect(result.records).toHaveLength(demoRecords);
    expect(output()).toContain(`Done: ${demoRecords}`);
  });

  it("10 interleaves Brett Cannon's three countdowns on our loop", async () => {
    const lines = await countdown({ secondsPerTick: 0.005, print: () => {} });
    expect(lines.filter((line) => line.endsWith("lift-off!"))).toHaveLength(3);
    expect(lines).toHaveLength(3 * 2 + 5 + 3 + 4 + 3);
  });

  it("11 awaits a Future, a Task, a failed Future and a plain thenable", async () => {
    const summary = await awaitOurFuture();
    expect(summary.timerValue).toBe("resolved by a timer on our loop");
    expect(summary.status).toBe(200);
    expect(summary.failure).toBe("failed on our loop");
    expect(summary.thenableValue).toBe(42);
  });

  it("12 crawls the demo site with async workers, never more requests in flight than workers", async () => {
    const summary = await asyncAwaitCrawl();
    expect(summary.result.records).toHaveLength(demoRecords);
    expect(summary.serverPeak).not.toBeNull();
    expect(summary.serverPeak).toBeLessThanOrEqual(summary.maxTasks);
    expect(output()).toContain(`Done: ${demoRecords}`);
  });

  it("13 ends idle workers with shutdown() after join(), and cancels a crawl from outside", async () => {
    const summary = await cancelWorkers();
    expect(Object.values(summary.handled).reduce((a, b) => a + b, 0)).toBe(6);
    expect(summary.workerEndings).toEqual(["QueueShutDown", "QueueShutDown", "QueueShutDown"]);
    expect(summary.records).toBeGreaterThanOrEqual(10);
    expect(summary.records).toBeLessThan(demoRecords);
    expect(summary.todo).toBeGreaterThan(0);
  });

  it("14 finds the three stages' records identical", async () => {
    const summary = await compareStages();
    expect(summary.recordCounts).toEqual([demoRecords, demoRecords, demoRecords]);
    expect(summary.identicalInOrder).toBe(true);
    expect(summary.identicalAsSet).toBe(true);
    expect(output()).toContain("same records in the same order: yes");
  });

  it("15 shows overlapping fetches, within maxTasks, interrupted only at yield* or await, in every stage", async () => {
    const watches = await watchTheLoop();
    expect(watches.map((w) => w.stage)).toEqual(["callbacks", "generators", "asyncawait"]);
    for (const w of watches) {
      expect(w.attempts).toBeGreaterThan(60);
      expect(w.overlapping).toBeGreaterThan(w.attempts / 2);
      expect(w.peakInFlight).toBeGreaterThan(1);
      expect(w.peakInFlight).toBeLessThanOrEqual(5);
      expect(w.interruptions).toBe(0);
    }
    const printedText = output();
    expect(printedText).toMatch(/fetch-start http:\/\/127\.0\.0\.1:\d+\/ slot 0 try 1/);
    expect(printedText).toMatch(/dispatch connected .* socket#\d+\n.*connect .*\n.*send /);
    expect(printedText).toContain("maxTasks is 5: no stage ever had more fetches in flight.");
  });
});
