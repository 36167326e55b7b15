/**
 * Politeness shared by every process of a Redis crawl, against a real
 * redis-server and a site of this test process's own, which notes each
 * request's arrival: several crawls in this process, each with its own
 * `RedisFrontier` (its own owner and connections, as a process has), on one
 * crawl name. What a site owner sees is counted on the server's side:
 * requests in flight at once, requests that came closer than the delay,
 * `robots.txt` reads.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { FrontierError, RedisFrontier } from "../../src/distributed/index.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { ending, taken } from "../helpers/store-steps.js";
import { within } from "../helpers/within.js";

/** The crawl's stop, for a frontier opened outside a crawl: nothing to stop. */
function noop(): void {}

/** Pages of each site besides its root, which links to them all; each page links to two others. */
const PAGES = 20;
/**
 * How much earlier than the delay a request may arrive and not count as too
 * close. Redis spaces the leases by the delay; the time from a lease to its
 * request reaching the server is a few ms, but on a loaded machine one took
 * 100 ms, and the next request, on time, came 100 ms after it. Before the
 * delay was shared, four processes' requests came a quarter of the delay
 * apart; the median gap checks the spacing is the delay, not less.
 */
const MARGIN_MS = 120;

/** The middle value. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Gaps between consecutive request arrivals at the site. */
function gapsAt(site: FixtureSite): number[] {
  const times = site.requests().map((request) => request.at).sort((a, b) => a - b);
  return times.slice(1).map((at, i) => at - (times[i] ?? 0));
}

/** A site of `PAGES` pages besides `/`, with a `robots.txt`, answering each request after `delayMs`. */
async function startSite(delayMs: number, robotsTxt = "User-agent: *\nDisallow: /private\n"): Promise<FixtureSite> {
  const site = await FixtureSite.start({ delayMs });
  const paths = Array.from({ length: PAGES }, (_, i) => `/p/${i}`);
  site.addPage("/", paths);
  paths.forEach((path, i) => {
    site.addPage(path, [paths[(i + 1) % PAGES] ?? "/", paths[(i + 7) % PAGES] ?? "/", "/private/x"]);
  });
  site.addRobots(robotsTxt);
  return site;
}

/** Gaps between consecutive request arrivals at the site (robots.txt included) shorter than `delayMs` less the margin. */
function tooClose(site: FixtureSite, delayMs: number): number[] {
  return gapsAt(site).filter((gap) => gap < delayMs - MARGIN_MS).map(Math.round);
}

