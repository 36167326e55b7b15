import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CancelledError, InvalidStateError } from "../../src/kernel/errors.js";
import { FixtureSite } from "../../src/site/index.js";
import { Crawler } from "../../src/generators/crawler.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/future.js";
import { allTasks } from "../../src/generators/task.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { within } from "../helpers/within.js";

/** How long a cancelled crawl may take to end before the test fails as hung: generous, machines are shared. */
const HANG_MS = 10_000;

let site: FixtureSite;
let loop: EventLoop;
beforeEach(async () => {
  site = await FixtureSite.start();
  loop = new EventLoop();
});
afterEach(async () => {
  await site.close();
});

/** Serves `count` pages that never answer, calling `whenAllWaiting` once all are in flight. */
function addSilentPages(count: number, whenAllWaiting: () => void): string[] {
  const paths = Array.from({ length: count }, (_, index) => `/silent/${index}`);
  let waiting = 0;
  for (const path of paths) {
    site.addHandler(path, function neverAnswer() {
      waiting += 1;
      if (waiting === count) whenAllWaiting();
    });
  }
  return paths;
}

describe("Crawler", () => {
  it("leaves no socket, registration or timer when the signal aborts in the middle of fetches", async () => {
    const controller = new AbortController();
    site.addPage("/", addSilentPages(4, () => controller.abort()));
    const crawler = new Crawler(site.url, { maxTasks: 4, signal: controller.signal, timeoutMs: 60_000 });
    const result = await within(HANG_MS, loop.runUntilComplete(crawler.crawl()), "a crawl whose signal aborted mid-fetch");
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/")]);
    expect(result.todo).toBe(4);
    expect(loop.selector.size).toBe(0);
    expect(loop.timerCount).toBe(0);
    await site.connectionsClosed();
    expect(site.openConnections).toBe(0);
    await new Promise(setImmediate);
    loop.close();
  });

  it("closes every socket when the crawl Task itself is cancelled", async () => {
    const crawler = new Crawler(site.url, { maxTasks: 3, timeoutMs: 60_000 });
    let crawlTask: { cancel(): boolean } | null = null;
    site.addPage("/", addSilentPages(3, () => crawlTask?.cancel()));
    const task = loop.runUntilComplete(crawler.crawl());
    crawlTask = task;
    await expect(within(HANG_MS, task, "a cancelled crawl Task")).rejects.toBeInstanceOf(CancelledError);
    expect(loop.selector.size).toBe(0);
    expect(loop.timerCount).toBe(0);
    await site.connectionsClosed();
    await new Promise(setImmediate);
    loop.close();
  });

  it.each([1, 3])("waits for every worker when the crawl Task is cancelled twice (maxTasks %i)", async (maxTasks) => {
    const crawler = new Crawler(site.url, { maxTasks, timeoutMs: 60_000 });
    let crawlTask: { cancel(): boolean } | null = null;
    site.addPage(
      "/",
      addSilentPages(maxTasks, function cancelTwice() {
        crawlTask?.cancel();
        // The second cancel arrives while the crawl waits for its cancelled workers.
        loop.callSoon(function cancelAgain() {
          crawlTask?.cancel();
        });
      }),
    );
    const task = loop.runUntilComplete(crawler.crawl());
    crawlTask = task;
    await expect(within(HANG_MS, task, "a cancelled crawl Task")).rejects.toBeInstanceOf(CancelledError);
    // The loop stopped with the crawl Task: no worker (or attempt) may still be running.
    expect(allTasks(loop).map((left) => left.label)).toEqual([]);
    expect(loop.selector.size).toBe(0);
    expect(loop.timerCount).toBe(0);
    await site.connectionsClosed();
    await new Promise(setImmediate);
    loop.close();
  });

  it("gives a URL whose handling throws a NetworkError record, and the worker goes on", async () => {
    site.addPage("/", ["/a"]).addPage("/a", []).addPage("/other", []);
    const crawler = new Crawler([site.urlFor("/"), site.urlFor("/other")], { maxTasks: 1 });
    const real = crawler.urlAllowed.bind(crawler);
    vi.spyOn(crawler, "urlAllowed").mockImplementation(function buggy(url: string): boolean {
      if (url === site.urlFor("/a")) throw new Error("a bug in the policy");
      return real(url);
    });
    const result = await loop.runUntilComplete(crawler.crawl());
    expect(result.records.map((record) => [record.url, record.error])).toEqual([
      [site.urlFor("/"), "NetworkError"],
      [site.urlFor("/other"), null],
    ]);
    expect(result.todo).toBe(0);
    await new Promise(setImmediate);
    loop.close();
  });

  it("crawls once", async () => {
    site.addPage("/", []);
    const crawler = new Crawler(site.url);
    await loop.runUntilComplete(crawler.crawl());
    function* again(): Coroutine<string> {
      try {
        yield* crawler.crawl();
        return "crawled again";
      } catch (error) {
        return error instanceof InvalidStateError ? "refused" : "other error";
      }
    }
    await new Promise(setImmediate);
    expect(await loop.runUntilComplete(again())).toBe("refused");
    await new Promise(setImmediate);
    loop.close();
  });
  it("makes no more attempts when the signal aborts in the turn an attempt times out", async () => {
    site.addFault("/", { kind: "silent" });
    const controller = new AbortController();
    let attempts = 0;
    const crawler = new Crawler(site.url, {
      maxTries: 3,
      timeoutMs: 20,
      signal: controller.signal,
      trace(event) {
        if (event.type === "fetch-start") attempts += 1;
        if (event.type === "timer" && event.callback === "timeIsUp") controller.abort();
      },
    });
    const result = await loop.runUntilComplete(crawler.crawl());
    expect(attempts).toBe(1);
    expect(result.records).toEqual([]);
    expect(result.todo).toBe(1);
    loop.close();
  });
});

