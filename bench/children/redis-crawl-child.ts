/**
 * One crawler process of R1: `node redis-crawl-child.js '<json>'` with a
 * {@link RedisCrawlRequest}. Stage 3 with a `RedisFrontier` (or, for the
 * baseline, its in-memory frontier), as `crawl --frontier` runs it.
 *
 * It talks to bench/redis-crawl-process.ts in lines:
 * 1. it loads stage 3, opens the frontier (connects, loads the scripts,
 *    subscribes), then prints `{"ready":true}`;
 * 2. it waits for a line on stdin, so that every process of one crawl starts
 *    at once, and so that the Redis counters read between the two leave out
 *    the connecting;
 * 3. it crawls and prints one {@link RedisCrawlReport} as a JSON line;
 * 4. it waits for stdin to close, then closes the frontier and exits: the
 *    parent reads Redis's counters while no process of the crawl talks to it.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { crawl } from "../../src/asyncawait/index.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { RedisFrontier } from "../../src/distributed/index.js";

/** What the parent asks for. */
export interface RedisCrawlRequest {
  /** The site's root. */
  url: string;
  /** Workers in this process. */
  maxTasks: number;
  /** The crawl in Redis to take part in; null: the in-memory frontier (the baseline, one process). */
  frontier: { url: string; name: string } | null;
}

/** What the child prints once the crawl is over. */
export interface RedisCrawlReport {
  /** When the crawl started and ended, in ms since the epoch with sub-millisecond precision (`performance.timeOrigin + now()`), to compare across processes. */
  startedAt: number;
  endedAt: number;
  /** CPU time of this process during the crawl (user + system), in ms. */
  cpuMs: number;
  /** Of which in the kernel (system), in ms. */
  systemMs: number;
  /** Records this process made (stored first, for a shared frontier). */
  made: number;
  /** Records of the whole crawl, every process's. */
  recorded: number;
  todo: number;
  /** The crawl's records, in memory only; null for a shared frontier (the parent reads them from Redis). */
  records: FetchStatistic[] | null;
  /** Peak RSS of this process, in bytes. */
  peakRssBytes: number;
}

const request = JSON.parse(process.argv[2] ?? "{}") as RedisCrawlRequest; // written by bench/redis-crawl-process.ts
const lines = createInterface({ input: process.stdin });
const stdinClosed = new Promise<void>(function waitForStdinToClose(resolve) {
  lines.once("close", () => resolve());
});
const frontier = request.frontier === null ? undefined : await RedisFrontier.open({ url: request.frontier.url, name: request.frontier.name });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
await new Promise<void>(function waitForGo(resolve) {
  lines.once("line", () => resolve());
});

let made = 0;
function countRecord(_record: FetchStatistic): void {
  made += 1;
}
const inMemory = frontier === undefined;
const startedAt = performance.timeOrigin + performance.now();
const cpuBefore = process.cpuUsage();
// Records stay in Redis, where the parent checks them; in memory they come back in the result.
const result = await crawl(request.url, { maxTasks: request.maxTasks, onRecord: countRecord, keepRecords: inMemory }, frontier);
const endedAt = performance.timeOrigin + performance.now();
const cpu = process.cpuUsage(cpuBefore);
const report: RedisCrawlReport = {
  startedAt,
  endedAt,
  cpuMs: (cpu.user + cpu.system) / 1000,
  systemMs: cpu.system / 1000,
  made,
  recorded: result.recorded,
  todo: result.todo,
  records: inMemory ? result.records : null,
  peakRssBytes: process.resourceUsage().maxRSS * 1024, // maxRSS is in KiB
};
process.stdout.write(`${JSON.stringify(report)}\n`);
await stdinClosed;
await frontier?.close();
