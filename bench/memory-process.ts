/**
 * Memory measurements that need a process of their own:
 *
 * - the waiting-unit measurement of one stage in a child process with
 *   `--expose-gc` (see `children/memory-child.ts`);
 * - S4's and S5's crawls at two speeds (issue 39): the `crawl` command
 *   (compiled `src/cli.ts`, `-q --jsonl FILE` or records kept) and the
 *   yardstick (bench/yardstick/ideal-crawler.mjs, `--client http`), each on
 *   a fresh yardstick site (`site-server.mjs`), interleaved in rounds, first
 *   on the machine as it is ("quiet"), then with two busy `yes` processes
 *   started here ("loaded"); for each crawl, peak RSS, the number of
 *   Mark-Compacts and scavenges (`children/gc-count.ts`, loaded with
 *   `--import`), CPU, and the RSS peak when the 300,000th record was written.
 *
 * `npx tsx bench/memory-process.ts [--pages N] [--rounds N] [--stages LIST]
 * [--kept] [--speeds quiet,loaded]` runs the second on its own and prints a
 * table (docs/benchmarks.md, "Issue 39: memory").
 *
 * @module
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KnownStage as StageName } from "../src/observe/events.js";
import { BUILD_DIR, buildChildren, childScript } from "./build.js";
import type { GcCountReport } from "./children/gc-count.js";
import type { MemoryReport, MemoryRequest } from "./children/memory-child.js";
import { YARDSTICK_DIR } from "./yardstick.js";

/** The heap cost of one waiting unit of `stage`, measured over `units` of them; rejects if the child fails. */
export function measureWaitingUnits(stage: StageName, units: number): Promise<MemoryReport> {
  const request: MemoryRequest = { stage, units };
  return new Promise<MemoryReport>(function runChild(resolve, reject) {
    execFile(
      process.execPath,
      ["--expose-gc", childScript("memory-child"), JSON.stringify(request)],
      { timeout: 180_000, maxBuffer: 1024 * 1024 },
      function childExited(error, stdout, stderr) {
        if (error !== null) {
          reject(new Error(`memory measurement of ${stage} failed: ${error.message}\n${stderr}`));
          return;
        }
        resolve(JSON.parse(stdout) as MemoryReport); // the one line memory-child.ts prints
      },
    );
  });
}

/** `quiet`: the machine as it is; `loaded`: with two busy `yes` processes started for the run. */
export type Speed = "quiet" | "loaded";

/** Who crawls: the yardstick, or a stage through the `crawl` command. */
export type MemoryCrawler = "yardstick" | StageName;

/** What to run. */
export interface SpeedRunOptions {
  /** Pages of the site (S4: 300,000; S5: 1,000,000). */
  pages: number;
  /** The stages crawling besides the yardstick. */
  stages: readonly StageName[];
  /** Rounds at each speed; in a round each crawler crawls once, one after another. */
  rounds: number;
  /** The speeds, in order. */
  speeds: readonly Speed[];
  /** True: the command keeps its records (no `--jsonl`); false: `--jsonl FILE`, none kept. */
  keepRecords: boolean;
  /** The record count at which to read the RSS peak so far (S5's flatness: 300,000). */
  checkpoint: number;
}

/** One crawl's figures. */
export interface SpeedRun {
  speed: Speed;
  round: number;
  crawler: MemoryCrawler;
  /** Peak RSS, bytes. */
  peakRssBytes: number;
  /** The RSS peak (VmHWM) when the checkpoint's record was written; null: not reached, or no records written (the yardstick, records kept). */
  peakAtCheckpointBytes: number | null;
  markCompacts: number;
  scavenges: number;
  cpuSeconds: number;
  wallSeconds: number;
  /** The machine's one-minute load average as the crawl started. */
  loadAverage: number;
}

