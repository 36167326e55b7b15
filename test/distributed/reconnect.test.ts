/**
 * A single Redis (not a Cluster) that goes away and comes back, against a
 * real redis-server (test/helpers/redis-server.ts): the frontier makes its
 * connections again and sends again what failed meanwhile, for up to half a
 * lease, and the crawl goes on.
 *
 * The faults: a TCP proxy (test/helpers/redis-proxy.ts) that lets a call
 * through to Redis, waits for its reply (so it ran) and then cuts every
 * connection through it without passing the reply on, the client's and its
 * Pub/Sub connection's; redis-server SIGKILLed mid-crawl and started again
 * on the same port from its append-only file (synced on every write, so it
 * lost nothing it answered), or without one (it comes back empty); and a
 * redis-server that stays away, longer than the half lease the frontier
 * waits.
 *
 * What must hold, counted: every record of the crawl once in the process's
 * output (`onRecord`) and once in Redis, the links counted as new adding
 * up to the URLs found (a call sent again is answered as the first time),
 * and the crawl's channel listened to again; a TAKE sent again hands out
 * the URLs the first one leased; a page fetched again after a new
 * connection sends its links again (the cache of what Redis has seen is
 * emptied); a Redis back empty, or gone for good,
 * stops the crawl with its FrontierError (the latter after the warning of
 * its silence).
 */
import { createHash } from "node:crypto";
import { createClient } from "@redis/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import { resolveOptions } from "../../src/crawl/options.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import { type CrawlResult, errorRecord, type FetchStatistic } from "../../src/crawl/records.js";
import { FrontierError, RedisFrontier } from "../../src/distributed/redis-frontier.js";
import { FINISH, TAKE } from "../../src/distributed/scripts.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { type RedisProxy, startRedisProxy } from "../helpers/redis-proxy.js";
import { describeWithRedis, type RedisServer, startRedis } from "../helpers/redis-server.js";
import { finished, taken } from "../helpers/store-steps.js";
import { within } from "../helpers/within.js";
import { byUrl, withoutTiming } from "./records.js";

/** Pages of the site besides its root; each links to three others. */
const PAGES = 40;
/** Every crawl's options: robots.txt not read, so each record is a page's. */
const OPTIONS: CrawlOptions = { maxTasks: 4, maxPerHost: 4, robots: false };
/** The record after which Redis is killed: mid-crawl. */
const KILL_AFTER = 10;

/** The SHA1 of a script, as EVALSHA names it. */
function sha(script: string): string {
  return createHash("sha1").update(script).digest("hex");
}

