/**
 * Politeness shared by every process of a Redis crawl, against a real
 * redis-server and a site of this test process's own, which notes each
 * request's arrival: several crawls in this process, each with its own
 * `RedisFrontier` (its own owner and connections, as a process has), on one
 * crawl name. What a site owner sees is counted on the server's side:
 * requests in flight at once, `robots.txt` reads. Delays and holds are read
 * from what the crawl stored, in the order Redis stored it ({@link RedisLog}):
 * when each URL was leased and when its host may next start a request, by
 * Redis's clock, which every process obeys. The gaps between the site's
 * arrivals are not timed: a loaded machine delays one request after its lease
 * and not the next, and no margin both holds and still checks the delay.
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
import { type Lease, RedisLog } from "./redis-log.js";

/** The crawl's stop, for a frontier opened outside a crawl: nothing to stop. */
function noop(): void {}

/** Pages of each site besides its root, which links to them all; each page links to two others. */
const PAGES = 20;
/** The frontiers' lease, the default: a lease's deadline less this is when TAKE leased the URL. */
const LEASE_MS = 30_000;

/** Consecutive leases (in Redis's order) that started less than `delayMs` apart, as `url after url: gap`. */
function closerThan(leases: readonly Lease[], delayMs: number): string[] {
  return leases.slice(1).flatMap((lease, i) => {
    const before = leases[i];
    if (before === undefined || lease.at - before.at >= delayMs) return [];
    return [`${lease.url} after ${before.url}: ${lease.at - before.at} ms`];
  });
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

describeWithRedis("politeness shared by the processes of a Redis crawl", () => {
  let redis: RedisServer;
  let names = 0;
  const open: RedisFrontier[] = [];
  const sites: FixtureSite[] = [];
  const logs: RedisLog[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const log of logs.splice(0)) log.close();
    for (const site of sites.splice(0)) await site.close();
  });

  async function frontierFor(name: string, leaseMs = LEASE_MS, overridePoliteness?: boolean): Promise<RedisFrontier> {
    const frontier = await RedisFrontier.open({ url: redis.url, name, leaseMs, overridePoliteness });
    open.push(frontier);
    return frontier;
  }

  async function site(delayMs: number, robotsTxt?: string): Promise<FixtureSite> {
    const started = await startSite(delayMs, robotsTxt);
    sites.push(started);
    return started;
  }

  /** Watches what the crawl `name` stores in Redis, from now on. */
  async function watch(name: string): Promise<RedisLog> {
    const log = await RedisLog.watch(redis.url, name);
    logs.push(log);
    return log;
  }

  /**
   * `processes` crawls of `roots` on one crawl name, each with its own
   * frontier, run at once; `log` is what they stored, watched from before
   * the first began.
   */
  function crawlTogether(processes: number, roots: string[], options: CrawlOptions): { log: Promise<RedisLog>; results: Promise<CrawlResult[]> } {
    const name = `polite-${++names}`;
    const log = watch(name);
    const results = log.then(async function crawlAll() {
      const frontiers = await Promise.all(Array.from({ length: processes }, () => frontierFor(name)));
      return within(60_000, Promise.all(frontiers.map((frontier) => crawl(roots, options, frontier))), `${processes} crawls`);
    });
    return { log, results };
  }

  it("keeps at most maxPerHost requests in flight at a host over four processes, each with four workers", async () => {
    const slow = await site(60);
    const results = await crawlTogether(4, [`${slow.url}/`], { maxTasks: 4, maxPerHost: 2, robots: false }).results;
    expect(slow.peakRequestsInFlight).toBe(2);
    expect(results.map((result) => result.recorded)).toEqual([22, 22, 22, 22]); // Every process reports the crawl's records.
    expect(slow.totalRequests).toBe(22); // Each page once, /private/x (robots off) too.
  });

  it("spaces the requests to a host by delayMs over four processes, and reads its robots.txt once for all", async () => {
    const delayed = await site(5);
    const crawls = crawlTogether(4, [`${delayed.url}/`], { maxTasks: 4, maxPerHost: 2, delayMs: 200, robots: true });
    const results = await crawls.results;
    const log = await crawls.log;
    await log.caughtUp();
    // Every page the site was asked for was leased in Redis (and /private/x, which robots.txt then refused), each
    // lease at least the delay after the one before, by Redis's clock, whichever process took it.
    const leases = log.leases(delayed.url, LEASE_MS);
    const requested = delayed.requests().map((request) => request.path).filter((path) => path !== "/robots.txt");
    expect(leases.map((lease) => new URL(lease.url).pathname).sort()).toEqual([...requested, "/private/x"].sort());
    expect(closerThan(leases, 200)).toEqual([]);
    expect(new Set(leases.map((lease) => lease.owner)).size, "processes that leased pages").toBeGreaterThan(1);
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

  it("counts a host's delay from each request's real start, as every process reports it to Redis", async () => {
    const delayed = await site(5);
    const crawls = crawlTogether(2, [`${delayed.url}/`], { maxTasks: 4, maxPerHost: 2, delayMs: 150, robots: false });
    await crawls.results;
    const log = await crawls.log;
    await log.caughtUp();
    // Each request the site got was reported as it started (STARTED), and no TAKE leased a URL of the host before one
    // delay after a start reported before it, by Redis's clock: the site's gaps hold the delay from each real start.
    const reported = log.calls.filter((call) => call.name === "STARTED").flatMap((call) => call.argv.slice(2).map((origin) => ({ origin, at: call.at })));
    expect(reported.filter((start) => start.origin === delayed.url).length).toBe(delayed.totalRequests);
    const early: string[] = [];
    let due = 0; // One delay after the latest start reported so far.
    for (const call of log.calls) {
      if (call.name === "STARTED" && call.argv.slice(2).includes(delayed.url)) due = Math.max(due, call.at + 150);
      if (call.name !== "TAKE") continue;
      for (const { name, args } of call.ran) {
        if (name !== "ZADD" || !args[0]?.endsWith(":leases") || args.length !== 3 || !(args[2] ?? "").startsWith(delayed.url)) continue;
        const at = Number(args[1]) - LEASE_MS;
        if (at < due) early.push(`${args[2]} leased ${due - at} ms before one delay after the last start reported`);
      }
    }
    expect(early).toEqual([]);
  });

  it("keeps to a Crawl-delay longer than delayMs that one process read, in every process", async () => {
    const crawlDelayed = await site(5, "User-agent: *\nCrawl-delay: 0.3\n");
    const crawls = crawlTogether(3, [`${crawlDelayed.url}/`], { maxTasks: 4, delayMs: 50, robots: true, maxPages: 4 });
    await crawls.results;
    const log = await crawls.log;
    await log.caughtUp();
    const leases = log.leases(crawlDelayed.url, LEASE_MS);
    expect(leases.length).toBeGreaterThanOrEqual(4);
    expect(closerThan(leases, 300)).toEqual([]);
    expect(new Set(leases.map((lease) => lease.owner)).size, "processes that leased pages").toBeGreaterThan(1);
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
    const crawls = crawlTogether(2, [`${busy.url}/`, `${free.url}/`], { maxTasks: 4, maxPerHost: 1, robots: false }).results;
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
    const log = await watch(name);
    const dying = await frontierFor(name, 400);
    const other = await frontierFor(name, 400);
    dying.open(resolveOptions({ maxPerHost: 1, robots: false, maxTasks: 1 }), noop, ["http://a.test/"]);
    other.open(resolveOptions({ maxPerHost: 1, robots: false, maxTasks: 2 }), noop, ["http://a.test/"]);
    await dying.add([{ url: "http://a.test/1", maxRedirect: 10 }, { url: "http://a.test/2", maxRedirect: 10 }, { url: "http://b.test/1", maxRedirect: 10 }]);
    const first = await within(5_000, taken(dying), "a.test's first URL");
    expect(first.url).toBe("http://a.test/1");
    await dying.close(); // Killed: its lease, and so a.test's one slot, stays until the lease expires.
    // b.test's URL, free, and a.test's /1 again once the dead lease expired: in that order, unless the machine
    // was so slow that the lease expired before the first take. So the order is not checked; Redis's times are.
    const both = [await within(5_000, taken(other), "a first URL"), await within(5_000, taken(other), "a second URL, after the lease expired")];
    expect(both.map((item) => item.url).sort()).toEqual(["http://a.test/1", "http://b.test/1"]); // /1 put back at the front, ahead of /2.
    await log.caughtUp();
    const [dead, again] = log.leases("http://a.test", 400);
    expect([dead?.owner, again?.owner]).toEqual([dying.owner, other.owner]);
    // Taken again by Redis's clock no earlier than the dead lease's deadline.
    expect((again?.at ?? 0) - (dead?.at ?? 0)).toBeGreaterThanOrEqual(400);
    expect((await other.status()).queued).toBe(1); // a.test's /2, behind the slot /1 holds.
    other.stop();
  });

  it("holds a host back for every process after a Retry-After in one of them", async () => {
    const held = await site(0);
    held.addRetryAfter("/busy", { status: 503, retryAfter: "1", times: 1, then: [] });
    // /slow and /busy take the host's two slots; /slow is answered only once the 503's hold is in Redis. So the
    // pages after them can only be leased after the hold, and the hold, not a slot, decides when.
    const crawls = crawlTogether(3, ["/slow", "/busy", "/p/0", "/p/1"].map((path) => `${held.url}${path}`), { maxTasks: 4, maxPerHost: 2, delayMs: 100, robots: false, maxDepth: 0 });
    const log = await crawls.log;
    const holdStored = log.when((call) => call.name === "HOLD");
    held.addHandler("/slow", function answerAfterTheHold(_request, response) {
      void holdStored.then(() => response.writeHead(200, { "Content-Type": "text/html" }).end("slow"));
    });
    await crawls.results;
    await log.caughtUp();
    expect(held.requests().map((request) => request.path).sort()).toEqual(["/busy", "/busy", "/p/0", "/p/1", "/slow"]);
    const hold = await holdStored;
    expect(hold.argv.slice(2)).toEqual([held.url, "1000", "100"]); // The origin, Retry-After's 1 s, the delay.
    const [holdUntil = Infinity, ...more] = log.nextStarts(hold, held.url);
    expect(more).toEqual([]);
    expect(holdUntil - hold.at).toBeGreaterThanOrEqual(1000 + 100); // Redis's clock, read inside the script, is at hold.at or after.
    // Every URL leased after the hold, by any process, was leased by Redis's clock no earlier than the hold's end.
    const after = log.leases(held.url, LEASE_MS, hold);
    expect(after.map((lease) => new URL(lease.url).pathname).sort()).toEqual(["/p/0", "/p/1"]);
    expect(after.filter((lease) => lease.at < holdUntil)).toEqual([]);
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

  it("refuses a process that joins with the other record mode, naming it, before it stores a record", async () => {
    const name = `records-${++names}`;
    const first = await frontierFor(name);
    first.open(resolveOptions({ robots: false }), noop, ["http://a.test/"]);
    await first.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const jsonlOnly = await RedisFrontier.open({ url: redis.url, name, leaseMs: LEASE_MS, records: false });
    open.push(jsonlOnly);
    jsonlOnly.open(resolveOptions({ robots: false }), noop, ["http://a.test/"]);
    const error = await within(5_000, ending(jsonlOnly), "the refusal");
    expect(error).toBeInstanceOf(FrontierError);
    expect((error as Error).message).toBe(`crawl ${name} was started with records kept in Redis, and this process keeps them in each process's --jsonl only (--no-redis-records); crawl it with the same ROOTs and options, or give this crawl another --crawl-name`);
    expect((await first.status()).leased).toBe(0); // It took nothing, so it stored no `1` among the records.
    const other = `records-${++names}`;
    const started = await RedisFrontier.open({ url: redis.url, name: other, leaseMs: LEASE_MS, records: false });
    open.push(started);
    started.open(resolveOptions({ robots: false }), noop, ["http://a.test/"]);
    await started.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const keeping = await frontierFor(other);
    keeping.open(resolveOptions({ robots: false }), noop, ["http://a.test/"]);
    expect(((await within(5_000, ending(keeping), "the refusal")) as Error).message).toContain("was started with records kept in each process's --jsonl only (--no-redis-records), and this process keeps them in Redis;");
    first.stop();
    started.stop();
  });

  it("names a limit not set as the help does, and a regex once, in a refusal", async () => {
    const name = `shown-${++names}`;
    const first = await frontierFor(name);
    first.open(resolveOptions({ exclude: /\.pdf$/, maxDepth: 2 }), noop, ["http://a.test/"]);
    await first.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const second = await frontierFor(name);
    second.open(resolveOptions({ maxDepth: 2 }), noop, ["http://a.test/"]);
    expect(((await within(5_000, ending(second), "the refusal")) as Error).message).toContain("was started with exclude /\\.pdf$/, and this process has none;");
    const third = await frontierFor(name);
    third.open(resolveOptions({ exclude: /\.pdf$/ }), noop, ["http://a.test/"]);
    expect(((await within(5_000, ending(third), "the refusal")) as Error).message).toContain("was started with maxDepth 2, and this process has no limit;");
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
