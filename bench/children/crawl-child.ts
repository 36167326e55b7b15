/**
 * One measured crawl, alone in its process: `node crawl-child.js '<json>'`
 * with a {@link CrawlRequest}; prints one {@link CrawlReport} as a JSON line.
 *
 * Peak RSS is the process's own (`process.resourceUsage().maxRSS`), read
 * as soon as the crawl resolves, before the report is serialised. The
 * process runs with no Node flags (bench/crawl-process.ts also drops
 * `NODE_OPTIONS`), so V8 collects garbage as it would for any user.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { keepFreedMemory } from "../../src/cli/freed-memory.js";
import { RecordLines } from "../../src/cli/record-lines.js";
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
  /**
   * Write a V8 heap snapshot to `path` when the crawl makes its
   * `atRecord`-th record (mid-crawl, with everything the crawler holds
   * alive), or when it ends if it makes fewer (`--heap-snapshot`). Null: none.
   */
  heapSnapshot: { atRecord: number; path: string } | null;
  /**
   * Keep no records (`keepRecords: false`) and write each one as a JSON line
   * to this file, as `crawl --jsonl` does (S5); the parent checks the file.
   * Null: records are kept and returned in the report.
   */
  jsonl: string | null;
}

/**
 * `process.memoryUsage()` at the 100 ms sample with the highest RSS: how
 * the peak splits between V8's heap and the rest (Buffers, sockets, code,
 * the allocator's own pages).
 */
export interface MemorySample {
  rssBytes: number;
  /** V8's heap as reserved from the system: in use, garbage not yet collected, and free space. */
  heapTotalBytes: number;
  /** Live objects and garbage not yet collected. */
  heapUsedBytes: number;
  /** Memory of Buffers, ArrayBuffers (WebAssembly memory too) and other C++ objects bound to JS ones. */
  externalBytes: number;
}

/** What the child prints. */
export interface CrawlReport {
  /** Every record; empty when they went to the `jsonl` file instead. */
  records: FetchStatistic[];
  todo: number;
  wallMs: number;
  /** CPU time (user + system) the crawl used, in ms: less sensitive than wall time to other load on the machine. */
  cpuMs: number;
  /** CPU time of the whole process from its start to the crawl's end (start-up, imports and the crawl), in ms. */
  processCpuMs: number;
  /** Peak resident set size of this process, in bytes. */
  peakRssBytes: number;
  /** Resident set size just before the crawl, the stage loaded: what the process costs with no crawl, in bytes. */
  startRssBytes: number;
  /** The most heap in use at any 100 ms sample (V8 heap, without Buffers and sockets' native memory), in bytes. */
  peakHeapBytes: number;
  /** The sample of highest RSS (sampled every 100 ms, so its RSS may be below `peakRssBytes`). */
  atPeak: MemorySample;
  /** Trace events received (0 without `trace`). */
  traceEvents: number;
}

const request = JSON.parse(process.argv[2] ?? "{}") as CrawlRequest; // written by bench/crawl-process.ts
// As the crawl command does (src/cli.ts): undici's WebAssembly parser stays on V8's baseline tier.
setFlagsFromString("--liftoff-only");
const crawl = await loadCrawl(request.stage);
// As the command does when its crawl starts (src/cli/freed-memory.ts): the compiler threads' memory is kept.
keepFreedMemory();
let traceEvents = 0;
function countEvent(_event: TraceEvent): void {
  traceEvents += 1;
}
let recordsMade = 0;
let snapshotWritten = false;
function snapshotHeap(): void {
  if (request.heapSnapshot === null || snapshotWritten) return;
  writeHeapSnapshot(request.heapSnapshot.path);
  snapshotWritten = true;
}
function countRecord(_record: FetchStatistic): void {
  recordsMade += 1;
  if (recordsMade === request.heapSnapshot?.atRecord) snapshotHeap();
}
// A request written by hand (docs/benchmarks.md) may leave `jsonl` out.
const lines = typeof request.jsonl === "string" ? RecordLines.open(request.jsonl) : null;
function writeRecord(record: FetchStatistic): void {
  lines?.write(record);
  countRecord(record);
}
const options: CrawlOptions & { maxTasks: number } = {
  maxTasks: request.maxTasks,
  ...(request.maxPerHost === null ? {} : { maxPerHost: request.maxPerHost }),
  ...(request.trace ? { trace: countEvent } : {}),
  ...(request.heapSnapshot === null ? {} : { onRecord: countRecord }),
  // As `crawl --jsonl` does; a write that fails stops the crawl (the process then exits with it, below).
  ...(lines === null ? {} : { onRecord: writeRecord, keepRecords: false, signal: lines.failed }),
};

let peakHeapBytes = 0;
let atPeak: MemorySample = { rssBytes: 0, heapTotalBytes: 0, heapUsedBytes: 0, externalBytes: 0 };
function sampleHeap(): void {
  const usage = process.memoryUsage();
  peakHeapBytes = Math.max(peakHeapBytes, usage.heapUsed);
  if (usage.rss > atPeak.rssBytes) {
    atPeak = { rssBytes: usage.rss, heapTotalBytes: usage.heapTotal, heapUsedBytes: usage.heapUsed, externalBytes: usage.external };
  }
}
const sampler = setInterval(sampleHeap, 100);

const startRssBytes = process.memoryUsage().rss;
const start = performance.now();
const cpuBefore = process.cpuUsage();
const result = await crawl(request.url, options);
const wallMs = performance.now() - start;
const cpu = process.cpuUsage(cpuBefore);
const processCpu = process.cpuUsage();
const peakRssBytes = process.resourceUsage().maxRSS * 1024; // maxRSS is in KiB
sampleHeap();
clearInterval(sampler);
snapshotHeap(); // the crawl made fewer records than asked: the snapshot shows what it returned
lines?.close();
if (lines !== null && lines.failure !== null) throw new Error(`writing ${lines.destination} failed`, { cause: lines.failure });

const cpuMs = (cpu.user + cpu.system) / 1000;
const processCpuMs = (processCpu.user + processCpu.system) / 1000;
const report: CrawlReport = { records: result.records, todo: result.todo, wallMs, cpuMs, processCpuMs, peakRssBytes, startRssBytes, peakHeapBytes, atPeak, traceEvents };
process.stdout.write(`${JSON.stringify(report)}\n`);
