/**
 * Peers: other crawlers crawling S1's site beside the stages, so the table
 * says where the project stands among crawlers people use: node-crawler
 * (npm `crawler`), crawlee's CheerioCrawler (npm `crawlee`), the
 * chapter's asyncio crawler on aiohttp (bench/peers/chapter_crawler.py) and
 * Scrapy (Debian's python3-scrapy, bench/peers/scrapy_spider.py; issue 39).
 * The yardstick (bench/yardstick.ts) crawls in the same rounds, and each
 * crawler's CPU is also given over the yardstick's of the same round.
 *
 * None is a dependency of the project: `bash bench/peers/setup.sh` installs
 * them in a scratch folder outside the repository ({@link peersDir}); a peer
 * that is not set up gets a row saying so. Each peer runs in its own process
 * through a small driver in bench/peers/, which prints one JSON line: the
 * pages it fetched and its whole process's CPU time and peak RSS; the
 * harness times its wall clock.
 *
 * @module
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "./build.js";
import { runCrawl } from "./crawl-process.js";
import type { Scenario } from "./scenarios.js";
import { SiteProcess } from "./site-process.js";
import { spread, type Spread } from "./stats.js";
import { runYardstick, YARDSTICK, type Runner } from "./yardstick.js";

/** The peers, in the table's order. */
export const PEER_NAMES = ["node-crawler", "crawlee", "chapter (aiohttp)", "Scrapy"] as const;

/** One of {@link PEER_NAMES}. */
export type PeerName = (typeof PEER_NAMES)[number];

/** One peer's crawl, as its driver reports it and the harness times it. */
export interface PeerRun {
  /** Responses the peer handled (pages, redirects and errors alike). */
  pages: number;
  /** The whole process's CPU time, user + system, start-up and imports included. */
  cpuMs: number;
  /** The process's peak RSS. */
  peakRssBytes: number;
  /** From spawning the process to its exit. */
  wallMs: number;
}

/** A peer's runs on one site, summarised; `runs` is empty when it is not set up. */
export interface PeerResult {
  peer: PeerName;
  /** False: not installed; the row says to run the setup script. */
  setUp: boolean;
  /** Why a run failed (a driver that exited with an error or printed no figures); empty when none did. */
  failures: string[];
  runs: PeerRun[];
  pages: Spread | null;
  wallMs: Spread | null;
  cpuMs: Spread | null;
  peakRssBytes: Spread | null;
  /** Whole-process CPU over the yardstick's in the same round (issue 39); null when the yardstick did not crawl. */
  cpuOverYardstick: Spread | null;
}

/**
 * Where the peers are installed: `$COROUTINE_CRAWLER_PEERS`, else
 * `<tmpdir>/coroutine-crawler-peers`, as bench/peers/setup.sh does.
 */
export function peersDir(env: NodeJS.ProcessEnv = process.env): string {
  return env["COROUTINE_CRAWLER_PEERS"] ?? join(env["TMPDIR"] ?? tmpdir(), "coroutine-crawler-peers");
}

/**
 * The Python that runs the chapter's crawler and Scrapy: `$COROUTINE_CRAWLER_PYTHON`,
 * else Debian's /usr/bin/python3 (where python3-aiohttp and python3-scrapy
 * install), else `python3` on the PATH.
 */
export function peerPython(env: NodeJS.ProcessEnv = process.env): string {
  return env["COROUTINE_CRAWLER_PYTHON"] ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
}

/** The command that runs `peer`'s driver on `root` with `maxTasks` at once. */
export function peerCommand(peer: PeerName, dir: string, root: string, maxTasks: number): { file: string; args: string[] } {
  const drivers = join(PROJECT_ROOT, "bench", "peers");
  switch (peer) {
    case "node-crawler":
      return { file: process.execPath, args: [join(drivers, "node-crawler.cjs"), dir, root, String(maxTasks)] };
    case "crawlee":
      return { file: process.execPath, args: [join(drivers, "crawlee.cjs"), dir, root, String(maxTasks)] };
    case "chapter (aiohttp)":
      return { file: peerPython(), args: [join(drivers, "chapter_crawler.py"), root, String(maxTasks)] };
    case "Scrapy":
      return { file: peerPython(), args: [join(drivers, "scrapy_spider.py"), root, String(maxTasks)] };
  }
}

