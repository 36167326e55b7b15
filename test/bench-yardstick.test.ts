import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildChildren, PROJECT_ROOT } from "../bench/build.js";
import { buildCommand, CLI_SCRIPT, runCommandCrawl } from "../bench/command-process.js";
import { checkRecordCount, cpuPerPageMs, runCrawl, type CrawlTarget, type RunResult } from "../bench/crawl-process.js";
import { sameRoundRatios, summarise, type BenchResults, type ScenarioResult } from "../bench/results.js";
import { QUICK_SCENARIOS, type Scenario } from "../bench/scenarios.js";
import { againstYardstickSection } from "../bench/table.js";
import { checkYardstickCounts, parseYardstickOutput, runYardstick, YARDSTICK_DIR, YardstickSite, type YardstickReport } from "../bench/yardstick.js";
import { pageRecord } from "../src/crawl/records.js";

/** The shared folder of the yardstick, beside the checkout in CI; a user's clone may not have it. */
const SHARED = join(PROJECT_ROOT, "..", "shared", "bench");

/** A run with the figures a test sets, counted as good. */
function run(figures: Partial<RunResult>): RunResult {
  return {
    pages: 100,
    expectedPages: 100,
    failure: null,
    wallMs: 100,
    cpuMs: 100,
    processCpuMs: 200,
    pagesPerSecond: 1000,
    peakRssBytes: 50e6,
    startRssBytes: 40e6,
    peakHeapBytes: 0,
    atPeak: null,
    boundRatio: null,
    traceEvents: 0,
    inFlight: null,
    ...figures,
  };
}

function quick(id: string): Scenario {
  const scenario = QUICK_SCENARIOS.find((s) => s.id === id);
  if (scenario === undefined) throw new Error(`no quick ${id}`);
  return scenario;
}

/** Runs `check` on quick Y1's site (the yardstick's), started for it and stopped after. */
async function onQuickY1Site(check: (scenario: Scenario, site: YardstickSite) => Promise<void>): Promise<void> {
  const scenario = quick("Y1");
  const site = await YardstickSite.start(scenario);
  try {
    await check(scenario, site);
  } finally {
    await site.stop();
  }
}

/** `site` as a target that expects one page more than it holds. */
function expectingOneMore(site: YardstickSite): CrawlTarget {
  return { url: site.url, expectedCount: site.expectedCount + 1, expectedRecords: null, bound: 0 };
}

describe("bench/yardstick/", () => {
  it.runIf(existsSync(SHARED))("holds the two files of ../shared/bench unchanged once its '//!' header is taken out", () => {
    for (const name of ["ideal-crawler.mjs", "site-server.mjs"]) {
      const copy = readFileSync(join(YARDSTICK_DIR, name), "utf8");
      const header = copy.split("\n").filter((line) => line.startsWith("//!"));
      expect(header.length).toBeGreaterThan(0);
      const body = copy
        .split("\n")
        .filter((line) => !line.startsWith("//!"))
        .join("\n");
      expect(body).toBe(readFileSync(join(SHARED, name), "utf8"));
    }
  });
});

describe("parseYardstickOutput", () => {
  const counts = '{"client":"http","tasks":20,"fetched":200,"ok":200,"redirects":0,"other":0,"errors":0,"seconds":0.25}';
  const usage = '{"usage":{"cpuMs":310.5,"cpuBeforeMainMs":40,"peakRssBytes":52000000,"rssBeforeMainBytes":41000000}}';

  it("reads the crawler's counts and the probe's usage, whatever else was printed", () => {
    const report = parseYardstickOutput(`a warning\n${counts}\n${usage}\n`);
    expect(report).toMatchObject({ fetched: 200, errors: 0, seconds: 0.25, cpuMs: 310.5, cpuBeforeMainMs: 40, peakRssBytes: 52_000_000 });
  });

  it("names a missing line of counts and a missing probe", () => {
    expect(() => parseYardstickOutput(`${usage}\n`)).toThrow(/no line of counts/);
    expect(() => parseYardstickOutput(`${counts}\n`)).toThrow(/usage probe/);
    expect(() => parseYardstickOutput(`${counts.replace('"errors":0', '"errors":"none"')}\n${usage}\n`)).toThrow(/errors/);
  });
});

