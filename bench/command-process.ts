/**
 * The `crawl` command as users run it (package.json's `bin`, dist/cli.js
 * and dist/bin/: the esbuild bundle with V8 code caches), built from the
 * sources by scripts/build-bin.mjs into the bench's own folder, so that
 * dist/ is not rewritten under a test that runs it; and one crawl through
 * it, for a scenario whose stages the bench judges as users run them
 * (issue 39, Y1: `through: "command"`).
 *
 * Such a crawl runs `crawl ROOT --stage S -q --max-tasks N --jsonl FILE` in
 * a fresh bare `node`, bench/children/usage-probe.ts loaded first
 * (`--import`), which adds the whole process's CPU and peak RSS as a last
 * line of standard output, as for the yardstick (bench/yardstick.ts). The
 * records go to a file in a fresh folder of the system's temporary
 * directory, checked once the command has exited (bench/crawl-process.ts,
 * `checkRecordLines`), then deleted.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KnownStage as StageName } from "../src/observe/events.js";
import { BUILD_DIR, childScript, PROJECT_ROOT } from "./build.js";
import { checkRecordLines, crawlTimeoutMs, failedRun, runBareNode, type CrawlTarget, type RunResult } from "./crawl-process.js";
import type { Scenario } from "./scenarios.js";
import { parseProbeUsage, type ProbeUsage } from "./yardstick.js";

/** Where the bench builds the command's bundle (scripts/build-bin.mjs --outdir). */
export const BUNDLE_DIR = join(BUILD_DIR, "command");

/** The command as users run it (dist/cli.js), from the bench's build. */
export const CLI_SCRIPT = join(BUNDLE_DIR, "cli.js");

/** Whether this process has built the bundle already. */
let built = false;

/**
 * Builds the command's bundle into {@link BUNDLE_DIR}, the first time it is
 * called in this process; later calls do nothing.
 *
 * @throws Error with scripts/build-bin.mjs's output if the build fails.
 */
export function buildCommand(): void {
  if (built) return;
  const result = spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts", "build-bin.mjs"), "--outdir", BUNDLE_DIR], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`scripts/build-bin.mjs failed: ${result.stderr}`);
  built = true;
}

/**
 * Crawls `site` with `stage` through the command (built first if need be)
 * in a fresh process, its records written to a file and checked by count:
 * as many lines as the site expects, of distinct URLs, none an error.
 *
 * The command reports no clock of its own, so `wallMs` is measured here,
 * around the child process: Node's start-up and the command's loading are in
 * it. `cpuMs` is the process's CPU after the probe ran (the command's
 * loading and its crawl), `processCpuMs` all of it; no heap is sampled
 * (`peakHeapBytes` 0, `atPeak` null) and no trace is counted.
 */
export async function runCommandCrawl(stage: StageName, scenario: Scenario, site: CrawlTarget): Promise<RunResult> {
  buildCommand();
  const folder = mkdtempSync(join(tmpdir(), "bench-command-"));
  const jsonl = join(folder, "records.jsonl");
  const args = ["--import", childScript("usage-probe"), CLI_SCRIPT, site.url, "--stage", stage, "-q", "--max-tasks", String(scenario.maxTasks), "--jsonl", jsonl];
  const expectedPages = site.expectedCount;
  try {
    const started = performance.now();
    let usage: ProbeUsage;
    try {
      usage = parseProbeUsage(await runBareNode(args, crawlTimeoutMs(scenario, site)));
    } catch (error) {
      return failedRun(expectedPages, `crawl command failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const wallMs = performance.now() - started;
    const checked = await checkRecordLines(jsonl, expectedPages, 0);
    return {
      pages: checked.pages,
      expectedPages,
      failure: checked.failure,
      wallMs,
      cpuMs: usage.cpuMs - usage.cpuBeforeMainMs,
      processCpuMs: usage.cpuMs,
      pagesPerSecond: (checked.pages * 1000) / wallMs,
      peakRssBytes: usage.peakRssBytes,
      startRssBytes: usage.rssBeforeMainBytes,
      peakHeapBytes: 0,
      atPeak: null,
      boundRatio: site.bound > 0 ? wallMs / site.bound : null,
      traceEvents: 0,
      inFlight: null,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
