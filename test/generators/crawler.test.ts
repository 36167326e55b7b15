import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CancelledError, InvalidStateError } from "../../src/kernel/errors.js";
import { FixtureSite } from "../../src/site/index.js";
import { Crawler } from "../../src/generators/crawler.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import type { Coroutine } from "../../src/generators/futures.js";
import { allTasks, gather } from "../../src/generators/tasks.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import type { CrawlMessage, LoopMessage } from "../../src/observe/channels.js";
import { onCrawlMessage, onLoopMessage } from "./messages.js";
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

  it.each([1, 3])("waits for every worker, and ends its crawl run, when the crawl Task is cancelled twice (maxTasks %i)", async (maxTasks) => {
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
    const ends: string[] = [];
    const stopListening = onCrawlMessage(function collect(message) {
      if (message.type === "crawl-start" || message.type === "crawl-end") ends.push(message.type);
    });
    const task = loop.runUntilComplete(crawler.crawl());
    crawlTask = task;
    try {
      await expect(within(HANG_MS, task, "a cancelled crawl Task")).rejects.toBeInstanceOf(CancelledError);
    } finally {
      stopListening();
    }
    expect(ends).toEqual(["crawl-start", "crawl-end"]); // The crawl run ended too: its trace is unsubscribed.
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
    const real = crawler.core.policy.hrefAllowed.bind(crawler.core.policy);
    vi.spyOn(crawler.core.policy, "hrefAllowed").mockImplementation(function buggy(url: string): boolean {
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

  it("starts workers as jobs need them: a million maxTasks on a 2-page site start a handful of Tasks", async () => {
    site.addPage("/", ["/a"]).addPage("/a", []);
    const workers = new Set<number>();
    const crawler = new Crawler(site.url, {
      maxTasks: 1_000_000,
      trace(event) {
        if (event.type === "step" && event.coroutine === "work") workers.add(event.task);
      },
    });
    const result = await loop.runUntilComplete(crawler.crawl());
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/"), site.urlFor("/a")]);
    expect(workers.size).toBeGreaterThan(0);
    expect(workers.size).toBeLessThanOrEqual(3); // a job out, and one more while a worker hands its job back
    expect(allTasks(loop)).toEqual([]);
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
    const stopCrawlMessages = onCrawlMessage(function countAttempts(message) {
      if (message.type === "fetch-start") attempts += 1;
    });
    // The loop publishes a due timer before it runs it: abort in that same turn.
    const stopLoopMessages = onLoopMessage(function abortWithTheTimer(message) {
      if (message.loop === loop.id && message.type === "timer" && message.callback === "timeIsUp") controller.abort();
    });
    const crawler = new Crawler(site.url, { maxTries: 3, timeoutMs: 20, signal: controller.signal });
    try {
      const result = await loop.runUntilComplete(crawler.crawl());
      expect(attempts).toBe(1);
      expect(result.records).toEqual([]);
      expect(result.todo).toBe(1);
    } finally {
      stopCrawlMessages();
      stopLoopMessages();
    }
    loop.close();
  });
});

describe("Crawler messages", () => {
  /** Runs `crawler` in the test's loop and returns what it published on the crawl channel, and its loop on the loop channel. */
  async function crawlListening(crawler: Crawler): Promise<{ crawl: CrawlMessage[]; loop: LoopMessage[] }> {
    const published: { crawl: CrawlMessage[]; loop: LoopMessage[] } = { crawl: [], loop: [] };
    const stopCrawlMessages = onCrawlMessage(function collect(message) {
      published.crawl.push(message);
    });
    const stopLoopMessages = onLoopMessage(function collect(message) {
      if (message.loop === loop.id) published.loop.push(message);
    });
    try {
      await loop.runUntilComplete(crawler.crawl());
    } finally {
      stopCrawlMessages();
      stopLoopMessages();
    }
    return published;
  }

  it("publishes each attempt and its steps with its crawl id, and the Tasks' steps with its loop id", async () => {
    site.addPage("/", ["/a"]).addPage("/a", []).addFault("/a", { kind: "drop" });
    const published = await crawlListening(new Crawler(site.url, { maxTasks: 2, maxTries: 2, retryDelayMs: 0 }));
    const start = published.crawl[0];
    expect(start).toMatchObject({ type: "crawl-start", stage: "generators", loop: loop.id });
    const ours = published.crawl.filter((message) => message.crawl === start?.crawl);
    expect(ours.at(-1)?.type).toBe("crawl-end");
    const fetches = ours.filter((message) => message.type === "fetch-start" || message.type === "fetch-end");
    expect(fetches.map((message) => [message.type, "url" in message ? message.url : null])).toEqual([
      ["fetch-start", site.urlFor("/")],
      ["fetch-end", site.urlFor("/")],
      ["fetch-start", site.urlFor("/a")],
      ["fetch-end", site.urlFor("/a")],
      ["fetch-start", site.urlFor("/a")],
      ["fetch-end", site.urlFor("/a")],
    ]);
    for (const message of fetches) {
      if (message.type !== "fetch-start" && message.type !== "fetch-end") continue;
      expect(message.inFlight).toBeGreaterThanOrEqual(1); // the fetch the message is about
      expect(message.unfinished).toBe(message.queued + message.inFlight);
    }
    const kinds = new Set(ours.map((message) => message.type));
    for (const kind of ["connect", "send", "first-byte", "read"]) expect(kinds.has(kind as CrawlMessage["type"])).toBe(true);
    const loopKinds = new Set(published.loop.map((message) => message.type));
    for (const kind of ["step", "resolve", "cancel"]) expect(loopKinds.has(kind as LoopMessage["type"])).toBe(true);
    await new Promise(setImmediate);
    loop.close();
  });

  it("tells two crawls in one loop apart by their crawl ids", async () => {
    site.addPage("/one", ["/one/a", "/one/b"]).addPage("/one/a", []).addPage("/one/b", []);
    site.addPage("/two", ["/two/a"]).addPage("/two/a", []);
    const crawlers = [new Crawler(site.urlFor("/one")), new Crawler(site.urlFor("/two"))];
    function* both(): Coroutine<CrawlResult[]> {
      return yield* gather(...crawlers.map((crawler) => crawler.crawl()));
    }
    const crawlMessages: CrawlMessage[] = [];
    const stopListening = onCrawlMessage(function collect(message) {
      crawlMessages.push(message);
    });
    let results: CrawlResult[];
    try {
      results = await loop.runUntilComplete(both());
    } finally {
      stopListening();
    }
    const ids = crawlMessages.filter((message) => message.type === "crawl-start").map((message) => message.crawl);
    expect(new Set(ids).size).toBe(2);
    const fetched = ids.map((id) =>
      crawlMessages.filter((message) => message.crawl === id && message.type === "fetch-start").map((message) => ("url" in message ? message.url : "")),
    );
    expect(fetched.map((urls) => urls.sort())).toEqual(results.map((result) => result.records.map((record) => record.url).sort()));
    await new Promise(setImmediate);
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
