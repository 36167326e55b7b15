/**
 * A crawl over a real Redis Cluster with a replica for each of its three
 * primaries (test/helpers/redis-cluster.ts), through the two changes of a
 * cluster under way: a resharding that moves a busy bucket's slot to
 * another primary, and a failover that makes a busy bucket's replica its
 * primary. Two crawls in this process, each with its own `RedisFrontier`,
 * over eight small sites that answer each request after a few ms, so the
 * change comes mid-crawl: started once the sites have answered a count of
 * requests, never after a time. Then: the crawl finishes, with the records
 * the in-memory crawl makes, each URL recorded once.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { bucketIndex, RedisFrontier } from "../../src/distributed/redis-frontier.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { keySlot, type RedisCluster, startRedisCluster } from "../helpers/redis-cluster.js";
import { describeWithRedis } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";
import { byUrl, withoutTiming } from "./records.js";

/** The sites, each its own origin. */
const SITES = 8;
/** Pages of each site besides its root. */
const PAGES = 25;
/** The crawl buckets of a Cluster (redis-frontier.ts's CLUSTER_BUCKETS). */
const BUCKETS = 16;
/** Requests the sites answer before the cluster changes: about a fifth of the crawl. */
const CHANGE_AFTER = 50;
/** Every crawl's options; robots.txt read, so politeness's keys are in play too. */
const OPTIONS: CrawlOptions = { maxTasks: 4, maxPerHost: 1, robots: true };

/** Sites answering after `delayMs`; site i's pages link to site i+1's root. */
async function startSites(delayMs: number): Promise<FixtureSite[]> {
  const sites = await Promise.all(Array.from({ length: SITES }, () => FixtureSite.start({ delayMs })));
  sites.forEach((site, i) => {
    const next = sites[(i + 1) % SITES]?.urlFor("/") ?? "/";
    const paths = Array.from({ length: PAGES }, (_, page) => `/p/${page}`);
    site.addPage("/", paths);
    for (const [page, path] of paths.entries()) site.addPage(path, [paths[(page + 1) % PAGES] ?? "/", paths[(page + 3) % PAGES] ?? "/", next]);
    site.addRobots("User-agent: *\nDisallow: /private\n");
  });
  return sites;
}

describeWithRedis("a crawl over a Redis Cluster that changes under it", () => {
  let cluster: RedisCluster;
  let sites: FixtureSite[];
  let expected: CrawlResult;
  let names = 0;
  const open: RedisFrontier[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster({ replicas: true });
    sites = await startSites(30);
    expected = await crawl([sites[0]?.urlFor("/") ?? ""], OPTIONS);
    for (const site of sites) site.resetCounters();
  }, 60_000);
  afterAll(async () => {
    for (const site of sites ?? []) await site.close();
    await cluster?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const site of sites) site.resetCounters();
  });

  /** Requests the sites have answered so far. */
  function answered(): number {
    return sites.reduce((sum, site) => sum + site.totalRequests, 0);
  }

  /** The slot of the bucket of the second site's origin: busy from the crawl's first pages on. */
  function busySlot(name: string): number {
    const bucket = bucketIndex(new URL(sites[1]?.urlFor("/") ?? "").origin, BUCKETS);
    return keySlot(`coroutine-crawler:{${name}:b${bucket}}:seen`);
  }

  /** Two crawls of one crawl name at the cluster's first node; `change` runs once the sites answered {@link CHANGE_AFTER} requests. */
  async function crawlThrough(change: (name: string) => Promise<void>): Promise<CrawlResult[]> {
    const name = `changing-${++names}`;
    const frontiers = await Promise.all([0, 1].map(() => RedisFrontier.open({ url: cluster.primaries[0]?.url ?? "", name, leaseMs: 5_000 })));
    open.push(...frontiers);
    const crawls = Promise.all(frontiers.map((frontier) => crawl([sites[0]?.urlFor("/") ?? ""], OPTIONS, frontier)));
    await within(30_000, (async () => {
      while (answered() < CHANGE_AFTER) await new Promise((resolve) => setTimeout(resolve, 5));
    })(), `${CHANGE_AFTER} requests`);
    await change(name);
    const results = await within(60_000, crawls, "the crawl after the change");
    return results;
  }

  /** Each result has the in-memory crawl's records; no page was recorded twice (each record's URL once). */
  function expectWhole(results: readonly CrawlResult[]): void {
    for (const result of results) {
      expect(new Set(result.records.map((record) => record.url)).size).toBe(result.records.length);
      expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    }
  }

  it("finishes with every record once after a busy bucket's slot moves to another primary mid-crawl", async () => {
    let moved = -1;
    const results = await crawlThrough(async function reshard(name) {
      const slot = busySlot(name);
      const from = await cluster.ownerOf(slot);
      const to = cluster.primaries.find((node) => node.id !== from.id);
      if (to === undefined) throw new Error("no other primary");
      await cluster.reshard([slot], to);
      moved = slot;
    });
    expect(moved).toBeGreaterThanOrEqual(0);
    expect(answered()).toBeGreaterThan(CHANGE_AFTER); // The crawl went on after the move.
    expectWhole(results);
  }, 120_000);

  it("finishes with every record once after a busy bucket's primary fails over to its replica mid-crawl", async () => {
    let promoted = "";
    const results = await crawlThrough(async function failover(name) {
      const owner = await cluster.ownerOf(busySlot(name));
      promoted = (await cluster.failover(owner)).id;
    });
    expect(promoted).not.toBe("");
    expect(answered()).toBeGreaterThan(CHANGE_AFTER);
    expectWhole(results);
  }, 120_000);
});
