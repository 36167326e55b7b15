import diagnostics_channel from "node:diagnostics_channel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { crawl, Crawler } from "../../src/asyncawait/index.js";
import { InvalidStateError } from "../../src/kernel/errors.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { untimed } from "../contract/records.js";
import { UrlPolicy } from "../../src/crawl/urls.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { within } from "../helpers/within.js";

/** How long a stopped crawl may take to end before the test fails as hung: generous, machines are shared. */
const HANG_MS = 10_000;

/** Records sorted by URL, to compare crawls whose completion order may differ. */
function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

describe("Crawler", () => {
  const opened: Array<{ close(): Promise<void> }> = [];

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((site) => site.close()));
  });

  async function startSite(): Promise<FixtureSite> {
    const site = await FixtureSite.start();
    opened.push(site);
    return site;
  }

  async function startSynthetic(pages: number, linksPerPage: number, delayMs = 0, redirects = 5): Promise<SyntheticSite> {
    const synthetic = await SyntheticSite.start({ pages, linksPerPage, seed: 11, redirects, notFound: 3, delayMs });
    opened.push(synthetic);
    return synthetic;
  }

  it("counts in flight only the URLs a worker has taken, not those handed to a parked worker that has not resumed", async () => {
    const synthetic = await startSynthetic(120, 6, 2);
    const inFlight: number[] = [];
    await crawl(synthetic.url, {
      maxTasks: 8,
      maxPerHost: 2,
      delayMs: 5,
      trace(event) {
        if (event.type === "fetch-start" || event.type === "fetch-end") inFlight.push(event.inFlight);
      },
    });
    expect(inFlight.length).toBeGreaterThan(200);
    // One host lets two requests go at once, whatever the number of workers.
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(2);
  });

  it("makes the breadth-first records of a synthetic site with one task, in order", async () => {
    const synthetic = await startSynthetic(150, 4);
    const result = await crawl(synthetic.url, { maxTasks: 1 });
    expect(untimed(result.records)).toEqual(untimed(synthetic.expected.records));
    expect(result.seen).toEqual(synthetic.expected.seen);
    expect(result.todo).toBe(0);
    await synthetic.site.connectionsClosed();
  });

  it("makes the same records as a set with many tasks, and the same sum of new URLs", async () => {
    // No redirects: a redirect's target is queued without counting in numNewUrls, so with
    // redirects the sum depends on whether a page or a redirect reached a URL first.
    const synthetic = await startSynthetic(300, 5, 0, 0);
    const result = await crawl(synthetic.url, { maxTasks: 50 });
    const strip = (record: FetchStatistic) => ({ ...record, numNewUrls: 0, referrer: null, depth: 0, fetchedAt: "" }); // all four depend on timing
    expect(byUrl(result.records).map(strip)).toEqual(byUrl(synthetic.expected.records).map(strip));
    const sum = (records: readonly FetchStatistic[]) => records.reduce((total, record) => total + record.numNewUrls, 0);
    expect(sum(result.records)).toBe(sum(synthetic.expected.records));
  });

  it("keeps at most maxTasks requests in flight", async () => {
    const synthetic = await startSynthetic(60, 6, 5);
    await crawl(synthetic.url, { maxTasks: 4 });
    expect(synthetic.site.peakRequestsInFlight).toBeLessThanOrEqual(4);
    expect(synthetic.site.peakRequestsInFlight).toBeGreaterThan(1);
  });

  it("starts workers as jobs need them: a million maxTasks on a 2-page site start a handful", async () => {
    const site = await startSite();
    site.addPage("/", ["/a"]).addPage("/a", []);
    const work = vi.spyOn(Crawler.prototype as unknown as { work(): Promise<void> }, "work");
    try {
      const result = await crawl(site.url, { maxTasks: 1_000_000 });
      expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/"), site.urlFor("/a")]);
      expect(work.mock.calls.length).toBeGreaterThan(0);
      expect(work.mock.calls.length).toBeLessThanOrEqual(3); // a job out, and one more while a worker hands its job back
    } finally {
      work.mockRestore();
    }
  });

  it("fetches every page of a 10,000-page site with 10,000 workers", { timeout: 180_000 }, async () => {
    const synthetic = await SyntheticSite.start({ pages: 10_000, linksPerPage: 3, seed: 3 });
    opened.push(synthetic);
    // The server shares this test's event loop, so thousands of simultaneous connects wait in
    // the kernel's accept backlog for seconds: a generous timeout keeps this a count test.
    const result = await crawl(synthetic.url, { maxTasks: 10_000, timeoutMs: 120_000 });
    expect(result.records).toHaveLength(synthetic.expected.records.length);
    expect(result.records.every((record) => record.status === 200)).toBe(true);
    expect(synthetic.site.totalRequests).toBe(synthetic.expected.records.length);
    expect(result.todo).toBe(0);
    await synthetic.site.connectionsClosed(10_000);
  });

  it("retries a dropped connection maxTries times, then records ConnectionReset", async () => {
    const site = await startSite();
    site.addPage("/", ["/drop", "/ok"]).addPage("/ok", []).addFault("/drop", { kind: "drop" });
    const result = await crawl(site.url, { maxTries: 3, maxTasks: 3, retryDelayMs: 0 });
    const dropped = result.records.find((record) => record.url === site.urlFor("/drop"));
    expect(dropped).toMatchObject({ status: null, error: "ConnectionReset", size: 0 });
    expect(site.requestsFor("/drop")).toBe(3);
    expect(result.records).toHaveLength(3);
  });

  it("records a bad response at once, without retrying", async () => {
    const site = await startSite();
    site.addPage("/", ["/bad"]).addFault("/bad", { kind: "raw", bytes: "garbage\r\n\r\n" });
    const result = await crawl(site.url, { maxTries: 4 });
    expect(result.records.find((record) => record.url === site.urlFor("/bad"))?.error).toBe("BadResponse");
    expect(site.requestsFor("/bad")).toBe(1);
  });

  it("follows a redirect once, by queueing its target", async () => {
    const site = await startSite();
    site.addPage("/", ["/from"]).addRedirect("/from", "/to").addPage("/to", ["/"]);
    const result = await crawl(site.url, { maxTasks: 2 });
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/"), site.urlFor("/from"), site.urlFor("/to")]);
    expect(result.records[1]).toMatchObject({ status: 302, nextUrl: site.urlFor("/to"), size: 0 });
    expect(site.requestsFor("/to")).toBe(1);
  });

  it("stops following redirects when maxRedirect runs out", async () => {
    const site = await startSite();
    site.addRedirect("/", "/r1").addRedirect("/r1", "/r2").addRedirect("/r2", "/r3").addPage("/r3", []);
    const result = await crawl(site.url, { maxRedirect: 2 });
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/"), site.urlFor("/r1"), site.urlFor("/r2")]);
    expect(site.requestsFor("/r3")).toBe(0);
  });

  it("gives a URL whose handling throws a NetworkError record, and the worker goes on", async () => {
    const site = await startSite();
    site.addPage("/", ["/a"]).addPage("/a", []).addPage("/other", []);
    // A bug on the worker's path after the fetch, before the record: the policy throws while "/"'s links are visited.
    const originalAllowed = UrlPolicy.prototype.hrefAllowed;
    const allowed = vi.spyOn(UrlPolicy.prototype, "hrefAllowed").mockImplementation(function buggyPolicy(this: UrlPolicy, url: string): boolean {
      if (url === site.urlFor("/a")) throw new Error("a bug in the policy");
      return originalAllowed.call(this, url);
    });
    try {
      const result = await crawl([site.urlFor("/"), site.urlFor("/other")], { maxTasks: 1 });
      expect(result.records.map((record) => [record.url, record.error])).toEqual([
        [site.urlFor("/"), "NetworkError"],
        [site.urlFor("/other"), null],
      ]);
      expect(result.todo).toBe(0);
      expect(site.requestsFor("/a")).toBe(0);
    } finally {
      allowed.mockRestore();
    }
  });

  it("goes on crawling when onRecord throws", async () => {
    const synthetic = await startSynthetic(40, 3);
    let calls = 0;
    const result = await crawl(synthetic.url, {
      maxTasks: 5,
      onRecord() {
        calls += 1;
        if (calls === 2) throw new Error("a buggy progress callback");
      },
    });
    expect(result.records.length).toBeGreaterThan(1);
    expect(new Set(result.records.map((record) => record.url)).size).toBe(result.records.length);
    expect(result.todo).toBe(0);
  });

  it("stops taking URLs after maxPages and leaves the rest as todo", async () => {
    const synthetic = await startSynthetic(200, 5);
    const result = await within(HANG_MS, crawl(synthetic.url, { maxPages: 20, maxTasks: 5 }), "a crawl stopped by maxPages");
    expect(result.records).toHaveLength(20);
    expect(synthetic.site.totalRequests).toBe(20);
    expect(result.todo).toBe(result.seen.length - 20);
    expect(result.todo).toBeGreaterThan(0);
    await synthetic.site.connectionsClosed();
  });

  it("resolves with the records so far and no open sockets when the signal aborts mid-crawl", async () => {
    const synthetic = await startSynthetic(2000, 5, 20);
    const controller = new AbortController();
    let records = 0;
    const pending = crawl(synthetic.url, {
      maxTasks: 20,
      signal: controller.signal,
      onRecord() {
        records += 1;
        if (records === 30) controller.abort();
      },
    });
    const result = await within(HANG_MS, pending, "a crawl whose signal aborted mid-crawl");
    expect(result.records).toHaveLength(30); // the requests in flight were cancelled, making no record
    expect(result.todo).toBe(result.seen.length - 30);
    expect(result.todo).toBeGreaterThan(0);
    expect(synthetic.site.totalRequests).toBeLessThan(30 + 20 + 1);
    await synthetic.site.connectionsClosed();
  });

  it("makes no record when the signal is already aborted", async () => {
    const site = await startSite();
    site.addPage("/", []);
    const result = await within(HANG_MS, crawl(site.url, { signal: AbortSignal.abort() }), "a crawl whose signal was already aborted");
    expect(result.records).toEqual([]);
    expect(result.seen).toEqual([site.urlFor("/")]);
    expect(result.todo).toBe(1);
    expect(site.totalRequests).toBe(0);
  });

  it("leaves unfetched a URL handed to a parked worker after maxPages stopped the crawl", async () => {
    const site = await startSite();
    site.addPage("/", ["/a", "/b"]).addPage("/a", []).addPage("/b", []);
    // Workers 1 and 2 are parked in get() while worker 0 fetches "/", so its links are handed
    // straight to them: "/a" to worker 1, "/b" to worker 2. Worker 1 resumes first and its take
    // reaches maxPages, so "/b" was handed over before the stop but reaches worker 2 after it.
    const result = await within(HANG_MS, crawl(site.url, { maxTasks: 3, maxPages: 2 }), "a crawl stopped by maxPages");
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/"), site.urlFor("/a")]);
    expect(site.requestsFor("/b")).toBe(0);
    expect(site.totalRequests).toBe(2);
    expect(result.todo).toBe(1);
  });

  it("leaves untaken the URLs handed to parked workers just before the signal aborts", async () => {
    const site = await startSite();
    site.addPage("/", ["/a", "/b"]).addPage("/a", []).addPage("/b", []);
    const controller = new AbortController();
    const taken: string[] = [];
    const crawled = crawl(site.url, {
      maxTasks: 3,
      signal: controller.signal,
      trace(event) {
        if (event.type === "take" || event.type === "fetch-start") taken.push(`${event.type} ${event.url}`);
        // The fetch-end of "/" comes in the stretch that goes on to hand its links to the parked
        // workers 1 and 2; this microtask runs after that hand-over and before either worker resumes.
        if (event.type === "fetch-end" && event.url === site.urlFor("/")) {
          queueMicrotask(function abortAfterHandOver() {
            controller.abort();
          });
        }
      },
    });
    const result = await within(HANG_MS, crawled, "a crawl whose signal aborted");
    expect(taken).toEqual([`take ${site.urlFor("/")}`, `fetch-start ${site.urlFor("/")}`]);
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/")]);
    expect(result.todo).toBe(2);
    expect(site.totalRequests).toBe(1);
  });

  it("traces each worker's take, await, resume and done, and each attempt's steps", async () => {
    const site = await startSite();
    site.addPage("/", ["/a", "/drop"]).addPage("/a", []).addFault("/drop", { kind: "drop" });
    const events: TraceEvent[] = [];
    await crawl(site.url, { maxTasks: 2, maxTries: 2, retryDelayMs: 1, trace: (event) => events.push(event) });
    const count = (type: TraceEvent["type"]) => events.filter((event) => event.type === type).length;
    // /drop is tried twice, each time taken as a job: a retry goes back through its host's line, and its pause is a wait job.
    expect(count("take")).toBe(4);
    expect(count("done")).toBe(4);
    expect(count("fetch-start")).toBe(4);
    expect(count("fetch-end")).toBe(4);
    expect(count("await")).toBe(4); // client.get per attempt
    expect(count("resume")).toBe(4);
    const sleeps = events.flatMap((event) => (event.type === "await" && event.what === "sleep" ? [event.url] : []));
    expect(sleeps).toEqual([]);
    expect(count("first-byte")).toBe(2);
    expect(events.every((event) => event.stage === "asyncawait")).toBe(true);
    const ends = events.filter((event) => event.type === "fetch-end" && event.url === site.urlFor("/drop"));
    expect(ends.map((event) => (event.type === "fetch-end" ? [event.attempt, event.error] : null))).toEqual([
      [1, "ConnectionReset"],
      [2, "ConnectionReset"],
    ]);
    const starts = events.filter((event) => event.type === "fetch-start");
    expect(starts.every((event) => event.type === "fetch-start" && event.inFlight <= 2)).toBe(true);
  });

  it("answers urlAllowed by the host policy and exclude", () => {
    const crawler = new Crawler("example.com", { exclude: /private/ });
    expect(crawler.core.policy.roots).toEqual(["http://example.com/"]);
    expect(crawler.urlAllowed("https://www.example.com/a")).toBe(true);
    expect(crawler.urlAllowed("http://other.com/")).toBe(false);
    expect(crawler.urlAllowed("http://example.com/private/x")).toBe(false);
    expect(crawler.urlAllowed("not a url")).toBe(false);
  });

  it("throws InvalidStateError when crawl() is called twice", async () => {
    const site = await startSite();
    site.addPage("/", []);
    const crawler = new Crawler(site.url);
    await crawler.crawl();
    await expect(crawler.crawl()).rejects.toBeInstanceOf(InvalidStateError);
  });

  it("rejects a bad option with a TypeError naming it", async () => {
    await expect(crawl("http://127.0.0.1/", { maxTasks: 0 })).rejects.toThrow(/maxTasks/);
  });
});

