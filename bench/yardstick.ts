/**
 * The yardstick of issue 39 as one of the bench's runners: the plainest fast
 * crawler (bench/yardstick/ideal-crawler.mjs, keep-alive `node:http`, a
 * regular expression for links, no records kept) and the site it was
 * measured on (bench/yardstick/site-server.mjs), both run unchanged.
 *
 * The crawler runs in a fresh `node` with bench/children/usage-probe.ts
 * loaded first (`--import`), which adds its whole process's CPU and peak RSS
 * to the crawler's own line of counts. A run counts when it fetched as many
 * URLs as the site expects, with no error and no page other than a 200 or a
 * redirect: the yardstick keeps no records, so it is checked by counts, not
 * record by record as the stages are.
 *
 * {@link YardstickSite} serves the yardstick's site for a scenario, so the
 * stages and the reference can crawl it too in the same rounds; they are then
 * checked by counts as well (bench/crawl-process.ts, `expectedRecords` null).
 *
 * @module
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { childScript, PROJECT_ROOT } from "./build.js";
import { crawlTimeoutMs, failedRun, runBareNode, type CrawlTarget, type RunResult } from "./crawl-process.js";
import type { BenchSubject } from "./children/load-stage.js";
import type { Scenario } from "./scenarios.js";

/** The runner's name in the tables and in `latest.json`. */
export const YARDSTICK = "yardstick";

/** A crawler of the bench's tables: a stage, the project's reference, or the yardstick. */
export type Runner = BenchSubject | typeof YARDSTICK;

/** The folder of the two copied files (`YARDSTICK_DIR` names another: ../shared/bench, to compare with the originals). */
export const YARDSTICK_DIR = process.env.YARDSTICK_DIR ?? join(PROJECT_ROOT, "bench", "yardstick");

/**
 * The line of bench/children/usage-probe.ts, loaded with `--import` ahead
 * of a script the bench runs: the whole process's CPU and peak RSS.
 */
export interface ProbeUsage {
  /** The whole process's CPU, user + system. */
  cpuMs: number;
  /** CPU spent before the script's module ran: Node's own start-up and the probe. */
  cpuBeforeMainMs: number;
  peakRssBytes: number;
  rssBeforeMainBytes: number;
}

/** The crawler's line of counts, and the probe's line of usage. */
export interface YardstickReport extends ProbeUsage {
  fetched: number;
  ok: number;
  redirects: number;
  other: number;
  errors: number;
  /** The crawl's wall time, from the first request to the last response (the crawler's own clock). */
  seconds: number;
}

/** Expected counts of the yardstick's site (`site-server.mjs --list`). */
export interface YardstickSiteCounts {
  pages200: number;
  redirects: number;
  notfound: number;
  /** Distinct URLs a crawler that follows redirects one hop at a time fetches. */
  fetches: number;
  links: number;
  /** Breadth-first levels below "/". */
  depth: number;
}

/**
 * Reads the probe's line of usage from a process's stdout, among other lines.
 *
 * @throws Error if there is none, or it lacks a number.
 */
export function parseProbeUsage(stdout: string): ProbeUsage {
  let usage: Record<string, unknown> | null = null;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith('{"usage":')) continue;
    usage = (JSON.parse(line) as { usage: Record<string, unknown> }).usage; // the probe's line
  }
  if (usage === null) throw new Error("the usage probe printed no line: was it loaded with --import?");
  for (const name of ["cpuMs", "cpuBeforeMainMs", "peakRssBytes", "rssBeforeMainBytes"] as const) {
    if (typeof usage[name] !== "number") throw new Error(`the usage probe's line lacks a number for ${name}`);
  }
  return usage as unknown as ProbeUsage;
}

/**
 * Reads the yardstick's stdout: its line of counts and the probe's line of
 * usage, in any order, among other lines.
 *
 * @throws Error naming what is missing.
 */
export function parseYardstickOutput(stdout: string): YardstickReport {
  let counts: Record<string, unknown> | null = null;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const parsed = JSON.parse(line) as Record<string, unknown>; // the line of counts, or the probe's
    if ("fetched" in parsed) counts = parsed;
  }
  if (counts === null) throw new Error(`the yardstick printed no line of counts: ${JSON.stringify(stdout.slice(0, 200))}`);
  const usage = parseProbeUsage(stdout);
  for (const name of ["fetched", "ok", "redirects", "other", "errors", "seconds"] as const) {
    if (typeof counts[name] !== "number") throw new Error(`the yardstick's output lacks a number for ${name}`);
  }
  return { ...(counts as unknown as YardstickReport), ...usage };
}

/**
 * Null when the yardstick's counts are a whole crawl of a site expecting
 * `expected` fetches; else what is wrong.
 */
export function checkYardstickCounts(report: YardstickReport, expected: number): string | null {
  const problems: string[] = [];
  if (report.fetched !== expected) problems.push(`${report.fetched} fetched, expected ${expected}`);
  if (report.errors > 0) problems.push(`${report.errors} errors`);
  if (report.other > 0) problems.push(`${report.other} responses neither a page nor a redirect`);
  return problems.length === 0 ? null : problems.join(", ");
}

