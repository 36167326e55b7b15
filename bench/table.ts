/**
 * The benchmark's results as markdown: the crawl table, the requests in
 * flight of a scenario with `maxPerHost` (P1), the memory per page against
 * the reference crawler's (S4) and with no records kept (S5), the memory table beside the chapter's
 * figures, one crawl by several processes through one Redis (R1, bench/redis-table.ts), and (when
 * measured) the cost of tracing.
 *
 * @module
 */
import type { KnownStage as StageName } from "../src/observe/events.js";
import type { MemoryReport } from "./children/memory-child.js";
import { cpuPerPageMs, type RunResult } from "./crawl-process.js";
import { formatSpeedRuns, type SpeedRun } from "./memory-process.js";
import { peersSection } from "./peers.js";
import { redisSection } from "./redis-table.js";
import { sameRoundRatios, type BenchResults, type ScenarioResult, type StageOnScenario } from "./results.js";
import { idealInFlight, measuresMemory, type Scenario } from "./scenarios.js";
import { spread, type Spread } from "./stats.js";
import { AGAINST_REFERENCE, AGAINST_YARDSTICK, CHAPTER_FIGURES, TARGETS } from "./targets.js";
import { YARDSTICK, type Runner } from "./yardstick.js";

const WAITING_UNITS: Readonly<Record<StageName, string>> = {
  callbacks: "a Fetcher with its callback registered",
  generators: "a Task paused on a Future (queue.get())",
  asyncawait: "an async worker paused on queue.get()",
};

