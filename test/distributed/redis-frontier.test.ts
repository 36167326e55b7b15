/**
 * The Redis frontier in one process, against a real redis-server: it
 * crawls as the in-memory frontier does, and its steps (add, take with a
 * lease, finish, release, renew, join) do what the guide says.
 */
import { createClient } from "@redis/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { errorRecord } from "../../src/crawl/records.js";
import { ACL_COMMANDS, aclRule, FrontierError, RedisFrontier } from "../../src/distributed/index.js";
import { startDemoSite, SyntheticSite } from "../../src/site/index.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { ending, taken } from "../helpers/store-steps.js";
import { within } from "../helpers/within.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireBuiltCli, runCli } from "../cli/cli-process.js";
import { byUrl, streamedCount, withoutTiming } from "./records.js";
import { RedisLog } from "./redis-log.js";

describeWithRedis("RedisFrontier", () => {
  let redis: RedisServer;
  let demo: SyntheticSite;
  let names = 0;
  const open: RedisFrontier[] = [];
  const logs: RedisLog[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    demo = await startDemoSite();
  });
  afterAll(async () => {
    await demo?.close();
    await redis?.remove();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
    for (const log of logs.splice(0)) log.close();
  });

  async function frontierFor(options: { leaseMs?: number; name?: string } = {}): Promise<RedisFrontier> {
    const frontier = await RedisFrontier.open({ url: redis.url, name: options.name ?? `test-${++names}`, leaseMs: options.leaseMs });
    open.push(frontier);
    return frontier;
  }

  it("crawls the demo site to the same records as the in-memory frontier, as a set, each URL recorded once", async () => {
    const expected = await crawl(demo.url, { maxTasks: 5 });
    const frontier = await frontierFor();
    const result = await within(30_000, crawl(demo.url, { maxTasks: 5 }, frontier), "a crawl on Redis");
    expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    expect(result.recorded).toBe(expected.recorded);
    expect([...result.seen].sort()).toEqual([...expected.seen].sort());
    expect(result.todo).toBe(0);
    const newUrls = result.records.reduce((sum, record) => sum + record.numNewUrls, 0);
    expect(newUrls).toBeLessThanOrEqual(result.seen.length - 1);
    // A redirect's record counts no new URLs, as in memory, even when its target was queued by it.
    const redirects = result.records.filter((record) => record.nextUrl !== null);
    expect(redirects.length).toBeGreaterThan(0);
    expect(redirects.map((record) => record.numNewUrls)).toEqual(redirects.map(() => 0));
    const status = await frontier.status();
    expect({ queued: status.queued, leased: status.leased, records: status.records, seen: status.seen }).toEqual({ queued: 0, leased: 0, records: expected.recorded, seen: expected.seen.length });
  });

  it("crawls with an onPage hook: the items stay in the process that made them, the records as in memory", async () => {
    const onPage = async (page: { url: string; status: number; links: readonly string[] }) => [{ status: page.status, links: page.links.length }];
    const expected = await crawl(demo.url, { maxTasks: 5, onPage });
    const frontier = await frontierFor();
    const heard: string[] = [];
    const result = await within(30_000, crawl(demo.url, { maxTasks: 5, onPage, onItem: (made) => heard.push(made.url) }, frontier), "a crawl on Redis with a hook");
    expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
    const sorted = (items: typeof result.items) => items.map((made) => JSON.stringify(made)).sort();
    expect(sorted(result.items)).toEqual(sorted(expected.items));
    expect(heard.sort()).toEqual(expected.items.map((made) => made.url).sort());
    expect(result.items.length).toBeGreaterThan(0);
  });

  it("keeps only which URLs have a record with records: false, each URL still recorded once, and reads no URL list at the end without keepRecords", async () => {
    const expected = await crawl(demo.url, { maxTasks: 5 });
    const name = `markers-${++names}`;
    const frontier = await RedisFrontier.open({ url: redis.url, name, records: false });
    open.push(frontier);
    const result = await within(30_000, crawl(demo.url, { maxTasks: 5, keepRecords: false }, frontier), "a crawl keeping no records in Redis");
    expect(result.recorded).toBe(expected.recorded);
    expect(result.seen).toEqual([]); // Not read from Redis: the counts are.
    expect(result.todo).toBe(0);
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const values = await client.hVals(`coroutine-crawler:{${name}}:records`);
      expect(values.length).toBe(expected.recorded);
      expect(new Set(values)).toEqual(new Set(["1"]));
    } finally {
      await client.close();
    }
    // In the same process, with keepRecords, the records are this process's own, from memory.
    const again = await RedisFrontier.open({ url: redis.url, name: `markers-${++names}`, records: false });
    open.push(again);
    const kept = await within(30_000, crawl(demo.url, { maxTasks: 5 }, again), "a second crawl");
    expect(kept.records.length).toBe(expected.recorded);
    await expect(RedisFrontier.open({ url: redis.url, name: "x", records: "no" as unknown as boolean })).rejects.toThrow(/^records: /);
  });

  it("writes each record to --jsonl only, with --no-redis-records, which needs --jsonl", async () => {
    requireBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), "cc-no-records-"));
    try {
      const file = join(dir, "records.jsonl");
      const name = `cli-markers-${++names}`;
      const run = await runCli(["--frontier", redis.url, "--crawl-name", name, "--no-redis-records", "--jsonl", file, demo.url]);
      expect(run.code, run.stderr).toBe(0);
      const lines = readFileSync(file, "utf8").split("\n").filter((line) => line !== "");
      expect(lines.length).toBeGreaterThan(10);
      expect(run.stdout).toContain(`: ${lines.length} records in Redis`);
      const usage = await runCli(["--frontier", redis.url, "--crawl-name", name, "--no-redis-records", demo.url]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("--no-redis-records needs --jsonl FILE");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("marks a URL seen and queues it once, however many times it is added", async () => {
    const frontier = await frontierFor();
    expect(await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://a.test/", maxRedirect: 10 }])).toBe(1);
    expect(await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://a.test/b", maxRedirect: 10 }])).toBe(1);
    expect((await frontier.status()).queued).toBe(2);
  });

  it("leases a URL taken, stores its record and queues its new links in one step, and counts only the links really new", async () => {
    const frontier = await frontierFor();
    await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const item = await within(5_000, taken(frontier), "the URL");
    expect(await frontier.status()).toMatchObject({ queued: 0, leased: 1, records: 0 });
    await frontier.add([{ url: "http://a.test/seen", maxRedirect: 10 }]);
    const record = { ...errorRecord(item.url, "NetworkError"), numNewUrls: 2 };
    const next = [
      { url: "http://a.test/seen", maxRedirect: 10 },
      { url: "http://a.test/new", maxRedirect: 10 },
    ];
    const stored = await frontier.finish(item, { record, next });
    expect(stored?.numNewUrls).toBe(1);
    expect(await frontier.status()).toMatchObject({ queued: 2, leased: 0, records: 1, seen: 3 });
    expect(await frontier.finish(item, { record, next: [] })).toBeNull(); // A second record for the URL is not stored.
    expect((await frontier.status()).records).toBe(1);
  });

  it("sends no link it knows Redis has seen: a page's links already sent, and the pages it finished, stay out of its next FINISH, and are not counted as new", async () => {
    const frontier = await frontierFor({ name: "known-seen" });
    const log = await RedisLog.watch(redis.url, "known-seen");
    logs.push(log);
    await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://b.test/", maxRedirect: 10 }]);
    const first = await within(5_000, taken(frontier), "the first URL");
    const link = (path: string) => ({ url: `http://a.test/${path}`, maxRedirect: 10 });
    const one = await frontier.finish(first, { record: { ...errorRecord(first.url, "NetworkError"), numNewUrls: 2 }, next: [link("n1"), link("n2")] });
    expect(one?.numNewUrls).toBe(2);
    const second = await within(5_000, taken(frontier), "the second URL");
    const two = await frontier.finish(second, { record: { ...errorRecord(second.url, "NetworkError"), numNewUrls: 3 }, next: [link("n1"), link("n3"), { url: first.url, maxRedirect: 10 }] });
    expect(two?.numNewUrls).toBe(1);
    await log.caughtUp();
    const sent = log.finishes().flatMap((finish) => finish.links);
    expect(sent.sort()).toEqual(["http://a.test/n1", "http://a.test/n2", "http://a.test/n3"]);
    expect(await frontier.status()).toMatchObject({ queued: 3, leased: 0, records: 2, seen: 5 });
  });

  it("writes a record to its journal before Redis marks the URL, with the links really new counted, and marks nothing the journal could not write", async () => {
    const name = `journal-${++names}`;
    const client = createClient({ url: redis.url });
    await client.connect();
    const marked: Array<[string, boolean]> = [];
    let writes = true;
    const frontier = await RedisFrontier.open({
      url: redis.url, name, leaseMs: 60_000,
      journal(record) {
        // Synchronous, as a write(2) is. Whether the URL is marked hangs on what it returns: so the mark comes after it.
        marked.push([record.url, writes]);
        return writes;
      },
    });
    open.push(frontier);
    try {
      await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://a.test/b", maxRedirect: 10 }]);
      await frontier.add([{ url: "http://a.test/seen", maxRedirect: 10 }]);
      const first = await within(5_000, taken(frontier), "the first URL");
      const next = [{ url: "http://a.test/seen", maxRedirect: 10 }, { url: "http://a.test/new", maxRedirect: 10 }];
      const stored = await frontier.finish(first, { record: { ...errorRecord(first.url, "NetworkError"), numNewUrls: 2 }, next });
      expect(marked).toEqual([[first.url, true]]);
      expect(stored?.numNewUrls).toBe(1);
      expect(await client.hExists(`coroutine-crawler:{${name}}:records`, first.url)).toBe(1);
      // A line that cannot be written: the URL is not marked, and goes back to the queue.
      writes = false;
      const second = await within(5_000, taken(frontier), "the second URL");
      expect(await frontier.finish(second, { record: errorRecord(second.url, "NetworkError"), next: [] })).toBeNull();
      expect(marked.at(-1)).toEqual([second.url, false]);
      expect(await client.hExists(`coroutine-crawler:{${name}}:records`, second.url)).toBe(0);
      await within(5_000, (async () => { while ((await frontier.status()).leased > 0) await new Promise((resolve) => setTimeout(resolve, 5)); })(), "the URL handed back");
      expect(await client.lRange(`coroutine-crawler:{${name}}:q:http://a.test`, 0, -1)).toContain(JSON.stringify(second));
    } finally {
      await client.close();
    }
  });

  it("waits for its frontier's news instead of looking every few ms: two processes on one polite host ask take() a few times per page", async () => {
    // Two processes' crawls in this test process, each with a frontier of its own on one crawl: one host, one
    // request at a time, 50 ms apart, so each process has nothing to take most of the time.
    const site = await SyntheticSite.start({ pages: 20, linksPerPage: 3, seed: 38, redirects: 0, notFound: 0 });
    try {
      const name = `idle-${++names}`;
      const counted = async (): Promise<{ frontier: RedisFrontier; takes: () => number }> => {
        const frontier = await RedisFrontier.open({ url: redis.url, name });
        open.push(frontier);
        let takes = 0;
        const take = frontier.take.bind(frontier);
        // Counts the crawl core's calls on the real frontier: each is one look of a waiting process.
        frontier.take = function countedTake() {
          takes += 1;
          return take();
        };
        return { frontier, takes: () => takes };
      };
      const [a, b] = [await counted(), await counted()];
      const options = { maxTasks: 4, maxPerHost: 1, delayMs: 50, robots: false, keepRecords: false };
      const [first, second] = await within(30_000, Promise.all([crawl(site.url, options, a.frontier), crawl(site.url, options, b.frontier)]), "two processes");
      expect(first.recorded).toBe(site.expected.records.length);
      expect(second.recorded).toBe(site.expected.records.length);
      const takes = a.takes() + b.takes();
      // Looking every 5 ms (no onChange), the two made 686-741 looks; waiting for the news, 129-137. (A page
      // taken and put back in the core's own host line costs looks too: a few per page.)
      expect(takes).toBeLessThanOrEqual(10 * site.expected.records.length);
    } finally {
      await site.close();
    }
  });

  it("hands out no URL whose lease may have run out while Redis did not answer (SIGSTOP), warns of the silence, and hands URLs out again once it answers", async () => {
    const own = await startRedis();
    const warnings: string[] = [];
    const frontier = await RedisFrontier.open({ url: own.url, name: `fenced-${++names}`, leaseMs: 300, warnAfterMs: 400, onWarning: (message) => warnings.push(message) });
    open.push(frontier);
    try {
      const roots = ["http://a.test/1", "http://a.test/2", "http://a.test/3"];
      frontier.open(resolveOptions({ maxTasks: 3, robots: false }), () => {}, []);
      await frontier.add(roots.map((url) => ({ url, maxRedirect: 10 })));
      const first = await within(5_000, taken(frontier), "the first URL");
      while (frontier.size < 2) await new Promise((resolve) => setTimeout(resolve, 5)); // The other two leased, ready here.
      process.kill(own.pid ?? 0, "SIGSTOP");
      try {
        // Past the lease (300 ms) with no RENEW answered: the two ready here may be another process's by now.
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(frontier.take()).toBeUndefined();
        expect(frontier.fenced).toBe(2);
      } finally {
        process.kill(own.pid ?? 0, "SIGCONT");
      }
      expect(warnings[0]).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 has not answered for 0\.4 s; waiting for it \(/);
      // Redis answers again: the leases that ran out are queued again there, and leased here anew.
      const again = await within(5_000, taken(frontier), "a URL once Redis answers");
      expect(roots.filter((url) => url !== first.url)).toContain(again.url);
      expect(warnings.at(-1)).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 answers again$/);
    } finally {
      await frontier.close();
      await own.remove();
    }
  });

  it("queues a page's 5,000 links in steps of 250, none holding Redis 50 ms, and counts the links really new over all of them", async () => {
    const own = await startRedis();
    const client = createClient({ url: own.url });
    await client.connect();
    try {
      await client.sendCommand(["CONFIG", "SET", "slowlog-log-slower-than", "50000"]);
      const frontier = await RedisFrontier.open({ url: own.url, name: "wide" });
      open.push(frontier);
      await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://a.test/7", maxRedirect: 10 }]);
      const item = await within(5_000, taken(frontier), "the URL");
      const next = Array.from({ length: 5_000 }, (_, i) => ({ url: `http://a.test/${i}`, maxRedirect: 10 }));
      const calls = async (): Promise<number> => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await client.info("commandstats"))?.[1] ?? 0);
      const before = await calls();
      await client.sendCommand(["SLOWLOG", "RESET"]);
      const stored = await frontier.finish(item, { record: { ...errorRecord(item.url, "NetworkError"), nextUrl: null }, next });
      expect(await calls()).toBe(before + 20);
      expect(stored?.numNewUrls).toBe(4_999); // /7 was queued before.
      expect(await client.sendCommand(["SLOWLOG", "LEN"])).toBe(0);
      expect(await frontier.status()).toMatchObject({ queued: 5_000, leased: 0, records: 1, seen: 5_001 });
      const record = JSON.parse((await client.hGet("coroutine-crawler:{wide}:records", item.url)) ?? "{}") as FetchStatistic;
      expect(record.numNewUrls).toBe(4_999);
    } finally {
      await client.close();
      await own.remove();
    }
  });

  it("hands the URL of a process that stopped renewing its lease to another process once the lease expires", async () => {
    const name = `lease-${++names}`;
    const dying = await frontierFor({ name, leaseMs: 300 });
    const other = await frontierFor({ name, leaseMs: 300 });
    await dying.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const item = await within(5_000, taken(dying), "the URL");
    // The first process stops renewing (as a killed one would): its connection goes, its lease stays.
    await dying.close();
    expect((await within(5_000, taken(other), "the expired lease's URL")).url).toBe(item.url);
    const status = await other.status();
    expect(status.leased).toBe(1);
    expect(status.workers.find((worker) => worker.owner === other.owner)?.leased).toBe(1);
    other.stop();
  });

  it("keeps a lease alive while its process renews it, past the lease's length", async () => {
    const name = `renew-${++names}`;
    // Renewed every 500 ms: only a process stalled for a second would lose it (with 200 ms, a 133 ms stall did).
    const leaseMs = 1_500;
    const log = await RedisLog.watch(redis.url, name);
    logs.push(log);
    const holder = await frontierFor({ name, leaseMs });
    const other = await frontierFor({ name, leaseMs });
    await holder.add([{ url: "http://a.test/", maxRedirect: 10 }, { url: "http://a.test/2", maxRedirect: 10 }]);
    const item = await within(5_000, taken(holder), "the first URL"); // Its first take() starts the renewing.
    // Past the lease's length by Redis's clock, not a sleep: until a renewal comes after the first deadline.
    await log.caughtUp();
    const firstDeadline = log.deadlines().find((write) => write.url === item.url)?.deadline ?? Infinity;
    await within(10_000, log.when((call) => call.name === "RENEW" && call.at > firstDeadline), "a renewal past the first lease's deadline");
    // Each renewal by the holder, each written before the deadline before it had passed.
    const writes = log.deadlines().filter((write) => write.url === item.url);
    expect(writes.map((write) => [write.script, write.owner])).toEqual(writes.map((_, i) => [i === 0 ? "TAKE" : "RENEW", holder.owner]));
    expect(writes.slice(1).filter((write, i) => write.deadline - leaseMs > (writes[i]?.deadline ?? -Infinity))).toEqual([]);
    const second = await within(5_000, taken(other), "the second URL");
    expect(second.url).not.toBe(item.url);
    const status = await other.status();
    expect(status.workers.find((worker) => worker.owner === holder.owner)?.leased).toBe(1);
    holder.stop();
    other.stop();
  });

  it("hands a released URL back to the front of the queue at once", async () => {
    const name = `release-${++names}`;
    const first = await frontierFor({ name });
    const second = await frontierFor({ name });
    await first.add([{ url: "http://a.test/1", maxRedirect: 10 }, { url: "http://a.test/2", maxRedirect: 10 }]);
    const item = await within(5_000, taken(first), "the first URL");
    first.stop();
    first.release(item);
    await within(5_000, first.whenDone(), "the stopped process's end"); // Resolves once this stopped process holds nothing.
    await first.close(); // Waits for the hand-back.
    expect((await within(5_000, taken(second), "the released URL")).url).toBe(item.url);
    second.stop();
  });

  it("expects URLs in every process until nothing is queued or leased anywhere, then is done in each", async () => {
    const name = `join-${++names}`;
    const worker = await frontierFor({ name });
    const idle = await frontierFor({ name });
    await worker.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const item = await within(5_000, taken(worker), "the URL");
    expect(idle.take()).toBeUndefined(); // Nothing queued: the URL is the worker's.
    const idleDone = idle.whenDone();
    let done = false;
    void idleDone.then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(done).toBe(false);
    expect(idle.pending()).toBe(true);
    await worker.finish(item, { record: errorRecord(item.url, "NetworkError"), next: [] });
    await within(5_000, idleDone, "the idle process's whenDone()");
    expect(idle.pending()).toBe(false);
    expect(idle.take()).toBeUndefined();
    expect(idle.summary(0)).toMatchObject({ recorded: 1, todo: 0 });
  });

  it("stops the crawl when Redis goes away for longer than half a lease: summary() throws a FrontierError, and nothing more is handed out", async () => {
    const own = await startRedis();
    try {
      const frontier = await RedisFrontier.open({ url: own.url, name: "gone", leaseMs: 1_000 }); // Redis is waited for half a lease, 0.5 s.
      open.push(frontier);
      let stops = 0;
      frontier.open(resolveOptions({ maxTasks: 2 }), () => (stops += 1), ["http://a.test/"]);
      await frontier.add([{ url: "http://a.test/", maxRedirect: 10 }]);
      await within(5_000, taken(frontier), "the URL");
      const ended = ending(frontier); // As the crawler awaits it: it settles while kill() is awaited.
      await own.kill();
      expect(await within(5_000, ended, "whenDone() after Redis went away")).toBeInstanceOf(FrontierError);
      expect(stops).toBe(1);
      expect(frontier.pending()).toBe(false);
      expect(frontier.take()).toBeUndefined();
    } finally {
      await own.remove();
    }
  });

  it("fails to open with a FrontierError naming the address when nothing listens there", async () => {
    const own = await startRedis();
    const url = own.url;
    await own.remove();
    await expect(RedisFrontier.open({ url, name: "nobody" })).rejects.toThrow(FrontierError);
    await expect(RedisFrontier.open({ url, name: "nobody" })).rejects.toThrow(url.replace(/\/0$/, ""));
  });

  it("rejects bad options with a TypeError naming the option", async () => {
    await expect(RedisFrontier.open({ url: "http://127.0.0.1:6379/0", name: "x" })).rejects.toThrow(/^url: /);
    await expect(RedisFrontier.open({ url: "redis://127.0.0.1:6379/zero", name: "x" })).rejects.toThrow(/^url: /);
    await expect(RedisFrontier.open({ url: redis.url, name: "" })).rejects.toThrow(/^name: /);
    await expect(RedisFrontier.open({ url: redis.url, name: "a{b}" })).rejects.toThrow(/^name: /);
    await expect(RedisFrontier.open({ url: redis.url, name: "x".repeat(201) })).rejects.toThrow(/^name: .*at most 200 characters/);
    await expect(RedisFrontier.open({ url: redis.url, name: "a\u0007b" })).rejects.toThrow(/^name: .*control characters/);
    await expect(RedisFrontier.open({ url: redis.url, name: "x", leaseMs: 0 })).rejects.toThrow(/^leaseMs: /);
    await expect(RedisFrontier.open({ url: redis.url, name: "x", leaseMs: 0 })).rejects.toBeInstanceOf(TypeError);
  });

  it("keeps each crawl's keys under its own name", async () => {
    const a = await frontierFor({ name: "alpha" });
    await a.add([{ url: "http://a.test/", maxRedirect: 10 }]);
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      const keys = await client.keys("coroutine-crawler:{alpha}:*");
      const replies = keys.filter((key) => key.startsWith("coroutine-crawler:{alpha}:reply:"));
      expect(keys.filter((key) => !replies.includes(key)).sort()).toEqual(["coroutine-crawler:{alpha}:hosts", "coroutine-crawler:{alpha}:meta", "coroutine-crawler:{alpha}:q:http://a.test", "coroutine-crawler:{alpha}:seen"]);
      // The ADD's reply, kept for a retry under its call id, for a lease (the default 30 s) at most.
      expect(replies).toEqual([`coroutine-crawler:{alpha}:reply:${a.owner}:1`]);
      const ttl = await client.pTTL(replies[0] ?? "");
      expect(ttl > 0 && ttl <= 30_000).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describeWithRedis("RedisFrontier's errors", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.remove();
  });

  /** Runs `command` on the test's own connection to `server`. */
  async function send(server: RedisServer, command: string[]): Promise<unknown> {
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      return await client.sendCommand(command);
    } finally {
      await client.close();
    }
  }

  /** The FrontierError a crawl of one URL on the crawl `name` rejects with. */
  async function crawlError(url: string, name: string): Promise<Error> {
    const frontier = await RedisFrontier.open({ url, name });
    try {
      const failed = await within(10_000, crawl("http://127.0.0.1:9/", { maxTasks: 2, robots: false }, frontier).then(() => null, (error: unknown) => error), "the crawl's failure");
      expect(failed).toBeInstanceOf(FrontierError);
      return failed as Error;
    } finally {
      await frontier.close();
    }
  }

  it("names a Redis out of memory, with maxmemory, and says a Redis without persistence loses the crawl when it restarts", async () => {
    const own = await startRedis();
    try {
      await send(own, ["CONFIG", "SET", "maxmemory", "1"]);
      const error = await crawlError(own.url, "full");
      expect(error.message).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:\d+\/0 refused the crawl's command: it is out of memory \(OOM: maxmemory reached\): raise its maxmemory/);
      expect(error.message).toMatch(/this Redis keeps nothing on disk \(no appendonly, no save\): if it restarts, the crawl is lost, and running it again starts it over$/);
    } finally {
      await own.remove();
    }
  });

  it("names a read-only replica, and a key of the crawl used by something else", async () => {
    const own = await startRedis();
    try {
      await send(own, ["SET", "coroutine-crawler:{taken}:seen", "not a set"]);
      expect((await crawlError(own.url, "taken")).message).toContain("refused the crawl's command: a key of this crawl holds another kind of value (WRONGTYPE): something else uses the keys coroutine-crawler:{taken}:*");
      await send(own, ["REPLICAOF", "127.0.0.1", "9"]);
      expect((await crawlError(own.url, "replica")).message).toContain("refused the crawl's command: it is a read-only replica (READONLY): give --frontier the URL of its primary");
    } finally {
      await own.remove();
    }
  });

  it("masks a password given without its colon, in the user-name slot, when Redis asks for one", async () => {
    const own = await startRedis({ args: ["--requirepass", "s3cret-pw"] });
    try {
      const url = own.url.replace("redis://", "redis://s3cret-pw@");
      const failed = await RedisFrontier.open({ url, name: "locked" }).then(() => null, (error: unknown) => error);
      expect(failed).toBeInstanceOf(FrontierError);
      expect((failed as Error).message).toBe(`cannot use Redis at ${own.url.replace("redis://", "redis://***@")}: it asks for a password (NOAUTH): give it in the URL after a colon, redis://:PASSWORD@HOST:PORT/0 (redis://PASSWORD@HOST is a user name without a password)`);
    } finally {
      await own.remove();
    }
  });

  it("crawls to the end as an ACL user with exactly the keys, channel and commands the message gives, in every record mode, and no other command refused", async () => {
    const demo = await startDemoSite();
    try {
      await send(redis, ["ACL", "SETUSER", "crawler", "on", ">crawler-pw", ...aclRule("acl-only").split(" ")]);
      await send(redis, ["ACL", "LOG", "RESET"]);
      const url = redis.url.replace("redis://", "redis://crawler:crawler-pw@");
      const expected = await crawl(demo.url, { maxTasks: 4 });
      // Two processes, so that one reads the robots.txt rules the other stored (HMGET); the second writes its own
      // lines first, as the CLI's --jsonl does (PREPARE, then FINISH), the first does not (FINISH alone).
      const lines: string[] = [];
      const journal = function writeLine(record: FetchStatistic): boolean {
        lines.push(record.url);
        return true;
      };
      const frontiers = [await RedisFrontier.open({ url, name: "acl-only" }), await RedisFrontier.open({ url, name: "acl-only", journal })];
      try {
        const results = await within(30_000, Promise.all(frontiers.map((frontier) => crawl(demo.url, { maxTasks: 4 }, frontier))), "the crawl of an ACL user");
        for (const result of results) expect(byUrl(result.records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
        const [first] = frontiers as [RedisFrontier, RedisFrontier];
        expect((await first.status()).records).toBe(expected.recorded);
        expect(await streamedCount(first)).toBe(expected.recorded + expected.seen.length);
        expect(lines.length).toBeGreaterThan(0);
      } finally {
        for (const frontier of frontiers) await frontier.close();
      }
      // --no-redis-records with --jsonl: Redis keeps a mark per URL, each process's lines the records; a user of the
      // same rule for that crawl's name.
      await send(redis, ["ACL", "SETUSER", "lines", "on", ">lines-pw", ...aclRule("acl-lines").split(" ")]);
      const ownLines: string[] = [];
      const marked = await RedisFrontier.open({ url: redis.url.replace("redis://", "redis://lines:lines-pw@"), name: "acl-lines", records: false, journal: function writeOwnLine(record) {
        ownLines.push(record.url);
        return true;
      } });
      try {
        const result = await within(10_000, crawl(demo.url, { maxTasks: 4 }, marked), "the crawl with --no-redis-records");
        expect(result.recorded).toBe(expected.recorded);
        expect(ownLines.sort()).toEqual(expected.records.map((record) => record.url).sort());
      } finally {
        await marked.close();
      }
      const counted = await RedisFrontier.open({ url, name: "acl-only" });
      try {
        expect((await within(10_000, crawl(demo.url, { maxTasks: 4, keepRecords: false }, counted), "the counts of the crawl")).recorded).toBe(expected.recorded);
      } finally {
        await counted.close();
      }
      // Refused, and by its nature optional: CONFIG GET (whether Redis keeps its data on disk).
      const refused = (await send(redis, ["ACL", "LOG"])) as Array<Record<string, unknown>>;
      expect(new Set(refused.map((entry) => `${String(entry["reason"])} ${String(entry["object"])}`))).toEqual(new Set(["command config|get"]));
      // The guide gives the same rule.
      expect(readFileSync(join(import.meta.dirname, "../../docs/guide-distributed.md"), "utf8")).toContain(`ACL SETUSER crawler on >PASSWORD ${aclRule("NAME")}\n`);
    } finally {
      await demo.close();
    }
  });

  it("explains a command a script runs that the ACL refuses (ERR … can't run this command), with the commands a crawler needs", async () => {
    const rule = aclRule("short").split(" ").filter((part) => part !== "+publish");
    await send(redis, ["ACL", "SETUSER", "short", "on", ">short-pw", ...rule]);
    const error = await crawlError(redis.url.replace("redis://", "redis://short:short-pw@"), "short");
    expect(error.message).toContain(`refused the crawl's command: its ACL does not let this user run a command of the crawl's scripts (ERR … can't run this command): the user needs the keys ~coroutine-crawler:{short}:*, the channel &coroutine-crawler:{short}:events, and the commands the crawl and its scripts run (Redis checks a script's too), as in ACL SETUSER USER on >PASSWORD resetkeys ~coroutine-crawler:{short}:* resetchannels &coroutine-crawler:{short}:events -@all ${ACL_COMMANDS.map((command) => `+${command}`).join(" ")}`);
    expect(error.message).not.toContain("short-pw");
  });

  it("names an ACL that keeps the user from the crawl's keys, and never shows the password", async () => {
    await send(redis, ["ACL", "SETUSER", "narrow", "on", ">s3cret-pw", "~other:*", "&*", "+@all"]);
    const url = redis.url.replace("redis://", "redis://narrow:s3cret-pw@");
    const error = await crawlError(url, "guarded");
    expect(error.message).toContain("its ACL does not let this user do that (NOPERM): the user needs the keys ~coroutine-crawler:{guarded}:*");
    expect(error.message).toContain("redis://narrow:***@127.0.0.1");
    expect(error.message).not.toContain("s3cret-pw");
    await expect(RedisFrontier.open({ url: "nonsense://:s3cret-pw@x", name: "x" })).rejects.toThrow(/^url: "nonsense:\/\/:\*\*\*@x" is not a redis:\/\/ or rediss:\/\/ URL$/);
    await expect(RedisFrontier.open({ url: "redis//:s3cret-pw@x", name: "x" })).rejects.toThrow(/^url: "redis\/\/\*\*\*@x" is not a URL/);
  });
});
