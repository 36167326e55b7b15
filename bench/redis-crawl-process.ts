/**
 * R1's measurements: one crawl made by several stage 3 processes through one
 * Redis (`children/redis-crawl-child.ts`), with Redis's own counters around
 * it; and what a URL costs each frontier (`children/frontier-memory-child.ts`).
 *
 * @module
 */
import { execFile, spawn, type ChildProcessByStdio } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { createClient } from "@redis/client";
import type { FetchStatistic } from "../src/crawl/records.js";
import * as scripts from "../src/distributed/scripts.js";
import { childScript } from "./build.js";
import type { FrontierMemoryReport, FrontierMemoryRequest } from "./children/frontier-memory-child.js";
import type { RedisCrawlReport, RedisCrawlRequest } from "./children/redis-crawl-child.js";
import { compareRecords, type CrawlTarget } from "./crawl-process.js";

/** How one crawl is shared out: the frontier, the processes, and the workers in each. */
export interface CrawlShape {
  frontier: "memory" | "redis";
  processes: number;
  /** Workers per process (`maxTasks`). */
  maxTasksEach: number;
}

/** Redis's work during one crawl, all its processes together (null figures for the in-memory frontier). */
export interface RedisWork {
  /**
   * Commands the crawler processes sent, each one a request and its reply:
   * every command `INFO commandstats` counted, but those the frontier's Lua
   * scripts call inside Redis (read from src/distributed/scripts.ts) and the
   * harness's own `INFO`.
   */
  roundTrips: number;
  /** Of those, `EVALSHA`: one of the frontier's scripts (ADD, TAKE, FINISH, RELEASE, RENEW, STATUS). */
  evalsha: number;
  /** Every command Redis ran (`total_commands_processed`), those inside the scripts too, but the harness's `INFO`. */
  commands: number;
  /** Redis's CPU time, user + system (`INFO cpu`), in ms. */
  cpuMs: number;
  /** Each command the processes sent, and how many times: `{ evalsha: 4012, eval: 3, hscan: 8, … }`. */
  sent: Record<string, number>;
  /** Bytes Redis received (`total_net_input_bytes`), the harness's `INFO` included (a few dozen bytes). */
  bytesIn: number;
  /** Microseconds Redis spent in `EVALSHA` (`INFO commandstats`, its scripts' commands included). */
  evalshaUsec: number;
}

/** One crawl by one or more processes, and whether it made the expected records. */
export interface SharedCrawlRun extends CrawlShape {
  /** Records in the crawl (all processes'), and records the site expected. */
  pages: number;
  expectedPages: number;
  /** Null when the crawl made exactly the expected records; else what was wrong. A failed run is not a figure. */
  failure: string | null;
  /** From the first process's start to the last one's end, in ms. */
  wallMs: number;
  /** CPU time of the crawler processes, all together (user + system), in ms. */
  cpuMs: number;
  /** Of which in the kernel, in ms. */
  systemMs: number;
  pagesPerSecond: number;
  /** Records each process made. */
  made: number[];
  /** The highest peak RSS of the processes, in bytes. */
  peakRssBytes: number;
  /** What Redis did; null for the in-memory frontier. */
  redis: RedisWork | null;
}

/** Redis's counters at one moment. */
interface RedisCounters {
  commands: number;
  calls: Map<string, number>;
  cpuMs: number;
  bytesIn: number;
  evalshaUsec: number;
}

type Client = ReturnType<typeof createClient>;