/** Renders `results` as a markdown document. */
export function markdownReport(results: BenchResults): string {
  const { machine } = results;
  const lines = [
    `# Benchmark results${results.quick ? " (quick mode: small sites, not comparable to the targets)" : ""}`,
    "",
    `${machine.cores} cores (${machine.cpuModel}), ${(machine.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${machine.node}, ${machine.platform}, load average ${machine.loadAverage.toFixed(1)} at the start; ` +
      "the site runs in its own process on the same cores. " +
      `${results.runsPerStage} run(s) per stage and scenario, each crawl in a fresh process: median [min–max]. ` +
      `Measured ${results.startedAt}.`,
    "",
    "| scenario | stage | pages | wall (ms) | CPU (ms) | pages/s | peak RSS (MB) | wall / bound | target |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const scenario of results.scenarios) {
    for (const entry of scenario.stages) {
      if (!entry.traced) lines.push(crawlRow(scenario, entry, results.quick));
    }
  }
  if (results.heapSnapshotAt !== null) {
    lines.push(
      "",
      `Each timed crawl wrote a heap snapshot at its record ${results.heapSnapshotAt.toLocaleString("en-US")} ` +
        "(`--heap-snapshot`): its wall time and peak RSS include the writing, so they are not the crawler's figures.",
    );
  }
  lines.push(
    "",
    "Lower bound = max(pages × delay / maxTasks, (BFS depth + 1) × delay), computed by the site; " +
      "CPU is the crawler process's user + system time during the crawl: a check on wall times taken while " +
      "other work shared the machine. A run that misses or gets a page wrong is a failure and is left out of the figures.",
  );
  for (const scenario of results.scenarios) {
    if (scenario.scenario.maxPerHost !== null) lines.push(...politenessSection(scenario, results.quick));
    if (measuresMemory(scenario.scenario)) lines.push(...memoryPerPageSection(scenario, results.quick));
  }
  lines.push(...againstReferenceSection(results));
  lines.push(...againstYardstickSection(results));
  if (results.peers !== null) lines.push(...peersSection(results.peers));
  if (results.memory.length > 0) lines.push(...memorySection(results));
  if (results.redis !== null) lines.push(...redisSection(results.redis, results.quick));
  if (results.speeds !== null && results.speeds.length > 0) lines.push(...speedsSection(results.speeds));
  const traced = traceRows(results.scenarios);
  if (traced.length > 0) {
    lines.push("", "## Cost of tracing (S1 with a `trace` callback that counts events)", "");
    lines.push("| stage | pages/s untraced | pages/s traced | events per page | slowdown |", "|---|---|---|---|---|");
    lines.push(...traced);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * Issue 29's targets, each against a figure of the same run: a stage's
 * ratio to the reference crawler's, round by round, or `crawl --help`'s to
 * `node -e 0`'s; a row per target and stage, with pass or fail.
 */
function againstReferenceSection(results: BenchResults): string[] {
  const rows: string[] = [];
  const byId = new Map(results.scenarios.map((scenario) => [scenario.scenario.id, scenario]));
  const stagesOf = (id: string): StageOnScenario[] =>
    (byId.get(id)?.stages ?? []).filter((entry) => !entry.traced && entry.stage !== "reference" && entry.stage !== YARDSTICK);
  const judge = (met: boolean, target: string): string => (results.quick ? `— (quick) ${target}` : verdict(met, target));
  for (const entry of stagesOf("S1")) {
    const ratio = entry.processCpuOverReference;
    const target = AGAINST_REFERENCE.s1ProcessCpu;
    rows.push(row("S1: whole-process CPU ÷ reference", entry.stage, show(entry.processCpuMs, 0), show(ratio, 2),
      ratio === null ? "— (no reference run)" : judge(entry.failures === 0 && ratio.median <= target, `≤ ${target}`)));
  }
  for (const entry of stagesOf("S4")) {
    const ratio = entry.cpuPerPageOverReference;
    const perPage = scale(spreadOf(entry.runs.filter((run) => run.failure === null), (run) => run.cpuMs / run.pages), 1000);
    const target = AGAINST_REFERENCE.s4CpuPerPage;
    rows.push(row("S4: crawl CPU per page ÷ reference", entry.stage, `${show(perPage, 0)} µs/page`, show(ratio, 2),
      ratio === null ? "— (no reference run)" : judge(entry.failures === 0 && ratio.median <= target, `≤ ${target}`)));
  }
  for (const entry of stagesOf("S3")) {
    const ratio = entry.rssOverReference;
    const target = AGAINST_REFERENCE.s3PeakRss;
    const fetched = entry.failures === 0 ? "every page" : `${entry.failures} run(s) missed pages`;
    rows.push(row("S3: peak RSS ÷ reference, every page fetched", entry.stage, `${show(scale(entry.peakRssBytes, 1e-6), 0)} MB, ${fetched}`, show(ratio, 2),
      ratio === null ? "— (no reference run)" : judge(entry.failures === 0 && ratio.median <= target, `≤ ${target}, no missed page`)));
  }
  const startup = results.startup;
  if (startup !== null) {
    const target = AGAINST_REFERENCE.helpOverNode;
    rows.push(row("`crawl --help` CPU ÷ `node -e 0`", "the command", `${show(startup.helpCpuMs, 0)} ms (node -e 0: ${show(startup.nodeCpuMs, 0)} ms)`,
      show(startup.helpOverNode, 2), judge(startup.helpOverNode.median <= target, `≤ ${target}`)));
    for (const crawl of startup.onePage) {
      const limit = AGAINST_REFERENCE.onePageOverYardstick;
      rows.push(row("one-page crawl CPU ÷ the yardstick's (issue 39)", crawl.stage, `${show(crawl.cpuMs, 0)} ms (yardstick: ${show(startup.yardstickCpuMs, 0)} ms)`,
        show(crawl.overYardstick, 2), judge(crawl.overYardstick.median <= limit, `≤ ${limit}`)));
    }
  }
  if (rows.length === 0) return [];
  return [
    "",
    "## Against the reference (issue 29)",
    "",
    "Each ratio is taken round by round against the reference crawler's run of the same round (the crawlers take " +
      "turns), or against `node -e 0` run in turn with `crawl --help` (each in a fresh process, CPU from bash's " +
      "`times`): median [min–max] of the ratios. Whole-process CPU counts the crawler process from its start " +
      "(Node, imports) to the crawl's end.",
    "",
    "| target | stage | figure | ratio | pass |",
    "|---|---|---|---|---|",
    ...rows,
  ];
}

/**
 * Issue 39's targets against the yardstick (bench/yardstick.ts): each
 * crawler's ratio to the yardstick's run of the same round on the same site,
 * beside its ratio to the project's reference in the same rounds, and the
 * C10K wall time over the bound with the yardstick's own beside it.
 */
export function againstYardstickSection(results: BenchResults): string[] {
  const rows: string[] = [];
  const judge = (met: boolean, target: string): string => (results.quick ? `— (quick) ${target}` : verdict(met, target));
  for (const scenario of results.scenarios) {
    const s = scenario.scenario;
    const site = s.site === "yardstick" ? "yardstick's site" : "project's site";
    const crawlers = scenario.stages.filter((entry) => !entry.traced);
    const yardstick = crawlers.find((entry) => entry.stage === YARDSTICK);
    if (yardstick === undefined) continue;
    const name = `${s.id}: ${s.pages.toLocaleString("en-US")} pages, ${site}`;
    if (s.perPage === true) {
      const target = AGAINST_YARDSTICK.cpuPerPage;
      for (const entry of crawlers) {
        const figure = `${show(scale(entry.cpuPerPageMs, 1000), 1)} µs/page`;
        if (entry.stage === YARDSTICK) {
          rows.push(row(`${name}, CPU per page`, runnerName(entry.stage), figure, "1", show(yardstickOverReference(crawlers, "slope"), 2), "— (the yardstick)"));
          continue;
        }
        const ratio = entry.cpuPerPageOverYardstick;
        const pass =
          entry.stage === "reference"
            ? "— (no target)"
            : ratio === null
              ? entry.failures > 0
                ? `✗ ${entry.failures}/${entry.runs.length} run(s) failed`
                : "— (no yardstick run)"
              : judge(entry.failures === 0 && ratio.median <= target, `≤ ${target}`);
        rows.push(row(`${name}, CPU per page`, runnerName(entry.stage), figure, show(ratio, 2), entry.stage === "reference" ? "1" : show(entry.slopeOverReference, 2), pass));
      }
    } else if (s.delayMs === 0) {
      // Whole-process CPU: S1 (the project's site, shown) and Y1 (the yardstick's, judged).
      const target = AGAINST_YARDSTICK.s1ProcessCpu;
      const judged = s.site === "yardstick";
      for (const entry of crawlers) {
        const figure = `${show(entry.processCpuMs, 0)} ms`;
        if (entry.stage === YARDSTICK) {
          rows.push(row(`${name}, whole-process CPU`, runnerName(entry.stage), figure, "1", show(yardstickOverReference(crawlers, "process"), 2), "— (the yardstick)"));
          continue;
        }
        const ratio = entry.processCpuOverYardstick;
        const pass =
          entry.stage === "reference" || !judged
            ? `— (${entry.stage === "reference" ? "no target" : "judged on Y1"})`
            : ratio === null
              ? entry.failures > 0
                ? `✗ ${entry.failures}/${entry.runs.length} run(s) failed`
                : "— (no yardstick run)"
              : judge(entry.failures === 0 && ratio.median <= target, `≤ ${target}`);
        rows.push(row(`${name}, whole-process CPU`, runnerName(entry.stage), figure, show(ratio, 2), entry.stage === "reference" ? "1" : show(entry.processCpuOverReference, 2), pass));
      }
    } else {
      // C10K: wall over the bound, the yardstick's beside.
      const target = AGAINST_YARDSTICK.c10kWallOverBound;
      for (const entry of crawlers) {
        const figure = entry.boundRatio === null ? "—" : `${show(entry.boundRatio, 2)} × bound`;
        const pass = entry.stage === YARDSTICK || entry.stage === "reference" ? "— (no target)" : judge(entry.failures === 0 && (entry.boundRatio?.median ?? Infinity) <= target, `≤ ${target} × bound`);
        const overYardstick = entry.stage === YARDSTICK ? "1" : show(sameRoundSpread(entry, yardstick, "bound"), 2);
        rows.push(row(`${name}, wall ÷ bound`, runnerName(entry.stage), figure, overYardstick, "—", pass));
      }
    }
  }
  if (rows.length === 0) return [];
  return [
    "",
    "## Against the yardstick (issue 39)",
    "",
    "The yardstick is bench/yardstick/ideal-crawler.mjs (the plainest fast crawler: keep-alive `node:http`, a regular " +
      "expression for links, no records kept), run unchanged, `--client http`. Each ratio is over the yardstick's run of the " +
      "same round on the same site (the crawlers take turns in each round), median [min–max] of the rounds' ratios; " +
      "the ÷ reference column is over the project's reference crawler (bench/reference-crawler.ts, which keeps records) in the same " +
      "rounds. The site is named in each row: S1 and S3 crawl the project's site (src/site/cli.ts, every record compared); " +
      "Y1, PP1 and PP2 crawl the yardstick's (bench/yardstick/site-server.mjs, where the issue's figures were measured; " +
      "crawls checked by counts), and the targets on CPU are judged there. On Y1 the stages crawl through the built command, " +
      "the bundle users run (`crawl --stage S -q --jsonl FILE`, bench/command-process.ts), their records checked from the file, " +
      "not through bench/children/crawl-child.ts, whose import of the library's unbundled dist/ is no part of the command. " +
      "Whole-process CPU runs from the process's start " +
      "to the crawl's end; CPU per page is (whole-process CPU − that of the same crawler's one-page crawl in the same round) " +
      "÷ (pages − 1).",
    "",
    "| target | crawler | figure | ÷ yardstick | ÷ reference | pass |",
    "|---|---|---|---|---|---|",
    ...rows,
  ];
}

/** The yardstick's figure over the reference's, round by round: "process" (whole-process CPU) or "slope" (CPU per page). */
function yardstickOverReference(crawlers: readonly StageOnScenario[], figure: "process" | "slope"): Spread | null {
  const yardstick = crawlers.find((entry) => entry.stage === YARDSTICK);
  const reference = crawlers.find((entry) => entry.stage === "reference");
  if (yardstick === undefined || reference === undefined) return null;
  return sameRoundSpread(yardstick, reference, figure);
}

/** `entry`'s figure over `other`'s, round by round (see `sameRoundRatios`). */
function sameRoundSpread(entry: StageOnScenario, other: StageOnScenario, figure: "process" | "slope" | "bound"): Spread | null {
  const pick = figure === "process" ? (run: RunResult) => run.processCpuMs : figure === "slope" ? cpuPerPageMs : (run: RunResult) => run.boundRatio;
  return spread(sameRoundRatios(entry.runs, other.runs, pick));
}

/** How the tables name a crawler. */
function runnerName(runner: Runner): string {
  if (runner === YARDSTICK) return "yardstick: ideal-crawler.mjs (issue 39, not a stage)";
  if (runner === "reference") return "reference: plain node:http crawler (the project's, not a stage)";
  return runner;
}

function row(...cells: string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function memorySection(results: BenchResults): string[] {
  const lines = [
    "",
    "## Memory per waiting unit",
    "",
    `Heap bytes per suspended unit, over ${results.memory[0]?.units.toLocaleString("en-US") ?? 0} of them ` +
      `(\`--expose-gc\`, heap after a full collection). The chapter: ${kb(CHAPTER_FIGURES.bytesPerThread)} per thread, ` +
      `${kb(CHAPTER_FIGURES.bytesPerCoroutine)} per Python coroutine.`,
    "",
    "| stage | waiting unit | heap per unit | target | vs a thread | vs a Python coroutine |",
    "|---|---|---|---|---|---|",
  ];
  for (const report of results.memory) lines.push(memoryRow(report, results.quick));
  const callbacks = results.memory.find(function isCallbacks(report) {
    return report.stage === "callbacks";
  });
  if (callbacks?.socketBytes !== null && callbacks?.socketBytes !== undefined) {
    lines.push(
      "",
      `Stage 1's Fetchers are registered on unconnected \`net.Socket\`s (that many real connections would exceed ` +
        `the file-descriptor limit); each such socket adds ${kb(callbacks.socketBytes)} of heap, not counted above.`,
    );
  }
  return lines;
}

/** Requests in flight per stage on a scenario with `maxPerHost` (P1), against the most it allows. */
function politenessSection(scenario: ScenarioResult, quick: boolean): string[] {
  const { scenario: s } = scenario;
  const ideal = idealInFlight(s);
  const lines = [
    "",
    `## Requests in flight: ${s.id}, ${s.hosts} hosts, maxPerHost ${s.maxPerHost ?? "—"}, maxTasks ${s.maxTasks}`,
    "",
    `Counted by the servers: the requests in flight on all hosts together, sampled every millisecond and weighted ` +
      `by time, from the first request of a crawl to its last response; against min(maxTasks, hosts × maxPerHost) = ${ideal}. ` +
      "The peak per host is each run's busiest host, exact (the server's own counter). Lower bound = " +
      "max(pages × delay / that most, the busiest host's pages × delay / maxPerHost, (BFS depth + 1) × delay).",
    "",
    "| stage | in flight (mean) | share of the most | peak per host (max) | wall / bound | target |",
    "|---|---|---|---|---|---|",
  ];
  for (const entry of scenario.stages) {
    if (entry.traced) continue;
    lines.push(
      [
        entry.stage === "reference" ? "reference (no maxPerHost: a yardstick)" : entry.stage,
        show(entry.averageInFlight, 1),
        show(scale(entry.averageInFlight, 1 / ideal), 2),
        entry.peakPerHost === null ? "—" : fixed(entry.peakPerHost.max, 0),
        show(entry.boundRatio, 2),
        quick ? "—" : crawlTarget(s, entry),
      ].join(" | ").replace(/^/, "| ").concat(" |"),
    );
  }
  return lines;
}

/**
 * Peak RSS per stage on a big crawl, per page: against the reference
 * crawler's peak in the same round (S4), or with no records kept (S5).
 */
function memoryPerPageSection(scenario: ScenarioResult, quick: boolean): string[] {
  const { scenario: s, expectedPages } = scenario;
  const heading = s.keepRecords ? "Memory per page" : "Records not kept";
  // S5 has no reference row, so no column for the ratio to it.
  const reference = s.againstReference;
  const held = s.keepRecords
    ? "every record still held), and over the reference crawler's in the same round"
    : "with `keepRecords: false`, each record written as one JSON line to a file as `crawl --jsonl` does: what the " +
      "crawler holds is its seen set and its queue)";
  const lines = [
    "",
    `## ${heading}: ${s.id}, ${expectedPages.toLocaleString("en-US")} pages, ${s.delayMs} ms, maxTasks ${s.maxTasks}`,
    "",
    `Peak RSS of each crawler process (\`maxRSS\`, read when the crawl resolves, ${held}; ` +
      "per page = peak RSS / pages; growth per page = (peak − before) / pages, " +
      "where before is the RSS just before the crawl (Node and the crawler's modules loaded). Sampled every 100 ms: " +
      "the most V8 heap in use, and at the sample of highest RSS, V8's heap reserved / in use, and what lay outside it " +
      "(RSS − heap reserved: Buffers, sockets, code, the allocator's own pages), of which `external` (Buffers, " +
      "ArrayBuffers, WebAssembly memory). KB = 1,024 bytes, MB = 10⁶ bytes.",
    "",
    `| stage | peak RSS (MB) |${reference ? " × reference RSS |" : ""} target | per page | growth per page | RSS before (MB) | heap in use, most (MB) | at the RSS peak: heap reserved / in use (MB) | outside the heap (external) (MB) |`,
    `|---|---|${reference ? "---|" : ""}---|---|---|---|---|---|---|`,
  ];
  for (const entry of scenario.stages) {
    if (entry.traced) continue;
    const good = entry.runs.filter(function counts(run) {
      return run.failure === null;
    });
    const perPage = expectedPages > 0 ? 1 / expectedPages : 0;
    const heap = `${show(scale(spreadOf(good, heapReservedOf), 1e-6), 0)} / ${show(scale(spreadOf(good, heapInUseOf), 1e-6), 0)}`;
    const outside = `${show(scale(spreadOf(good, outsideHeapOf), 1e-6), 0)} (${show(scale(spreadOf(good, externalOf), 1e-6), 0)})`;
    lines.push(
      [
        entry.stage === "reference" ? "reference (plain node:http crawler)" : entry.stage,
        show(scale(entry.peakRssBytes, 1e-6), 0),
        ...(reference ? [entry.stage === "reference" ? "1 (the yardstick)" : show(entry.rssOverReference, 2)] : []),
        quick ? "—" : crawlTarget(s, entry),
        showKb(scale(entry.peakRssBytes, perPage)),
        showKb(scale(spreadOf(good, growthOf), perPage)),
        show(scale(spreadOf(good, startRssOf), 1e-6), 0),
        show(scale(spreadOf(good, peakHeapOf), 1e-6), 0),
        heap,
        outside,
      ].join(" | ").replace(/^/, "| ").concat(" |"),
    );
  }
  return lines;
}

function spreadOf(runs: readonly RunResult[], figure: (run: RunResult) => number): Spread | null {
  return spread(runs.map(figure));
}

function peakHeapOf(run: RunResult): number {
  return run.peakHeapBytes;
}

function startRssOf(run: RunResult): number {
  return run.startRssBytes;
}

function growthOf(run: RunResult): number {
  return run.peakRssBytes - run.startRssBytes;
}

function heapReservedOf(run: RunResult): number {
  return run.atPeak?.heapTotalBytes ?? 0;
}

function heapInUseOf(run: RunResult): number {
  return run.atPeak?.heapUsedBytes ?? 0;
}

function outsideHeapOf(run: RunResult): number {
  return run.atPeak === null ? 0 : run.atPeak.rssBytes - run.atPeak.heapTotalBytes;
}

function externalOf(run: RunResult): number {
  return run.atPeak?.externalBytes ?? 0;
}

/** The scenario as the table names it: `S1 throughput: 2,000 pages, 0 ms, maxTasks 100`. */
function scenarioLabel(s: Scenario): string {
  const hosts = s.hosts > 1 ? ` on ${s.hosts} hosts` : "";
  const perHost = s.maxPerHost === null ? "" : `, maxPerHost ${s.maxPerHost}`;
  const jsonl = s.keepRecords ? "" : ", records to a JSON Lines file";
  const site = s.site === "yardstick" ? ", the yardstick's site" : "";
  return `${s.id} ${s.title}: ${s.pages.toLocaleString("en-US")} pages${hosts}, ${s.delayMs} ms, maxTasks ${s.maxTasks.toLocaleString("en-US")}${perHost}${jsonl}${site}`;
}

function crawlRow(scenario: ScenarioResult, entry: StageOnScenario, quick: boolean): string {
  const { scenario: s } = scenario;
  const label = scenarioLabel(s);
  const pages = entry.failures === 0 ? `${scenario.expectedPages} ✓` : `✗ ${entry.failures}/${entry.runs.length} failed: ${firstFailure(entry)}`;
  return [
    label,
    runnerName(entry.stage),
    pages,
    show(entry.wallMs, 0),
    show(entry.cpuMs, 0),
    show(entry.pagesPerSecond, 0),
    show(scale(entry.peakRssBytes, 1e-6), 0),
    show(entry.boundRatio, 2),
    quick ? "—" : crawlTarget(s, entry),
  ].join(" | ").replace(/^/, "| ").concat(" |");
}

function crawlTarget(scenario: Scenario, entry: StageOnScenario): string {
  if (entry.failures > 0) return "✗ missed pages";
  if (entry.stage === "reference" || entry.stage === YARDSTICK) return "— (no target)";
  const targets = TARGETS[entry.stage];
  switch (scenario.id) {
    case "S1":
      return verdict((entry.pagesPerSecond?.median ?? 0) >= targets.s1PagesPerSecond, `≥ ${targets.s1PagesPerSecond.toLocaleString("en-US")}/s`);
    case "S2":
      return verdict((entry.boundRatio?.median ?? Infinity) <= targets.s2BoundRatio, `≤ ${targets.s2BoundRatio} × bound`);
    case "S3": {
      const fast = (entry.boundRatio?.median ?? Infinity) <= targets.s3BoundRatio;
      const small = (entry.peakRssBytes?.max ?? Infinity) <= targets.s3PeakRssBytes;
      return verdict(fast && small, `≤ ${targets.s3BoundRatio} × bound, ≤ ${targets.s3PeakRssBytes / 1e6} MB`);
    }
    case "S4": {
      const target = targets.s4RssOverReference;
      if (entry.rssOverReference === null) return `— (≤ ${target} × reference RSS: no reference run to compare)`;
      return verdict(entry.rssOverReference.median <= target, `≤ ${target} × reference RSS`);
    }
    case "S5": {
      const target = targets.s5PeakRssBytes;
      if (target === null) return "— (S5 is stage 3's)";
      return verdict((entry.peakRssBytes?.max ?? Infinity) <= target, `≤ ${target / 1e6} MB`);
    }
    case "P1": {
      const least = targets.p1InFlightShare * idealInFlight(scenario);
      const busy = (entry.averageInFlight?.median ?? 0) >= least;
      const polite = (entry.peakPerHost?.max ?? Infinity) <= (scenario.maxPerHost ?? Infinity);
      return verdict(busy && polite, `≥ ${fixed(least, 0)} in flight, ≤ ${scenario.maxPerHost ?? "∞"} per host`);
    }
    default:
      return "—";
  }
}

function memoryRow(report: MemoryReport, quick: boolean): string {
  const target = TARGETS[report.stage].bytesPerWaitingUnit;
  return [
    report.stage,
    WAITING_UNITS[report.stage],
    kb(report.bytesPerUnit),
    quick ? "—" : verdict(report.bytesPerUnit <= target, `≤ ${kb(target)}`),
    `${(CHAPTER_FIGURES.bytesPerThread / report.bytesPerUnit).toFixed(0)}× smaller`,
    `${(CHAPTER_FIGURES.bytesPerCoroutine / report.bytesPerUnit).toFixed(1)}× smaller`,
  ].join(" | ").replace(/^/, "| ").concat(" |");
}

function traceRows(scenarios: readonly ScenarioResult[]): string[] {
  const rows: string[] = [];
  for (const scenario of scenarios) {
    for (const traced of scenario.stages) {
      if (!traced.traced) continue;
      const plain = scenario.stages.find(function untracedTwin(entry) {
        return !entry.traced && entry.stage === traced.stage;
      });
      const before = plain?.pagesPerSecond?.median ?? 0;
      const after = traced.pagesPerSecond?.median ?? 0;
      const events = traced.runs[0]?.traceEvents ?? 0;
      const perPage = scenario.expectedPages > 0 ? (events / scenario.expectedPages).toFixed(1) : "—";
      const slowdown = before > 0 && after > 0 ? `${((before / after - 1) * 100).toFixed(0)} %` : "—";
      rows.push(`| ${traced.stage} | ${before.toFixed(0)} | ${after.toFixed(0)} | ${perPage} | ${slowdown} |`);
    }
  }
  return rows;
}

function firstFailure(entry: StageOnScenario): string {
  for (const run of entry.runs) if (run.failure !== null) return run.failure;
  return "";
}

function verdict(met: boolean, target: string): string {
  return `${met ? "✓" : "✗"} ${target}`;
}

function show(value: Spread | null, digits: number): string {
  if (value === null) return "—";
  const median = fixed(value.median, digits);
  return value.min === value.max ? median : `${median} [${fixed(value.min, digits)}–${fixed(value.max, digits)}]`;
}

function fixed(n: number, digits: number): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function scale(value: Spread | null, factor: number): Spread | null {
  return value === null ? null : { median: value.median * factor, min: value.min * factor, max: value.max * factor };
}

function showKb(value: Spread | null): string {
  if (value === null) return "—";
  return value.min === value.max ? kb(value.median) : `${kb(value.median)} [${kb(value.min)}–${kb(value.max)}]`;
}

function kb(bytes: number): string {
  return bytes >= 10_240 ? `${(bytes / 1024).toFixed(0)} KB` : `${(bytes / 1024).toFixed(2)} KB`;
}

/** S4 at two speeds (issue 39): each crawl's peak RSS over the same round and speed's yardstick, and its GC counts. */
function speedsSection(runs: readonly SpeedRun[]): string[] {
  return [
    "",
    "## Memory at two speeds: S4's pages on the yardstick's site, records written to a file (issue 39)",
    "",
    "The yardstick (bench/yardstick/ideal-crawler.mjs) and each stage through the command with `--jsonl FILE` (records written, none kept), " +
      "each on a fresh copy of the yardstick's site, first on the machine as it is (quiet), then with two busy `nice yes` processes (loaded): " +
      "peak RSS (VmHWM) and its ratio to the yardstick's of the same round and speed (target: at most " +
      `${AGAINST_YARDSTICK.peakRssOverYardstick} ×), the Mark-Compacts and scavenges each crawler's \`PerformanceObserver\` counted (bench/children/gc-count.ts), ` +
      "CPU and wall, and the load average as it started.",
    "",
    formatSpeedRuns(runs),
  ];
}

