/**
 * Runs one crawl in a child process and checks it against the crawl the
 * site expects: its records, or (S5) the JSON Lines file it wrote them to.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { createReadStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { FetchStatistic } from "../src/crawl/records.js";
import { childScript } from "./build.js";
import type { CrawlReport, CrawlRequest, MemorySample } from "./children/crawl-child.js";
import type { InFlightReport } from "./children/host-group-child.js";
import type { BenchSubject } from "./children/load-stage.js";
import type { Scenario } from "./scenarios.js";

/** What a crawl is checked against: a `SiteProcess` or a `HostGroupProcess`. */
export interface CrawlTarget {
  /** The root URL to crawl. */
  readonly url: string;
  /** How many records a correct crawl makes. */
  readonly expectedCount: number;
  /** Every record a correct crawl makes; null where the site printed only how many (S5, the yardstick's site): the crawl is then checked by counts. */
  readonly expectedRecords: readonly FetchStatistic[] | null;
  /** The least wall time of a crawl, in ms (0 when the site has no delay). */
  readonly bound: number;
}

/** One crawl's figures, or why it does not count. */
export interface RunResult {
  /** Records made, and records the site expected. */
  pages: number;
  expectedPages: number;
  /** Null when the crawl made exactly the expected records; else what was wrong. A failed run is not a figure. */
  failure: string | null;
  wallMs: number;
  /** CPU time of the crawler process during the crawl (user + system), in ms. */
  cpuMs: number;
  /** CPU time of the crawler process from its start to the crawl's end (user + system), in ms: start-up and imports included. */
  processCpuMs: number;
  pagesPerSecond: number;
  peakRssBytes: number;
  /** RSS just before the crawl, the crawler loaded; 0 for a failed run. */
  startRssBytes: number;
  /** The most V8 heap in use, sampled every 100 ms. */
  peakHeapBytes: number;
  /** Memory by kind at the 100 ms sample of highest RSS; null for a failed run. */
  atPeak: MemorySample | null;
  /** Wall time over the site's lower bound (null when the bound is 0: no delay). */
  boundRatio: number | null;
  traceEvents: number;
  /** Requests in flight as the servers saw them (P1's host groups); null where the site does not count them. */
  inFlight: InFlightReport | null;
  /**
   * Per-page scenarios (issue 39): the whole-process CPU of the same
   * crawler's crawl of a one-page site in the same round, in ms (its start-up
   * and a page); absent elsewhere.
   */
  onePageProcessCpuMs?: number;
}

/**
 * A run's CPU per page with start-up taken out: (whole-process CPU − that of
 * a one-page crawl in the same round) ÷ (pages − 1), in ms; null without a
 * one-page crawl, or for a failed run.
 */
export function cpuPerPageMs(run: RunResult): number | null {
  if (run.onePageProcessCpuMs === undefined || run.failure !== null || run.pages < 2) return null;
  return (run.processCpuMs - run.onePageProcessCpuMs) / (run.pages - 1);
}

/** How one crawl runs: with a counting `trace` callback, with a heap snapshot (see {@link CrawlRequest}). */
export interface CrawlSettings {
  trace: boolean;
  heapSnapshot: CrawlRequest["heapSnapshot"];
}

/**
 * Crawls `site` with `stage` in a fresh process and compares the records
 * with the expected ones: the same URLs with the same status, redirect
 * target, error, size and link count (`numNewUrls` depends on the order in
 * which concurrent fetches finish, so it is not compared).
 *
 * A scenario that keeps no records (S5) has the child write them to a JSON
 * Lines file in a fresh folder of the system's temporary directory; once the
 * child has exited, the file is read line by line and checked (see
 * {@link checkRecordLines}), then deleted. So the crawler process holds no
 * record for the check, and its peak RSS is its seen set and its queue.
 */
export async function runCrawl(
  stage: BenchSubject,
  scenario: Scenario,
  site: CrawlTarget,
  settings: CrawlSettings,
): Promise<RunResult> {
  const folder = scenario.keepRecords ? null : mkdtempSync(join(tmpdir(), "bench-jsonl-"));
  try {
    return await crawlInChild(stage, scenario, site, settings, folder === null ? null : join(folder, "records.jsonl"));
  } finally {
    if (folder !== null) rmSync(folder, { recursive: true, force: true });
  }
}