/** Starts the yardstick's site with `pages` pages; resolves with its root URL and the process. */
async function startSite(pages: number): Promise<{ root: string; site: ChildProcess }> {
  const site = spawn(process.execPath, [join(YARDSTICK_DIR, "site-server.mjs"), "--port", "0", "--pages", String(pages), "--links", "10"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let output = "";
  for await (const chunk of site.stdout ?? []) {
    output += String(chunk);
    const port = /listening (\d+)/.exec(output)?.[1];
    if (port !== undefined) return { root: `http://127.0.0.1:${port}/`, site };
  }
  throw new Error(`the yardstick's site ended before listening: ${output}`);
}

/** Lines in `file` from `offset` on: reads what was appended since, and returns the new offset and count. */
function countNewLines(file: string, state: { offset: number; lines: number }): void {
  if (!existsSync(file)) return;
  const fd = openSync(file, "r");
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (;;) {
    const read = readSync(fd, buffer, 0, buffer.length, state.offset);
    if (read === 0) break;
    state.offset += read;
    for (let i = 0; i < read; i++) if (buffer[i] === 10) state.lines++;
  }
  closeSync(fd);
}

/** The process's RSS peak so far (`VmHWM`), bytes; null once it has gone. */
function rssPeakOf(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** One crawl by `crawler` of a fresh site, with the GC counter loaded first. */
async function crawlOnce(crawler: MemoryCrawler, options: SpeedRunOptions, folder: string): Promise<Omit<SpeedRun, "speed" | "round">> {
  const { root, site } = await startSite(options.pages);
  const gcFile = join(folder, "gc.jsonl");
  const jsonl = join(folder, "records.jsonl");
  rmSync(gcFile, { force: true });
  rmSync(jsonl, { force: true });
  const preload = ["--import", childScript("gc-count")];
  const argv =
    crawler === "yardstick"
      ? [...preload, join(YARDSTICK_DIR, "ideal-crawler.mjs"), root, "--tasks", "100", "--client", "http"]
      : [...preload, join(BUILD_DIR, "src", "cli.js"), "-q", "--stats-interval", "0", "--stage", crawler, ...(options.keepRecords ? [] : ["--jsonl", jsonl]), root];
  const loadAverage = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  const started = performance.now();
  const child = spawn(process.execPath, argv, { stdio: "ignore", env: { ...process.env, GC_COUNT_FILE: gcFile } });
  const lines = { offset: 0, lines: 0 };
  let peakAtCheckpointBytes: number | null = null;
  let exited = false;
  child.on("exit", function crawlerExited() {
    exited = true;
  });
  while (!exited) {
    await sleep(200);
    if (peakAtCheckpointBytes !== null || options.keepRecords || crawler === "yardstick") continue;
    countNewLines(jsonl, lines);
    if (lines.lines >= options.checkpoint && child.pid !== undefined) peakAtCheckpointBytes = rssPeakOf(child.pid);
  }
  const wallSeconds = (performance.now() - started) / 1000;
  site.kill();
  if (child.exitCode !== 0) throw new Error(`${crawler}'s crawl exited with ${child.exitCode ?? child.signalCode}`);
  const report = JSON.parse(readFileSync(gcFile, "utf8")) as GcCountReport; // the one line gc-count.ts writes
  return { crawler, ...report, peakAtCheckpointBytes, wallSeconds, loadAverage };
}

/** Two busy processes, niced, for the loaded speed; returns a function that ends them. */
function startLoad(): () => void {
  const loads = [0, 1].map(function startOne() {
    return spawn("nice", ["yes"], { stdio: "ignore" });
  });
  return function stopLoad() {
    for (const load of loads) load.kill();
  };
}

/**
 * S4/S5 at each speed of `options.speeds`: each round crawls with the
 * yardstick first, then each stage; `onRun` is told of each crawl as it ends.
 */
export async function measureAtSpeeds(options: SpeedRunOptions, onRun: (run: SpeedRun) => void = function ignore() {}): Promise<SpeedRun[]> {
  const folder = mkdtempSync(join(tmpdir(), "memory-speeds-"));
  const runs: SpeedRun[] = [];
  try {
    for (const speed of options.speeds) {
      const stopLoad = speed === "loaded" ? startLoad() : function noLoad() {};
      try {
        for (let round = 1; round <= options.rounds; round++) {
          for (const crawler of ["yardstick" as const, ...options.stages]) {
            const run: SpeedRun = { speed, round, ...(await crawlOnce(crawler, options, folder)) };
            runs.push(run);
            onRun(run);
          }
        }
      } finally {
        stopLoad();
      }
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return runs;
}

/** One table row a crawl, with the ratio to the yardstick of the same round and speed. */
export function formatSpeedRuns(runs: readonly SpeedRun[]): string {
  const mib = (bytes: number | null): string => (bytes === null ? "—" : (bytes / 2 ** 20).toFixed(0));
  const rows = ["| speed | round | crawler | load | peak RSS (MiB) | × yardstick | at the checkpoint (MiB) | Mark-Compacts | scavenges | CPU (s) | wall (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"];
  for (const run of runs) {
    const yardstick = runs.find(function sameRound(other) {
      return other.crawler === "yardstick" && other.speed === run.speed && other.round === run.round;
    });
    const ratio = yardstick === undefined || run.crawler === "yardstick" ? "—" : (run.peakRssBytes / yardstick.peakRssBytes).toFixed(2);
    rows.push(
      `| ${run.speed} | ${run.round} | ${run.crawler} | ${run.loadAverage.toFixed(1)} | ${mib(run.peakRssBytes)} | ${ratio} | ${mib(run.peakAtCheckpointBytes)} | ${run.markCompacts} | ${run.scavenges} | ${run.cpuSeconds.toFixed(1)} | ${run.wallSeconds.toFixed(1)} |`,
    );
  }
  return rows.join("\n");
}

/** `--name value` from argv, or `fallback`. */
function flag(argv: readonly string[], name: string, fallback: string): string {
  const at = argv.indexOf(name);
  return at >= 0 && argv[at + 1] !== undefined ? argv[at + 1] : fallback;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("memory-process.ts")) {
  const argv = process.argv.slice(2);
  buildChildren();
  const options: SpeedRunOptions = {
    pages: Number(flag(argv, "--pages", "300000")),
    rounds: Number(flag(argv, "--rounds", "1")),
    stages: flag(argv, "--stages", "asyncawait").split(",") as StageName[],
    speeds: flag(argv, "--speeds", "quiet,loaded").split(",") as Speed[],
    keepRecords: argv.includes("--kept"),
    checkpoint: Number(flag(argv, "--checkpoint", "300000")),
  };
  const runs = await measureAtSpeeds(options, function printRun(run) {
    process.stderr.write(`${JSON.stringify(run)}\n`);
  });
  process.stdout.write(`${formatSpeedRuns(runs)}\n`);
}
