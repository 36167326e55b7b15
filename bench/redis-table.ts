/**
 * R1's section of the benchmark's markdown: one crawl by several processes
 * through one Redis, on S1's and S2's sites, and the memory of a URL in each
 * frontier.
 *
 * @module
 */
import type { FrontierMemoryReport } from "./children/frontier-memory-child.js";
import { describeShape, type RedisScenarioResult, type ShapeOnSite, type SiteOfR1 } from "./redis-scenario.js";
import type { Spread } from "./stats.js";
import { R1_MANY_OVER_ONE_WALL } from "./targets.js";

/** The R1 section: what was measured and how, then one table per site and the memory table. */
export function redisSection(result: RedisScenarioResult, quick: boolean): string[] {
  const lines = ["", "## R1: one crawl, many processes, one Redis", ""];
  if (result.skipped !== null) return [...lines, `Skipped: ${result.skipped}.`];
  lines.push(
    `Stage 3 with a \`RedisFrontier\`, crawled by one or more processes sharing one redis-server (${result.redisVersion ?? "?"}, ` +
      "on the same cores, `--save '' --appendonly no`), the workers in all fixed, beside the in-memory frontier. " +
      "Each process is a fresh `node` that loads stage 3 and connects first; then all start at once, and wall time runs " +
      "from the first start to the last end (each process's `crawl()`, its final reading of the records from Redis included). " +
      "CPU is the crawler processes' together. Round trips: the commands the processes sent, which is every command " +
      "`INFO commandstats` counted but those the frontier's Lua scripts ran inside Redis; EVALSHA: those that ran one of " +
      "the scripts; commands in Redis: `total_commands_processed`, the scripts' own calls included. Per page: over the " +
      "crawl's records, checked against the site's like every crawl's.",
  );
  for (const site of [result.throughput, result.latency]) if (site !== null) lines.push(...siteTable(site, quick));
  if (result.memory.length > 0) lines.push(...memoryTable(result.memory));
  return lines;
}

function siteTable(site: SiteOfR1, quick: boolean): string[] {
  const { site: s } = site;
  const delayed = s.delayMs > 0;
  const lines = [
    "",
    `### ${site.siteOf}'s site: ${site.expectedPages.toLocaleString("en-US")} pages, ${s.delayMs} ms, ${s.maxTasks} workers in all` +
      (delayed ? `, bound ${fixed(site.boundMs, 0)} ms` : ""),
    "",
    `| frontier, processes × workers | pages | wall (ms) | pages/s | CPU of the crawlers (ms) | Redis CPU (ms) | round trips / page | EVALSHA / page | commands in Redis / page | records per process |${delayed ? " wall / bound | target |" : ""}`,
    `|---|---|---|---|---|---|---|---|---|---|${delayed ? "---|---|" : ""}`,
  ];
  const one = site.shapes.find(function isOneRedisProcess(entry) {
    return entry.shape.frontier === "redis" && entry.shape.processes === 1;
  });
  for (const entry of site.shapes) {
    const ratio = entry.wallMs === null || site.boundMs <= 0 ? null : scale(entry.wallMs, 1 / site.boundMs);
    lines.push(
      row([
        describeShape(entry.shape),
        entry.failures === 0 ? `${site.expectedPages} ✓` : `✗ ${entry.failures}/${entry.runs.length} failed: ${firstFailure(entry)}`,
        show(entry.wallMs, 0),
        show(entry.pagesPerSecond, 0),
        show(entry.cpuMs, 0),
        show(entry.redisCpuMs, 0),
        show(entry.roundTripsPerPage, 2),
        show(entry.evalshaPerPage, 2),
        show(entry.commandsPerPage, 1),
        split(entry),
        ...(delayed ? [show(ratio, 2), quick ? "—" : manyOverOne(entry, one)] : []),
      ]),
    );
  }
  return lines;
}

/** The target of the many-process Redis row on the delayed site: its wall time at most that of one process. */
function manyOverOne(entry: ShapeOnSite, one: ShapeOnSite | undefined): string {
  if (entry.shape.frontier !== "redis" || entry.shape.processes === 1) return "—";
  const target = `≤ ${R1_MANY_OVER_ONE_WALL} × wall of Redis, 1 × ${entry.shape.processes * entry.shape.maxTasksEach}`;
  if (entry.failures > 0 || one === undefined || one.wallMs === null || entry.wallMs === null) return `— (${target}: no run to compare)`;
  const ratio = entry.wallMs.median / one.wallMs.median;
  return `${ratio <= R1_MANY_OVER_ONE_WALL ? "✓" : "✗"} ${fixed(ratio, 2)} (${target})`;
}

function memoryTable(reports: readonly FrontierMemoryReport[]): string[] {
  const urls = reports[0]?.urls ?? 0;
  const lines = [
    "",
    `### Memory per URL: ${urls.toLocaleString("en-US")} URLs added with \`store.add()\`, 1,000 at a time`,
    "",
    "Each URL about 30 characters (`http://127.0.0.1:40000/p/N`), each item `{ url, maxRedirect, referrer, depth }` as a " +
      "crawl queues it. In memory: V8's heap after a full collection (`--expose-gc`, its own process), with every URL " +
      "queued, then once every item was taken (seen only). Redis: `used_memory` before and after, and `MEMORY USAGE … " +
      "SAMPLES 0` of the seen set and of the queue list (the queue holds each item as JSON).",
    "",
    "| frontier | seen and queued | seen | queued | measured by |",
    "|---|---|---|---|---|",
  ];
  for (const report of reports) {
    const memory = report.frontier === "memory";
    lines.push(
      row([
        memory ? "in memory (`MemoryStore`: a `Set` and a `BlockFifo`)" : "Redis (`RedisFrontier`: a set and a list)",
        bytes(report.seenAndQueued),
        bytes(report.seen),
        bytes(report.queued),
        memory ? "heap after a full collection" : "`used_memory`; `MEMORY USAGE` of each key",
      ]),
    );
  }
  return lines;
}

/** Records each process made, in the first good run: `1,012 / 988`. */
function split(entry: ShapeOnSite): string {
  const run = entry.runs.find(function counts(candidate) {
    return candidate.failure === null;
  });
  if (run === undefined || run.made.length < 2) return "—";
  return run.made.map((made) => made.toLocaleString("en-US")).join(" / ");
}

function firstFailure(entry: ShapeOnSite): string {
  for (const run of entry.runs) if (run.failure !== null) return run.failure;
  return "";
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

function show(value: Spread | null, digits: number): string {
  if (value === null) return "—";
  const median = fixed(value.median, digits);
  return value.min === value.max ? median : `${median} [${fixed(value.min, digits)}–${fixed(value.max, digits)}]`;
}

function scale(value: Spread, factor: number): Spread {
  return { median: value.median * factor, min: value.min * factor, max: value.max * factor };
}

function fixed(n: number, digits: number): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function bytes(n: number): string {
  return `${n.toFixed(0)} B`;
}
