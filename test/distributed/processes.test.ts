/**
 * Several `crawl --frontier` processes on one crawl, against a real
 * redis-server and a synthetic site of 5,000 pages (2,500 for the Redis
 * that dies) served by this test process, so it counts every request:
 * together they make the records one in-memory crawl makes; a process killed
 * with SIGKILL costs only the pages it held leased; Ctrl-C in every process
 * and a second run resume the crawl; a Redis that dies stops every process
 * with a message, and a second run after its restart finishes the crawl; a
 * Redis paused (SIGSTOP) for less than a lease, and for several leases, is
 * waited for, with a warning, and the crawl goes on when it answers.
 *
 * The chaos tests (processes SIGKILLed, Redis SIGKILLed, Redis paused) run in
 * both record modes, records in Redis and `--no-redis-records`, and check the
 * same things: no record lost from the outputs (every URL Redis marks recorded
 * is in some process's `--jsonl`, whose lines, one per URL, are the expected
 * records), each URL recorded once in Redis, every process ended, and a line
 * written twice only for a URL fetched twice. Each prints a `chaos-table |`
 * line of figures, which scripts/chaos-table.mjs gathers over several runs
 * for docs/guide-distributed.md.
 *
 * A dozen crawls of thousands of pages, each in three processes: two minutes
 * or more on two cores. So this file runs apart, in `npm run test:workflows`
 * (vitest.workflows.config.ts), not in `npm test`; CI runs both.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { ExpectedCrawl } from "../../src/site/expected-crawl.js";
import { renderPage } from "../../src/site/synthetic.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { requireBuiltCli } from "../cli/cli-process.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";
import { CrawlerProcess, killCrawlerProcesses, processExists, type CrawlerOutcome } from "./crawler-processes.js";
import { byUrl, withoutTiming } from "./records.js";
import { RedisLog } from "./redis-log.js";

/** 5,000 pages, with redirects and missing pages among the links: 5,030 records. */
const SITE = { pages: 5_000, linksPerPage: 5, seed: 15, redirects: 20, notFound: 10 };
/**
 * Half the size, for the Redis that dies: its append-only file is synced on
 * every write (so a SIGKILL loses nothing), which makes that crawl about three
 * times slower.
 */
const SMALLER_SITE = { ...SITE, pages: 2_500 };
/** A small site for the polite crawl: at 5 requests a second, a few seconds. */
const POLITE_SITE = { pages: 25, linksPerPage: 3, seed: 5, redirects: 2, notFound: 2 };
/** The site of the chaos test: 2,000 pages, crawled by processes killed and started again. */
const CHAOS_SITE = { ...SITE, pages: 2_000, seed: 38 };
/** SIGKILLs in each chaos crawl, each when a process has written this many lines more than `CHAOS_EVERY` times the kills so far (count-based). */
const CHAOS_KILLS = 8;
/** Lines a process of the chaos test writes before it is killed: 20, 25, 30, … by the kill's number. */
const CHAOS_EVERY = 5;
/** The lease in the SIGKILL test: 3 s. */
const KILLED_LEASE_MS = 3_000;
/** The polite crawl's lease (the CLI's default), given: a lease's deadline less this is when it was taken. */
const POLITE_LEASE_MS = 30_000;
/**
 * Pages whose responses are held back in the SIGKILL test, by their place in
 * the breadth-first crawl: all taken long before the 1,500th record.
 */
const HELD_BACK = [200, 400, 600, 800, 1_000];
/** Workers per process. */
const MAX_TASKS = 10;
/** How long a whole multi-process crawl may take before it counts as hung: generous, the machines are shared. */
const CRAWL_LIMIT_MS = 60_000;
/** Records in Redis when the chaos tests that stop Redis stop it: under a third of the chaos site's. */
const FAULT_AT_RECORDS = 600;
/**
 * The two record modes every chaos test runs in: records in Redis (the
 * default), and `--no-redis-records`, where each process's `--jsonl` is the
 * only place a record lives and Redis keeps a `1` per URL.
 */
const RECORD_MODES = [
  { mode: "records in Redis", extra: [] as string[], inRedis: true },
  { mode: "--no-redis-records", extra: ["--no-redis-records"], inRedis: false },
];
/** The CLI's warning while Redis is silent (the frontier's `onWarning`, after its `warnAfterMs` of 5 s). */
const SILENT_WARNING = /^crawl: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 has not answered for 5 s; waiting for it/m;
/** The CLI's line once Redis answers again after a warning. */
const ANSWERS_AGAIN = /^crawl: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 answers again$/m;

