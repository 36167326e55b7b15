/**
 * `crawl --jsonl`: the records as JSON Lines, written as they are made and
 * kept nowhere else, and the report made from their counts.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlResultJson } from "../../src/cli/result-json.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { FixtureSite } from "../../src/site/index.js";
import { CliProcess, requireBuiltCli, runCli } from "./cli-process.js";
import { closedPort as findClosedPort, fourRecordSite } from "./sites.js";

const STAGES = ["callbacks", "generators", "asyncawait"] as const;

/** Pages in the slow chain: far more than a test waits for. */
const CHAIN_LENGTH = 200;

let site: FixtureSite;
/** Each page answers after a delay and links only the next: a crawl that takes seconds, one record at a time. */
let slowSite: FixtureSite;
/** A port nothing listens on. */
let closedPort: number;
let directory: string;

beforeAll(async () => {
  requireBuiltCli();
  closedPort = await findClosedPort();
  site = await fourRecordSite();

  slowSite = await FixtureSite.start({ delayMs: 30 });
  for (let n = 0; n < CHAIN_LENGTH; n += 1) slowSite.addPage(`/chain/${n}`, [`/chain/${n + 1}`]);

  directory = await mkdtemp(join(tmpdir(), "crawl-jsonl-"));
});

afterAll(async () => {
  await site?.close();
  await slowSite?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** The lines of a JSON Lines text, each parsed; throws at the first that is not JSON. */
function parsedLines(text: string): FetchStatistic[] {
  expect(text.endsWith("\n")).toBe(true);
  return text.slice(0, -1).split("\n").map(function parsed(line): FetchStatistic {
    return JSON.parse(line) as FetchStatistic;
  });
}

/** The number after `Done: ` in a report. */
function done(report: string): number {
  return Number(/^Done: (\d+)$/m.exec(report)?.[1]);
}

/** The report's counter lines (`         3 html pages`), the robots.txt summary and `Done:`. */
function counterLines(report: string): string[] {
  return report.split("\n").filter((line) => /^( +\d+ |\d+ URLs? disallowed|Done: )/.test(line));
}

function byUrl(a: FetchStatistic, b: FetchStatistic): number {
  return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
}

describe.each(STAGES)("crawl --jsonl FILE --stage %s", (stage) => {
  it("writes one line per record, each the record as --json writes it, and reports their counts", async () => {
    const file = join(directory, `${stage}.jsonl`);
    const { code, stdout, stderr } = await runCli(["--jsonl", file, "--stage", stage, `${site.url}/`]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const lines = parsedLines(await readFile(file, "utf8"));
    expect(lines).toHaveLength(done(stdout));
    expect(lines).toHaveLength(4);

    const json = await runCli(["--json", "-", "--stage", stage, `${site.url}/`]);
    const kept = JSON.parse(json.stdout) as CrawlResultJson;
    // Each line is the record with the format's version first; two crawls: the same records, fetched at other times.
    const untimed = (records: readonly FetchStatistic[]) => records.map(({ fetchedAt: _when, ...rest }) => rest);
    expect(untimed([...lines].sort(byUrl))).toEqual(untimed([...kept.records].sort(byUrl).map((record) => ({ schemaVersion: 1, ...record }))));
    expect(lines.every((line) => Object.keys(line)[0] === "schemaVersion")).toBe(true);

    // No URL lines: the records were not kept; their counts were, as the crawl that kept them counts them.
    expect(stdout).toContain(`\n4 records not listed here: see ${file}\n`);
    expect(stdout.split("\n").filter((line) => line.startsWith("http://"))).toEqual([]);
    expect(counterLines(stdout)).toEqual(counterLines(json.stderr));
    expect(counterLines(stdout)).toContain("         3 html pages");
    expect(stdout).toContain("\n0 URLs disallowed by robots.txt (read at 1 origin)\n");
  });

  it("leaves every line it wrote, each whole, when the crawl is killed with SIGKILL", async () => {
    const file = join(directory, `killed-${stage}.jsonl`);
    const crawl = new CliProcess(["--jsonl", file, "--ignore-robots", "--max-tasks", "1", "--stage", stage, `${slowSite.url}/chain/0`]);
    let text = "";
    while (text.split("\n").length <= 3) {
      expect(crawl.exited).toBe(false);
      await sleep(20);
      text = await readFile(file, "utf8").catch(() => "");
    }
    crawl.kill("SIGKILL");
    const { code } = await crawl.outcome();
    expect(code).toBeNull();

    const after = await readFile(file, "utf8");
    // Only a line cut in the middle of its write could lack its newline; one write(2) per line leaves none.
    const complete = after.slice(0, after.lastIndexOf("\n") + 1);
    const lines = parsedLines(complete);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeLessThan(CHAIN_LENGTH);
    expect(lines.map((record) => record.url)).toEqual(lines.map((_, n) => `${slowSite.url}/chain/${n}`));
  });
});

describe("crawl --jsonl -", () => {
  it("writes only the lines to stdout, and the report to stderr", async () => {
    const { code, stdout, stderr } = await runCli(["--jsonl", "-", `${site.url}/`]);
    expect(code).toBe(0);
    const lines = parsedLines(stdout);
    expect(lines.map((record) => record.url).sort()).toEqual([`${site.url}/`, `${site.url}/a`, `${site.url}/b`, `${site.url}/old`]);
    expect(stderr.startsWith("*** Report ***\n4 records not listed here: see stdout\n")).toBe(true);
    expect(done(stderr)).toBe(lines.length);
  });

  it("prints the -v lines on stderr too", async () => {
    const { code, stdout, stderr } = await runCli(["--jsonl", "-", "-v", `${site.url}/`]);
    expect(code).toBe(0);
    expect(parsedLines(stdout)).toHaveLength(4);
    expect(stderr).toContain(`${site.url}/old 302 -> ${site.url}/a (from ${site.url}/)\n`);
  });
});

describe("crawl --jsonl with --json", () => {
  it("writes the result without its records, and how many were made", async () => {
    const file = join(directory, "with-json.jsonl");
    const { code, stdout } = await runCli(["--jsonl", file, "--json", "-", `${site.url}/`]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as CrawlResultJson;
    expect(result).toMatchObject({ records: [], recorded: 4, todo: 0 });
    expect(result.options.keepRecords).toBe(false);
    expect(result.seen).toHaveLength(4);
    expect(parsedLines(await readFile(file, "utf8"))).toHaveLength(4);
  });
});

describe("crawl --jsonl when nothing can be fetched", () => {
  it("writes the root's error record, says nothing was fetched, and exits with 3", async () => {
    const file = join(directory, "nothing.jsonl");
    const { code, stdout, stderr } = await runCli(["--jsonl", file, "--ignore-robots", "--max-tries", "1", `http://127.0.0.1:${closedPort}/`]);
    expect(code).toBe(3);
    expect(parsedLines(await readFile(file, "utf8"))).toMatchObject([{ url: `http://127.0.0.1:${closedPort}/`, error: "ConnectionRefused" }]);
    expect(stdout).toMatch(/^ +1 ConnectionRefused$/m);
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: connection refused; see the report)\n");
  });

  it("names the refused connection met reading robots.txt, not robots.txt", async () => {
    const file = join(directory, "robots.jsonl");
    const { code, stderr } = await runCli(["--jsonl", file, "--max-tries", "1", `http://127.0.0.1:${closedPort}/`]);
    expect(code).toBe(3);
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: connection refused; see the report)\n");
  });
});

describe("crawl --jsonl FILE that cannot be written", () => {
  it("fetches nothing, says why, and exits with 2", async () => {
    site.resetCounters();
    const file = join(directory, "missing-folder", "records.jsonl");
    const { code, stdout, stderr } = await runCli(["--jsonl", file, `${site.url}/`]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(`crawl: cannot write --jsonl ${file}: the directory ${join(directory, "missing-folder")} does not exist\nTry 'crawl --help'.\n`);
    expect(site.totalRequests).toBe(0);
  });
});