/** The commands the frontier's scripts call inside Redis (`redis.call('SADD', …)`): not round trips. */
const SCRIPT_COMMANDS: ReadonlySet<string> = new Set(
  // `redis.call('SADD', …)`, and the names a script picks between (`front and 'LPUSH' or 'RPUSH'`).
  Object.values<string>(scripts).flatMap((source) => [...source.matchAll(/redis\.call\('(\w+)'|'([A-Z]{4,})'/g)].map((match) => (match[1] ?? match[2] ?? "").toLowerCase())),
);

/** How long one crawl may take before it counts as hung. */
const CRAWL_TIMEOUT_MS = 180_000;

/**
 * A connection to R1's Redis for the harness: counters, the records of a
 * crawl, and a flush between crawls.
 */
export class RedisProbe {
  private constructor(
    private readonly client: Client,
    /** The Redis the crawler processes use: `redis://127.0.0.1:PORT/0`. */
    readonly url: string,
  ) {}

  /** Connects to the Redis at `url`. */
  static async connect(url: string): Promise<RedisProbe> {
    const client: Client = createClient({ url });
    await client.connect();
    return new RedisProbe(client, url);
  }

  /** Reads `INFO stats commandstats cpu` (one command, counted in the next reading). */
  async counters(): Promise<RedisCounters> {
    const info = String(await this.client.sendCommand(["INFO", "stats", "commandstats", "cpu"]));
    const calls = new Map<string, number>();
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1] ?? "", Number(match[2]));
    const seconds = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
    const commands = Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? 0);
    const bytesIn = Number(/^total_net_input_bytes:(\d+)/m.exec(info)?.[1] ?? 0);
    const evalshaUsec = Number(/^cmdstat_evalsha:calls=\d+,usec=(\d+)/m.exec(info)?.[1] ?? 0);
    return { commands, calls, cpuMs: (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1000, bytesIn, evalshaUsec };
  }

  /** Every record of the crawl `name`, and how many URLs it has seen. */
  async crawlOf(name: string): Promise<{ records: FetchStatistic[]; seen: number }> {
    const prefix = `coroutine-crawler:{${name}}:`;
    const values = (await this.client.sendCommand(["HVALS", `${prefix}records`])) as string[];
    const seen = Number(await this.client.sendCommand(["SCARD", `${prefix}seen`]));
    return { records: values.map((json) => JSON.parse(json) as FetchStatistic), seen }; // written by FINISH in src/distributed/scripts.ts
  }

  /** Empties Redis between crawls. */
  async flush(): Promise<void> {
    await this.client.sendCommand(["FLUSHALL"]);
  }

  /** The bytes each of the crawl's keys holds (`MEMORY USAGE … SAMPLES 0`), by the key's name after the crawl's prefix (`q:*` together). */
  async memoryOf(name: string): Promise<Record<string, number>> {
    const prefix = `coroutine-crawler:{${name}}:`;
    const bytes: Record<string, number> = {};
    for await (const keys of this.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      for (const key of keys) {
        const rest = key.slice(prefix.length);
        // One line for each kind of key: every origin's queue (q:ORIGIN) together, every call's kept reply (reply:OWNER:N) together.
        const short = rest.startsWith("q:") ? "q:*" : rest.startsWith("reply:") ? "reply:*" : rest;
        bytes[short] = (bytes[short] ?? 0) + Number(await this.client.sendCommand(["MEMORY", "USAGE", key, "SAMPLES", "0"]));
      }
    }
    return bytes;
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.client.close();
  }
}

/** What Redis did between two readings, without the readings themselves. */
function workBetween(before: RedisCounters, after: RedisCounters): RedisWork {
  const sent: Record<string, number> = {};
  let roundTrips = 0;
  for (const [command, calls] of after.calls) {
    const delta = calls - (before.calls.get(command) ?? 0);
    if (delta === 0 || command === "info" || SCRIPT_COMMANDS.has(command)) continue;
    sent[command] = delta;
    roundTrips += delta;
  }
  const infos = (after.calls.get("info") ?? 0) - (before.calls.get("info") ?? 0);
  return {
    roundTrips,
    evalsha: sent["evalsha"] ?? 0,
    commands: after.commands - before.commands - infos,
    cpuMs: after.cpuMs - before.cpuMs,
    sent,
    bytesIn: after.bytesIn - before.bytesIn,
    evalshaUsec: after.evalshaUsec - before.evalshaUsec,
  };
}

/** One crawler process as the parent drives it: its lines, in order, and its end. */
class CrawlerChild {
  private readonly lines: string[] = [];
  private readonly waiting: Array<(line: string | null) => void> = [];
  private closed = false;
  /** The last lines of its stderr, for a failure's message. */
  private stderr = "";

  constructor(private readonly child: ChildProcessByStdio<Writable, Readable, Readable>) {
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line: string) => {
      const reader = this.waiting.shift();
      if (reader === undefined) this.lines.push(line);
      else reader(line);
    });
    lines.once("close", () => {
      this.closed = true;
      for (const reader of this.waiting.splice(0)) reader(null);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr = `${this.stderr}${chunk.toString("utf8")}`.slice(-2000);
    });
    // A process that died early makes `go()` or `end()` write to a closed pipe: its missing line is the failure, not EPIPE.
    child.stdin.on("error", function ignoreClosedPipe() {});
  }

  /** Its next line; rejects if it ends first. */
  async nextLine(): Promise<string> {
    const line = this.lines.shift() ?? (this.closed ? null : await new Promise<string | null>((resolve) => this.waiting.push(resolve)));
    if (line === null) throw new Error(`a crawler process ended early: ${this.stderr.trim().split("\n").slice(-3).join(" ")}`);
    return line;
  }

  /** Tells it to start crawling. */
  go(): void {
    this.child.stdin.write("go\n");
  }

  /** Lets it close its frontier and exit (kills it after 10 s), and waits for it. */
  async end(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Kills it at once. */
  kill(): void {
    this.child.kill("SIGKILL");
  }
}