/** Whether `peer` can run: its npm package is in `dir`, or Python 3 imports aiohttp (the chapter's) or scrapy. */
export function isSetUp(peer: PeerName, dir: string): boolean {
  switch (peer) {
    case "node-crawler":
      return existsSync(join(dir, "node_modules", "crawler", "package.json"));
    case "crawlee":
      return existsSync(join(dir, "node_modules", "crawlee", "package.json"));
    case "chapter (aiohttp)":
      return spawnSync(peerPython(), ["-c", "import aiohttp"], { stdio: "ignore" }).status === 0;
    case "Scrapy":
      return spawnSync(peerPython(), ["-c", "import scrapy"], { stdio: "ignore" }).status === 0;
  }
}

/**
 * A driver's report: the last line of its standard output, a JSON object
 * with numeric `pages`, `cpuMs` and `peakRssBytes`.
 *
 * @throws Error naming what is missing when the output holds no such line.
 */
export function parsePeerOutput(stdout: string): Omit<PeerRun, "wallMs"> {
  const last = stdout.trimEnd().split("\n").at(-1) ?? "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(last);
  } catch {
    throw new Error(`the driver printed no JSON line: ${JSON.stringify(last.slice(0, 200))}`);
  }
  const report = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const { pages, cpuMs, peakRssBytes } = report;
  if (typeof pages !== "number" || typeof cpuMs !== "number" || typeof peakRssBytes !== "number") {
    throw new Error(`the driver's line lacks a number among pages, cpuMs, peakRssBytes: ${last.slice(0, 200)}`);
  }
  return { pages, cpuMs, peakRssBytes };
}

/** Runs `peer`'s driver once on `root`, in its own process. */
export function runPeer(peer: PeerName, dir: string, root: string, maxTasks: number): Promise<PeerRun> {
  const { file, args } = peerCommand(peer, dir, root, maxTasks);
  const started = performance.now();
  return new Promise<PeerRun>(function run(resolve, reject) {
    execFile(file, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 }, function exited(error, stdout, stderr) {
      const wallMs = performance.now() - started;
      if (error !== null) {
        reject(new Error(`${peer} failed: ${error.message.split("\n")[0] ?? ""} ${stderr.trim().split("\n").at(-1) ?? ""}`));
        return;
      }
      try {
        resolve({ ...parsePeerOutput(stdout), wallMs });
      } catch (parseError) {
        reject(parseError instanceof Error ? parseError : new Error(String(parseError)));
      }
    });
  });
}

/**
 * Summarises one peer's runs (none when it is not set up). `rounds` and
 * `yardstickCpuMs` pair each run with the yardstick's whole-process CPU in
 * the same round (null where the yardstick's run failed).
 */
export function summarisePeer(
  peer: PeerName,
  setUp: boolean,
  runs: PeerRun[],
  failures: string[],
  rounds: readonly number[] = [],
  yardstickCpuMs: readonly (number | null)[] = [],
): PeerResult {
  function figures(pick: (run: PeerRun) => number): Spread | null {
    return spread(runs.map(pick));
  }
  return {
    peer,
    setUp,
    failures,
    runs,
    pages: figures((run) => run.pages),
    wallMs: figures((run) => run.wallMs),
    cpuMs: figures((run) => run.cpuMs),
    peakRssBytes: figures((run) => run.peakRssBytes),
    cpuOverYardstick: spread(overYardstick(runs.map((run) => run.cpuMs), rounds, yardstickCpuMs)),
  };
}

/**
 * Each CPU figure over the yardstick's of its round: `cpuMs[i]` was measured
 * in round `rounds[i]`, and is paired with `yardstickCpuMs[rounds[i]]` only
 * (a round whose yardstick run failed gives no ratio).
 */