describe("Crawler trace", () => {
  it("reports each attempt, its steps, and the Tasks' steps, then leaves the loop untraced", async () => {
    site.addPage("/", ["/a"]).addPage("/a", []).addFault("/a", { kind: "drop" });
    const events: TraceEvent[] = [];
    const crawler = new Crawler(site.url, { maxTasks: 2, maxTries: 2, trace: (event) => events.push(event) });
    await loop.runUntilComplete(crawler.crawl());
    const fetchEvents = events.filter((event) => event.type === "fetch-start" || event.type === "fetch-end");
    expect(fetchEvents.map((event) => [event.type, "url" in event ? event.url : null])).toEqual([
      ["fetch-start", site.urlFor("/")],
      ["fetch-end", site.urlFor("/")],
      ["fetch-start", site.urlFor("/a")],
      ["fetch-end", site.urlFor("/a")],
      ["fetch-start", site.urlFor("/a")],
      ["fetch-end", site.urlFor("/a")],
    ]);
    const kinds = new Set(events.map((event) => event.type));
    for (const kind of ["connect", "send", "first-byte", "read", "step", "resolve", "cancel"]) {
      expect(kinds.has(kind as TraceEvent["type"])).toBe(true);
    }
    expect(events.every((event) => event.stage === "generators")).toBe(true);
    expect(loop.trace).toBeNull();
    await new Promise(setImmediate);
    loop.close();
  });

  it("gives the loop back its own trace after a traced crawl", async () => {
    site.addPage("/", []);
    const own: TraceEvent[] = [];
    function ownTrace(event: TraceEvent): void {
      own.push(event);
    }
    loop.setTrace(ownTrace);
    await loop.runUntilComplete(new Crawler(site.url, { trace() {} }).crawl());
    expect(loop.trace).toBe(ownTrace);
    loop.close();
  });

  it("finishes the crawl when the trace function throws", async () => {
    site.addPage("/", ["/a"]).addPage("/a", []);
    const crawler = new Crawler(site.url, {
      trace() {
        throw new Error("a broken trace function");
      },
    });
    const result = await loop.runUntilComplete(crawler.crawl());
    expect(result.records.map((record) => [record.url, record.status])).toEqual([
      [site.urlFor("/"), 200],
      [site.urlFor("/a"), 200],
    ]);
    await new Promise(setImmediate);
    loop.close();
  });
});
