/**
 * The shape of `bench/results/latest.json`: every run's figures, their
 * spread, and the memory per waiting unit.
 *
 * @module
 */
import type { SpeedRun } from "./memory-process.js";
import type { MemoryReport } from "./children/memory-child.js";
import { cpuPerPageMs, type RunResult } from "./crawl-process.js";
import type { Machine } from "./machine.js";
import type { PeersReport } from "./peers.js";
import type { RedisScenarioResult } from "./redis-scenario.js";
import type { Scenario } from "./scenarios.js";
import { spread, type Spread } from "./stats.js";
import type { StartupResult } from "./startup.js";
import type { Runner } from "./yardstick.js";

/** One stage on one scenario: each run, and the spread of the runs that count. */
export interface StageOnScenario {
  /** A stage, `reference` (the project's plain node:http crawler), or `yardstick` (issue 39's, bench/yardstick.ts). */
  stage: Runner;
  /** Whether the crawls had a `trace` callback (the `--trace-overhead` comparison). */
  traced: boolean;
  runs: RunResult[];
  /** Runs that missed or got wrong pages: they are not in the spreads. */
  failures: number;
  wallMs: Spread | null;
  cpuMs: Spread | null;
  pagesPerSecond: Spread | null;
  peakRssBytes: Spread | null;
  /**
   * Peak RSS over the reference crawler's in the same round, one ratio per
   * round where both runs count (S4); null where the scenario has no
   * reference row, and for the reference itself.
   */
  rssOverReference: Spread | null;
  /** The crawl's CPU per page over the reference's in the same round (S4: issue 29's target); null as for `rssOverReference`. */
  cpuPerPageOverReference: Spread | null;
  /** CPU of the whole crawler process, start-up and imports included, up to the crawl's end (S1: issue 29's figure). */
  processCpuMs: Spread | null;
  /** `processCpuMs` over the reference's in the same round; null as for `rssOverReference`. */
  processCpuOverReference: Spread | null;
  boundRatio: Spread | null;
  /** Whole-process CPU over the yardstick's in the same round (issue 39: S1, Y1); null where the yardstick did not crawl, and for it. */
  processCpuOverYardstick: Spread | null;
  /** CPU per page with start-up taken out (see `cpuPerPageMs`), in ms (per-page scenarios only, else null). */
  cpuPerPageMs: Spread | null;
  /** `cpuPerPageMs` over the yardstick's in the same round; null as for `processCpuOverYardstick`, or outside per-page scenarios. */
  cpuPerPageOverYardstick: Spread | null;
  /** `cpuPerPageMs` over the reference's in the same round; null where the reference did not crawl, and for it. */
  slopeOverReference: Spread | null;
  /** Time-weighted mean of the requests in flight, as the servers saw them (P1 only, else null). */
  averageInFlight: Spread | null;
  /** The most requests in flight at once on one host, the busiest host of each run (P1 only, else null). */
  peakPerHost: Spread | null;
}

/** One scenario: its site, its bound, and every stage's results. */
export interface ScenarioResult {
  scenario: Scenario;
  expectedPages: number;
  maxDepth: number;
  /** The site's lower bound on wall time, in ms. */
  boundMs: number;
  stages: StageOnScenario[];
}

/** Everything one `npm run bench` measured. */
export interface BenchResults {
  machine: Machine;
  startedAt: string;
  quick: boolean;
  runsPerStage: number;
  /** `--heap-snapshot`: the record at which each timed crawl wrote a heap snapshot; null: none written. */
  heapSnapshotAt: number | null;
  scenarios: ScenarioResult[];
  memory: MemoryReport[];
  /** R1, one crawl by several processes through one Redis; null when `--scenarios` leaves it out. */
  redis: RedisScenarioResult | null;
  /** `crawl --help` against `node -e 0` (issue 29); null when not measured (`--scenarios` without S1). */
  startup: StartupResult | null;
  /** Other crawlers on S1's site (bench/peers.ts); null when not measured (`--scenarios` without S1, or `--no-peers`). */
  peers: PeersReport | null;
  /**
   * S4 at two speeds (issue 39, bench/memory-process.ts): the yardstick and each stage through the
   * command with `--jsonl`, on a quiet machine and with two busy processes, with their GC counts;
   * null when not measured (`--scenarios` without S4).
   */
  speeds: SpeedRun[] | null;
}

