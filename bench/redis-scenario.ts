/**
 * R1 (issue 15): one crawl, many processes, one Redis. Stage 3 with a
 * `RedisFrontier`, crawled by 1, 2 and 4 processes that share one
 * redis-server, the workers in all fixed, beside the in-memory frontier:
 *
 * - **throughput**: S1's site (no delay), 40 workers in all: 1 × 40, 2 × 20,
 *   4 × 10; pages/s, and what Redis did per page (round trips, `EVALSHA`s,
 *   commands run, its CPU).
 * - **latency**: S2's site (50 ms per response), 40 workers in all: 1 × 40
 *   against 4 × 10. The target: 4 processes at least as fast as one.
 * - **memory**: what one URL costs in each frontier, 100,000 URLs.
 *
 * The redis-server is Debian's (`/usr/bin/redis-server`, or `$REDIS_SERVER`),
 * started on a free loopback port in a temporary directory and removed
 * after; without one, R1 is skipped and says so. `--quick`: the quick sites
 * (200 pages), 20 workers in all, 1 and 2 processes, 10,000 URLs.
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import type { FrontierMemoryReport } from "./children/frontier-memory-child.js";
import { measureFrontierMemory, RedisProbe, runSharedCrawl, type CrawlShape, type SharedCrawlRun } from "./redis-crawl-process.js";
import { RedisServerProcess, redisServerPath } from "./redis-server-process.js";
import { QUICK_SCENARIOS, SCENARIOS, type Scenario } from "./scenarios.js";
import { SiteProcess } from "./site-process.js";
import { spread, type Spread } from "./stats.js";

/** R1's id, as `--scenarios` names it. */
export const REDIS_SCENARIO_ID = "R1";

/** One way of sharing out a crawl, over its runs. */
export interface ShapeOnSite {
  shape: CrawlShape;
  runs: SharedCrawlRun[];
  /** Runs that missed or got wrong pages: they are not in the spreads. */
  failures: number;
  wallMs: Spread | null;
  pagesPerSecond: Spread | null;
  /** CPU time of the crawler processes, all together. */
  cpuMs: Spread | null;
  /** Redis's figures per page (null for the in-memory frontier). */
  roundTripsPerPage: Spread | null;
  evalshaPerPage: Spread | null;
  commandsPerPage: Spread | null;
  redisCpuMs: Spread | null;
}

/** One site of R1 and every way it was crawled. */
export interface SiteOfR1 {
  /** The site and the workers in all (`maxTasks`, for its bound). */
  site: Scenario;
  /** The scenario whose site it is: `S1` or `S2`. */
  siteOf: string;
  expectedPages: number;
  /** The site's lower bound on wall time for `maxTasks` workers, in ms. */
  boundMs: number;
  shapes: ShapeOnSite[];
}

/** Everything R1 measured, or why it did not run. */
export interface RedisScenarioResult {
  /** Why R1 did not run (no redis-server); null when it ran. */
  skipped: string | null;
  /** The redis-server's version, `Redis 7.0.15`; null when skipped. */
  redisVersion: string | null;
  throughput: SiteOfR1 | null;
  latency: SiteOfR1 | null;
  /** Bytes per URL of the in-memory frontier and of the Redis one. */
  memory: FrontierMemoryReport[];
}

/** The workers in all, the URLs of the memory measurement, and the process counts. */
function sizes(quick: boolean): { workers: number; urls: number; throughput: number[]; latency: number[] } {
  return quick ? { workers: 20, urls: 10_000, throughput: [1, 2], latency: [1, 2] } : { workers: 40, urls: 100_000, throughput: [1, 2, 4], latency: [1, 4] };
}

/** The in-memory baseline, then Redis with each process count, the workers in all fixed. */
function shapesOf(workers: number, processCounts: readonly number[]): CrawlShape[] {
  const redis = processCounts.map(function shared(processes): CrawlShape {
    return { frontier: "redis", processes, maxTasksEach: workers / processes };
  });
  return [{ frontier: "memory", processes: 1, maxTasksEach: workers }, ...redis];
}

/** The site of scenario `id` (S1 or S2), with `workers` as its maxTasks. */
function siteOf(id: string, quick: boolean, workers: number): Scenario {
  const base = (quick ? QUICK_SCENARIOS : SCENARIOS).find(function isIt(scenario) {
    return scenario.id === id;
  });
  if (base === undefined) throw new Error(`no scenario ${id}`);
  return { ...base, id: REDIS_SCENARIO_ID, maxTasks: workers };
}

/** The version of the redis-server at `path`: `Redis 7.0.15`. */
function versionOf(path: string): string {
  const line = execFileSync(path, ["--version"], { encoding: "utf8" }).trim(); // "Redis server v=7.0.15 sha=… malloc=…"
  const version = /v=(\S+)/.exec(line)?.[1];
  return version === undefined ? line : `Redis ${version}`;
}

/**
 * Runs R1: starts a redis-server, crawls both sites in every shape, `runs`
 * times (the shapes taking turns, after one untimed in-memory crawl that
 * warms up the site process), measures both frontiers' memory, and removes
 * the server.
 */
