/**
 * One measured crawl, alone in its process: `node crawl-child.js '<json>'`
 * with a {@link CrawlRequest}; prints one {@link CrawlReport} as a JSON line.
 *
 * Peak RSS is the process's own (`process.resourceUsage().maxRSS`), read
 * as soon as the crawl resolves, before the report is serialised.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { loadCrawl, type BenchSubject } from "./load-stage.js";

/** What the parent asks for. */
export interface CrawlRequest {
  stage: BenchSubject;
  url: string;
  maxTasks: number;
  /** The crawl's `maxPerHost`; null: not set. */
  maxPerHost: number | null;
  /** Pass a `trace` callback that only counts events (the `--trace-overhead` comparison). */
  trace: boolean;
}

/** What the child prints. */
export interface CrawlReport {
  records: FetchStatistic[];
  todo: number;
  wallMs: number;
  /** CPU time (user + system) the crawl used, in ms: less sensitive than wall time to other load on the machine. */
  cpuMs: number;
  /** Peak resident set size of this process, in bytes. */
  peakRssBytes: number;
  /** The most heap in use at any 100 ms sample (V8 heap, without Buffers and sockets' native memory), in bytes. */
  peakHeapBytes: number;
  /** Trace events received (0 without `trace`). */
  traceEvents: number;
}

const request = JSON.parse(process.argv[2] ?? "{}") as CrawlRequest; // written by bench/crawl-process.ts
const crawl = await loadCrawl(request.stage);
let traceEvents = 0;
function countEvent(_event: TraceEvent): void {
  traceEvents += 1;
}
const options: CrawlOptions & { maxTasks: number } = {
  maxTasks: request.maxTasks,
  ...(request.maxPerHost === null ? {} : { maxPerHost: request.maxPerHost }),
  ...(request.trace ? { trace: countEvent } : {}),
};

let peakHeapBytes = 0;
function sampleHeap(): void {
  peakHeapBytes = Math.max(peakHeapBytes, process.memoryUsage().heapUsed);
}
const sampler = setInterval(sampleHeap, 100);

const start = performance.now();
const cpuBefore = process.cpuUsage();
const result = await crawl(request.url, options);
const wallMs = performance.now() - start;
const cpu = process.cpuUsage(cpuBefore);
const peakRssBytes = process.resourceUsage().maxRSS * 1024; // maxRSS is in KiB
sampleHeap();
clearInterval(sampler);

const cpuMs = (cpu.user + cpu.system) / 1000;
const report: CrawlReport = { records: result.records, todo: result.todo, wallMs, cpuMs, peakRssBytes, peakHeapBytes, traceEvents };
process.stdout.write(`${JSON.stringify(report)}\n`);