/**
 * Summarises the runs of one stage on one scenario; failed runs are counted,
 * not averaged. `referenceRuns` are the reference crawler's runs of the same
 * rounds, in order (null: no reference row, or this is it).
 */
export function summarise(
  stage: Runner,
  traced: boolean,
  runs: RunResult[],
  referenceRuns: readonly RunResult[] | null,
  yardstickRuns: readonly RunResult[] | null = null,
): StageOnScenario {
  const good = runs.filter(function counts(run) {
    return run.failure === null;
  });
  const ratios: number[] = [];
  const averages: number[] = [];
  const peaks: number[] = [];
  const overReference: number[] = [];
  const cpuOverReference: number[] = [];
  const processCpuOverReference: number[] = [];
  for (const [round, run] of runs.entries()) {
    const reference = referenceRuns?.[round];
    if (run.failure === null && reference !== undefined && reference.failure === null) {
      overReference.push(run.peakRssBytes / reference.peakRssBytes);
      cpuOverReference.push(run.cpuMs / run.pages / (reference.cpuMs / reference.pages));
      processCpuOverReference.push(run.processCpuMs / reference.processCpuMs);
    }
  }
  const overYardstick = sameRoundRatios(runs, yardstickRuns, processCpuMsOf);
  const slopeOverYardstick = sameRoundRatios(runs, yardstickRuns, cpuPerPageMs);
  const slopeOverReference = sameRoundRatios(runs, referenceRuns, cpuPerPageMs);
  for (const run of good) {
    if (run.boundRatio !== null) ratios.push(run.boundRatio);
    if (run.inFlight !== null) {
      averages.push(run.inFlight.averageInFlight);
      peaks.push(Math.max(0, ...run.inFlight.peakPerHost));
    }
  }
  return {
    stage,
    traced,
    runs,
    failures: runs.length - good.length,
    wallMs: spread(good.map(wallMsOf)),
    cpuMs: spread(good.map(cpuMsOf)),
    pagesPerSecond: spread(good.map(pagesPerSecondOf)),
    peakRssBytes: spread(good.map(peakRssOf)),
    rssOverReference: spread(overReference),
    cpuPerPageOverReference: spread(cpuOverReference),
    processCpuMs: spread(good.map(processCpuMsOf)),
    processCpuOverReference: spread(processCpuOverReference),
    boundRatio: spread(ratios),
    processCpuOverYardstick: spread(overYardstick),
    cpuPerPageMs: spread(good.map(cpuPerPageMs).filter(isNumber)),
    cpuPerPageOverYardstick: spread(slopeOverYardstick),
    slopeOverReference: spread(slopeOverReference),
    averageInFlight: spread(averages),
    peakPerHost: spread(peaks),
  };
}

function wallMsOf(run: RunResult): number {
  return run.wallMs;
}

function cpuMsOf(run: RunResult): number {
  return run.cpuMs;
}

function processCpuMsOf(run: RunResult): number {
  return run.processCpuMs;
}

function pagesPerSecondOf(run: RunResult): number {
  return run.pagesPerSecond;
}

function peakRssOf(run: RunResult): number {
  return run.peakRssBytes;
}

/**
 * `figure(run) ÷ figure(other)` for each round where both runs count and
 * both figures exist: `runs[i]` is paired with `others[i]`, the other
 * crawler's run of the same round (the crawlers take turns within a round),
 * never with a run of another round. Empty when `others` is null.
 */
export function sameRoundRatios(
  runs: readonly RunResult[],
  others: readonly RunResult[] | null,
  figure: (run: RunResult) => number | null,
): number[] {
  const ratios: number[] = [];
  if (others === null) return ratios;
  for (const [round, run] of runs.entries()) {
    const other = others[round];
    if (other === undefined || run.failure !== null || other.failure !== null) continue;
    const mine = figure(run);
    const theirs = figure(other);
    if (mine !== null && theirs !== null && theirs > 0) ratios.push(mine / theirs);
  }
  return ratios;
}

function isNumber(value: number | null): value is number {
  return value !== null;
}
