/**
 * One crawl over a real Redis Cluster (test/helpers/redis-cluster.ts: three
 * primaries of Debian's redis-server) and eight small sites of this test
 * process's own, each its own origin, linking to each other: the crawl's
 * origins land in buckets on every shard. Several crawls in this process,
 * each with its own `RedisFrontier` (its own owner and connections, as a
 * process has), on one crawl name. Counted, never timed: records, requests
 * per path, requests in flight at once, `robots.txt` reads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { aclRule, bucketIndex, FrontierError, RedisFrontier } from "../../src/distributed/redis-frontier.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { command, keySlot, type RedisCluster, startRedisCluster } from "../helpers/redis-cluster.js";
import { describeWithRedis } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";
import { byUrl, streamedCount, withoutTiming } from "./records.js";

/** The sites, each on its own port (so its own origin and bucket). */
const SITES = 8;
/** Pages of each site besides its root; each links to two of its own and to the next site's root. */
const PAGES = 15;
/** The crawl buckets of a Cluster (redis-frontier.ts's CLUSTER_BUCKETS). */
const BUCKETS = 16;
/** Every crawl's options: robots.txt read, two requests at a time per origin. */
const OPTIONS: CrawlOptions = { maxTasks: 6, maxPerHost: 2, robots: true };

/** Sites of `PAGES` pages besides `/`, with a `robots.txt` that refuses `/private`; site i's pages link to site i+1's root. */
async function startSites(delayMs: number): Promise<FixtureSite[]> {
  const sites = await Promise.all(Array.from({ length: SITES }, () => FixtureSite.start({ delayMs })));
  sites.forEach((site, i) => {
    const next = sites[(i + 1) % SITES]?.urlFor("/") ?? "/";
    const paths = Array.from({ length: PAGES }, (_, page) => `/p/${page}`);
    site.addPage("/", paths);
    for (const [page, path] of paths.entries()) site.addPage(path, [paths[(page + 1) % PAGES] ?? "/", paths[(page + 5) % PAGES] ?? "/", "/private/x", next]);
    site.addRobots("User-agent: *\nDisallow: /private\n");
  });
  return sites;
}