/**
 * The command that runs the yardstick on `root` with `maxTasks` workers:
 * bare `node`, the probe first, `--client http` (the yardstick's figures
 * were measured with it).
 */
export function yardstickCommand(root: string, maxTasks: number): { file: string; args: string[] } {
  const probe = childScript("usage-probe");
  return {
    file: process.execPath,
    args: ["--import", probe, join(YARDSTICK_DIR, "ideal-crawler.mjs"), root, "--tasks", String(maxTasks), "--client", "http"],
  };
}

/** Crawls `site` once with the yardstick in a fresh process, checked by counts. */
export async function runYardstick(scenario: Scenario, site: CrawlTarget): Promise<RunResult> {
  const { args } = yardstickCommand(site.url, scenario.maxTasks);
  const expectedPages = site.expectedCount;
  let report: YardstickReport;
  try {
    report = parseYardstickOutput(await runBareNode(args, crawlTimeoutMs(scenario, site)));
  } catch (error) {
    return failedRun(expectedPages, `yardstick failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const wallMs = report.seconds * 1000;
  return {
    pages: report.fetched,
    expectedPages,
    failure: checkYardstickCounts(report, expectedPages),
    wallMs,
    cpuMs: report.cpuMs - report.cpuBeforeMainMs,
    processCpuMs: report.cpuMs,
    pagesPerSecond: wallMs > 0 ? (report.fetched * 1000) / wallMs : 0,
    peakRssBytes: report.peakRssBytes,
    startRssBytes: report.rssBeforeMainBytes,
    peakHeapBytes: 0,
    atPeak: null,
    boundRatio: site.bound > 0 ? wallMs / site.bound : null,
    traceEvents: 0,
    inFlight: null,
  };
}

/** The flags of `site-server.mjs` for `scenario`'s shape (pages, links, delay, seed). */
function siteFlags(scenario: Pick<Scenario, "pages" | "links" | "delayMs" | "seed">): string[] {
  return ["--pages", String(scenario.pages), "--links", String(scenario.links), "--delay", String(scenario.delayMs), "--seed", String(scenario.seed)];
}

/**
 * The yardstick's site (bench/yardstick/site-server.mjs) in its own process,
 * in `scenario`'s shape: a {@link CrawlTarget} with no records to compare,
 * only how many URLs a whole crawl fetches.
 */
export class YardstickSite implements CrawlTarget {
  /** Null: this site lists counts, not records; a crawl of it is checked by counts. */
  readonly expectedRecords = null;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    /** URLs a whole crawl fetches (the site's `fetches`). */
    readonly expectedCount: number,
    /** Breadth-first depth of the deepest page. */
    readonly maxDepth: number,
    /** `max(fetches × delay / maxTasks, (depth + 1) × delay)` in ms, as the project's site computes it. */
    readonly bound: number,
  ) {}

  /**
   * What a whole crawl of `scenario`'s yardstick site fetches
   * (`site-server.mjs --list`).
   *
   * @throws Error if the script fails or prints no counts.
   */
  static counts(scenario: Pick<Scenario, "pages" | "links" | "delayMs" | "seed">): YardstickSiteCounts {
    const result = spawnSync(process.execPath, [join(YARDSTICK_DIR, "site-server.mjs"), "--list", ...siteFlags(scenario)], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`site-server.mjs --list failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as YardstickSiteCounts; // the one line --list prints
  }

  /**
   * Starts the site and resolves once it listens.
   *
   * @throws Error if it exits first.
   */
  static async start(scenario: Scenario): Promise<YardstickSite> {
    const counts = YardstickSite.counts(scenario);
    const child = spawn(process.execPath, [join(YARDSTICK_DIR, "site-server.mjs"), "--port", "0", ...siteFlags(scenario)], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    // site-server.mjs runs unchanged and so cannot exit when its stdin closes, as the project's site
    // does: the bench stops it when the bench's process exits, whatever made it exit.
    process.once("exit", function stopSite() {
      child.kill("SIGTERM");
    });
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>(function firstLine(resolve, reject) {
      lines.once("line", resolve);
      child.once("exit", function exited(code) {
        reject(new Error(`site-server.mjs exited with ${String(code)} before listening`));
      });
    });
    lines.close();
    const port = /^listening (\d+)$/.exec(first.trim())?.[1];
    if (port === undefined) {
      child.kill();
      throw new Error(`site-server.mjs printed ${JSON.stringify(first)}, not "listening PORT"`);
    }
    const delay = scenario.delayMs;
    const bound = Math.max((counts.fetches * delay) / scenario.maxTasks, (counts.depth + 1) * delay);
    return new YardstickSite(child, `http://127.0.0.1:${port}/`, counts.fetches, counts.depth, bound);
  }

  /** Stops the site (SIGTERM, which it handles) and waits for it to exit. */
  stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    const child = this.child;
    const exited = new Promise<void>(function waitForExit(resolve) {
      child.once("exit", function stopped() {
        resolve();
      });
    });
    child.kill("SIGTERM");
    return exited;
  }
}
