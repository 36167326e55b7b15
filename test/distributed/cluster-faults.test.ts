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
 *
 * Last, a crash: a primary SIGKILLed while its replica lags behind it
 * (a proxy in front of it drops the replication stream,
 * test/helpers/redis-proxy.ts), so the replica that takes over by the
 * cluster's vote has lost the primary's last writes, among them links that
 * pages of another bucket, on another node, queued there. Every URL must
 * still be recorded once: a page's record waits until its links of other
 * buckets are on a replica (`WAIT 1`).
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { bucketIndex, RedisFrontier } from "../../src/distributed/redis-frontier.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { command, keySlot, type ClusterNode, type RedisCluster, startRedisCluster } from "../helpers/redis-cluster.js";
import { startRedisProxy } from "../helpers/redis-proxy.js";
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
    // A replica takes over from a dead primary however long ago it last heard from it: by default
    // (a validity factor of 10) one that has not for 10 node timeouts plus 10 s stays a replica, and the
    // crash test starves the replica on purpose, for as long as a loaded machine takes to go on.
    cluster = await startRedisCluster({ replicas: true, args: ["--cluster-replica-validity-factor", "0"] });
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

  /**
   * Runs for the crash test: a hub site whose root links to HUB_PAGES pages,
   * each linking to its own page of a leaf site (found nowhere else), the
   * two sites' buckets on different nodes. A link lost from the leaf's
   * bucket after its hub page was recorded is never found again.
   */
  const HUB_PAGES = 60;

  /** One command on one node (its own port, not a proxy's), on a connection of its own. */
  function ask(node: ClusterNode, args: string[]): Promise<unknown> {
    return command(`redis://127.0.0.1:${node.server.port}`, args);
  }

  it("records every URL once when the primary holding a page's links crashes before its replica has them", async () => {
    const hub = await FixtureSite.start({ delayMs: 20 });
    const leaf = await FixtureSite.start({ delayMs: 20 });
    const proxies: Array<{ close(): Promise<void> }> = [];
    try {
      const pages = Array.from({ length: HUB_PAGES }, (_, page) => `/h/${page}`);
      hub.addPage("/", pages);
      for (const [page, path] of pages.entries()) {
        hub.addPage(path, [leaf.urlFor(`/l/${page}`)]);
        leaf.addPage(`/l/${page}`, []);
      }
      const options: CrawlOptions = { maxTasks: 4, maxPerHost: 4, robots: false };
      const wanted = await crawl([hub.urlFor("/")], options);
      expect(wanted.recorded).toBe(1 + 2 * HUB_PAGES);
      hub.resetCounters();
      leaf.resetCounters();

      // A crawl name whose leaf bucket and hub bucket are served by different primaries; the leaf's is the one to crash.
      const bucketKey = (name: string, site: FixtureSite, key: string): string => `coroutine-crawler:{${name}:b${bucketIndex(new URL(site.urlFor("/")).origin, BUCKETS)}}:${key}`;
      let name = "";
      let doomed: ClusterNode | null = null;
      let hubNode: ClusterNode | null = null;
      for (let n = 0; doomed === null || hubNode === null || doomed.id === hubNode.id; n += 1) {
        name = `crash-${++names}-${n}`;
        doomed = await cluster.ownerOf(keySlot(bucketKey(name, leaf, "seen")));
        hubNode = await cluster.ownerOf(keySlot(bucketKey(name, hub, "seen")));
      }
      if (doomed === null || hubNode === null) throw new Error("no crawl name found");
      const [victim, hubPrimary] = [doomed, hubNode];
      // The doomed primary reached through a proxy, by the crawler and by its replica alike.
      const proxy = await startRedisProxy(victim.server.port, function cutNothing() { return false; });
      proxies.push(proxy);
      await within(30_000, cluster.announce(victim, proxy.port), "the nodes seeing the doomed primary at the proxy's port");
      await within(20_000, (async () => {
        while (proxy.replications === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      })(), "the replica replicating through the proxy");

      const frontier = await within(20_000, RedisFrontier.open({ url: hubPrimary.url, name, leaseMs: 20_000 }), "opening the frontier");
      open.push(frontier);
      const crawling = crawl([hub.urlFor("/")], options, frontier);
      crawling.catch(function endedAfterAFailedStep() {}); // Awaited below; this only keeps a step's failure from leaving it unhandled.
      await within(30_000, (async () => {
        while (hub.totalRequests < 8) await new Promise((resolve) => setTimeout(resolve, 5));
      })(), "8 requests to the hub");

      // The replica falls behind from here: what the primary is sent now dies with it.
      const lagging = cluster.replicas[cluster.primaries.indexOf(victim)];
      if (lagging === undefined) throw new Error("the doomed primary has no replica");
      const recordedBefore = Number(await within(10_000, ask(hubPrimary, ["HLEN", bucketKey(name, hub, "records")]), "the hub's records before"));
      proxy.starveReplicas();
      await within(60_000, (async () => {
        for (;;) {
          const seen = Number(await ask(victim, ["SCARD", bucketKey(name, leaf, "seen")]));
          const replicated = Number(await command(`redis://127.0.0.1:${lagging.server.port}`, ["SCARD", bucketKey(name, leaf, "seen")], { readOnly: true }));
          const recorded = Number(await ask(hubPrimary, ["HLEN", bucketKey(name, hub, "records")]));
          const blocked = /blocked_clients:([1-9])/.test(String(await ask(victim, ["INFO", "clients"])));
          // Links on the doomed primary that its replica lacks (counted on both, not against a count taken
          // before: on a loaded machine the last links may reach the primary before the replica is starved,
          // and every worker then waits for them), their pages recorded on the other node or waiting for a replica.
          if (seen > replicated && (recorded > recordedBefore || blocked)) return;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })(), "links on the lagging primary");
      await within(60_000, cluster.failover(victim, { kill: true }), "the replica taking over from the killed primary");

      const result = await within(90_000, crawling, "the crawl after the crash");
      expect(frontier.clusterEvents.waits).toBeGreaterThan(0);
      const status = await within(20_000, frontier.status(), "the frontier's status after the crawl");
      expect({ records: status.records, seen: status.seen, leased: status.leased, queued: status.queued }).toEqual({ records: wanted.recorded, seen: wanted.recorded, leased: 0, queued: 0 });
      expect(byUrl(result.records).map((record) => record.url)).toEqual(byUrl(wanted.records).map((record) => record.url));
    } finally {
      await within(20_000, Promise.all([...proxies.map((proxy) => proxy.close()), hub.close(), leaf.close()]), "closing the proxy and the sites");
    }
    // Longer than its steps' own deadlines added up (30 + 20 + 20 + 30 + 10 + 60 + 60 + 90 + 20, and 20
    // to close), so that a step that takes too long fails with its own message.
  }, 400_000);
});
