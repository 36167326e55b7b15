/**
 * A call whose reply is lost, over a real Redis Cluster (three primaries of
 * Debian's redis-server, test/helpers/redis-cluster.ts): a TCP proxy
 * (test/helpers/redis-proxy.ts) stands in front of the primary that serves
 * the crawl's one site, and every node tells clients to reach that primary
 * through it (`cluster-announce-port`). The proxy lets one FINISH (or
 * PREPARE) through to Redis, waits for Redis's reply, so the call has run,
 * and then cuts the connection without passing the reply on. The frontier
 * sends the call again once the cluster client has reconnected.
 *
 * What must hold, counted: the process's own output (its journal's lines,
 * as `--jsonl` writes them, and `onRecord`) holds every record of the crawl
 * once, this process having made them all; Redis holds each URL's record
 * once; and the links counted as new (`numNewUrls`) add up to the URLs
 * found, so a call answered again counts its links as the first time.
 */
import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";
import { bucketIndex, RedisFrontier } from "../../src/distributed/redis-frontier.js";
import { FINISH, PREPARE } from "../../src/distributed/scripts.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { keySlot, type ClusterNode, type RedisCluster, startRedisCluster } from "../helpers/redis-cluster.js";
import { type RedisProxy, startRedisProxy } from "../helpers/redis-proxy.js";
import { describeWithRedis } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";
import { byUrl, withoutTiming } from "./records.js";

/** Pages of the site besides its root; each links to three others. */
const PAGES = 40;
/** The crawl buckets of a Cluster (redis-frontier.ts's CLUSTER_BUCKETS). */
const BUCKETS = 16;
/** Every crawl's options: robots.txt not read, so each record is a page's. */
const OPTIONS: CrawlOptions = { maxTasks: 4, maxPerHost: 4, robots: false };

/** The SHA1 of a script, as EVALSHA names it. */
function sha(script: string): string {
  return createHash("sha1").update(script).digest("hex");
}

/** The cases: which call loses its reply, and where the process's records go. */
const CASES = [
  { mode: "records in Redis, lines first (--jsonl)", script: "FINISH", records: true, journaled: true },
  { mode: "--no-redis-records, lines first (--jsonl)", script: "FINISH", records: false, journaled: true },
  { mode: "records in Redis, onRecord after FINISH (no journal)", script: "FINISH", records: true, journaled: false },
  { mode: "records in Redis, lines first (--jsonl)", script: "PREPARE", records: true, journaled: true },
] as const;

describeWithRedis("a frontier call whose reply is lost", () => {
  let cluster: RedisCluster;
  let site: FixtureSite;
  let expected: CrawlResult;
  let names = 0;
  const open: RedisFrontier[] = [];
  const proxies: RedisProxy[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    site = await FixtureSite.start();
    const paths = Array.from({ length: PAGES }, (_, page) => `/p/${page}`);
    site.addPage("/", paths.slice(0, 3));
    for (const [page, path] of paths.entries()) site.addPage(path, [1, 2, 7].map((step) => paths[(page + step) % PAGES] ?? "/"));
    expected = await crawl([site.urlFor("/")], OPTIONS);
  }, 60_000);
  afterAll(async () => {
    await site?.close();
    await cluster?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const proxy of proxies.splice(0)) await proxy.close();
    // Every node back at its own port for the next test.
    for (const node of cluster.primaries) await cluster.announce(node, node.server.port);
  });

  /** The primary serving the site's bucket of crawl `name`. */
  function siteNode(name: string): Promise<ClusterNode> {
    const bucket = bucketIndex(new URL(site.urlFor("/")).origin, BUCKETS);
    return cluster.ownerOf(keySlot(`coroutine-crawler:{${name}:b${bucket}}:seen`));
  }

  it.each(CASES)("answers a $script sent again as the first time: every record once in the output and in Redis ($mode)", async ({ script, records, journaled }) => {
    const name = `lost-reply-${++names}`;
    const node = await siteNode(name);
    const scriptSha = sha(script === "FINISH" ? FINISH : PREPARE);
    const proxy = await startRedisProxy(node.server.port, function picked(args) {
      return args[0]?.toUpperCase() === "EVALSHA" && args[1] === scriptSha;
    });
    proxies.push(proxy);
    await cluster.announce(node, proxy.port);
    const root = cluster.primaries.find((primary) => primary.id !== node.id)?.url ?? "";
    const lines: FetchStatistic[] = [];
    const journal = journaled ? function writeLine(record: FetchStatistic): boolean { lines.push(record); return true; } : null;
    const frontier = await RedisFrontier.open({ url: root, name, records, journal, leaseMs: 5_000 });
    open.push(frontier);
    const reported: FetchStatistic[] = [];
    const result = await within(60_000, crawl([site.urlFor("/")], { ...OPTIONS, onRecord(record) { reported.push(record); } }, frontier), "the crawl through the proxy");

    // The fault happened: one call ran in Redis and its reply never came; the frontier sent it again.
    expect(proxy.cut.map((cut) => cut.args[1])).toEqual([scriptSha]);
    expect(proxy.cut[0]?.reply.subarray(0, 1).toString()).toBe("*"); // An answer, not an error: the call ran.
    expect(frontier.clusterEvents.retried).toBeGreaterThan(0);

    // The process's output: every record of the crawl once (this process made them all).
    const urls = byUrl(expected.records).map((record) => record.url);
    expect(byUrl(reported).map((record) => record.url)).toEqual(urls);
    expect(byUrl(reported).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    if (journaled) expect(byUrl(lines).map((record) => record.url)).toEqual(urls);
    // Links counted once each: the URLs queued by the pages add up to every URL but the root.
    expect(reported.reduce((sum, record) => sum + record.numNewUrls, 0)).toBe(urls.length - 1);
    if (journaled) expect(lines.reduce((sum, record) => sum + record.numNewUrls, 0)).toBe(urls.length - 1);

    // Redis: each URL's record once (with records kept there, the records themselves).
    const status = await frontier.status();
    expect(status.records).toBe(urls.length);
    expect(status.seen).toBe(urls.length);
    if (records) expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
  }, 90_000);
});