describe("checkYardstickCounts", () => {
  const whole: YardstickReport = { fetched: 200, ok: 200, redirects: 0, other: 0, errors: 0, seconds: 1, cpuMs: 1, cpuBeforeMainMs: 0, peakRssBytes: 1, rssBeforeMainBytes: 1 };

  it("accepts a crawl that fetched every URL with no error", () => {
    expect(checkYardstickCounts(whole, 200)).toBeNull();
  });

  it("names a short crawl, errors and other responses", () => {
    expect(checkYardstickCounts({ ...whole, fetched: 198, errors: 2, other: 1 }, 200)).toBe(
      "198 fetched, expected 200, 2 errors, 1 responses neither a page nor a redirect",
    );
  });
});

describe("checkRecordCount", () => {
  const page = { status: 200, size: 10, contentType: "text/html", encoding: "utf-8" };
  const a = pageRecord("http://h/a", page, 1, 1);
  const b = pageRecord("http://h/b", page, 1, 0);

  it("accepts as many records of distinct URLs as expected", () => {
    expect(checkRecordCount([a, b], 2, 0)).toBeNull();
  });

  it("names a wrong count, a repeated URL and URLs left in the queue", () => {
    expect(checkRecordCount([a, a], 3, 1)).toBe("2 records, expected 3, 1 repeated URLs, todo 1");
  });
});

describe("sameRoundRatios", () => {
  it("pairs each run with the other crawler's run of the same round, skipping a round where either failed", () => {
    const mine = [run({ processCpuMs: 300 }), run({ processCpuMs: 400, failure: "1 missing" }), run({ processCpuMs: 500 }), run({ processCpuMs: 900 })];
    const theirs = [run({ processCpuMs: 100 }), run({ processCpuMs: 200 }), run({ processCpuMs: 250, failure: "crashed" }), run({ processCpuMs: 300 })];
    // Rounds 1 and 4 only: 300/100 and 900/300, never 500 against another round's run.
    expect(sameRoundRatios(mine, theirs, (r) => r.processCpuMs)).toEqual([3, 3]);
    expect(sameRoundRatios(mine, null, (r) => r.processCpuMs)).toEqual([]);
  });
});

describe("cpuPerPageMs", () => {
  it("takes the one-page crawl's CPU off and divides by the pages after the first", () => {
    expect(cpuPerPageMs(run({ pages: 101, processCpuMs: 300, onePageProcessCpuMs: 200 }))).toBe(1);
    expect(cpuPerPageMs(run({ pages: 101, processCpuMs: 300 }))).toBeNull();
    expect(cpuPerPageMs(run({ pages: 101, processCpuMs: 300, onePageProcessCpuMs: 200, failure: "short" }))).toBeNull();
  });
});

describe("summarise against the yardstick", () => {
  it("gives each round's whole-process CPU and CPU per page over the yardstick's of that round", () => {
    const yardstick = [run({ processCpuMs: 100, onePageProcessCpuMs: 50, pages: 51 }), run({ processCpuMs: 200, onePageProcessCpuMs: 100, pages: 51 })];
    const stage = [run({ processCpuMs: 150, onePageProcessCpuMs: 100, pages: 51 }), run({ processCpuMs: 500, onePageProcessCpuMs: 300, pages: 51 })];
    const entry = summarise("asyncawait", false, stage, null, yardstick);
    expect(entry.processCpuOverYardstick).toEqual({ median: 2, min: 1.5, max: 2.5 });
    expect(entry.cpuPerPageOverYardstick).toEqual({ median: 1.5, min: 1, max: 2 });
    expect(entry.cpuPerPageMs).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(summarise("yardstick", false, yardstick, null, null).processCpuOverYardstick).toBeNull();
  });
});