/**
 * Crawls `site` with `shape.processes` fresh processes of `shape.maxTasksEach`
 * workers each, all sharing the crawl `name` in the Redis of `probe` (or,
 * for the in-memory frontier, one process). Every process loads and
 * connects first; then all start at once, and Redis's counters are read
 * just before and just after. Afterwards Redis is flushed.
 */
export async function runSharedCrawl(
  site: CrawlTarget,
  shape: CrawlShape,
  probe: RedisProbe | null,
  name: string,
  inspect: ((name: string) => Promise<void>) | null = null,
): Promise<SharedCrawlRun> {
  const frontier = shape.frontier === "redis" && probe !== null ? { url: probe.url, name } : null;
  const counting = frontier === null ? null : probe;
  const request: RedisCrawlRequest = { url: site.url, maxTasks: shape.maxTasksEach, frontier };
  // Bare `node`, as for every measured crawl (crawl-process.ts): no NODE_OPTIONS of the caller's.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const children: CrawlerChild[] = [];
  for (let i = 0; i < (frontier === null ? 1 : shape.processes); i++) {
    // BENCH_CPU_PROF_DIR: each crawler process writes a V8 CPU profile there (bench/redis-cpu.ts --profile).
    const profile = process.env.BENCH_CPU_PROF_DIR === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CPU_PROF_DIR];
    children.push(new CrawlerChild(spawn(process.execPath, [...profile, childScript("redis-crawl-child"), JSON.stringify(request)], { env, stdio: ["pipe", "pipe", "pipe"] })));
  }
  const timer = setTimeout(() => {
    for (const child of children) child.kill();
  }, CRAWL_TIMEOUT_MS);
  try {
    await Promise.all(children.map((child) => child.nextLine())); // {"ready":true}
    const before = await counting?.counters();
    for (const child of children) child.go();
    const reports = await Promise.all(children.map(async (child) => JSON.parse(await child.nextLine()) as RedisCrawlReport)); // the report line
    const after = await counting?.counters();
    const redis = before !== undefined && after !== undefined ? workBetween(before, after) : null;
    const made = reports.map((report) => report.made);
    const wallMs = Math.max(...reports.map((report) => report.endedAt)) - Math.min(...reports.map((report) => report.startedAt));
    const cpuMs = reports.reduce((sum, report) => sum + report.cpuMs, 0);
    const systemMs = reports.reduce((sum, report) => sum + report.systemMs, 0);
    const peakRssBytes = Math.max(...reports.map((report) => report.peakRssBytes));
    let records: readonly FetchStatistic[];
    let todo: number;
    if (counting === null) {
      records = reports[0]?.records ?? [];
      todo = reports[0]?.todo ?? 0;
    } else {
      const stored = await counting.crawlOf(name);
      records = stored.records;
      todo = stored.seen - stored.records.length;
    }
    const problems = [compareRecords(records, site.expectedRecords ?? [], todo)];
    const madeInAll = made.reduce((sum, count) => sum + count, 0);
    if (madeInAll !== records.length) problems.push(`the processes made ${madeInAll} records, the crawl has ${records.length}`);
    const failure = problems.filter((problem) => problem !== null).join(", ") || null;
    const pages = records.length;
    if (counting !== null) await inspect?.(name); // Before the flush: the crawl's keys as it left them.
    return { ...shape, pages, expectedPages: site.expectedCount, failure, wallMs, cpuMs, systemMs, pagesPerSecond: (pages * 1000) / wallMs, made, peakRssBytes, redis };
  } catch (error) {
    for (const child of children) child.kill();
    const failure = `crawl failed: ${error instanceof Error ? error.message : String(error)}`;
    return { ...shape, pages: 0, expectedPages: site.expectedCount, failure, wallMs: 0, cpuMs: 0, systemMs: 0, pagesPerSecond: 0, made: [], peakRssBytes: 0, redis: null };
  } finally {
    clearTimeout(timer);
    await Promise.all(children.map((child) => child.end()));
    await counting?.flush();
  }
}

/** Bytes per URL of one frontier, measured over `urls` URLs in a child with `--expose-gc`; rejects if the child fails. */
export function measureFrontierMemory(frontier: "memory" | "redis", urls: number, redisUrl: string | null): Promise<FrontierMemoryReport> {
  const request: FrontierMemoryRequest = { frontier, urls, redisUrl };
  return new Promise<FrontierMemoryReport>(function runChild(resolve, reject) {
    execFile(
      process.execPath,
      ["--expose-gc", childScript("frontier-memory-child"), JSON.stringify(request)],
      { timeout: 180_000, maxBuffer: 1024 * 1024 },
      function childExited(error, stdout, stderr) {
        if (error !== null) reject(new Error(`memory of the ${frontier} frontier: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as FrontierMemoryReport); // the one line frontier-memory-child.ts prints
      },
    );
  });
}