export function overYardstick(cpuMs: readonly number[], rounds: readonly number[], yardstickCpuMs: readonly (number | null)[]): number[] {
  const ratios: number[] = [];
  for (const [i, cpu] of cpuMs.entries()) {
    const round = rounds[i];
    const yardstick = round === undefined ? null : (yardstickCpuMs[round] ?? null);
    if (yardstick !== null && yardstick > 0) ratios.push(cpu / yardstick);
  }
  return ratios;
}

/** A project crawler's runs in the peers' rounds: the reference, stage 3 and the yardstick, for comparison. */
export interface OwnResult {
  crawler: Runner;
  /** Runs that missed or got a page wrong (left out of the figures). */
  failures: number;
  wallMs: Spread | null;
  /** Whole-process CPU, from the process's start to the crawl's end. */
  cpuMs: Spread | null;
  peakRssBytes: Spread | null;
  /** Whole-process CPU over the yardstick's in the same round; null for the yardstick itself. */
  cpuOverYardstick: Spread | null;
}

/** The peers' section of the results: one scenario's site, crawled by the peers and two of the project's crawlers in turn. */
export interface PeersReport {
  scenarioId: string;
  expectedPages: number;
  /** Where the peers were looked for. */
  dir: string;
  own: OwnResult[];
  peers: PeerResult[];
}

/** The project's crawlers that crawl in the peers' rounds, the yardstick first (each round's ratios are over its run). */
const OWN: readonly Runner[] = [YARDSTICK, "reference", "asyncawait"];

/**
 * Crawls `scenario`'s site `runs` times with the reference, stage 3 and each
 * peer that is set up in `dir`, taking turns, each crawl in a fresh process.
 */
export async function benchPeers(scenario: Scenario, runs: number, dir: string, log: (message: string) => void): Promise<PeersReport> {
  const ready = PEER_NAMES.filter(function installed(peer) {
    return isSetUp(peer, dir);
  });
  for (const peer of PEER_NAMES) if (!ready.includes(peer)) log(`peers: ${peer} is not set up in ${dir} (run bench/peers/setup.sh)`);
  const site = await SiteProcess.start(scenario);
  const ownRuns = OWN.map(function none(): { wallMs: number; cpuMs: number; peakRssBytes: number; round: number }[] {
    return [];
  });
  // The yardstick's whole-process CPU in each round; null where its run failed.
  const yardstickCpuMs: (number | null)[] = [];
  const peerRounds = new Map<PeerName, number[]>(ready.map((peer) => [peer, []]));
  const ownFailures = OWN.map(function none() {
    return 0;
  });
  const peerRuns = new Map<PeerName, PeerRun[]>(ready.map((peer) => [peer, []]));
  const peerFailures = new Map<PeerName, string[]>(ready.map((peer) => [peer, []]));
  try {
    for (let round = 0; round < runs; round++) {
      for (const [i, crawler] of OWN.entries()) {
        const run = crawler === YARDSTICK ? await runYardstick(scenario, site) : await runCrawl(crawler, scenario, site, { trace: false, heapSnapshot: null });
        if (crawler === YARDSTICK) yardstickCpuMs.push(run.failure === null ? run.processCpuMs : null);
        if (run.failure === null) ownRuns[i]?.push({ wallMs: run.wallMs, cpuMs: run.processCpuMs, peakRssBytes: run.peakRssBytes, round });
        else ownFailures[i] = (ownFailures[i] ?? 0) + 1;
        log(`  peers round ${round + 1}: ${crawler}: ${run.failure ?? `${run.wallMs.toFixed(0)} ms, CPU ${run.processCpuMs.toFixed(0)} ms`}`);
      }
      for (const peer of ready) {
        try {
          const run = await runPeer(peer, dir, site.url, scenario.maxTasks);
          peerRuns.get(peer)?.push(run);
          peerRounds.get(peer)?.push(round);
          log(`  peers round ${round + 1}: ${peer}: ${run.pages} pages, ${run.wallMs.toFixed(0)} ms, CPU ${run.cpuMs.toFixed(0)} ms, ${(run.peakRssBytes / 1e6).toFixed(0)} MB`);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          peerFailures.get(peer)?.push(reason);
          log(`  peers round ${round + 1}: ${peer}: FAILED (${reason})`);
        }
      }
    }
  } finally {
    await site.stop();
  }
  return {
    scenarioId: scenario.id,
    expectedPages: site.expectedCount,
    dir,
    own: OWN.map(function summary(crawler, i): OwnResult {
      const list = ownRuns[i] ?? [];
      return {
        crawler,
        failures: ownFailures[i] ?? 0,
        wallMs: spread(list.map((run) => run.wallMs)),
        cpuMs: spread(list.map((run) => run.cpuMs)),
        peakRssBytes: spread(list.map((run) => run.peakRssBytes)),
        cpuOverYardstick:
          crawler === YARDSTICK
            ? null
            : spread(overYardstick(list.map((run) => run.cpuMs), list.map((run) => run.round), yardstickCpuMs)),
      };
    }),
    peers: PEER_NAMES.map(function summary(peer) {
      return summarisePeer(peer, ready.includes(peer), peerRuns.get(peer) ?? [], peerFailures.get(peer) ?? [], peerRounds.get(peer) ?? [], yardstickCpuMs);
    }),
  };
}

