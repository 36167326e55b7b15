import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildChildren } from "../bench/build.js";
import { checkRecordLines, compareRecords } from "../bench/crawl-process.js";
import { isSetUp, overYardstick, parsePeerOutput, runPeer } from "../bench/peers.js";
import { describeShape } from "../bench/redis-scenario.js";
import { redisServerPath } from "../bench/redis-server-process.js";
import { referenceCrawl } from "../bench/reference-crawler.js";
import type { BenchResults } from "../bench/results.js";
import { QUICK_SCENARIOS } from "../bench/scenarios.js";
import { SiteProcess } from "../bench/site-process.js";
import { spread } from "../bench/stats.js";
import { errorRecord, pageRecord, redirectRecord } from "../src/crawl/records.js";
import { SyntheticSite } from "../src/site/synthetic-site.js";

const page = { status: 200, size: 10, contentType: "text/html", encoding: "utf-8" };
const root = pageRecord("http://h/", page, 2, 2);
const redirect = redirectRecord("http://h/r", 301, "http://h/a");
const target = pageRecord("http://h/a", page, 1, 0);
const expected = [root, redirect, target];

describe("referenceCrawl", () => {
  it("fetches each page of a 12,000-page site once, past the points where it drops the taken part of its queue", async () => {
    const synthetic = await SyntheticSite.start({ pages: 12_000, linksPerPage: 10, seed: 1 });
    try {
      const result = await referenceCrawl(synthetic.url, { maxTasks: 50 });
      expect(result.todo).toBe(0);
      expect(new Set(result.records.map((record) => record.url)).size).toBe(12_000);
      expect(compareRecords(result.records, synthetic.expected.records, 0)).toBeNull();
    } finally {
      await synthetic.close();
    }
  }, 60_000);
});

describe("compareRecords", () => {
  it("accepts the expected records in another order and with other numNewUrls", () => {
    const reordered = [target, root, redirect].map((record) => ({ ...record, numNewUrls: 0 }));
    expect(compareRecords(reordered, expected, 0)).toBeNull();
  });

  it("names missing, unexpected, differing and error records", () => {
    const records = [root, { ...redirect, status: 302 }, errorRecord("http://h/x", "Timeout")];
    expect(compareRecords(records, expected, 0)).toBe("1 missing, 1 unexpected, 1 differing, 1 errors");
  });

  it("counts a crawl that left URLs in its queue as a failure", () => {
    expect(compareRecords(expected, expected, 2)).toBe("todo 2");
  });
});

describe("checkRecordLines", () => {
  const folder = mkdtempSync(join(tmpdir(), "bench-lines-"));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  function linesOf(name: string, records: readonly unknown[]): string {
    const path = join(folder, name);
    writeFileSync(path, records.map((record) => `${JSON.stringify(record)}\n`).join(""));
    return path;
  }

  it("counts the lines of a file that has the expected number of distinct records", async () => {
    const path = linesOf("good.jsonl", expected);
    expect(await checkRecordLines(path, 3, 0)).toEqual({ pages: 3, failure: null });
  });

  it("names a wrong count, repeated URLs, errors and URLs left in the queue", async () => {
    const path = linesOf("bad.jsonl", [root, root, errorRecord("http://h/x", "Timeout")]);
    expect(await checkRecordLines(path, 4, 1)).toEqual({
      pages: 3,
      failure: "3 records, expected 4, 1 repeated URLs, 1 errors, todo 1",
    });
  });
});

describe("spread", () => {
  it("gives the median, min and max of odd and even counts", () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3 });
    expect(spread([4, 1, 2, 3])).toEqual({ median: 2.5, min: 1, max: 4 });
    expect(spread([])).toBeNull();
  });
});

