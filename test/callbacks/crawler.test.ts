import diagnostics_channel from "node:diagnostics_channel";
import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { crawl, Crawler } from "../../src/callbacks/index.js";
import { Fetcher } from "../../src/callbacks/fetcher.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { untimed } from "../contract/records.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { within } from "../helpers/within.js";

/** How long a stopped crawl may take to end before the test fails as hung: generous, machines are shared. */
const HANG_MS = 10_000;

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function startSite(): Promise<FixtureSite> {
  const site = await FixtureSite.start();
  closers.push(() => site.close());
  return site;
}

async function refusedUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

/** Crawls with the callback-style method, keeping the Crawler to inspect its loop afterwards. */
function crawlWith(roots: string | string[], options: CrawlOptions): Promise<{ result: CrawlResult; crawler: Crawler }> {
  return new Promise((resolve) => {
    const crawler = new Crawler(roots, options);
    crawler.crawl(function done(result) {
      resolve({ result, crawler });
    });
  });
}

describe("Crawler", () => {
  it("crawls a 2,000-page synthetic site: every expected page, no socket left open", async () => {
    const synthetic = await SyntheticSite.start({ pages: 2_000, linksPerPage: 5, seed: 3, redirects: 20, notFound: 10 });
    closers.push(() => synthetic.close());
    const { result, crawler } = await crawlWith(synthetic.url, { maxTasks: 10 });
    const byUrl = (a: { url: string }, b: { url: string }) => (a.url < b.url ? -1 : 1);
    // Which page first linked a URL depends on timing: numNewUrls, referrer and depth are not compared, nor when it came.
    expect(result.records.map((record) => ({ ...record, referrer: null, depth: 0, fetchedAt: "" })).sort(byUrl)).toEqual(
      synthetic.expected.records.map((record) => ({ ...record, numNewUrls: expect.any(Number), referrer: null, depth: 0, fetchedAt: "" })).sort(byUrl),
    );
    // Every URL but the root was queued first by a page's link (counted in its numNewUrls) or by a
    // redirect (counted nowhere); which one came first depends on timing too.
    const newUrls = result.records.reduce((sum, record) => sum + record.numNewUrls, 0);
    const redirects = result.records.filter((record) => record.status !== null && record.status >= 300 && record.status < 400).length;
    expect(newUrls).toBeLessThanOrEqual(result.records.length - 1);
    expect(newUrls).toBeGreaterThanOrEqual(result.records.length - 1 - redirects);
    expect(result.todo).toBe(0);
    expect(synthetic.site.peakRequestsInFlight).toBeLessThanOrEqual(10);
    expect(crawler.loop.selector.size).toBe(0);
    expect(crawler.loop.pendingTimers).toBe(0);
    await synthetic.site.connectionsClosed();
  });

  it("with maxTasks 1 makes the expected records in the expected order", async () => {
    const synthetic = await SyntheticSite.start({ pages: 300, linksPerPage: 4, seed: 9, redirects: 5, notFound: 3 });
    closers.push(() => synthetic.close());
    const result = await crawl(synthetic.url, { maxTasks: 1 });
    expect(untimed(result.records)).toEqual(untimed(synthetic.expected.records));
    expect(synthetic.site.peakRequestsInFlight).toBe(1);
  });

  it("records a silent server, a refused port and a malformed response, and goes on", async () => {
    const site = await startSite();
    const refused = await refusedUrl();
    site.addPage("/", ["/silent", "/garbage", "/ok"]);
    site.addFault("/silent", { kind: "silent" });
    site.addFault("/garbage", { kind: "raw", bytes: "HTTP/1.1 abc\r\n\r\n" });
    site.addPage("/ok", ["/"]);
    const result = await crawl([site.urlFor("/"), refused], { maxTries: 2, timeoutMs: 100, retryDelayMs: 0 });
    const errors = Object.fromEntries(result.records.map((record) => [record.url, record.error]));
    expect(errors).toEqual({
      [site.urlFor("/")]: null,
      [site.urlFor("/silent")]: "Timeout",
      [site.urlFor("/garbage")]: "BadResponse",
      [site.urlFor("/ok")]: null,
      [refused]: "ConnectionRefused",
    });
    expect(result.records.find((record) => record.url === refused)).toMatchObject({ status: null, size: 0 });
    await site.connectionsClosed();
  });

  it("never runs more than maxTasks fetches at once", async () => {
    const synthetic = await SyntheticSite.start({ pages: 60, linksPerPage: 6, seed: 5, delayMs: 5 });
    closers.push(() => synthetic.close());
    const result = await crawl(synthetic.url, { maxTasks: 3 });
    expect(result.records).toHaveLength(synthetic.expected.records.length);
    expect(synthetic.site.peakRequestsInFlight).toBe(3);
  });

  it("stops taking URLs after maxPages and counts the rest as todo", async () => {
    const synthetic = await SyntheticSite.start({ pages: 100, linksPerPage: 5, seed: 2 });
    closers.push(() => synthetic.close());
    const result = await within(HANG_MS, crawl(synthetic.url, { maxPages: 7, maxTasks: 3 }), "a crawl stopped by maxPages");
    expect(result.records).toHaveLength(7);
    expect(result.todo).toBe(result.seen.length - 7);
  });

  it("keeps crawling and keeps the record when onRecord throws", async () => {
    const synthetic = await SyntheticSite.start({ pages: 20, linksPerPage: 3, seed: 4 });
    closers.push(() => synthetic.close());
    let calls = 0;
    const result = await crawl(synthetic.url, {
      onRecord() {
        calls += 1;
        throw new Error("progress bar broke");
      },
    });
    expect(result.records).toHaveLength(synthetic.expected.records.length);
    expect(calls).toBe(result.records.length);
    expect(result.records.every((record) => record.error === null)).toBe(true);
  });

  it("stops when the signal aborts: fetches in flight make no record, sockets and timers are gone", async () => {
    const synthetic = await SyntheticSite.start({ pages: 500, linksPerPage: 5, seed: 6, delayMs: 2 });
    closers.push(() => synthetic.close());
    const controller = new AbortController();
    let records = 0;
    const crawled = crawlWith(synthetic.url, {
      signal: controller.signal,
      onRecord() {
        records += 1;
        if (records === 10) controller.abort();
      },
    });
    const { result, crawler } = await within(HANG_MS, crawled, "a crawl whose signal aborted mid-crawl");
    expect(result.records).toHaveLength(10);
    expect(result.todo).toBe(result.seen.length - 10);
    expect(crawler.loop.selector.size).toBe(0);
    expect(crawler.loop.pendingTimers).toBe(0);
    await synthetic.site.connectionsClosed();
  });

  it("waits between attempts on the Fetcher's own timer, which an abort cancels with the rest", async () => {
    const site = await startSite();
    site.addFault("/drop", { kind: "drop" });
    const controller = new AbortController();
    let timersWhilePausing = 0;
    const crawler: Crawler = new Crawler(site.urlFor("/drop"), {
      retryDelayMs: 60_000,
      signal: controller.signal,
      trace(event) {
        if (event.type !== "fetch-end") return;
        setTimeout(function abortDuringThePause() {
          timersWhilePausing = crawler.loop.pendingTimers;
          controller.abort();
        }, 50);
      },
    });
    const crawled = new Promise<CrawlResult>((resolve) => crawler.crawl(resolve));
    const result = await within(HANG_MS, crawled, "a crawl aborted while it paused before a retry");
    expect(timersWhilePausing).toBe(1); // the pause: the attempt's own timer was cancelled when it failed
    expect(result.records).toEqual([]);
    expect(site.requestsFor("/drop")).toBe(1);
    expect(crawler.loop.pendingTimers).toBe(0);
    expect(crawler.loop.selector.size).toBe(0);
  });

  it("makes no further attempt and leaves no socket when the trace aborts inside a Fetcher's callback", async () => {
    const site = await startSite();
    site.addPage("/", ["/a"]).addPage("/a", []);
    const controller = new AbortController();
    let attempts = 0;
    const crawled = crawlWith(site.url, {
      maxTries: 3,
      signal: controller.signal,
      trace(event) {
        if (event.type === "fetch-start") attempts += 1;
        if (event.type === "connect") controller.abort(); // from inside `connected`, which finishes its step
      },
    });
    const { result, crawler } = await within(HANG_MS, crawled, "a crawl whose signal aborted inside a Fetcher's callback");
    expect(attempts).toBe(1);
    expect(result.records).toEqual([]);
    expect(crawler.loop.selector.size).toBe(0);
    expect(crawler.loop.pendingTimers).toBe(0);
    await site.connectionsClosed();
    expect(site.openConnections).toBe(0);
  });

  it.each(["fetch-start", "connect", "send", "first-byte", "read", "fetch-end"])(
    "leaves no socket open and makes no record when a channel subscriber aborts at %s",
    async (type) => {
      const site = await startSite();
      site.addPage("/", ["/a"]).addPage("/a", []);
      const controller = new AbortController();
      const messages: string[] = [];
      function abortAt(message: unknown): void {
        if (typeof message !== "object" || message === null || !("url" in message) || !("type" in message)) return;
        if (typeof message.url !== "string" || !message.url.startsWith(site.url)) return;
        messages.push(String(message.type));
        if (message.type === type) controller.abort(); // synchronously, from inside the publishing callback
      }
      diagnostics_channel.subscribe("coroutine-crawler:crawl", abortAt);
      try {
        const crawled = crawlWith(site.url, { maxTries: 3, signal: controller.signal });
        const { result, crawler } = await within(HANG_MS, crawled, `a crawl aborted by a subscriber at ${type}`);
        expect(messages).toContain(type);
        expect(messages.filter((seen) => seen === "fetch-start")).toHaveLength(1);
        expect(result.records).toEqual([]);
        expect(crawler.loop.selector.size).toBe(0);
        expect(crawler.loop.pendingTimers).toBe(0);
        await site.connectionsClosed();
        expect(site.openConnections).toBe(0);
      } finally {
        diagnostics_channel.unsubscribe("coroutine-crawler:crawl", abortAt);
      }
    },
  );

  it("gives a URL a NetworkError record when a bug strikes its Fetcher's timeout path, and leaves no socket", async () => {
    const site = await startSite();
    site.addFault("/", { kind: "silent" });
    // A bug on the timeout path: the first close(), in failed() after timedOut, throws.
    const close = vi.spyOn(Fetcher.prototype, "close").mockImplementationOnce(function buggyClose(): void {
      throw new Error("a bug in close");
    });
    try {
      const { result, crawler } = await crawlWith(site.url, { maxTries: 1, timeoutMs: 20 });
      expect(result.records.map((record) => [record.url, record.error])).toEqual([[site.urlFor("/"), "NetworkError"]]);
      expect(crawler.loop.selector.size).toBe(0);
    } finally {
      close.mockRestore();
    }
  });

  it("hands every job out back to the core when it stops, so an abort during robots.txt still reports it", async () => {
    // Issue 35: stage 1 used to close its Fetchers without finish(), and reported robots: [] where stages 2 and 3 report one.
    const site = await startSite();
    site.addFault("/robots.txt", { kind: "silent" });
    site.addPage("/", []);
    const controller = new AbortController();
    const crawled = crawlWith(site.url, {
      robots: true,
      signal: controller.signal,
      trace(event) {
        if (event.type === "first-byte" || event.type === "send") controller.abort();
      },
    });
    const { result, crawler } = await within(HANG_MS, crawled, "a crawl aborted while it read robots.txt");
    expect(result.robots.map((fetch) => fetch.url)).toEqual([site.urlFor("/robots.txt")]);
    expect(result.records).toEqual([]);
    expect(result.todo).toBe(1);
    expect(crawler.loop.selector.size).toBe(0);
    expect(crawler.loop.pendingTimers).toBe(0);
  });

  it("makes no record when the signal is already aborted", async () => {
    const site = await startSite();
    site.addPage("/", []);
    const result = await within(HANG_MS, crawl(site.url, { signal: AbortSignal.abort() }), "a crawl whose signal was already aborted");
    expect(result.records).toEqual([]);
    expect(result.todo).toBe(1);
    expect(site.totalRequests).toBe(0);
  });

  it("traces each attempt, the callbacks it dispatches and the slots it uses", async () => {
    const site = await startSite();
    const refused = await refusedUrl();
    site.addPage("/", ["/a", "/b", "/c"]).addPage("/a", []).addPage("/b", []).addPage("/c", []);
    const events: TraceEvent[] = [];
    const result = await crawl([site.url, refused], {
      maxTasks: 2,
      maxTries: 2,
      retryDelayMs: 0,
      trace(event) {
        events.push(event);
      },
    });
    const count = (type: TraceEvent["type"]) => events.filter((event) => event.type === type).length;
    expect(result.records).toHaveLength(5);
    expect(count("fetch-start")).toBe(6); // five URLs, one of them tried twice
    expect(count("fetch-end")).toBe(6);
    expect(count("connect")).toBe(4); // a refused socket is write-ready too, but only a live connection is traced
    expect(count("send")).toBe(4);
    expect(count("first-byte")).toBe(4);
    const dispatched = new Set(events.flatMap((event) => (event.type === "dispatch" ? [event.callback] : [])));
    expect(dispatched).toEqual(new Set(["connected", "readResponse"]));
    const slots = new Set(events.flatMap((event) => (event.type === "fetch-start" ? [event.slot] : [])));
    expect([...slots].sort()).toEqual([0, 1]);
    const inFlight = events.flatMap((event) => (event.type === "fetch-start" ? [event.inFlight] : []));
    expect(Math.max(...inFlight)).toBe(2);
    expect(events.every((event) => event.stage === "callbacks")).toBe(true);
  });

  it("gives a URL whose handling throws a NetworkError record, and goes on", async () => {
    const site = await startSite();
    site.addPage("/", ["/a"]).addPage("/a", []).addPage("/other", []);
    const crawler = new Crawler([site.urlFor("/"), site.urlFor("/other")], { maxTasks: 1 });
    const real = crawler.core.policy.hrefAllowed.bind(crawler.core.policy);
    vi.spyOn(crawler.core.policy, "hrefAllowed").mockImplementation(function buggy(url: string): boolean {
      if (url === site.urlFor("/a")) throw new Error("a bug in the policy");
      return real(url);
    });
    const result = await new Promise<CrawlResult>((resolve) => crawler.crawl(resolve));
    expect(result.records.map((record) => [record.url, record.error])).toEqual([
      [site.urlFor("/"), "NetworkError"],
      [site.urlFor("/other"), null],
    ]);
    expect(result.todo).toBe(0);
  });

  it("finishes the crawl when the trace function throws", async () => {
    const site = await startSite();
    site.addPage("/", ["/a"]).addPage("/a", []);
    const result = await crawl(site.url, {
      trace() {
        throw new Error("a broken timeline");
      },
    });
    expect(result.records.map((record) => record.error)).toEqual([null, null]);
  });

  it("answers urlAllowed by the shared URL policy", () => {
    const crawler = new Crawler("xkcd.com", { exclude: "/private/" });
    expect(crawler.urlAllowed("http://www.xkcd.com/353/")).toBe(true);
    expect(crawler.urlAllowed("https://xkcd.com/private/x")).toBe(false);
    expect(crawler.urlAllowed("http://example.com/")).toBe(false);
    expect(crawler.urlAllowed("not a url")).toBe(false);
  });

  it("rejects bad options with a TypeError naming the option, and crawls only once", async () => {
    await expect(crawl("http://127.0.0.1/", { maxTasks: 0 })).rejects.toThrow(/maxTasks/);
    const site = await startSite();
    site.addPage("/", []);
    const { crawler } = await crawlWith(site.url, {});
    expect(() => crawler.crawl(() => {})).toThrow(/already crawled/);
  });
});
