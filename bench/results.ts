/**
 * The shape of `bench/results/latest.json`: every run's figures, their
 * spread, and the memory per waiting unit.
 *
 * @module
 */
import type { BenchSubject } from "./children/load-stage.js";
import type { MemoryReport } from "./children/memory-child.js";
import type { RunResult } from "./crawl-process.js";
import type { Machine } from "./machine.js";
import type { PeersReport } from "./peers.js";
import type { RedisScenarioResult } from "./redis-scenario.js";
import type { Scenario } from "./scenarios.js";
import { spread, type Spread } from "./stats.js";
import type { StartupResult } from "./startup.js";

/** One stage on one scenario: each run, and the spread of the runs that count. */
export interface StageOnScenario {
  /** A stage, or `reference`: the plain node:http yardstick. */
  stage: BenchSubject;
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
}

/**
 * Summarises the runs of one stage on one scenario; failed runs are counted,
 * not averaged. `referenceRuns` are the reference crawler's runs of the same
 * rounds, in order (null: no reference row, or this is it).
 */
export function summarise(stage: BenchSubject, traced: boolean, runs: RunResult[], referenceRuns: readonly RunResult[] | null): StageOnScenario {
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