type Client = ReturnType<typeof createClient>;

/** A record without the two fields that say which page first found its URL, which depends on timing. */
/** The records equal the expected crawl's as a set, `numNewUrls` and `referrer` aside. */
function expectSameRecords(records: readonly FetchStatistic[], expected: ExpectedCrawl): void {
  expect(records.length).toBe(expected.records.length);
  expect(byUrl(records).map(withoutTiming)).toEqual(byUrl(expected.records).map(withoutTiming));
}

/** A URL's request-target, as the site counts it. */
function pathOf(url: string): string {
  const { pathname, search } = new URL(url);
  return pathname + search;
}

/** How many requests the site received for each path. */
function requestCounts(site: SyntheticSite): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { path } of site.site.requests()) counts.set(path, (counts.get(path) ?? 0) + 1);
  return counts;
}

/** The sum of two request counts. */
function addCounts(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): Map<string, number> {
  const sum = new Map(a);
  for (const [path, count] of b) sum.set(path, (sum.get(path) ?? 0) + count);
  return sum;
}

/** The paths requested more than once, sorted. */
function requestedTwice(counts: ReadonlyMap<string, number>): string[] {
  return [...counts].filter(([, count]) => count > 1).map(([path]) => path).sort();
}

/** The requested paths are the expected records' paths, each requested at least once and at most `most` times. */
function expectRequested(counts: ReadonlyMap<string, number>, expected: ExpectedCrawl, most: number): void {
  expect([...counts.keys()].sort()).toEqual(expected.records.map((record) => pathOf(record.url)).sort());
  expect([...counts].filter(([, count]) => count < 1 || count > most)).toEqual([]);
}

/** The records a `--jsonl` file holds, one per line; none when the process never made the file. */
function jsonlRecords(file: string): FetchStatistic[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, "utf8");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as FetchStatistic);
}

/** The URLs a `--jsonl` file holds, one per line. */
function jsonlUrls(file: string): string[] {
  return jsonlRecords(file).map((record) => record.url);
}

/** A `--jsonl` line as the record it holds: without the schema version it starts with. */
function withoutSchemaVersion(line: FetchStatistic): FetchStatistic {
  const { schemaVersion: _version, ...record } = line as FetchStatistic & { schemaVersion?: number };
  return record;
}

/** The URLs that occur more than once in `urls`, each once, sorted. */
function repeated(urls: readonly string[]): string[] {
  const seen = new Set<string>();
  const again = new Set<string>();
  for (const url of urls) (seen.has(url) ? again : seen).add(url);
  return [...again].sort();
}

/**
 * What a chaos crawl's outputs and Redis hold, against the expected crawl,
 * checked as every chaos test does: every expected URL recorded once in
 * Redis (in the default mode, the expected records themselves); no record
 * lost from the outputs, whose lines, one per URL as a reader keeps them, are
 * the expected records; a URL written twice only if it was fetched twice (a
 * line follows a fetch). Returns the figures of the chaos table.
 */
async function expectNothingLost(connection: Client, name: string, inRedis: boolean, outputs: readonly FetchStatistic[][], expected: ExpectedCrawl, counts: ReadonlyMap<string, number>): Promise<ChaosFigures> {
  const expectedUrls = expected.records.map((record) => record.url).sort();
  const recordedInRedis = (await connection.hKeys(keyOf(name, "records"))).sort();
  // Redis: each URL recorded once (a hash has each field once; and as many fields as URLs), whatever the mode.
  expect(recordedInRedis).toEqual(expectedUrls);
  if (inRedis) expectSameRecords(await recordsIn(connection, name), expected);
  const lines = outputs.flat();
  const urls = lines.map((record) => record.url);
  // Every URL Redis marks recorded is in some output; one line per URL, they are the expected records.
  const written = new Set(urls);
  const lost = recordedInRedis.filter((url) => !written.has(url));
  expect(lost).toEqual([]);
  // A line is a record with the JSONL schema's version first (docs/schema): the rest is the record.
  const firstLines = [...new Map(lines.map((line) => [line.url, withoutSchemaVersion(line)] as const).reverse()).values()];
  expectSameRecords(firstLines, expected);
  const fetchedTwice = requestedTwice(counts);
  const writtenTwice = repeated(urls);
  expect(writtenTwice.map(pathOf).filter((path) => !fetchedTwice.includes(path))).toEqual([]);
  const recordedTwice = (await connection.hLen(keyOf(name, "records"))) - new Set(recordedInRedis).size;
  return { records: recordedInRedis.length, lost: lost.length, recordedTwice, fetchedTwice: fetchedTwice.length, writtenTwice: writtenTwice.length, linesTwice: lines.length - written.size };
}

