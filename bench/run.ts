/**
 * `npm run bench`: crawls five synthetic sites and a group of hosts with
 * each stage (S5, a million pages with no records kept, with stage 3 alone),
 * several times, each crawl in its own process, and measures the memory of
 * a waiting unit of each stage; then (R1) crawls two of the sites with stage
 * 3 in several processes sharing one Redis; prints a markdown table and
 * writes `latest.json` and `latest.md`.
 *
 * `tsx bench/run.ts [--quick] [--runs N] [--stages callbacks,generators,asyncawait[,reference]]
 *  [--scenarios S1,S2,S3,P1,S4,S5,Y1,PP1,PP2,R1] [--units N] [--no-memory] [--trace-overhead]
 *  [--heap-snapshot N] [--no-peers] [--out DIR]`
 *
 * With S4, its pages are crawled again at two speeds (bench/memory-process.ts,
 * `measureAtSpeeds`): the yardstick and each stage through the command with
 * `--jsonl`, quiet and then with two busy processes, each crawl's peak RSS
 * and GC counts ("Memory at two speeds", issue 39).
 *
 * Issue 39's yardstick (bench/yardstick.ts: bench/yardstick/ideal-crawler.mjs,
 * run unchanged) crawls S1, S3 and the scenarios on its own site (Y1: S1's
 * shape; PP1 and PP2: 100,000 and 300,000 pages, CPU per page) in every
 * round, after the stages and the reference, and the table gives each
 * crawler's ratio to it round by round ("Against the yardstick"). On Y1
 * the stages crawl through the built `crawl` command, as users run it
 * (bench/command-process.ts), not through the crawl child.
 *
 * R1 is stage 3's (it runs when `--stages` names asyncawait), needs a
 * redis-server (Debian's; without one it says it is skipped), and runs
 * `--runs` rounds; `--no-memory` leaves out the waiting units only.
 *
 * `--stages` may add `reference`: the plain node:http crawler of
 * `bench/reference-crawler.ts`, a yardstick for what the machine and the
 * site allow (an extra row, with no target and no memory figure). S1, S3
 * and S4, whose targets are ratios to the reference's figures (issues 18
 * and 29), always crawl with it. With S1, `crawl --help` and `node -e 0` are
 * timed too (bench/startup.ts), and the peers set up by
 * `bash bench/peers/setup.sh` (node-crawler, crawlee, the chapter's aiohttp
 * crawler, Scrapy: bench/peers.ts) crawl S1's site in turns with the
 * yardstick, the reference and stage 3; a peer not set up gets a row saying so. `--no-peers` skips them.
 * A scenario that names its stages (S5) is crawled by those of `--stages`
 * only, and skipped when there are none.
 *
 * `--heap-snapshot N` makes every timed crawl write a V8 heap snapshot when
 * it makes its N-th record (or at its end, if it makes fewer), into
 * `<out>/heap/`; writing one costs memory and time, so such a run's figures
 * are for reading the snapshot beside, not for the table.
 *
 * Exits with 1 if any crawl missed or got a page wrong: such a run is a
 * failure, not a figure. Nothing in `npm test` depends on the timings; the
 * test runs `--quick` to check that the harness works.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { KnownStage as StageName } from "../src/observe/events.js";
import { buildChildren, PROJECT_ROOT } from "./build.js";
import { STAGE_NAMES, SUBJECT_NAMES, type BenchSubject } from "./children/load-stage.js";
import type { MemoryReport } from "./children/memory-child.js";
import { runCommandCrawl } from "./command-process.js";
import { runCrawl, type CrawlTarget, type RunResult } from "./crawl-process.js";
import { HostGroupProcess } from "./host-group-process.js";
import { describeMachine } from "./machine.js";
import { measureAtSpeeds, measureWaitingUnits, type SpeedRun } from "./memory-process.js";
import { benchPeers, peersDir, type PeersReport } from "./peers.js";
import { benchRedisScenario, REDIS_SCENARIO_ID, redisScenarioFailed, type RedisScenarioResult } from "./redis-scenario.js";
import { summarise, type BenchResults, type ScenarioResult } from "./results.js";
import { DEFAULT_SCENARIO_IDS, measuresMemory, QUICK_SCENARIOS, SCENARIOS, type Scenario } from "./scenarios.js";
import { SiteProcess } from "./site-process.js";
import { measureStartup, startupLine, type StartupResult } from "./startup.js";
import { markdownReport } from "./table.js";
import { WITH_REFERENCE, WITH_YARDSTICK } from "./targets.js";
import { runYardstick, YARDSTICK, YardstickSite, type Runner } from "./yardstick.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    runs: { type: "string" },
    "heap-snapshot": { type: "string" },
    stages: { type: "string", default: STAGE_NAMES.join(",") },
    scenarios: { type: "string", default: DEFAULT_SCENARIO_IDS },
    units: { type: "string" },
    "no-memory": { type: "boolean", default: false },
    "trace-overhead": { type: "boolean", default: false },
    "no-peers": { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const quick = values.quick;
// Only a full run replaces the committed bench/results/latest.md; a quick or
// partial run (or one writing heap snapshots) writes beside it, into a
// git-ignored folder.
const full =
  !quick && values.stages === STAGE_NAMES.join(",") && values.scenarios === DEFAULT_SCENARIO_IDS && values["heap-snapshot"] === undefined;
const out = values.out ?? join(PROJECT_ROOT, "bench", "results", full ? "" : "partial");
const runs = Number(values.runs ?? (quick ? 1 : 3));
const snapshotAt = values["heap-snapshot"] === undefined ? null : Number(values["heap-snapshot"]);
const units = Number(values.units ?? (quick ? 10_000 : 100_000));
const stages = values.stages.split(",").filter(isSubjectName);
const wanted = new Set(values.scenarios.split(","));
const scenarios = (quick ? QUICK_SCENARIOS : SCENARIOS).filter(function chosen(scenario) {
  return wanted.has(scenario.id);
});

function isSubjectName(name: string): name is BenchSubject {
  return (SUBJECT_NAMES as readonly string[]).includes(name);
}

function isStageName(name: Runner): name is StageName {
  return name !== "reference" && name !== YARDSTICK;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

function describeRun(run: RunResult): string {
  if (run.failure !== null) return `FAILED (${run.failure})`;
  const ratio = run.boundRatio === null ? "" : `, ${run.boundRatio.toFixed(2)} × bound`;
  // The yardstick's heap is not sampled (it runs unchanged): 0.
  const heap = run.peakHeapBytes > 0 ? ` (heap ${(run.peakHeapBytes / 1e6).toFixed(0)} MB)` : "";
  const inFlight =
    run.inFlight === null
      ? ""
      : `, ${run.inFlight.averageInFlight.toFixed(1)} in flight on average (peak ${run.inFlight.peakInFlight}, per host ${Math.max(0, ...run.inFlight.peakPerHost)})`;
  return `${run.pages} pages in ${run.wallMs.toFixed(0)} ms (CPU ${run.cpuMs.toFixed(0)} ms), ${run.pagesPerSecond.toFixed(0)}/s, ${(run.peakRssBytes / 1e6).toFixed(0)} MB RSS${heap}${ratio}${inFlight}`;
}

/** A running site of any kind: the project's synthetic site, a group of hosts, or the yardstick's site. */
type AnySite = SiteProcess | HostGroupProcess | YardstickSite;