describeWithRedis("politeness shared by the processes of a Redis crawl", () => {
  let redis: RedisServer;
  let names = 0;
  const open: RedisFrontier[] = [];
  const sites: FixtureSite[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const site of sites.splice(0)) await site.close();
  });

  async function frontierFor(name: string, leaseMs?: number, overridePoliteness?: boolean): Promise<RedisFrontier> {
    const frontier = await RedisFrontier.open({ url: redis.url, name, leaseMs, overridePoliteness });
    open.push(frontier);
    return frontier;
  }

  async function site(delayMs: number, robotsTxt?: string): Promise<FixtureSite> {
    const started = await startSite(delayMs, robotsTxt);
    sites.push(started);
    return started;
  }

  /** `processes` crawls of `roots` on one crawl name, each with its own frontier, run at once. */
  async function crawlTogether(processes: number, roots: string[], options: CrawlOptions): Promise<CrawlResult[]> {
    const name = `polite-${++names}`;
    const frontiers = await Promise.all(Array.from({ length: processes }, () => frontierFor(name)));
    return within(60_000, Promise.all(frontiers.map((frontier) => crawl(roots, options, frontier))), `${processes} crawls`);
  }

  it("keeps at most maxPerHost requests in flight at a host over four processes, each with four workers", async () => {
    const slow = await site(60);
    const results = await crawlTogether(4, [`${slow.url}/`], { maxTasks: 4, maxPerHost: 2, robots: false });
    expect(slow.peakRequestsInFlight).toBe(2);
    expect(results.map((result) => result.recorded)).toEqual([22, 22, 22, 22]); // Every process reports the crawl's records.
    expect(slow.totalRequests).toBe(22); // Each page once, /private/x (robots off) too.
  });

  it("spaces the requests to a host by delayMs over four processes, and reads its robots.txt once for all", async () => {
    const delayed = await site(5);
    const results = await crawlTogether(4, [`${delayed.url}/`], { maxTasks: 4, maxPerHost: 2, delayMs: 200, robots: true });
    expect(tooClose(delayed, 200)).toEqual([]);
    expect(median(gapsAt(delayed))).toBeGreaterThanOrEqual(190);
    expect(delayed.requestsFor("/robots.txt")).toBe(1);
    expect(delayed.peakRequestsInFlight).toBeLessThanOrEqual(2);
    // Every process knows the rules: /private/x is refused by robots.txt in each record, and never requested.
    expect(delayed.requestsFor("/private/x")).toBe(0);
    for (const result of results) {
      expect(result.records.filter((record) => record.error === "RobotsDisallowed").map((record) => record.url)).toEqual([`${delayed.url}/private/x`]);
      expect(result.recorded).toBe(22);
    }
    expect(results.flatMap((result) => result.robots).length).toBe(1); // Reported by the process that read it.
  });

  it("keeps to a Crawl-delay longer than delayMs that one process read, in every process", async () => {
    const crawlDelayed = await site(5, "User-agent: *\nCrawl-delay: 0.3\n");
    await crawlTogether(3, [`${crawlDelayed.url}/`], { maxTasks: 4, delayMs: 50, robots: true, maxPages: 4 });
    expect(tooClose(crawlDelayed, 300)).toEqual([]);
    expect(median(gapsAt(crawlDelayed))).toBeGreaterThanOrEqual(290);
    expect(crawlDelayed.requestsFor("/robots.txt")).toBe(1);
  });

  it("lets a busy host's URLs wait in Redis while other hosts' URLs go, over two processes", async () => {
    const busy = await site(0);
    const free = await site(0);
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    busy.addHandler("/", function holdRoot(_request, response) {
      void held.then(() => response.writeHead(200, { "Content-Type": "text/html" }).end(`<a href="/p/1">1</a>`));
    });
    const crawls = crawlTogether(2, [`${busy.url}/`, `${free.url}/`], { maxTasks: 4, maxPerHost: 1, robots: false });
    // The busy host's only slot is held by its root; the other host's 22 URLs all go meanwhile.
    await within(30_000, (async () => {
      while (free.totalRequests < 22) await new Promise((resolve) => setTimeout(resolve, 10));
    })(), "the free host's pages");
    expect(busy.totalRequests).toBe(1);
    release();
    const results = await crawls;
    expect(results.map((result) => result.recorded)).toEqual([44, 44]);
  });

  it("frees a killed process's slot at a host when its lease expires, and not before", async () => {
    const name = `slot-${++names}`;
    const dying = await frontierFor(name, 400);
    const other = await frontierFor(name, 400);
    dying.open(resolveOptions({ maxPerHost: 1, robots: false, maxTasks: 1 }), noop, ["http://a.test/"]);
    other.open(resolveOptions({ maxPerHost: 1, robots: false, maxTasks: 2 }), noop, ["http://a.test/"]);
    await dying.add([{ url: "http://a.test/1", maxRedirect: 10 }, { url: "http://a.test/2", maxRedirect: 10 }, { url: "http://b.test/1", maxRedirect: 10 }]);
    const first = await within(5_000, taken(dying), "a.test's first URL");
    expect(first.url).toBe("http://a.test/1");
    await dying.close(); // Killed: its lease, and so a.test's one slot, stays until the lease expires.
    expect((await within(5_000, taken(other), "b.test's URL")).url).toBe("http://b.test/1"); // a.test has no free slot.
    const status = await other.status();
    expect(status.queued).toBe(1);
    const next = await within(5_000, taken(other), "a.test's URL after the lease expired");
    expect(next.url).toBe("http://a.test/1"); // Put back at the front of a.test's queue, ahead of /2.
    other.stop();
  });

  it("holds a host back for every process after a Retry-After in one of them", async () => {
    const held = await site(0);
    held.addRetryAfter("/busy", { status: 503, retryAfter: "1", times: 1, then: [] });
    const roots = ["/busy", "/p/0", "/p/1", "/p/2", "/p/3"].map((path) => `${held.url}${path}`);
    await crawlTogether(3, roots, { maxTasks: 4, delayMs: 100, robots: false, maxDepth: 0 });
    const requests = held.requests();
    expect(requests.map((request) => request.path).sort()).toEqual(["/busy", "/busy", "/p/0", "/p/1", "/p/2", "/p/3"]);
    const refused = requests.findIndex((request) => request.path === "/busy");
    // Nothing came to the host in the second it asked for, from any process.
    const next = requests[refused + 1];
    expect((next?.at ?? 0) - (requests[refused]?.at ?? 0)).toBeGreaterThanOrEqual(1000 - MARGIN_MS);
  });

  it("refuses a process that joins a crawl with other roots or options, naming the difference", async () => {
    const name = `same-${++names}`;
    const first = await frontierFor(name);
    const second = await frontierFor(name);
    const options = resolveOptions({ maxPerHost: 2 });
    first.open(options, noop, ["http://a.test/"]);
    await first.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    let stops = 0;
    second.open(resolveOptions({ maxPerHost: 4 }), () => (stops += 1), ["http://a.test/"]);
    const error = await within(5_000, ending(second), "the refusal");
    expect(error).toBeInstanceOf(FrontierError);
    expect(stops).toBe(1); // The refused process's crawl stops.
    expect((error as Error).message).toBe(`crawl ${name} was started with maxPerHost 2, and this process has 4; crawl it with the same ROOTs and options (or change its maxPerHost and delayMs for every process with --override-politeness), or give this crawl another --crawl-name`);
    expect((await first.status()).leased).toBe(0); // It took nothing.
    const third = await frontierFor(name);
    third.open(options, noop, ["http://b.test/"]);
    const other = await within(5_000, ending(third), "the refusal of other roots");
    expect((other as Error).message).toMatch(/was started with roots \["http:\/\/a\.test\/"\], and this process has \["http:\/\/b\.test\/"\]/);
    first.stop();
  });

  it("refuses a process that joins a finished crawl with other options, rather than ending as if it had crawled", async () => {
    const name = `finished-${++names}`;
    const first = await frontierFor(name);
    first.open(resolveOptions({ maxPerHost: 1 }), noop, ["http://a.test/"]);
    expect(await within(5_000, ending(first), "the first process's end")).toBeNull(); // Nothing queued, nothing leased: finished.
    const second = await frontierFor(name);
    second.open(resolveOptions({ maxPerHost: 3 }), noop, ["http://a.test/"]);
    const error = await within(5_000, ending(second), "the refusal");
    expect(error).toBeInstanceOf(FrontierError);
    expect((error as Error).message).toContain("was started with maxPerHost 1, and this process has 3");
  });

  it("lets a process joining with overridePoliteness make its maxPerHost the crawl's, for every process, and still refuses other roots", async () => {
    const name = `override-${++names}`;
    const first = await frontierFor(name);
    first.open(resolveOptions({ maxPerHost: 1, robots: false, maxTasks: 1 }), noop, ["http://a.test/"]);
    await first.add(["1", "2", "3"].map((page) => ({ url: `http://a.test/${page}`, maxRedirect: 10 })));
    expect((await within(5_000, taken(first), "the first URL")).url).toBe("http://a.test/1");
    // a.test's one slot is taken: only the override lets another process lease its two other URLs now.
    const second = await frontierFor(name, undefined, true);
    second.open(resolveOptions({ maxPerHost: 3, robots: false, maxTasks: 2 }), noop, ["http://a.test/"]);
    const others = [await within(5_000, taken(second), "a.test's second URL, under maxPerHost 3"), await within(5_000, taken(second), "a.test's third URL")];
    expect(others.map((item) => item.url).sort()).toEqual(["http://a.test/2", "http://a.test/3"]);
    expect((await first.status()).leased).toBe(3);
    // Stored anew: a process with the first options is now the one that differs.
    const third = await frontierFor(name);
    third.open(resolveOptions({ maxPerHost: 1, robots: false }), noop, ["http://a.test/"]);
    const refused = await within(5_000, ending(third), "the refusal of the old maxPerHost");
    expect((refused as Error).message).toBe(`crawl ${name} was started with maxPerHost 3, and this process has 1; crawl it with the same ROOTs and options (or change its maxPerHost and delayMs for every process with --override-politeness), or give this crawl another --crawl-name`);
    const fourth = await frontierFor(name, undefined, true);
    fourth.open(resolveOptions({ maxPerHost: 3, robots: false }), noop, ["http://b.test/"]);
    const other = await within(5_000, ending(fourth), "the refusal of other roots");
    expect(other).toBeInstanceOf(FrontierError);
    expect((other as Error).message).toMatch(/was started with roots \["http:\/\/a\.test\/"\], and this process has \["http:\/\/b\.test\/"\]; crawl it with the same ROOTs and options, or give/);
    first.stop();
    second.stop();
  });
});