export async function benchRedisScenario(quick: boolean, runs: number, log: (message: string) => void): Promise<RedisScenarioResult> {
  const path = redisServerPath();
  if (path === null) {
    const skipped = "no redis-server (Debian: apt-get install redis-server, or set REDIS_SERVER)";
    log(`${REDIS_SCENARIO_ID}: skipped, ${skipped}`);
    return { skipped, redisVersion: null, throughput: null, latency: null, memory: [] };
  }
  const { workers, urls, throughput, latency } = sizes(quick);
  const redisVersion = versionOf(path);
  const server = await RedisServerProcess.start(path);
  log(`${REDIS_SCENARIO_ID}: ${redisVersion} at ${server.url}`);
  try {
    const probe = await RedisProbe.connect(server.url);
    try {
      const throughputSite = await crawlSite(siteOf("S1", quick, workers), "S1", shapesOf(workers, throughput), probe, runs, log);
      const latencySite = await crawlSite(siteOf("S2", quick, workers), "S2", shapesOf(workers, latency), probe, runs, log);
      const memory: FrontierMemoryReport[] = [];
      for (const frontier of ["memory", "redis"] as const) {
        const report = await measureFrontierMemory(frontier, urls, frontier === "redis" ? server.url : null);
        log(`  memory per URL, ${frontier}: ${report.seenAndQueued.toFixed(0)} bytes seen and queued (seen ${report.seen.toFixed(0)}, queued ${report.queued.toFixed(0)})`);
        memory.push(report);
      }
      return { skipped: null, redisVersion, throughput: throughputSite, latency: latencySite, memory };
    } finally {
      await probe.close();
    }
  } finally {
    await server.remove();
  }
}

/** Crawls one site in every shape, `runs` times, the shapes taking turns. */
async function crawlSite(
  site: Scenario,
  siteId: string,
  shapes: readonly CrawlShape[],
  probe: RedisProbe,
  runs: number,
  log: (message: string) => void,
): Promise<SiteOfR1> {
  const siteProcess = await SiteProcess.start(site);
  log(`${REDIS_SCENARIO_ID} on ${siteId}'s site: ${siteProcess.expectedCount} pages, ${site.delayMs} ms, ${site.maxTasks} workers in all, bound ${siteProcess.bound.toFixed(0)} ms`);
  const results = shapes.map(function noRunsYet(): SharedCrawlRun[] {
    return [];
  });
  try {
    const warmUp = await runSharedCrawl(siteProcess, { frontier: "memory", processes: 1, maxTasksEach: site.maxTasks }, null, "warm-up");
    log(`  warm-up (not counted): ${describeRun(warmUp)}`);
    for (let round = 0; round < runs; round++) {
      for (const [i, shape] of shapes.entries()) {
        const run = await runSharedCrawl(siteProcess, shape, probe, `r1-${siteId}-${shape.processes}x${shape.maxTasksEach}-${round + 1}`);
        results[i]?.push(run);
        log(`  ${describeShape(shape)} #${round + 1}: ${describeRun(run)}`);
      }
    }
  } finally {
    await siteProcess.stop();
  }
  return {
    site,
    siteOf: siteId,
    expectedPages: siteProcess.expectedCount,
    boundMs: siteProcess.bound,
    shapes: shapes.map(function summary(shape, i) {
      return summariseShape(shape, results[i] ?? []);
    }),
  };
}

/** `in memory, 1 × 40` or `Redis, 4 × 10`. */
export function describeShape(shape: CrawlShape): string {
  return `${shape.frontier === "memory" ? "in memory" : "Redis"}, ${shape.processes} × ${shape.maxTasksEach}`;
}

function describeRun(run: SharedCrawlRun): string {
  if (run.failure !== null) return `FAILED (${run.failure})`;
  const redis =
    run.redis === null
      ? ""
      : `, ${(run.redis.roundTrips / run.pages).toFixed(2)} round trips/page (EVALSHA ${(run.redis.evalsha / run.pages).toFixed(2)}), Redis CPU ${run.redis.cpuMs.toFixed(0)} ms`;
  const split = run.made.length > 1 ? `, records per process ${run.made.join("/")}` : "";
  return `${run.pages} pages in ${run.wallMs.toFixed(0)} ms (CPU ${run.cpuMs.toFixed(0)} ms), ${run.pagesPerSecond.toFixed(0)}/s${redis}${split}`;
}

/** The spreads of one shape's runs; failed runs are counted, not averaged. */
function summariseShape(shape: CrawlShape, runs: SharedCrawlRun[]): ShapeOnSite {
  const good = runs.filter(function counts(run) {
    return run.failure === null;
  });
  const perPage = function perPageOf(figure: (run: SharedCrawlRun) => number | null): Spread | null {
    const values: number[] = [];
    for (const run of good) {
      const value = figure(run);
      if (value !== null && run.pages > 0) values.push(value / run.pages);
    }
    return spread(values);
  };
  const redisCpu: number[] = [];
  for (const run of good) if (run.redis !== null) redisCpu.push(run.redis.cpuMs);
  return {
    shape,
    runs,
    failures: runs.length - good.length,
    wallMs: spread(good.map((run) => run.wallMs)),
    pagesPerSecond: spread(good.map((run) => run.pagesPerSecond)),
    cpuMs: spread(good.map((run) => run.cpuMs)),
    roundTripsPerPage: perPage((run) => run.redis?.roundTrips ?? null),
    evalshaPerPage: perPage((run) => run.redis?.evalsha ?? null),
    commandsPerPage: perPage((run) => run.redis?.commands ?? null),
    redisCpuMs: spread(redisCpu),
  };
}

/** Whether any crawl of R1 missed or got a page wrong. */
export function redisScenarioFailed(result: RedisScenarioResult | null): boolean {
  const sites = [result?.throughput, result?.latency];
  return sites.some(function failedSite(site) {
    return site?.shapes.some((shape) => shape.failures > 0) ?? false;
  });
}