/**
 * The site a scenario crawls: one synthetic site, a group of hosts when it
 * has several, or the yardstick's site (`site: "yardstick"`, issue 39).
 */
function startSite(scenario: Scenario): Promise<AnySite> {
  if (scenario.site === "yardstick") return YardstickSite.start(scenario);
  return scenario.hosts > 1 ? HostGroupProcess.start(scenario) : SiteProcess.start(scenario);
}

/**
 * One crawl by `runner`: the yardstick in its own script, a stage of a
 * scenario crawled `through: "command"` (Y1) through the built command, the
 * others through bench/children/crawl-child.ts.
 */
function crawlOnce(runner: Runner, scenario: Scenario, site: CrawlTarget, settings: Parameters<typeof runCrawl>[3]): Promise<RunResult> {
  if (runner === YARDSTICK) return runYardstick(scenario, site);
  if (scenario.through === "command" && isStageName(runner)) return runCommandCrawl(runner, scenario, site);
  return runCrawl(runner, scenario, site, settings);
}

/** One timed crawl; on a host group, with the requests in flight the servers saw. */
async function timedCrawl(
  stage: Runner,
  scenario: Scenario,
  site: AnySite,
  trace: boolean,
  round: number,
): Promise<RunResult> {
  const heapSnapshot = snapshotAt === null ? null : { atRecord: snapshotAt, path: snapshotPath(scenario, stage, trace, round) };
  if (!(site instanceof HostGroupProcess)) return crawlOnce(stage, scenario, site, { trace, heapSnapshot });
  const { result, inFlight } = await site.countInFlight(function crawlCounted() {
    return crawlOnce(stage, scenario, site, { trace, heapSnapshot });
  });
  return { ...result, inFlight };
}