function show(value: Spread | null, scale: number, digits: number): string {
  if (value === null) return "—";
  return `${(value.median * scale).toFixed(digits)} [${(value.min * scale).toFixed(digits)}–${(value.max * scale).toFixed(digits)}]`;
}

/** The markdown section of the peers' table; a peer that is not set up gets a row saying how to set it up. */
export function peersSection(report: PeersReport): string[] {
  const lines = [
    "",
    `## Peers on ${report.scenarioId}`,
    "",
    `Other crawlers on the same site (${report.expectedPages.toLocaleString("en-US")} pages), taking turns with the yardstick ` +
      "(bench/yardstick/ideal-crawler.mjs), the reference and stage 3, each crawl in a fresh process: median [min–max]. " +
      "\"CPU ÷ yardstick\" is each run's CPU over the yardstick's in the same round. CPU and peak RSS are the whole process's " +
      "(start-up and imports included). A peer's wall time runs from spawning it to its exit; the project's crawlers' " +
      "from the crawl's start to its end. A peer's pages are the responses it handled, not checked record by record.",
    "",
    "| crawler | pages | wall (ms) | CPU (ms) | CPU ÷ yardstick | peak RSS (MB) |",
    "|---|---|---|---|---|---|",
  ];
  for (const own of report.own) {
    const pages = own.failures === 0 ? String(report.expectedPages) : `${own.failures} run(s) failed`;
    const name = own.crawler === YARDSTICK ? "yardstick (issue 39)" : `${own.crawler} (this project)`;
    const ratio = own.crawler === YARDSTICK ? "1" : show(own.cpuOverYardstick, 1, 2);
    lines.push(`| ${name} | ${pages} | ${show(own.wallMs, 1, 0)} | ${show(own.cpuMs, 1, 0)} | ${ratio} | ${show(own.peakRssBytes, 1e-6, 0)} |`);
  }
  for (const peer of report.peers) {
    if (!peer.setUp) {
      lines.push(`| ${peer.peer} | not set up (run bench/peers/setup.sh) | — | — | — | — |`);
      continue;
    }
    const failed = peer.failures.length === 0 ? "" : `, ${peer.failures.length} run(s) failed`;
    lines.push(
      `| ${peer.peer} | ${show(peer.pages, 1, 0)}${failed} | ${show(peer.wallMs, 1, 0)} | ${show(peer.cpuMs, 1, 0)} | ${show(peer.cpuOverYardstick, 1, 2)} | ${show(peer.peakRssBytes, 1e-6, 0)} |`,
    );
  }
  return lines;
}