describe("undici's diagnostics channels during a stage-3 crawl", () => {
  const CHANNELS = ["undici:request:create", "undici:client:sendHeaders", "undici:request:headers", "undici:request:bodyChunkReceived", "undici:client:connected"];

  /** Crawls a three-page site and says, at each record, which of undici's channels had a subscriber. */
  async function subscribedDuringCrawl(trace: ((event: TraceEvent) => void) | undefined): Promise<boolean[][]> {
    const site = await FixtureSite.start();
    try {
      site.addPage("/", ["/a", "/b"]).addPage("/a", []).addPage("/b", []);
      const seen: boolean[][] = [];
      function onRecord(): void {
        seen.push(CHANNELS.map(function subscribed(name) {
          return diagnostics_channel.channel(name).hasSubscribers;
        }));
      }
      await crawl(site.urlFor("/"), { maxTasks: 2, onRecord, ...(trace === undefined ? {} : { trace }) });
      return seen;
    } finally {
      await site.close();
    }
  }

  it("have no subscriber while nothing traces the crawl", async () => {
    const seen = await subscribedDuringCrawl(undefined);
    expect(seen).toHaveLength(3);
    expect(seen.flat().every((subscribed) => !subscribed)).toBe(true);
  });

  it("have the request channels subscribed while it is traced, and none after", async () => {
    const seen = await subscribedDuringCrawl(function ignore() {});
    expect(seen.map((at) => at.slice(0, 4))).toEqual([[true, true, true, true], [true, true, true, true], [true, true, true, true]]);
    expect(CHANNELS.map((name) => diagnostics_channel.channel(name).hasSubscribers)).toEqual([false, false, false, false, false]);
  });
});