/** The figures of one chaos run, for the table in docs/guide-distributed.md. */
interface ChaosFigures {
  /** URLs recorded in Redis. */
  records: number;
  /** URLs recorded in Redis and in no output. */
  lost: number;
  /** URLs recorded in Redis more than once (a hash field is unique: 0 unless the check itself is wrong). */
  recordedTwice: number;
  /** Pages the site served more than once. */
  fetchedTwice: number;
  /** URLs with more than one line across the outputs. */
  writtenTwice: number;
  /** Lines beyond the first for each URL. */
  linesTwice: number;
}

/** Prints one row of the chaos table, which scripts/chaos-table.mjs gathers: fault, mode, faults made, then the figures. */
function reportChaos(fault: string, mode: string, faults: number, figures: ChaosFigures): void {
  const { records, lost, recordedTwice, fetchedTwice, writtenTwice, linesTwice } = figures;
  console.log(`chaos-table | ${fault} | ${mode} | ${faults} | ${records} | ${lost} | ${recordedTwice} | ${fetchedTwice} | ${writtenTwice} | ${linesTwice}`);
}

/** The key of one of a crawl's Redis structures. */
function keyOf(name: string, part: "records" | "owners" | "leases"): string {
  return `coroutine-crawler:{${name}}:${part}`;
}

/** Every record of the crawl, as Redis holds them (records in Redis, the default mode). */
async function recordsIn(connection: Client, name: string): Promise<FetchStatistic[]> {
  return (await connection.hVals(keyOf(name, "records"))).map((json) => JSON.parse(json) as FetchStatistic);
}

/**
 * Holds back the site's responses for `paths` until `release()`: a crawler
 * that takes one of them waits for it, holding its lease, until then.
 */
function holdResponses(site: SyntheticSite, paths: readonly string[]): { release(): void; arrived: ReadonlySet<string> } {
  let released = false;
  const waiting: Array<() => void> = [];
  const arrived = new Set<string>();
  for (const path of paths) {
    const route = site.definition.routes.get(path);
    if (route?.kind !== "page") throw new Error(`${path} is not a page of the site`);
    const { body, headers } = renderPage(path, route);
    site.site.addHandler(path, function serveWhenReleased(_request, response) {
      arrived.add(path);
      const serve = (): void => {
        if (!response.destroyed) response.writeHead(200, { ...headers, "Content-Length": String(body.length) }).end(body);
      };
      if (released) serve();
      else waiting.push(serve);
    });
  }
  return {
    release(): void {
      released = true;
      for (const serve of waiting.splice(0)) serve();
    },
    /** The held-back paths whose request has come. */
    arrived,
  };
}

/**
 * Calls `check` every 10 ms until it gives a value, and resolves with it.
 * Fails when every process in `processes` has ended first (they will not
 * make it happen), or after `limitMs` ({@link CRAWL_LIMIT_MS} unless given) with a message naming `what`.
 */