/** Where `--heap-snapshot` puts one crawl's snapshot: `<out>/heap/S4-asyncawait-1.heapsnapshot`. */
function snapshotPath(scenario: Scenario, stage: Runner, trace: boolean, round: number): string {
  const folder = join(out, "heap");
  mkdirSync(folder, { recursive: true });
  return join(folder, `${scenario.id}-${stage}${trace ? "-traced" : ""}-${round + 1}.heapsnapshot`);
}

/**
 * The crawlers of `scenario`: `--stages`, only those of them the scenario
 * allows (S5: stage 3), the reference where the target is measured against
 * it (S4) or the site is the yardstick's (issue 39: today's ratio to the
 * reference, on the same site), and the yardstick last where a ratio to it
 * is reported (S1, S3, Y1, PP1, PP2).
 */
function crawlersOf(scenario: Scenario, stages: readonly BenchSubject[]): Runner[] {
  const only = scenario.stages;
  const allowed: Runner[] = only === null ? [...stages] : stages.filter(function allowedHere(stage) {
    return isStageName(stage) && only.includes(stage);
  });
  if (allowed.length === 0) return allowed;
  const withReference = scenario.againstReference || WITH_REFERENCE.has(scenario.id) || scenario.site === "yardstick";
  if (withReference && !allowed.includes("reference")) allowed.push("reference");
  if (WITH_YARDSTICK.has(scenario.id)) allowed.push(YARDSTICK);
  return allowed;
}

/**
 * Crawls one scenario's site with every stage, `runs` times, the stages
 * taking turns. In a per-page scenario (issue 39), each crawl comes right
 * after the same crawler's crawl of a one-page site of the same kind, whose
 * whole-process CPU the run keeps (`onePageProcessCpuMs`).
 */
async function benchScenario(scenario: Scenario, crawlers: readonly Runner[]): Promise<ScenarioResult> {
  const site = await startSite(scenario);
  const onePage = scenario.perPage === true ? { ...scenario, pages: 1 } : null;
  const onePageSite = onePage === null ? null : await startSite(onePage);
  log(`${scenario.id}: ${site.expectedCount} pages, depth ${site.maxDepth}, bound ${site.bound.toFixed(0)} ms`);
  const traceToo = values["trace-overhead"] && scenario.id === "S1";
  const variants = crawlers.flatMap(function withTrace(stage) {
    return traceToo ? [{ stage, trace: false }, { stage, trace: true }] : [{ stage, trace: false }];
  });
  const results = variants.map(function noRunsYet(): RunResult[] {
    return [];
  });
  try {
    // A fresh site process is cold (its JIT has compiled nothing yet): the
    // first crawl against it ran about a third slower in S1 than the next
    // ones, whichever crawler made it. So an untimed crawl warms it up first:
    // one per crawler when crawls are short, one only on S3, where a crawl
    // takes 8 s and is mostly waiting, and none on S4 and S5, whose figure
    // is memory (and whose crawls take a minute or more each).
    // Nor on the per-page scenarios (issue 39): 100,000 pages and more make a
    // cold start a rounding error, and their figure is the crawler's CPU.
    const warmUps = measuresMemory(scenario) || onePage !== null ? [] : scenario.delayMs >= 1_000 ? crawlers.slice(0, 1) : crawlers;
    for (const stage of warmUps) {
      const run = await crawlOnce(stage, scenario, site, { trace: false, heapSnapshot: null });
      log(`  ${stage} warm-up (not counted): ${describeRun(run)}`);
    }
    for (let round = 0; round < runs; round++) {
      for (const [i, variant] of variants.entries()) {
        let base: RunResult | null = null;
        if (onePage !== null && onePageSite !== null) {
          base = await crawlOnce(variant.stage, onePage, onePageSite, { trace: false, heapSnapshot: null });
          log(`  ${variant.stage} one-page crawl #${round + 1}: ${describeRun(base)}`);
        }
        const timed = await timedCrawl(variant.stage, scenario, site, variant.trace, round);
        const run = base === null || base.failure !== null ? timed : { ...timed, onePageProcessCpuMs: base.processCpuMs };
        results[i]?.push(run);
        log(`  ${variant.stage}${variant.trace ? " (traced)" : ""} #${round + 1}: ${describeRun(run)}`);
      }
    }
  } finally {
    await site.stop();
    await onePageSite?.stop();
  }
  const referenceIndex = variants.findIndex(function isReference(variant) {
    return variant.stage === "reference" && !variant.trace;
  });
  const referenceRuns = referenceIndex === -1 ? null : (results[referenceIndex] ?? null);
  const yardstickIndex = variants.findIndex(function isYardstick(variant) {
    return variant.stage === YARDSTICK;
  });
  const yardstickRuns = yardstickIndex === -1 ? null : (results[yardstickIndex] ?? null);
  return {
    scenario,
    expectedPages: site.expectedCount,
    maxDepth: site.maxDepth,
    boundMs: site.bound,
    stages: variants.map(function summary(variant, i) {
      const mine = results[i] ?? [];
      return summarise(variant.stage, variant.trace, mine, variant.stage === "reference" ? null : referenceRuns, variant.stage === YARDSTICK ? null : yardstickRuns);
    }),
  };
}

