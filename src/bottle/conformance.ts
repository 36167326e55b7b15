/**
 * The conformance check behind test/conformance/: one seed's scenario run
 * in every stage given, in the bottle, the records compared with each
 * other and with the site's expected crawl.
 *
 * @module
 */
import type { FetchStatistic } from "../crawl/records.js";
import { SCENARIO_ORIGIN, scenarioFor } from "./scenario.js";
import { replayLine, simulate, type Simulation, type Stage } from "./simulate.js";

/** One way a stage's crawl of a seed was wrong. */
export interface Disagreement {
  readonly seed: number;
  readonly stage: string;
  /** What was wrong, in a line. */
  readonly what: string;
  /** The command that replays the seed on that stage. */
  readonly replay: string;
}

/** What one seed gave: the disagreements (none, when every stage conformed) and the CPU-free facts of each run. */
export interface SeedCheck {
  readonly seed: number;
  readonly features: readonly string[];
  readonly disagreements: readonly Disagreement[];
  readonly simulations: readonly Simulation[];
}

/**
 * Runs `seed`'s scenario ({@link scenarioFor}) in each of `stages` and
 * checks that every crawl:
 * - left no socket and no timer behind;
 * - made the records the scenario expects, when it expects some (in the
 *   same order when the scenario is `ordered`; otherwise the same records
 *   as a set, leaving out what the order of completion decides:
 *   `numNewUrls`, `referrer`, `depth`);
 * - made the same records as the first stage, compared the same way;
 * - started no first attempt at a URL of the site's host sooner after the
 *   host's previous request than the scenario's `delayMs` or `Crawl-delay`
 *   (read off the trace's `fetch-start` lines, in virtual ms, so exactly;
 *   retries included, see `closestStarts`).
 * Left out everywhere: `fetchedAt` (the stages reach a record at different
 * virtual moments) and `detail` (a parser's own words for a `BadResponse`).
 *
 * @param stages - any `crawl()` functions with a name: the three stages, a fourth.
 */
export async function checkSeed(seed: number, stages: readonly Stage[]): Promise<SeedCheck> {
  const scenario = scenarioFor(seed);
  const { ordered } = scenario;
  const disagreements: Disagreement[] = [];
  const simulations: Simulation[] = [];
  let reference: { stage: string; records: string } | null = null;
  const expected = scenario.expected === null ? null : comparable(scenario.expected, ordered);
  for (const stage of stages) {
    const disagree = (what: string): void => {
      disagreements.push({ seed, stage: stage.name, what, replay: replayLine(seed, stage.name) });
    };
    let simulation: Simulation;
    try {
      simulation = await simulate({ seed, stage, trace: scenario.hostGapMs > 0 });
    } catch (error) {
      disagree(`the crawl failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      continue;
    }
    simulations.push(simulation);
    const { sockets, timers } = simulation.leftOpen;
    if (sockets !== 0 || timers !== 0) disagree(`left ${sockets} sockets and ${timers} timers open`);
    const gap = closestStarts(simulation.trace, `${SCENARIO_ORIGIN}/`);
    if (gap !== null && gap.ms < scenario.hostGapMs) disagree(`started two requests to ${SCENARIO_ORIGIN} ${gap.ms} virtual ms apart (at ${gap.at}), less than its ${scenario.hostGapMs} ms delay`);
    if (scenario.expected === null && stage.hostile === false) continue; // Its client reads malformed bytes its own way.
    const records = comparable(simulation.result.records, ordered);
    if (expected !== null && records !== expected) disagree(`records differ from the expected crawl: ${firstDifference(expected, records)}`);
    if (reference === null) reference = { stage: stage.name, records };
    else if (records !== reference.records) disagree(`records differ from stage ${reference.stage}'s: ${firstDifference(reference.records, records)}`);
  }
  return { seed, features: scenario.features, disagreements, simulations };
}

/**
 * The two closest attempts at URLs under `prefix`, retries included: how
 * far apart they started, and when the second did; null for fewer than two.
 *
 * @remarks Retries count since the core sends a page's retry back through
 * its host's line (issue 35, part 6). Before that, a retry after a network
 * error started `retryDelayMs` after the failure whatever the host's
 * `delayMs` or `Crawl-delay`, in all three stages alike: this check found it
 * on 81 of seeds 0-529 (e.g. 470, 483, 485, 510, 525).
 */
function closestStarts(trace: readonly string[], prefix: string): { ms: number; at: number } | null {
  let closest: { ms: number; at: number } | null = null;
  let previous: number | null = null;
  for (const line of trace) {
    if (!line.includes(` fetch-start ${prefix}`)) continue;
    const t = Number.parseFloat(line);
    if (previous !== null && (closest === null || t - previous < closest.ms)) closest = { ms: t - previous, at: t };
    previous = t;
  }
  return closest;
}

/** The records as one comparable string: one JSON line each, sorted unless `ordered`. */
function comparable(records: readonly FetchStatistic[], ordered: boolean): string {
  const lines = records.map(function line(record) {
    const { fetchedAt: _at, detail: _detail, ...rest } = record;
    if (ordered) return JSON.stringify(rest);
    const { numNewUrls: _new, referrer: _referrer, depth: _depth, ...unordered } = rest;
    return JSON.stringify(unordered);
  });
  if (!ordered) lines.sort();
  return lines.join("\n");
}

/** The first line where `actual` differs from `expected`, both shown. */
function firstDifference(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `record ${i + 1} of ${a.length}: expected ${a[i] ?? "(none)"}, got ${b[i] ?? "(none)"}`;
  }
  return "(none)";
}