async function crawlInChild(
  stage: BenchSubject,
  scenario: Scenario,
  site: CrawlTarget,
  settings: CrawlSettings,
  jsonl: string | null,
): Promise<RunResult> {
  const request: CrawlRequest = {
    stage,
    url: site.url,
    maxTasks: scenario.maxTasks,
    maxPerHost: scenario.maxPerHost,
    trace: settings.trace,
    heapSnapshot: settings.heapSnapshot,
    jsonl,
  };
  const expectedPages = site.expectedCount;
  let stdout: string;
  try {
    stdout = await runBareNode([childScript("crawl-child"), JSON.stringify(request)], crawlTimeoutMs(scenario, site));
  } catch (error) {
    return failedRun(expectedPages, `crawl process failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const report = JSON.parse(stdout) as CrawlReport; // the one line crawl-child.ts prints
  const checked =
    jsonl === null
      ? {
          pages: report.records.length,
          failure:
            site.expectedRecords === null
              ? checkRecordCount(report.records, expectedPages, report.todo)
              : compareRecords(report.records, site.expectedRecords, report.todo),
        }
      : await checkRecordLines(jsonl, expectedPages, report.todo);
  const pages = checked.pages;
  return {
    pages,
    expectedPages,
    failure: checked.failure,
    wallMs: report.wallMs,
    cpuMs: report.cpuMs,
    processCpuMs: report.processCpuMs,
    pagesPerSecond: (pages * 1000) / report.wallMs,
    peakRssBytes: report.peakRssBytes,
    startRssBytes: report.startRssBytes,
    peakHeapBytes: report.peakHeapBytes,
    atPeak: report.atPeak,
    boundRatio: site.bound > 0 ? report.wallMs / site.bound : null,
    traceEvents: report.traceEvents,
    inFlight: null,
  };
}

/**
 * How long a crawl of `site` in `scenario`'s shape may take, in ms. A run far
 * beyond its bound has hung: give up on it instead of waiting forever. With
 * no delay the bound is 0, so a big site (S4, 300,000 pages, 40 to 50 s per
 * crawl on 2 busy cores) gets 2 ms per page.
 */
export function crawlTimeoutMs(scenario: Pick<Scenario, "pages">, site: Pick<CrawlTarget, "bound">): number {
  return Math.max(120_000, 20 * site.bound, 2 * scenario.pages);
}

/**
 * Runs `node ...args` to its end, bare, and resolves with its standard
 * output: no NODE_OPTIONS from the caller's shell (--max-old-space-size,
 * --expose-gc, …), which would change when V8 collects, and so the peak RSS.
 * Rejects with the error's first line and the last three lines of standard
 * error when the process fails, or when it runs past `timeoutMs`.
 */
export function runBareNode(args: readonly string[], timeoutMs: number): Promise<string> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise<string>(function runChild(resolve, reject) {
    execFile(process.execPath, args, { timeout: timeoutMs, env, maxBuffer: 256 * 1024 * 1024 }, function childExited(error, out, err) {
      if (error === null) resolve(out);
      else reject(new Error(`${error.message.split("\n")[0] ?? ""} ${err.trim().split("\n").slice(-3).join(" ")}`));
    });
  });
}

/**
 * Checks a JSON Lines file of records (S5) against the number of records
 * the site expects, streaming it: as many lines as expected, each with a
 * URL no other line has, none with an error, and nothing left in the queue
 * (`todo`). A count, where {@link compareRecords} compares each record: the
 * site of a million pages prints only how many it expects. `pages` is the
 * number of lines.
 */
export async function checkRecordLines(
  path: string,
  expected: number,
  todo: number,
): Promise<{ pages: number; failure: string | null }> {
  const urls = new Set<string>();
  let pages = 0;
  let errors = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    const record = JSON.parse(line) as FetchStatistic; // one line of RecordLines, written by crawl-child.ts
    pages += 1;
    urls.add(record.url);
    if (record.error !== null) errors += 1;
  }
  const problems: string[] = [];
  if (pages !== expected) problems.push(`${pages} records, expected ${expected}`);
  if (urls.size !== pages) problems.push(`${pages - urls.size} repeated URLs`);
  if (errors > 0) problems.push(`${errors} errors`);
  if (todo !== 0) problems.push(`todo ${todo}`);
  return { pages, failure: problems.length === 0 ? null : problems.join(", ") };
}

/**
 * Null when `records` are `expected` records of distinct URLs, none an error,
 * with nothing left in the queue; else what is wrong. The check of a crawl of
 * a site that lists only how many URLs a crawl fetches (the yardstick's,
 * bench/yardstick.ts).
 */
export function checkRecordCount(records: readonly FetchStatistic[], expected: number, todo: number): string | null {
  const urls = new Set<string>();
  let errors = 0;
  for (const record of records) {
    urls.add(record.url);
    if (record.error !== null) errors += 1;
  }
  const problems: string[] = [];
  if (records.length !== expected) problems.push(`${records.length} records, expected ${expected}`);
  if (urls.size !== records.length) problems.push(`${records.length - urls.size} repeated URLs`);
  if (errors > 0) problems.push(`${errors} errors`);
  if (todo !== 0) problems.push(`todo ${todo}`);
  return problems.length === 0 ? null : problems.join(", ");
}

/** Null when `records` are the expected ones in some order; else a short description of the difference. */
export function compareRecords(
  records: readonly FetchStatistic[],
  expected: readonly FetchStatistic[],
  todo: number,
): string | null {
  const wanted = new Map<string, string>();
  for (const record of expected) wanted.set(record.url, comparable(record));
  const problems: string[] = [];
  let missing = wanted.size;
  let differing = 0;
  let unexpected = 0;
  let errors = 0;
  for (const record of records) {
    if (record.error !== null) errors += 1;
    const want = wanted.get(record.url);
    if (want === undefined) {
      unexpected += 1;
      continue;
    }
    missing -= 1;
    if (want !== comparable(record)) differing += 1;
  }
  if (records.length !== expected.length) problems.push(`${records.length} records, expected ${expected.length}`);
  if (missing > 0) problems.push(`${missing} missing`);
  if (unexpected > 0) problems.push(`${unexpected} unexpected`);
  if (differing > 0) problems.push(`${differing} differing`);
  if (errors > 0) problems.push(`${errors} errors`);
  if (todo !== 0) problems.push(`todo ${todo}`);
  return problems.length === 0 ? null : problems.join(", ");
}

function comparable(record: FetchStatistic): string {
  return JSON.stringify([record.status, record.nextUrl, record.error, record.size, record.contentType, record.numUrls]);
}

/** A run that gave no figures: the crawl (or the process) failed, as `failure` says. */
export function failedRun(expectedPages: number, failure: string): RunResult {
  return {
    pages: 0,
    expectedPages,
    failure,
    wallMs: 0,
    cpuMs: 0,
    processCpuMs: 0,
    pagesPerSecond: 0,
    peakRssBytes: 0,
    startRssBytes: 0,
    peakHeapBytes: 0,
    atPeak: null,
    boundRatio: null,
    traceEvents: 0,
    inFlight: null,
  };
}