describeWithRedis("a crawl over a Redis Cluster", () => {
  let cluster: RedisCluster;
  let sites: FixtureSite[];
  let expected: CrawlResult;
  let names = 0;
  const open: RedisFrontier[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    sites = await startSites(0);
    expected = await crawl([sites[0]?.urlFor("/") ?? ""], OPTIONS);
  }, 60_000);
  afterAll(async () => {
    for (const site of sites ?? []) await site.close();
    await cluster?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const site of sites) site.resetCounters();
  });

  /** A crawl name whose own slot (the key of its bucket count, `{NAME}`) is served by `node`'s primary. */
  async function nameOn(node: number): Promise<string> {
    const id = cluster.primaries[node]?.id;
    for (;;) {
      const name = `cluster-${++names}`;
      if ((await cluster.ownerOf(keySlot(`{${name}}`))).id === id) return name;
    }
  }

  /** `processes` crawls of the first site's root on one crawl name, each with its own frontier opened at `url`. */
  async function crawlTogether(processes: number, name: string, url: string, options: CrawlOptions = OPTIONS): Promise<CrawlResult[]> {
    const frontiers = await Promise.all(Array.from({ length: processes }, () => RedisFrontier.open({ url, name })));
    open.push(...frontiers);
    for (const frontier of frontiers) expect(frontier.cluster).toBe(true);
    return within(60_000, Promise.all(frontiers.map((frontier) => crawl([sites[0]?.urlFor("/") ?? ""], options, frontier))), `${processes} crawls`);
  }

  /** Every path each site was asked for, with how many times, as `PORT/PATH: N` for those asked more than once. */
  function askedTwice(): string[] {
    return sites.flatMap((site) => {
      const counts = new Map<string, number>();
      for (const { path } of site.requests()) counts.set(path, (counts.get(path) ?? 0) + 1);
      return [...counts].filter(([, count]) => count > 1).map(([path, count]) => `${site.urlFor(path)}: ${count}`);
    });
  }

  it("spreads the sites' origins over buckets on every shard", async () => {
    const owners = new Set<string>();
    for (const site of sites) {
      const bucket = bucketIndex(new URL(site.urlFor("/")).origin, BUCKETS);
      owners.add((await cluster.ownerOf(keySlot(`{x:b${bucket}}`))).id);
    }
    expect(owners.size).toBeGreaterThan(1);
  });

  it("crawls from any node given, whichever node the crawl's name hashes to, with the records the in-memory crawl makes", async () => {
    expect(expected.recorded).toBe(SITES * (PAGES + 2));
    for (const [given, node] of cluster.primaries.entries()) {
      for (const nameNode of [0, 1, 2]) {
        if (nameNode !== given && nameNode !== (given + 1) % 3) continue; // Two names a node: its own, and another's.
        const [result] = await crawlTogether(1, await nameOn(nameNode), node.url);
        expect(byUrl(result?.records ?? []).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
        expect(askedTwice()).toEqual([]);
        for (const site of sites) site.resetCounters();
      }
    }
  }, 120_000);

  it("keeps politeness over three processes: at most maxPerHost in flight at each origin, its robots.txt read once", async () => {
    const slow = await startSites(20);
    try {
      const name = await nameOn(1);
      const frontiers = await Promise.all([0, 1, 2].map(() => RedisFrontier.open({ url: cluster.primaries[2]?.url ?? "", name })));
      open.push(...frontiers);
      const results = await within(60_000, Promise.all(frontiers.map((frontier) => crawl([slow[0]?.urlFor("/") ?? ""], { ...OPTIONS, maxTasks: 4 }, frontier))), "3 crawls");
      expect(results.map((result) => result.recorded)).toEqual([expected.recorded, expected.recorded, expected.recorded]);
      expect(slow.map((site) => site.peakRequestsInFlight)).toEqual(slow.map(() => 2));
      expect(slow.map((site) => site.requestsFor("/robots.txt"))).toEqual(slow.map(() => 1));
      expect(slow.map((site) => site.requestsFor("/private/x"))).toEqual(slow.map(() => 0));
      expect(results.flatMap((result) => result.robots).length).toBe(SITES); // Each read by one process, reported there.
    } finally {
      for (const site of slow) await site.close();
    }
  }, 90_000);

  it("finishes with three processes, every URL recorded once and fetched once, the crawl's keys in buckets on every shard", async () => {
    const name = await nameOn(0);
    const results = await crawlTogether(3, name, cluster.primaries[1]?.url ?? "");
    for (const result of results) expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    expect(askedTwice()).toEqual([]);
    const total = sites.reduce((sum, site) => sum + site.totalRequests, 0);
    expect(total).toBe(expected.recorded); // Every page once, and each robots.txt in place of its /private/x, refused.
    // Records live on more than one node: each primary's share, counted there.
    const counts = await Promise.all(cluster.primaries.map(async (node) => {
      const client = createClient({ url: node.url });
      await client.connect();
      try {
        let records = 0;
        for (let bucket = 0; bucket < BUCKETS; bucket += 1) {
          const key = `coroutine-crawler:{${name}:b${bucket}}:records`;
          if ((await cluster.ownerOf(keySlot(key))).id === node.id) records += await client.hLen(key);
        }
        return records;
      } finally {
        client.destroy();
      }
    }));
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(expected.recorded);
    expect(counts.filter((count) => count > 0).length).toBeGreaterThan(1);
  }, 90_000);

  /** Runs `args` on every node of the cluster, each on a connection of its own; their replies, in the nodes' order. */
  function onEveryNode(args: string[]): Promise<unknown[]> {
    return Promise.all(cluster.urls.map((url) => command(url, args)));
  }

  it("crawls to the end as an ACL user with exactly the Cluster's rule on every node, and no other command refused", async () => {
    const name = "acl-cluster";
    await onEveryNode(["ACL", "SETUSER", "crawler", "on", ">crawler-pw", ...aclRule(name, true).split(" ")]);
    await onEveryNode(["ACL", "LOG", "RESET"]);
    const url = (cluster.primaries[1]?.url ?? "").replace("redis://", "redis://crawler:crawler-pw@");
    // Two processes: one writes its own lines first (PREPARE, then FINISH), as the CLI's --jsonl does; the other FINISH alone.
    const lines: FetchStatistic[] = [];
    const frontiers = [await RedisFrontier.open({ url, name }), await RedisFrontier.open({ url, name, journal: function writeLine(record) { lines.push(record); return true; } })];
    open.push(...frontiers);
    for (const frontier of frontiers) expect(frontier.cluster).toBe(true);
    const results = await within(60_000, Promise.all(frontiers.map((frontier) => crawl([sites[0]?.urlFor("/") ?? ""], OPTIONS, frontier))), "the crawl of an ACL user");
    for (const result of results) expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    expect(lines.length).toBeGreaterThan(0);
    const [first] = frontiers as [RedisFrontier, RedisFrontier];
    expect((await first.status()).records).toBe(expected.recorded);
    expect(await streamedCount(first)).toBe(expected.recorded + expected.seen.length);
    // Refused on any node, and by its nature optional: CONFIG GET (whether Redis keeps its data on disk).
    const refused = (await onEveryNode(["ACL", "LOG"])).flat() as Array<Record<string, unknown>>;
    expect(new Set(refused.map((entry) => `${String(entry["reason"])} ${String(entry["object"])}`))).toEqual(new Set(["command config|get"]));
    // The guide gives the same rule.
    expect(readFileSync(join(import.meta.dirname, "../../docs/guide-distributed.md"), "utf8")).toContain(`ACL SETUSER crawler on >PASSWORD ${aclRule("NAME", true)}\n`);
  }, 90_000);

  it("explains a command a script runs that the Cluster's ACL refuses (ERR … can't run this command), with the Cluster's rule", async () => {
    const name = "acl-cluster-short";
    const rule = aclRule(name, true).split(" ").filter((part) => part !== "+spublish");
    await onEveryNode(["ACL", "SETUSER", "short", "on", ">short-pw", ...rule]);
    const frontier = await RedisFrontier.open({ url: (cluster.primaries[0]?.url ?? "").replace("redis://", "redis://short:short-pw@"), name });
    open.push(frontier);
    const failed = await within(30_000, crawl([sites[0]?.urlFor("/") ?? ""], OPTIONS, frontier).then(() => null, (error: unknown) => error), "the crawl's failure");
    expect(failed).toBeInstanceOf(FrontierError);
    const message = (failed as Error).message;
    expect(message).toContain(`refused the crawl's command: its ACL does not let this user run a command of the crawl's scripts (ERR … can't run this command): the user needs, on every node of the Cluster, the keys ~coroutine-crawler:{${name}}:* and ~coroutine-crawler:{${name}:b*}:*, the channels &coroutine-crawler:{${name}:b*}:events, and the commands the crawl and its scripts run (Redis checks a script's too), as in ACL SETUSER USER on >PASSWORD ${aclRule(name, true)}`);
    expect(message).not.toContain("short-pw");
  }, 60_000);
});