describeWithRedis("RedisFrontier on a single Redis that goes away", () => {
  let site: FixtureSite;
  let expected: CrawlResult;
  let names = 0;
  const open: RedisFrontier[] = [];
  const proxies: RedisProxy[] = [];
  const servers: RedisServer[] = [];

  beforeAll(async () => {
    site = await FixtureSite.start();
    const paths = Array.from({ length: PAGES }, (_, page) => `/p/${page}`);
    site.addPage("/", paths.slice(0, 3));
    for (const [page, path] of paths.entries()) site.addPage(path, [1, 2, 7].map((step) => paths[(page + step) % PAGES] ?? "/"));
    expected = await crawl([site.urlFor("/")], OPTIONS);
  });
  afterAll(async () => {
    await site?.close();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const proxy of proxies.splice(0)) await proxy.close();
    for (const server of servers.splice(0)) await server.remove();
  });

  async function redisServer(appendOnly = false): Promise<RedisServer> {
    const server = await startRedis({ appendOnly });
    servers.push(server);
    return server;
  }

  /** How many clients listen on crawl `name`'s channel, as Redis counts them (PUBSUB NUMSUB). */
  async function listeners(url: string, name: string): Promise<number> {
    const client = createClient({ url });
    await client.connect();
    try {
      const reply = (await client.sendCommand(["PUBSUB", "NUMSUB", `coroutine-crawler:{${name}}:events`])) as [string, number];
      return Number(reply[1]);
    } finally {
      client.destroy();
    }
  }

  /** Every record of the crawl once, as the in-memory crawl made them, with the links counted once each. */
  function expectEveryRecordOnce(reported: readonly FetchStatistic[]): void {
    const urls = byUrl(expected.records).map((record) => record.url);
    expect(byUrl(reported).map((record) => record.url)).toEqual(urls);
    expect(byUrl(reported).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    expect(reported.reduce((sum, record) => sum + record.numNewUrls, 0)).toBe(urls.length - 1);
  }

  it("goes on when its connections are cut as a FINISH's reply comes: the call answered again as the first time, every record once, the channel listened to again", async () => {
    const server = await redisServer();
    const finishSha = sha(FINISH);
    const proxy = await startRedisProxy(server.port, function picked(args) {
      return args[0]?.toUpperCase() === "EVALSHA" && args[1] === finishSha;
    }, { everyConnection: true });
    proxies.push(proxy);
    const name = `cut-${++names}`;
    const frontier = await RedisFrontier.open({ url: `redis://127.0.0.1:${proxy.port}/0`, name, leaseMs: 10_000 });
    open.push(frontier);
    const reported: FetchStatistic[] = [];
    const result = await within(60_000, crawl([site.urlFor("/")], { ...OPTIONS, onRecord(record) { reported.push(record); } }, frontier), "the crawl through the proxy");

    // The fault happened: one FINISH ran in Redis and its reply never came; both connections broke and were made again.
    expect(proxy.cut.map((cut) => cut.args[1])).toEqual([finishSha]);
    expect(proxy.cut[0]?.reply.subarray(0, 1).toString()).toBe("*"); // An answer, not an error: the call ran.
    expect(frontier.reconnects).toBeGreaterThan(0);
    expect(frontier.clusterEvents.retried).toBeGreaterThan(0);

    expectEveryRecordOnce(reported);
    expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    const status = await frontier.status();
    expect({ records: status.records, seen: status.seen, queued: status.queued, leased: status.leased }).toEqual({ records: expected.recorded, seen: expected.seen.length, queued: 0, leased: 0 });
    // The subscriber connection, cut too, subscribed again.
    await within(10_000, (async () => { while ((await listeners(server.url, name)) !== 1) await new Promise((resolve) => setTimeout(resolve, 20)); })(), "the channel's one listener again");
  });

  it("hands out the URLs a TAKE leased when its reply was lost: the TAKE sent again answers as the first time", async () => {
    const server = await redisServer();
    const takeSha = sha(TAKE);
    const proxy = await startRedisProxy(server.port, function picked(args) {
      return args[0]?.toUpperCase() === "EVALSHA" && args[1] === takeSha;
    });
    proxies.push(proxy);
    // A lease far longer than the test: a lease the lost reply left behind would stay leased, and be counted below.
    const frontier = await RedisFrontier.open({ url: `redis://127.0.0.1:${proxy.port}/0`, name: `take-${++names}`, leaseMs: 120_000 });
    open.push(frontier);
    frontier.open(resolveOptions({ maxTasks: 2, robots: false }), () => {}, ["http://a.test/1"]);
    await frontier.add([1, 2, 3, 4].map((n) => ({ url: `http://a.test/${n}`, maxRedirect: 10 })));
    const first = await within(10_000, taken(frontier), "the first URL");
    const second = await within(10_000, taken(frontier), "the second URL");

    expect(proxy.cut.map((cut) => cut.args[1])).toEqual([takeSha]);
    const lostReply = proxy.cut[0]?.reply.toString() ?? "";
    // The URLs handed out are the ones the cut TAKE leased, and no other lease is held in Redis.
    expect([first.url, second.url].map((url) => lostReply.includes(JSON.stringify(url)))).toEqual([true, true]);
    const status = await frontier.status();
    expect({ queued: status.queued, leased: status.leased }).toEqual({ queued: 2, leased: 2 });
  });

  it("goes on when Redis is SIGKILLed and restarted from its append-only file mid-crawl: every record once, in the output and in Redis", async () => {
    const server = await redisServer(true);
    const name = `restarted-${++names}`;
    // Half a lease, 15 s, for the restart: generous on a loaded machine.
    const frontier = await RedisFrontier.open({ url: server.url, name, leaseMs: 30_000 });
    open.push(frontier);
    const reported: FetchStatistic[] = [];
    let restarted: Promise<void> | null = null;
    async function killAndRestart(): Promise<void> {
      await server.kill(); // SIGKILL is sent before the first await: Redis is gone from here on.
      await server.restart();
    }
    function onRecord(record: FetchStatistic): void {
      reported.push(record);
      if (reported.length === KILL_AFTER) restarted = killAndRestart();
    }
    const result = await within(60_000, crawl([site.urlFor("/")], { ...OPTIONS, onRecord }, frontier), "the crawl across Redis's restart");
    await restarted;

    expect(restarted).not.toBeNull();
    expect(frontier.reconnects).toBeGreaterThan(0);
    expect(frontier.clusterEvents.noscript).toBeGreaterThan(0); // The restarted Redis had lost the scripts: sent whole.
    expectEveryRecordOnce(reported);
    expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    const status = await frontier.status();
    expect({ records: status.records, seen: status.seen, queued: status.queued, leased: status.leased }).toEqual({ records: expected.recorded, seen: expected.seen.length, queued: 0, leased: 0 });
  });

  it("sends a page's links again after a reconnection, though it had sent them before: Redis may have lost them", async () => {
    const server = await redisServer(false);
    // Without open(): no crawl whose keys a Redis back empty would stop; only the cache of what Redis has seen is at stake.
    const frontier = await RedisFrontier.open({ url: server.url, name: `forgot-${++names}` });
    open.push(frontier);
    const root = { url: "http://a.test/", maxRedirect: 10 };
    const links = ["http://a.test/x", "http://a.test/y"].map((url) => ({ url, maxRedirect: 10 }));
    async function fetchRootOnce(): Promise<void> {
      await frontier.add([root]);
      const item = await within(10_000, taken(frontier), "the root");
      expect(await finished(frontier, item, { record: errorRecord(item.url, "NetworkError"), next: links })).not.toBeNull();
    }
    await fetchRootOnce();
    expect((await frontier.status()).queued).toBe(2);
    // Redis restarted with nothing: the links this process sent are gone from it.
    await server.kill();
    await server.restart();
    await within(10_000, (async () => { while (frontier.reconnects === 0) await new Promise((resolve) => setTimeout(resolve, 20)); })(), "the new connection");
    await fetchRootOnce();
    const status = await frontier.status();
    expect({ queued: status.queued, seen: status.seen, records: status.records }).toEqual({ queued: 2, seen: 3, records: 1 });
  });

  it("stops the crawl with its FrontierError when Redis comes back without the crawl's keys (restarted with nothing on disk)", async () => {
    const server = await redisServer(false);
    const frontier = await RedisFrontier.open({ url: server.url, name: `emptied-${++names}`, leaseMs: 30_000 });
    open.push(frontier);
    let restarted: Promise<void> | null = null;
    let records = 0;
    async function killAndRestart(): Promise<void> {
      await server.kill();
      await server.restart(); // Empty: no append-only file.
    }
    function onRecord(): void {
      if (++records === KILL_AFTER) restarted = killAndRestart();
    }
    const failure = await within(60_000, crawl([site.urlFor("/")], { ...OPTIONS, onRecord }, frontier).then(() => null, (error: unknown) => error), "the crawl after Redis came back empty");
    await restarted;

    expect(frontier.reconnects).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(FrontierError);
    expect((failure as Error).message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 stopped answering: it came back without this crawl's keys \(restarted with nothing on disk, or they were deleted\); this Redis keeps nothing on disk/);
    expect(records).toBeLessThan(expected.recorded);
  });

  it("stops the crawl with its FrontierError when Redis stays away longer than half a lease, after warning of its silence", async () => {
    const server = await redisServer(true);
    const warnings: string[] = [];
    // Half a lease is 1 s; the warning comes after 0.1 s of silence.
    const frontier = await RedisFrontier.open({ url: server.url, name: `gone-${++names}`, leaseMs: 2_000, warnAfterMs: 100, onWarning: (message) => warnings.push(message) });
    open.push(frontier);
    let records = 0;
    function onRecord(): void {
      if (++records === KILL_AFTER) void server.kill();
    }
    const failure = await within(30_000, crawl([site.urlFor("/")], { ...OPTIONS, onRecord }, frontier).then(() => null, (error: unknown) => error), "the crawl after Redis went away");

    expect(failure).toBeInstanceOf(FrontierError);
    // What broke the connection, not the client's "offline": Redis refused every connection made again.
    expect((failure as Error).message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 stopped answering: connect ECONNREFUSED 127\.0\.0\.1:\d+; records written are kept, and running the crawl again resumes it$/);
    expect(warnings[0]).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 has not answered for 0\.1 s; waiting for it \(/);
    expect(records).toBeLessThan(expected.recorded);
  });
});