describe("againstYardstickSection", () => {
  function results(scenarios: ScenarioResult[]): BenchResults {
    return {
      machine: { cores: 2, loadAverage: 0, cpuModel: "x", totalMemoryBytes: 1, node: "v20", platform: "linux" },
      startedAt: "2026-12-05T00:00:00Z",
      quick: false,
      runsPerStage: 2,
      heapSnapshotAt: null,
      scenarios,
      memory: [],
      redis: null,
      startup: null,
      peers: null,
      speeds: null,
    };
  }
  function scenarioResult(scenario: Scenario, stageCpu: number[]): ScenarioResult {
    const yardstick = [run({ processCpuMs: 100 }), run({ processCpuMs: 100 })];
    const reference = [run({ processCpuMs: 110 }), run({ processCpuMs: 110 })];
    const stage = stageCpu.map((cpu) => run({ processCpuMs: cpu }));
    return {
      scenario: { ...scenario, pages: 2_000 },
      expectedPages: 2_000,
      maxDepth: 5,
      boundMs: 0,
      stages: [
        summarise("callbacks", false, stage, reference, yardstick),
        summarise("reference", false, reference, null, yardstick),
        summarise("yardstick", false, yardstick, reference, null),
      ],
    };
  }

  it("judges whole-process CPU on the yardstick's site (Y1) and only shows it on the project's (S1)", () => {
    const lines = againstYardstickSection(results([scenarioResult(quick("S1"), [90, 95]), scenarioResult(quick("Y1"), [120, 130])]));
    expect(lines).toContain("| S1: 2,000 pages, project's site, whole-process CPU | callbacks | 93 [90–95] ms | 0.93 [0.90–0.95] | 0.84 [0.82–0.86] | — (judged on Y1) |");
    expect(lines).toContain("| Y1: 2,000 pages, yardstick's site, whole-process CPU | callbacks | 125 [120–130] ms | 1.25 [1.20–1.30] | 1.14 [1.09–1.18] | ✗ ≤ 1 |");
    expect(lines).toContain("| Y1: 2,000 pages, yardstick's site, whole-process CPU | yardstick: ideal-crawler.mjs (issue 39, not a stage) | 100 ms | 1 | 0.91 | — (the yardstick) |");
  });
});

describe("the yardstick as a runner", () => {
  beforeAll(() => buildChildren(), 120_000);

  it("crawls its own quick site in a fresh process and counts every page, with its whole process's CPU and peak RSS", () =>
    onQuickY1Site(async (scenario, site) => {
      expect(site.expectedCount).toBe(YardstickSite.counts(scenario).fetches);
      const result = await runYardstick(scenario, site);
      expect(result.failure).toBeNull();
      expect(result.pages).toBe(site.expectedCount);
      expect(result.processCpuMs).toBeGreaterThan(result.cpuMs);
      expect(result.peakRssBytes).toBeGreaterThan(result.startRssBytes);
    }), 60_000);

  it("fails a run on a site expecting more pages than it holds", () =>
    onQuickY1Site(async (scenario, site) => {
      const result = await runYardstick(scenario, expectingOneMore(site));
      expect(result.failure).toBe(`${site.expectedCount} fetched, expected ${site.expectedCount + 1}`);
    }), 60_000);

  it("lets a stage crawl the yardstick's site, checked by counts", () =>
    onQuickY1Site(async (scenario, site) => {
      const result = await runCrawl("callbacks", scenario, site, { trace: false, heapSnapshot: null });
      expect(result.failure).toBeNull();
      expect(result.pages).toBe(site.expectedCount);
    }), 60_000);
});

describe("a stage through the command", () => {
  beforeAll(() => {
    buildChildren();
    buildCommand();
  }, 120_000);

  it("crawls the yardstick's site, checked by the lines of its records file, with its whole process's CPU and peak RSS", () =>
    onQuickY1Site(async (scenario, site) => {
      const result = await runCommandCrawl("asyncawait", scenario, site);
      expect(result.failure).toBeNull();
      expect(result.pages).toBe(site.expectedCount);
      expect(result.processCpuMs).toBeGreaterThan(result.cpuMs);
      expect(result.cpuMs).toBeGreaterThan(0);
      expect(result.peakRssBytes).toBeGreaterThan(0);
    }), 60_000);

  it("is loaded as the ES module it is on the first try, as the installed command is, not first as CommonJS", () => {
    // Under node_modules/.cache no package.json says "type": "module"; the build writes one beside cli.js.
    const run = spawnSync(process.execPath, [CLI_SCRIPT, "--version"], { env: { ...process.env, NODE_DEBUG: "module" }, encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("crawl (coroutine-crawler)");
    expect(run.stderr).not.toContain(`load ${JSON.stringify(CLI_SCRIPT)} for module`); // the CommonJS loader's line for it
  });

  it("fails a run on a site expecting more pages than it holds", () =>
    onQuickY1Site(async (scenario, site) => {
      const result = await runCommandCrawl("callbacks", scenario, expectingOneMore(site));
      expect(result.failure).toBe(`${site.expectedCount} records, expected ${site.expectedCount + 1}`);
    }), 60_000);
});