log("bench: compiling the crawlers for the child processes…");
buildChildren();
const machine = describeMachine();
const startedAt = new Date().toISOString();
const scenarioResults: ScenarioResult[] = [];
for (const scenario of scenarios) {
  const crawlers = crawlersOf(scenario, stages);
  if (crawlers.length === 0) log(`${scenario.id}: skipped, crawled only by ${scenario.stages?.join(", ") ?? ""}, which --stages leaves out`);
  else scenarioResults.push(await benchScenario(scenario, crawlers));
}
let redis: RedisScenarioResult | null = null;
if (wanted.has(REDIS_SCENARIO_ID)) {
  if (stages.includes("asyncawait")) redis = await benchRedisScenario(quick, runs, log);
  else log(`${REDIS_SCENARIO_ID}: skipped, crawled only by asyncawait, which --stages leaves out`);
}
// crawl --help against node -e 0 (issue 29), with S1, the scenario of start-up's share.
let startup: StartupResult | null = null;
if (wanted.has("S1")) {
  startup = await measureStartup(quick ? 3 : 5 * runs);
  log(startupLine(startup));
}
// Other crawlers on S1's site (issue 29): those set up, a row saying how for the others.
let peers: PeersReport | null = null;
const s1 = scenarios.find(function isS1(scenario) {
  return scenario.id === "S1";
});
if (s1 !== undefined && !values["no-peers"]) {
  log(`peers: ${s1.id}, looked for in ${peersDir()}`);
  peers = await benchPeers(s1, runs, peersDir(), log);
}
// S4's shape at two speeds (issue 39): the yardstick and each stage through the command with --jsonl, quiet then loaded.
let speeds: SpeedRun[] | null = null;
const s4 = scenarios.find(function isS4(scenario) {
  return scenario.id === "S4";
});
const speedStages = stages.filter(isStageName);
if (s4 !== undefined && speedStages.length > 0) {
  log(`${s4.id} at two speeds: ${s4.pages} pages on the yardstick's site, records to a file, quiet then with two busy processes`);
  speeds = await measureAtSpeeds({ pages: s4.pages, stages: speedStages, rounds: runs, speeds: ["quiet", "loaded"], keepRecords: false, checkpoint: s4.pages }, function logRun(run) {
    log(`  ${run.speed} ${run.crawler} #${run.round}: ${(run.peakRssBytes / 1e6).toFixed(0)} MB RSS, ${run.markCompacts} Mark-Compacts, ${run.scavenges} scavenges, CPU ${run.cpuSeconds.toFixed(1)} s`);
  });
}
const memory: MemoryReport[] = [];
if (!values["no-memory"]) {
  for (const stage of stages.filter(isStageName)) {
    const report = await measureWaitingUnits(stage, units);
    log(`memory: ${stage}: ${report.bytesPerUnit.toFixed(0)} bytes per waiting unit`);
    memory.push(report);
  }
}

const results: BenchResults = {
  machine,
  startedAt,
  quick,
  runsPerStage: runs,
  heapSnapshotAt: snapshotAt,
  scenarios: scenarioResults,
  memory,
  redis,
  startup,
  peers,
  speeds,
};
const markdown = markdownReport(results);
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(join(out, "latest.md"), markdown);
process.stdout.write(markdown);
const failed =
  redisScenarioFailed(redis) ||
  scenarioResults.some(function anyFailure(result) {
    return result.stages.some(function failedRuns(entry) {
      return entry.failures > 0;
    });
  });
process.exitCode = failed ? 1 : 0;