async function until<T>(what: string, processes: readonly CrawlerProcess[], check: () => Promise<T | undefined>, limitMs = CRAWL_LIMIT_MS): Promise<T> {
  const giveUpAt = performance.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (processes.every((crawler) => crawler.exited)) {
      throw new Error(`every crawler ended before ${what}:\n${processes.map((crawler) => crawler.stderr).join("\n")}`);
    }
    if (performance.now() > giveUpAt) throw new Error(`Hung: ${what} did not happen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describeWithRedis("crawler processes sharing a Redis frontier", () => {
  let redis: RedisServer;
  let client: Client;
  let names = 0;
  let synthetic: SyntheticSite | undefined;
  let tempDir: string | undefined;
  /** A server of the test's own (the one that is killed), removed after the test. */
  let ownRedis: RedisServer | undefined;
  /** Clients of the test's own, closed after the test. */
  const ownClients: Client[] = [];
  /** Watches of what a crawl stored, closed after the test. */
  const logs: RedisLog[] = [];

  beforeAll(async () => {
    requireBuiltCli();
    redis = await startRedis();
    client = await connect(redis.url);
  });
  afterAll(async () => {
    if (client?.isOpen) await client.close();
    await redis?.remove();
  });
  afterEach(async () => {
    await killCrawlerProcesses();
    for (const own of ownClients.splice(0)) if (own.isOpen) own.destroy();
    for (const log of logs.splice(0)) log.close();
    await ownRedis?.remove();
    ownRedis = undefined;
    await synthetic?.close();
    synthetic = undefined;
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
    tempDir = undefined;
  });

  /** A connected client whose errors (a server killed on purpose) do not crash the test process. */
  async function connect(url: string): Promise<Client> {
    const connection: Client = createClient({ url, socket: { reconnectStrategy: false } });
    connection.on("error", () => {});
    await connection.connect();
    return connection;
  }

  /** Starts the site, and a temp dir for the `--jsonl` files; both go after the test. */
  async function startSite(options: typeof SITE = SITE): Promise<SyntheticSite> {
    synthetic = await SyntheticSite.start(options);
    tempDir = mkdtempSync(join(tmpdir(), "cc-processes-"));
    return synthetic;
  }

  /** The `--jsonl` file of the `label` process. */
  function jsonlFile(label: string): string {
    if (tempDir === undefined) throw new Error("startSite() first");
    return join(tempDir, `${label}.jsonl`);
  }

  /** Starts one crawler process on the crawl `name`; each writes the records it stored to its own `--jsonl` file. */
  function startCrawler(frontier: string, name: string, root: string, label: string, extra: readonly string[] = []): CrawlerProcess {
    const args = ["--frontier", frontier, "--crawl-name", name, "--max-tasks", String(MAX_TASKS), "--ignore-robots"];
    return new CrawlerProcess([...args, "--jsonl", jsonlFile(label), ...extra, root]);
  }

  /** Waits until the crawl has at least `count` records in Redis. */
  function untilRecords(connection: Client, name: string, count: number, processes: readonly CrawlerProcess[]): Promise<number> {
    return until(`${count} records`, processes, async function enoughRecords() {
      const records = await connection.hLen(keyOf(name, "records"));
      return records >= count ? records : undefined;
    });
  }

  /** Waits for every process to end, failing after `limitMs` with a message naming `what`. */
  function outcomesOf(processes: readonly CrawlerProcess[], what: string, limitMs = CRAWL_LIMIT_MS): Promise<CrawlerOutcome[]> {
    return within(limitMs, Promise.all(processes.map((crawler) => crawler.outcome())), what);
  }

  /** The URLs each process's `--jsonl` file holds: the records it stored. */
  function storedBy(labels: readonly string[]): string[][] {
    return labels.map((label) => jsonlUrls(jsonlFile(label)));
  }

  function codesOf(outcomes: readonly CrawlerOutcome[]): Array<number | null> {
    return outcomes.map((outcome) => outcome.code);
  }

  it("crawls a 5,000-page site in three processes to the records of one crawl, each page requested once, each process storing some", async () => {
    const site = await startSite();
    const name = `three-${++names}`;
    const labels = ["a", "b", "c"];
    const processes = labels.map((label) => startCrawler(redis.url, name, site.url, label));
    const outcomes = await outcomesOf(processes, "three crawler processes");
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0, 0]);

    expectSameRecords(await recordsIn(client, name), site.expected);
    expectRequested(requestCounts(site), site.expected, 1);
    // Each record was stored by exactly one process, and each process stored some, as its report says.
    const stored = storedBy(labels);
    for (const urls of stored) expect(urls.length).toBeGreaterThan(0);
    expect(stored.flat().sort()).toEqual(site.expected.records.map((record) => record.url).sort());
    const said = outcomes.map((outcome) => /crawl (\S+): (\d+) records in Redis; this process \([^)]*:(\d+):[^)]*\) recorded (\d+)/.exec(outcome.stdout)?.slice(1));
    const expectedLines = processes.map((crawler, i) => [name, String(site.expected.records.length), String(crawler.pid), String(stored[i]?.length)]);
    expect(said).toEqual(expectedLines);
    expect(await client.hLen(keyOf(name, "owners"))).toBe(0);
  }, 2 * CRAWL_LIMIT_MS);

  it("keeps 4 processes with --max-per-host 2 --delay 0.2 on one host to 2 requests at once, 0.2 s apart, robots.txt read once", async () => {
    const site = await startSite(POLITE_SITE);
    site.site.addRobots("User-agent: *\nDisallow: /private\n");
    const name = `polite-${++names}`;
    const labels = ["a", "b", "c", "d"];
    const log = await RedisLog.watch(redis.url, name);
    logs.push(log);
    const processes = labels.map((label) => new CrawlerProcess(["--frontier", redis.url, "--crawl-name", name, "--lease", String(POLITE_LEASE_MS / 1000), "--max-tasks", "4", "--max-per-host", "2", "--delay", "0.2", "--jsonl", jsonlFile(label), site.url]));
    const outcomes = await outcomesOf(processes, "four polite crawler processes");
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0, 0, 0]);
    expectSameRecords(await recordsIn(client, name), site.expected);
    expect(site.site.requestsFor("/robots.txt")).toBe(1);
    expect(site.site.peakRequestsInFlight).toBeLessThanOrEqual(2);
    // Every page the site was asked for was leased in Redis, each lease at least 0.2 s after the one before by
    // Redis's clock, whichever process took it. (Not the gaps between arrivals: a loaded machine delays one
    // request after its lease and not the next.)
    await log.caughtUp();
    const leases = log.leases(new URL(site.url).origin, POLITE_LEASE_MS);
    const requested = site.site.requests().map((request) => request.path).filter((path) => path !== "/robots.txt");
    expect(leases.map((lease) => pathOf(lease.url)).sort()).toEqual(requested.sort());
    const early = leases.slice(1).filter((lease, i) => lease.at - (leases[i]?.at ?? -Infinity) < 200);
    expect(early).toEqual([]);
    expect(new Set(leases.map((lease) => lease.owner)).size, "processes that leased pages").toBeGreaterThan(1);
  });

  it("finishes the crawl when one of three processes is killed with SIGKILL, fetching again only pages it held leased", async () => {
    const site = await startSite();
    // A process that takes one of these pages holds its lease until the test lets the responses go:
    // so the process killed surely holds a lease when it dies.
    const pages = site.expected.records.filter((record) => record.status === 200);
    const heldBack = HELD_BACK.map((index) => pages[index]?.url ?? "");
    const responses = holdResponses(site, heldBack.map(pathOf));
    const name = `killed-${++names}`;
    const labels = ["a", "b", "c"];
    // Leases of 3 s, renewed every second: long enough that a process busy on a loaded machine keeps its own.
    const processes = labels.map((label) => startCrawler(redis.url, name, site.url, label, ["--lease", String(KILLED_LEASE_MS / 1000)]));
    const ownersKey = keyOf(name, "owners");
    await untilRecords(client, name, 1_500, processes);
    const owners = await until("the pages held back leased", processes, async function allLeased() {
      const owners = await client.hGetAll(ownersKey);
      return heldBack.every((url) => owners[url] !== undefined) ? owners : undefined;
    });
    const heldBackBy = (crawler: CrawlerProcess): string[] => heldBack.filter((url) => owners[url]?.includes(`:${crawler.pid}:`));
    const victim = processes.reduce((most, crawler) => (heldBackBy(crawler).length > heldBackBy(most).length ? crawler : most));
    const isVictim = (owner: string): boolean => owner.includes(`:${victim.pid}:`);
    // A lease is taken before its request is sent: wait until each held-back page the victim leased has been asked
    // for (its request waits at the site), so that it must be asked for again after the kill. On a loaded machine
    // one once was not yet, and was fetched only once.
    await until("the victim's held-back requests at the site", processes, async function victimAsked() {
      return heldBackBy(victim).every((url) => responses.arrived.has(pathOf(url))) ? true : undefined;
    });
    // What the victim holds when it dies, and until when, is read from Redis, not timed: its leases and their deadlines
    // now, then, in Redis's order, what it took, renewed and finished until the kill. (Two readings of the owners, before
    // and after the kill, once raced on a loaded machine: a lease renewed a second before the kill expired before the second.)
    const log = await RedisLog.watch(redis.url, name);
    logs.push(log);
    const [ownedNow, leasesNow] = (await client.multi().hGetAll(ownersKey).zRangeWithScores(keyOf(name, "leases"), 0, -1).exec()) as unknown as [Record<string, string>, Array<{ value: string; score: number }>];
    const expiry = new Map(leasesNow.filter(({ value }) => isVictim(ownedNow[value] ?? "")).map(({ value, score }) => [value, score]));
    victim.kill("SIGKILL");
    expect((await victim.outcome()).signal).toBe("SIGKILL");
    await log.caughtUp();
    for (const write of log.deadlines()) if (isVictim(write.owner)) expiry.set(write.url, write.deadline);
    for (const finish of log.finishes()) if (isVictim(finish.owner)) expiry.delete(finish.url);
    const held = [...expiry.keys()];
    const victimHeldBack = heldBackBy(victim);
    expect(victimHeldBack.length).toBeGreaterThan(0);
    expect(victimHeldBack.filter((url) => !expiry.has(url))).toEqual([]);
    responses.release();
    // Dead, it can no longer take, renew or finish: what it held stays its own until its lease's deadline, and
    // a survivor leases it only then, by Redis's clock. The log is watched until each was leased again.
    const leasedAgain = new Map<string, number>();
    await within(CRAWL_LIMIT_MS, log.when(function allLeasedAgain(call) {
      for (const { name: command, args } of call.ran) {
        const url = args.at(-1) ?? "";
        if (call.name === "TAKE" && !isVictim(call.argv[2] ?? "") && command === "ZADD" && expiry.has(url) && !leasedAgain.has(url)) leasedAgain.set(url, Number(args.at(-2)) - KILLED_LEASE_MS);
      }
      return leasedAgain.size === expiry.size;
    }), "the dead process's URLs leased again");
    log.close();
    expect(held.filter((url) => (leasedAgain.get(url) ?? -Infinity) < (expiry.get(url) ?? Infinity))).toEqual([]);

    const survivors = processes.filter((crawler) => crawler !== victim);
    const outcomes = await outcomesOf(survivors, "the two processes left");
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0]);
    const records = await recordsIn(client, name);
    expectSameRecords(records, site.expected);
    const counts = requestCounts(site);
    expectRequested(counts, site.expected, 2);
    // Fetched twice: only pages the dead process held, among them those it never got an answer for.
    const twice = requestedTwice(counts);
    const heldPaths = new Set(held.map(pathOf));
    expect(twice.filter((path) => !heldPaths.has(path))).toEqual([]);
    expect(victimHeldBack.map(pathOf).filter((path) => !twice.includes(path))).toEqual([]);
    // Every record is in a file; twice only for what the dead process wrote and had not marked yet: URLs it held
    // leased, fetched again. (A set, not a count: a process writing its lines before marking holds a URL's lease
    // until FINISH, so it may hold more than maxTasks leases.)
    const stored = storedBy(labels).flat();
    expect(new Set(stored).size).toBe(records.length);
    expect(repeated(stored).map(pathOf).filter((path) => !twice.includes(path))).toEqual([]);
  }, 2 * CRAWL_LIMIT_MS);

  /**
   * Chaos, count-based: three processes at a time, each SIGKILLed once its own `--jsonl` holds a number of lines
   * (20, 25, 30, … by the kill's number) and another started in its place, with a file of its own, until
   * {@link CHAOS_KILLS} kills; then the crawl finishes. Each process writes a record's line before Redis marks the
   * URL recorded (the frontier's journal), so every record is in some output, and each URL in Redis once; a process
   * killed between its line and the mark leaves a line whose URL another process records again.
   */
  it.each(RECORD_MODES)("loses no record from the outputs when processes are SIGKILLed again and again ($mode)", async ({ mode, extra, inRedis }) => {
    const site = await startSite(CHAOS_SITE);
    const name = `chaos-${++names}`;
    const args = ["--lease", "1", ...extra];
    const labels: string[] = [];
    const start = (slot: number): CrawlerProcess => {
      const label = `${slot}-${labels.length}`;
      labels.push(label);
      return startCrawler(redis.url, name, site.url, label, args);
    };
    const slots = [0, 1, 2].map((slot) => ({ crawler: start(slot), label: labels[slot] ?? "" }));
    let kills = 0;
    const live = slots.map((slot) => slot.crawler); // The processes running now, for until().
    const linesIn = (label: string): number => (existsSync(jsonlFile(label)) ? readFileSync(jsonlFile(label), "utf8").split("\n").length - 1 : 0);
    await until(`${CHAOS_KILLS} kills`, live, async function killAtCounts() {
      for (const [index, slot] of slots.entries()) {
        if (kills >= CHAOS_KILLS) return true;
        if (slot.crawler.exited || linesIn(slot.label) < 20 + CHAOS_EVERY * kills) continue;
        slot.crawler.kill("SIGKILL");
        await slot.crawler.outcome();
        kills += 1;
        slot.crawler = start(index);
        live[index] = slot.crawler;
        slot.label = labels.at(-1) ?? "";
      }
      return undefined;
    }, 2 * CRAWL_LIMIT_MS); // 11 processes started one after another: on a loaded machine each takes seconds to start.
    const outcomes = await outcomesOf(slots.map((slot) => slot.crawler), `the chaos crawl's last processes (${mode})`);
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0, 0]);
    // Redis: each URL recorded once. The outputs: every record in one at least (none lost); a URL written twice was
    // fetched twice (a kill between its line and its mark, or a lease of 1 s that ran out while its process, slowed
    // down on a loaded machine, was still fetching).
    const figures = await expectNothingLost(client, name, inRedis, labels.map((label) => jsonlRecords(jsonlFile(label))), site.expected, requestCounts(site));
    reportChaos("crawlers SIGKILLed", mode, kills, figures);
  }, 4 * CRAWL_LIMIT_MS);

  it("hands every lease back on Ctrl-C in each process, and a second run resumes without fetching a finished page again", async () => {
    const site = await startSite();
    const name = `resumed-${++names}`;
    const first = ["a", "b", "c"].map((label) => startCrawler(redis.url, name, site.url, label));
    await untilRecords(client, name, 1_500, first);
    for (const crawler of first) crawler.kill("SIGINT");
    const stopped = await outcomesOf(first, "three processes after Ctrl-C");
    expect(codesOf(stopped), stopped.map((outcome) => outcome.stderr).join("\n")).toEqual([130, 130, 130]);
    const status = { queued: Number(await client.hGet(`coroutine-crawler:{${name}}:meta`, "queued")), leased: await client.zCard(keyOf(name, "leases")) };
    expect(status.leased).toBe(0);
    expect(status.queued).toBeGreaterThan(0);
    const finished = new Set((await client.hKeys(keyOf(name, "records"))).map(pathOf));
    expect(finished.size).toBeLessThan(site.expected.records.length);
    const firstCounts = requestCounts(site);
    site.site.resetCounters();

    const second = ["d", "e"].map((label) => startCrawler(redis.url, name, site.url, label));
    const outcomes = await outcomesOf(second, "two processes resuming the crawl");
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0]);
    expectSameRecords(await recordsIn(client, name), site.expected);
    const secondCounts = requestCounts(site);
    expect([...secondCounts.keys()].filter((path) => finished.has(path))).toEqual([]);
    // Fetched twice: only pages whose fetch Ctrl-C cut short, each once in each run, and without a record after the
    // first. (Sets, not a count per worker: how many fetches Ctrl-C catches depends on the machine's speed.)
    const counts = addCounts(firstCounts, secondCounts);
    expectRequested(counts, site.expected, 2);
    expect(requestedTwice(firstCounts)).toEqual([]);
    expect(requestedTwice(secondCounts)).toEqual([]);
    expect(requestedTwice(counts).filter((path) => finished.has(path) || !firstCounts.has(path))).toEqual([]);
    // Each record was stored by one process of one run, and each stopped process wrote all it stored.
    expect(storedBy(["a", "b", "c", "d", "e"]).flat().sort()).toEqual(site.expected.records.map((record) => record.url).sort());
  }, 2 * CRAWL_LIMIT_MS);

  /**
   * Redis SIGKILLed mid-crawl, with its append-only file synced on every write (`appendfsync always`: a write
   * Redis answered is in the file, so the restart has every mark a process was told of; with `everysec`, a write
   * may wait in Redis while an fsync is slow, and a reply come before it reaches the file), then restarted on the
   * same port: the processes stop (they do not reconnect), and a second run finishes the crawl.
   */
  it.each(RECORD_MODES)("stops every process with a message when Redis dies, and a run after its restart finishes the crawl ($mode)", async ({ mode, extra, inRedis }) => {
    const site = await startSite(SMALLER_SITE);
    const server = await startRedis({ appendOnly: true });
    ownRedis = server;
    const own = await connect(server.url);
    ownClients.push(own);
    const name = `redis-died-${++names}`;
    const first = ["a", "b", "c"].map((label) => startCrawler(server.url, name, site.url, label, ["--lease", "1", ...extra]));
    await untilRecords(own, name, 1_000, first);
    // Each process is crawling, past connecting: it has stored a record. Redis then dies mid-crawl for all three.
    await until("a record stored by each process", first, async function eachStoring() {
      return ["a", "b", "c"].every((label) => existsSync(jsonlFile(label)) && jsonlUrls(jsonlFile(label)).length > 0) ? true : undefined;
    });
    own.destroy();
    await server.kill();
    const failed = await outcomesOf(first, "three processes after Redis died", 15_000);
    expect(codesOf(failed), failed.map((outcome) => outcome.stderr).join("\n")).toEqual([1, 1, 1]);
    for (const { stderr } of failed) {
      expect(stderr).toMatch(/^crawl: Redis at redis:\/\/127\.0\.0\.1:\d+\/0 stopped answering: .*running the crawl again resumes it$/m);
      expect(stderr).not.toMatch(/^\s+at /m); // No stack trace.
    }
    expect(first.filter((crawler) => processExists(crawler.pid))).toEqual([]);

    await server.restart();
    const again = await connect(server.url);
    ownClients.push(again);
    // What the append-only file kept: the URLs recorded when Redis died, and the leases held then.
    const recordedAtFailure = new Set((await again.hKeys(keyOf(name, "records"))).map(pathOf));
    const leasedAtFailure = new Set((await again.zRange(keyOf(name, "leases"), 0, -1)).map(pathOf));
    expect(leasedAtFailure.size).toBeGreaterThan(0);
    const firstCounts = requestCounts(site);
    site.site.resetCounters();
    const second = ["d", "e"].map((label) => startCrawler(server.url, name, site.url, label, ["--lease", "1", ...extra]));
    const outcomes = await outcomesOf(second, "two processes after Redis restarted");
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0]);
    const counts = addCounts(firstCounts, requestCounts(site));
    const figures = await expectNothingLost(again, name, inRedis, ["a", "b", "c", "d", "e"].map((label) => jsonlRecords(jsonlFile(label))), site.expected, counts);
    reportChaos("Redis SIGKILLed (AOF, fsync always), restarted", mode, 1, figures);
    // Every page requested, none that is not one; how often, a lease of 1 s on a loaded machine decides (below: sets).
    expectRequested(counts, site.expected, Number.POSITIVE_INFINITY);
    // Fetched in both runs: only URLs Redis had not marked recorded when it died (the append-only file kept every
    // mark a process was told of). Sets, not counts: how many URLs a process holds leased depends on the machine's
    // speed (a lease is held from TAKE until FINISH, past maxTasks while lines are written). Nor "only URLs leased
    // when Redis died": a lease of 1 s on a loaded machine runs out under its process, so a URL may be in the queue
    // again when Redis dies, fetched already.
    const secondCounts = requestCounts(site);
    const fetchedInBoth = [...secondCounts.keys()].filter((path) => firstCounts.has(path));
    expect(fetchedInBoth.filter((path) => recordedAtFailure.has(path))).toEqual([]);
  }, 3 * CRAWL_LIMIT_MS);

  /**
   * Redis paused with SIGSTOP mid-crawl until every process has warned that it has not answered for 5 s, then
   * resumed (SIGCONT): the processes wait for it (they do not fail: the connection is open), say so, and finish
   * the crawl when it answers. Paused for less than a lease (the default 30 s: the pause lasts 5 to 12 s, until each
   * process has had a command waiting 5 s), nothing is fetched twice. Paused for several leases (`--lease 1`: the
   * pause is 5 leases at least), every lease runs out in Redis meanwhile: URLs are fetched again, and the fencing
   * check keeps a process from fetching those it held ready; still nothing is lost.
   */
  it.each(RECORD_MODES.flatMap((mode) => [
    { ...mode, pause: "less than a lease", lease: [] as string[] },
    { ...mode, pause: "several leases", lease: ["--lease", "1"] },
  ]))("waits for a Redis paused for $pause, with a warning, and finishes the crawl losing nothing ($mode)", async ({ mode, extra, inRedis, pause, lease }) => {
    const site = await startSite(CHAOS_SITE);
    const server = await startRedis();
    ownRedis = server;
    const own = await connect(server.url);
    ownClients.push(own);
    const name = `redis-paused-${++names}`;
    const labels = ["a", "b", "c"];
    const processes = labels.map((label) => startCrawler(server.url, name, site.url, label, [...lease, ...extra]));
    await untilRecords(own, name, FAULT_AT_RECORDS, processes);
    server.pause();
    // The pause lasts until every process has said Redis is silent: a count of warnings, not a time.
    try {
      await until("every process's warning that Redis has not answered", processes, async function allWarned() {
        return processes.every((crawler) => SILENT_WARNING.test(crawler.stderr)) ? true : undefined;
      });
    } finally {
      server.resume();
    }
    const outcomes = await outcomesOf(processes, `three processes after Redis was paused (${mode})`);
    expect(codesOf(outcomes), outcomes.map((outcome) => outcome.stderr).join("\n")).toEqual([0, 0, 0]);
    for (const { stderr } of outcomes) expect(stderr).toMatch(ANSWERS_AGAIN);
    const counts = requestCounts(site);
    const figures = await expectNothingLost(own, name, inRedis, labels.map((label) => jsonlRecords(jsonlFile(label))), site.expected, counts);
    reportChaos(`Redis SIGSTOPped for ${pause}`, mode, 1, figures);
    // Less than a lease: no lease ran out, so no page is fetched twice, and no line written twice.
    if (lease.length === 0) expect(requestedTwice(counts)).toEqual([]);
  }, 3 * CRAWL_LIMIT_MS);
});