describe("npm run bench --quick", () => {
  const out = mkdtempSync(join(tmpdir(), "bench-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("crawls every scenario with every stage (S5 with stage 3 alone, its records written to a file), counts P1's requests in flight, compares S4's peak RSS with the reference's, crawls Y1's site with the stages through the command, crawls S4's pages at two speeds against the yardstick, measures memory, crawls R1 with one and two processes through one Redis, and writes the JSON and the table", async () => {
    // No peer set up (the peers' rows are checked below, with S1 alone).
    const env = { ...process.env, COROUTINE_CRAWLER_PEERS: join(out, "no-peers"), COROUTINE_CRAWLER_PYTHON: join(out, "no-python") };
    const child = spawn(process.execPath, ["--import", "tsx", "bench/run.ts", "--quick", "--out", out], {
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.resume();
    const status = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(status).toBe(0);

    const results = JSON.parse(readFileSync(join(out, "latest.json"), "utf8")) as BenchResults;
    expect(results.quick).toBe(true);
    expect(results.machine.cores).toBeGreaterThan(0);
    expect(results.scenarios.map((s) => s.scenario.id)).toEqual(["S1", "S2", "S3", "P1", "S4", "S5", "Y1", "PP1", "PP2"]);
    // S1's, S3's and S4's targets are ratios to the reference crawler's figures, so the reference crawls them too; S5 is stage 3's.
    // Issue 39: the yardstick crawls S1, S3 and the scenarios on its own site (Y1, PP1, PP2), where the reference crawls too.
    const withReference = ["callbacks", "generators", "asyncawait", "reference"];
    const withYardstick = [...withReference, "yardstick"];
    const crawlersOf: Record<string, string[]> = {
      S1: withYardstick,
      S3: withYardstick,
      S4: withReference,
      S5: ["asyncawait"],
      Y1: withYardstick,
      PP1: withYardstick,
      PP2: withYardstick,
    };
    for (const scenario of results.scenarios) {
      const crawlers = crawlersOf[scenario.scenario.id] ?? ["callbacks", "generators", "asyncawait"];
      expect(scenario.stages.map((s) => s.stage)).toEqual(crawlers);
      for (const entry of scenario.stages) {
        expect(entry.failures).toBe(0);
        expect(entry.runs).toHaveLength(1);
        expect(entry.runs[0]?.pages).toBe(scenario.expectedPages);
        expect(entry.runs[0]?.peakRssBytes).toBeGreaterThan(0);
      }
    }
    expect(results.memory.map((m) => m.stage)).toEqual(["callbacks", "generators", "asyncawait"]);
    for (const report of results.memory) expect(report.bytesPerUnit).toBeGreaterThan(0);

    const markdown = readFileSync(join(out, "latest.md"), "utf8");
    expect(stdout).toBe(markdown);
    expect(markdown.match(/^\| (S[1-5]|P1|Y1|PP[12]) /gm)).toHaveLength(36);
    expect(markdown).toContain(`Node ${process.version}`);
    expect(markdown).toContain("## Requests in flight: P1, 5 hosts, maxPerHost 2, maxTasks 10");
    expect(markdown).toContain("## Memory per page: S4, 300 pages, 0 ms, maxTasks 20");
    expect(markdown).toContain("## Records not kept: S5, 300 pages, 0 ms, maxTasks 20");

    // S4: each stage's peak RSS over the reference's in the same round, and the RSS before the crawl.
    const [s4] = results.scenarios.filter((s) => s.scenario.id === "S4");
    for (const entry of s4?.stages ?? []) {
      if (entry.stage === "reference") expect(entry.rssOverReference).toBeNull();
      else expect(entry.rssOverReference?.median).toBeGreaterThan(0);
      expect(entry.runs[0]?.startRssBytes).toBeGreaterThan(0);
    }

    // Issue 29: each stage against the reference round by round (S1 whole-process CPU, S4 CPU per page, S3 peak RSS), and crawl --help against node -e 0.
    expect(markdown).toContain("## Against the reference (issue 29)");
    expect(markdown.match(/^\| S1: whole-process CPU ÷ reference \| /gm)).toHaveLength(3);
    expect(markdown.match(/^\| S4: crawl CPU per page ÷ reference \| /gm)).toHaveLength(3);
    expect(markdown.match(/^\| S3: peak RSS ÷ reference, every page fetched \| /gm)).toHaveLength(3);
    expect(markdown.match(/^\| `crawl --help` CPU ÷ `node -e 0` \| /gm)).toHaveLength(1);
    // Issue 39: every crawler but the yardstick against the yardstick of the same rounds, on S1, S3, Y1 and PP1/PP2 (per page).
    expect(markdown).toContain("## Against the yardstick (issue 39)");
    expect(markdown.match(/^\| S1: 200 pages, project's site, whole-process CPU \| /gm)).toHaveLength(5);
    expect(markdown.match(/^\| Y1: 200 pages, yardstick's site, whole-process CPU \| /gm)).toHaveLength(5);
    expect(markdown.match(/^\| S3: 500 pages, project's site, wall ÷ bound \| /gm)).toHaveLength(5);
    expect(markdown.match(/^\| PP2: 1,000 pages, yardstick's site, CPU per page \| /gm)).toHaveLength(5);
    for (const id of ["PP1", "PP2"]) {
      for (const entry of results.scenarios.find((s) => s.scenario.id === id)?.stages ?? []) {
        for (const run of entry.runs) expect(run.onePageProcessCpuMs).toBeGreaterThan(0);
        expect(entry.cpuPerPageMs?.median).toBeGreaterThan(0);
        if (entry.stage === "yardstick") expect(entry.cpuPerPageOverYardstick).toBeNull();
        else expect(entry.cpuPerPageOverYardstick?.median).toBeGreaterThan(0);
      }
    }
    // Issue 39: Y1's stages crawl through the built command (bench/command-process.ts), which samples no heap; the crawl child does.
    const [y1] = results.scenarios.filter((s) => s.scenario.id === "Y1");
    expect(y1?.scenario.through).toBe("command");
    for (const entry of y1?.stages ?? []) {
      const run = entry.runs[0];
      expect(run?.processCpuMs).toBeGreaterThan(run?.cpuMs ?? Infinity);
      expect(run?.cpuMs).toBeGreaterThan(0);
      if (entry.stage !== "reference" && entry.stage !== "yardstick") expect(run?.peakHeapBytes).toBe(0);
    }
    expect(markdown).toContain("On Y1 the stages crawl through the built command");
    const [s1] = results.scenarios.filter((s) => s.scenario.id === "S1");
    for (const entry of s1?.stages ?? []) {
      expect(entry.runs[0]?.processCpuMs).toBeGreaterThan(entry.runs[0]?.cpuMs ?? Infinity);
      if (entry.stage === "reference") expect(entry.processCpuOverReference).toBeNull();
      else expect(entry.processCpuOverReference?.median).toBeGreaterThan(0);
      if (entry.stage === "yardstick") expect(entry.processCpuOverYardstick).toBeNull();
      else expect(entry.processCpuOverYardstick?.median).toBeGreaterThan(0);
    }
    expect(results.startup?.rounds).toBe(3);
    expect(results.startup?.helpCpuMs.median).toBeGreaterThan(0);
    expect(results.startup?.nodeCpuMs.median).toBeGreaterThan(0);
    // Issue 39: a one-page crawl through the command in each stage against the yardstick's (bench/yardstick/).
    expect(results.startup?.yardstickCpuMs).not.toBeNull();
    expect(results.startup?.onePage.length).toBe(3);
    // Issue 39: S4's pages at two speeds, the yardstick then each stage, each crawl's GC counted.
    expect(results.speeds?.map((run) => `${run.speed} ${run.crawler}`)).toEqual(["quiet", "loaded"].flatMap((speed) => ["yardstick", "callbacks", "generators", "asyncawait"].map((crawler) => `${speed} ${crawler}`)));
    for (const run of results.speeds ?? []) {
      expect(run.peakRssBytes).toBeGreaterThan(0);
      // A 300-page crawl may need no collection at all: the counter's report is checked, not a count.
      expect([run.scavenges, run.markCompacts].every(Number.isInteger)).toBe(true);
    }
    expect(markdown).toContain("## Memory at two speeds");

    // P1's servers count the requests in flight; the synthetic site of S1–S3 does not.
    const [p1] = results.scenarios.filter((s) => s.scenario.id === "P1");
    for (const entry of p1?.stages ?? []) {
      const inFlight = entry.runs[0]?.inFlight;
      expect(inFlight?.requests).toBe(p1?.expectedPages);
      expect(inFlight?.averageInFlight).toBeGreaterThan(0);
      expect(inFlight?.peakPerHost).toHaveLength(5);
      expect(Math.max(...(inFlight?.peakPerHost ?? []))).toBeLessThanOrEqual(2);
    }
    const s1Run = results.scenarios[0]?.stages[0]?.runs[0];
    expect(s1Run?.inFlight).toBeNull();

    // R1: stage 3 through one redis-server, one process and two, beside the in-memory frontier; skipped without Redis.
    const redis = results.redis;
    expect(markdown).toContain("## R1: one crawl, many processes, one Redis");
    if (redisServerPath() === null) {
      expect(redis?.skipped).toMatch(/redis-server/);
      return;
    }
    expect(redis?.skipped).toBeNull();
    for (const site of [redis?.throughput, redis?.latency]) {
      expect(site?.shapes.map((entry) => describeShape(entry.shape))).toEqual(["in memory, 1 × 20", "Redis, 1 × 20", "Redis, 2 × 10"]);
      for (const entry of site?.shapes ?? []) {
        expect(entry.failures).toBe(0);
        const run = entry.runs[0];
        expect(run?.pages).toBe(site?.expectedPages);
        expect(run?.made).toHaveLength(entry.shape.frontier === "memory" ? 1 : entry.shape.processes);
        expect(run?.made.reduce((sum, made) => sum + made, 0)).toBe(site?.expectedPages);
        if (entry.shape.frontier === "memory") expect(run?.redis).toBeNull();
        else {
          // Pages are finished by scripts, several pages a FINISH: EVALSHAs, and inside Redis at least a command per page (its record's HSET).
          expect(run?.redis?.evalsha).toBeGreaterThanOrEqual(1);
          expect(run?.redis?.roundTrips).toBeGreaterThanOrEqual(run?.redis?.evalsha ?? Infinity);
          expect(run?.redis?.commands).toBeGreaterThanOrEqual(site?.expectedPages ?? Infinity);
          expect(run?.redis?.commands).toBeGreaterThan(run?.redis?.roundTrips ?? Infinity);
        }
      }
    }
    expect(redis?.memory.map((report) => report.frontier)).toEqual(["memory", "redis"]);
    for (const report of redis?.memory ?? []) {
      expect(report.seen).toBeGreaterThan(0);
      expect(report.queued).toBeGreaterThan(0);
    }
    expect(markdown).toMatch(/^\| Redis, 2 × 10 \| 200 ✓ \|/m);
  }, 600_000);
});

describe("npm run bench --stages reference", () => {
  const out = mkdtempSync(join(tmpdir(), "bench-reference-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("crawls with the reference crawler as a labelled row, and measures no memory for it", async () => {
    const args = ["--import", "tsx", "bench/run.ts", "--quick", "--stages", "reference", "--scenarios", "S1", "--out", out];
    // No peer set up: an empty peers folder, and a Python that does not exist.
    const env = { ...process.env, COROUTINE_CRAWLER_PEERS: join(out, "no-peers"), COROUTINE_CRAWLER_PYTHON: join(out, "no-python") };
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env });
    child.stderr.resume();
    const status = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(status).toBe(0);

    const results = JSON.parse(readFileSync(join(out, "latest.json"), "utf8")) as BenchResults;
    const entry = results.scenarios[0]?.stages[0];
    expect(entry?.stage).toBe("reference");
    expect(entry?.failures).toBe(0);
    expect(entry?.runs[0]?.pages).toBe(results.scenarios[0]?.expectedPages);
    expect(results.memory).toEqual([]);
    const markdown = readFileSync(join(out, "latest.md"), "utf8");
    expect(markdown).toMatch(/^\| S1 .* \| reference: plain node:http crawler \(the project's, not a stage\) \| \d+ ✓ \|/m);
    expect(markdown).toMatch(/^\| S1 .* \| yardstick: ideal-crawler\.mjs \(issue 39, not a stage\) \| \d+ ✓ \|/m);
    // The peers' table: the yardstick and the project's two crawlers measured, each peer's row saying how to set it up.
    expect(results.peers?.own.map((own) => [own.crawler, own.failures, own.cpuMs === null, own.cpuOverYardstick === null])).toEqual([
      ["yardstick", 0, false, true],
      ["reference", 0, false, false],
      ["asyncawait", 0, false, false],
    ]);
    expect(results.peers?.peers.map((peer) => [peer.peer, peer.setUp, peer.runs.length])).toEqual([
      ["node-crawler", false, 0],
      ["crawlee", false, 0],
      ["chapter (aiohttp)", false, 0],
      ["Scrapy", false, 0],
    ]);
    expect(markdown).toContain("## Peers on S1");
    expect(markdown.match(/^\| .* \| not set up \(run bench\/peers\/setup\.sh\) \|/gm)).toHaveLength(4);
  }, 180_000);
});

describe("parsePeerOutput", () => {
  it("reads the figures from a driver's last line, after any lines it logged before", () => {
    const stdout = 'INFO something\n{"pages":200,"cpuMs":812.5,"peakRssBytes":41943040}\n';
    expect(parsePeerOutput(stdout)).toEqual({ pages: 200, cpuMs: 812.5, peakRssBytes: 41_943_040 });
  });

  it("names what is wrong with output that has no figures", () => {
    expect(() => parsePeerOutput("Traceback (most recent call last):\n")).toThrow(/no JSON line/);
    expect(() => parsePeerOutput('{"pages":200,"cpuMs":"fast"}\n')).toThrow(/lacks a number/);
  });
});

// The chapter's crawler needs Python's aiohttp (Debian's python3-aiohttp), which
// `npm ci` cannot install: where it is missing, this test is skipped, and the
// test above still checks the "not set up" row.
describe.runIf(isSetUp("chapter (aiohttp)", tmpdir()))("the chapter's aiohttp crawler as a peer", () => {
  it("crawls every page of the quick S1 site and reports its figures through the driver's line", async () => {
    buildChildren();
    const scenario = QUICK_SCENARIOS.find((s) => s.id === "S1");
    if (scenario === undefined) throw new Error("no quick S1");
    const site = await SiteProcess.start(scenario);
    try {
      const run = await runPeer("chapter (aiohttp)", tmpdir(), site.url, scenario.maxTasks);
      expect(run.pages).toBe(site.expectedCount);
      expect(run.cpuMs).toBeGreaterThan(0);
      expect(run.peakRssBytes).toBeGreaterThan(1_000_000);
    } finally {
      await site.stop();
    }
  }, 120_000);
});

// Scrapy needs Python's scrapy (Debian's python3-scrapy), which `npm ci` cannot
// install: where it is missing, this test is skipped, as the chapter's is above.
describe.runIf(isSetUp("Scrapy", tmpdir()))("Scrapy as a peer", () => {
  it("crawls every page of the quick S1 site and reports its figures through the spider's line", async () => {
    buildChildren();
    const scenario = QUICK_SCENARIOS.find((s) => s.id === "S1");
    if (scenario === undefined) throw new Error("no quick S1");
    const site = await SiteProcess.start(scenario);
    try {
      const run = await runPeer("Scrapy", tmpdir(), site.url, scenario.maxTasks);
      expect(run.pages).toBe(site.expectedCount);
      expect(run.cpuMs).toBeGreaterThan(0);
      expect(run.peakRssBytes).toBeGreaterThan(1_000_000);
    } finally {
      await site.stop();
    }
  }, 180_000);
});

describe("overYardstick", () => {
  it("pairs each peer run with the yardstick's run of its own round, and gives none for a round whose yardstick run failed", () => {
    // Runs made in rounds 0, 2 and 1; the yardstick's run of round 1 failed.
    expect(overYardstick([300, 800, 500], [0, 2, 1], [100, null, 200])).toEqual([3, 4]);
  });
});
