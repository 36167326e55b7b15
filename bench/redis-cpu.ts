/**
 * Issue 38's CPU figures of the Redis frontier, alone: S1's site (2,000
 * pages, no delay, 40 workers in all) crawled in memory and through one
 * redis-server by 1, 2 and 4 processes, the four shapes taking turns in
 * each round (`--rounds N`, default 3; `--processes 1,2,4`; `--pages N`, default
 * 2,000; `--workers N`, default 40). Prints, per
 * shape, the medians of the crawler processes' CPU, Redis's CPU, round trips
 * and EVALSHAs per page, bytes Redis received per page and µs per EVALSHA;
 * then the CPU ÷ in-memory ratios (each round's Redis crawl ÷ the same
 * round's in-memory crawl, their median), and the bytes the crawl's keys
 * hold per finished URL after one crawl. Run: `npx tsx bench/redis-cpu.ts`
 * (with `BENCH_BUILD_DIR` set to a directory of one's own when node_modules
 * is shared).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { buildChildren } from "./build.js";
import { RedisProbe, runSharedCrawl, type CrawlShape, type SharedCrawlRun } from "./redis-crawl-process.js";
import { RedisServerProcess, redisServerPath } from "./redis-server-process.js";
import { SCENARIOS } from "./scenarios.js";
import { SiteProcess } from "./site-process.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, processes: { type: "string", default: "1,2,4" }, workers: { type: "string", default: "40" }, pages: { type: "string", default: "2000" } } });
const rounds = Number(values.rounds);
const workers = Number(values.workers);
const counts = values.processes.split(",").map(Number);
const path = redisServerPath();
if (path === null) throw new Error("no redis-server");
buildChildren();
const base = SCENARIOS.find((scenario) => scenario.id === "S1");
if (base === undefined) throw new Error("no S1");
const site = await SiteProcess.start({ ...base, maxTasks: workers, pages: Number(values.pages) });
const server = await RedisServerProcess.start(path);
const probe = await RedisProbe.connect(server.url);

function median(list: readonly number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const shapes: CrawlShape[] = [{ frontier: "memory", processes: 1, maxTasksEach: workers }, ...counts.map((processes): CrawlShape => ({ frontier: "redis", processes, maxTasksEach: workers / processes }))];
const runs: SharedCrawlRun[][] = shapes.map(() => []);
let memory: Record<string, number> | null = null;
let memoryPages = 0;
try {
  await runSharedCrawl(site, shapes[0] as CrawlShape, null, "warm-up");
  for (let round = 0; round < rounds; round++) {
    for (const [i, shape] of shapes.entries()) {
      const inspect = async (name: string): Promise<void> => {
        if (memory === null) memory = await probe.memoryOf(name);
      };
      const run = await runSharedCrawl(site, shape, shape.frontier === "redis" ? probe : null, `cpu-${round}-${i}`, inspect);
      if (run.failure !== null) throw new Error(`${shape.frontier} ${shape.processes}: ${run.failure}`);
      if (memory !== null && memoryPages === 0) memoryPages = run.pages;
      runs[i]?.push(run);
      const redis = run.redis === null ? "" : ` redis ${run.redis.cpuMs.toFixed(0)} ms, ${(run.redis.roundTrips / run.pages).toFixed(2)} rt/page`;
      process.stderr.write(`round ${round + 1} ${shape.frontier} ${shape.processes}x${shape.maxTasksEach}: cpu ${run.cpuMs.toFixed(0)} ms (system ${run.systemMs.toFixed(0)}), wall ${run.wallMs.toFixed(0)} ms${redis}\n`);
    }
  }
} finally {
  await probe.close();
  await server.remove();
  await site.stop();
}
const memoryRuns = runs[0] ?? [];
for (const [i, shape] of shapes.entries()) {
  const list = runs[i] ?? [];
  const pages = list[0]?.pages ?? 1;
  const ratio = list.map((run, round) => run.cpuMs / (memoryRuns[round]?.cpuMs ?? Number.NaN));
  const withRedis = list.map((run, round) => (run.cpuMs + (run.redis?.cpuMs ?? 0)) / (memoryRuns[round]?.cpuMs ?? Number.NaN));
  const per = (figure: (run: SharedCrawlRun) => number): string => median(list.map(figure)).toFixed(2);
  const line = [
    `${shape.frontier} ${shape.processes}x${shape.maxTasksEach}`,
    `cpu ${median(list.map((run) => run.cpuMs)).toFixed(0)} ms`,
    `of which system ${median(list.map((run) => run.systemMs)).toFixed(0)} ms`,
    `wall ${median(list.map((run) => run.wallMs)).toFixed(0)} ms`,
    `ratio ${median(ratio).toFixed(2)} [${ratio.map((r) => r.toFixed(2)).join(" ")}]`,
    `with redis ${median(withRedis).toFixed(2)}`,
  ];
  if (shape.frontier === "redis") {
    line.push(
      `redis cpu ${per((run) => run.redis?.cpuMs ?? 0)} ms`,
      `rt/page ${per((run) => (run.redis?.roundTrips ?? 0) / pages)}`,
      `evalsha/page ${per((run) => (run.redis?.evalsha ?? 0) / pages)}`,
      `bytes in/page ${per((run) => (run.redis?.bytesIn ?? 0) / pages)}`,
      `us/evalsha ${per((run) => (run.redis?.evalshaUsec ?? 0) / Math.max(1, run.redis?.evalsha ?? 1))}`,
      `sent ${JSON.stringify(list[0]?.redis?.sent ?? {})}`,
    );
  }
  process.stdout.write(`${line.join(", ")}\n`);
}
if (memory !== null) {
  const total = Object.values(memory as Record<string, number>).reduce((sum, bytes) => sum + bytes, 0);
  process.stdout.write(`bytes per finished URL (${memoryPages} pages): ${(total / memoryPages).toFixed(0)} in all; ${JSON.stringify(memory)}\n`);
}
