/**
 * SIGTERM and SIGHUP stop `crawl` as Ctrl-C does: the built command against a
 * fixture site, as `kill`, `timeout`, `docker stop` or systemd stop it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlResultJson } from "../../src/cli/result-json.js";
import { FixtureSite } from "../../src/site/index.js";
import { CliProcess, requireBuiltCli } from "./cli-process.js";

const STAGES = ["callbacks", "generators", "asyncawait"] as const;
const SIGNALS = [["SIGTERM", 143], ["SIGHUP", 129]] as const;

let site: FixtureSite;
let directory: string;

beforeAll(async () => {
  requireBuiltCli();
  site = await FixtureSite.start();
  // "/" answers; its four links never do: a crawl that only a signal ends.
  site.addPage("/", ["/silent/1", "/silent/2", "/silent/3", "/silent/4"]);
  for (const n of [1, 2, 3, 4]) site.addFault(`/silent/${n}`, { kind: "silent" });
  directory = await mkdtemp(join(tmpdir(), "crawl-signals-"));
});

afterAll(async () => {
  await site?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

/** Waits until the site has seen `count` requests; fails if the crawl ends first. */
async function requestsSeen(crawl: CliProcess, count: number): Promise<void> {
  while (site.totalRequests < count) {
    expect(crawl.exited).toBe(false);
    await sleep(10);
  }
}

describe.each(STAGES)("crawl --stage %s stopped by a signal", (stage) => {
  it.each(SIGNALS)("stops at %s, prints the partial report, writes --json and -o FILE.csv, and exits with %i", async (signal, status) => {
    const json = join(directory, `${stage}-${signal}.json`);
    const csv = join(directory, `${stage}-${signal}.csv`);
    site.resetCounters();
    const crawl = new CliProcess(["--json", json, "-o", csv, "--ignore-robots", "--max-tasks", "2", "--stage", stage, `${site.url}/`]);
    // "/" and the two silent pages in flight.
    await requestsSeen(crawl, 3);
    crawl.kill(signal);
    const { code, stdout, stderr } = await crawl.outcome();
    expect(stderr).toBe(`Interrupted by ${signal}\n`);
    expect(code).toBe(status);
    expect(stdout).toContain("Todo: 4\nDone: 1\n");
    const result = JSON.parse(await readFile(json, "utf8")) as CrawlResultJson;
    expect(result).toMatchObject({ interrupted: true, recorded: 1, todo: 4 });
    expect(result.records.map((record) => record.url)).toEqual([`${site.url}/`]);
    expect((await readFile(csv, "utf8")).split("\r\n")).toHaveLength(3); // the header, one row, and the last line's end
    expect(site.totalRequests).toBe(3);
  });

  it("writes every record made to --jsonl before exiting at SIGTERM", async () => {
    const jsonl = join(directory, `${stage}.jsonl`);
    site.resetCounters();
    const crawl = new CliProcess(["--jsonl", jsonl, "--ignore-robots", "--max-tasks", "2", "--stage", stage, `${site.url}/`]);
    await requestsSeen(crawl, 3);
    crawl.kill("SIGTERM");
    const { code, stdout } = await crawl.outcome();
    expect(code).toBe(143);
    expect(stdout).toContain("Todo: 4\nDone: 1\n");
    const lines = (await readFile(jsonl, "utf8")).split("\n");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0])).toMatchObject({ schemaVersion: 1, url: `${site.url}/`, status: 200 });
  });
});

describe("crawl with stderr that is no terminal", () => {
  it("prints a plain progress line there every --stats-interval seconds, and none on stdout", async () => {
    site.resetCounters();
    const crawl = new CliProcess(["--stats-interval", "0.05", "--ignore-robots", "--max-tasks", "2", `${site.url}/`]);
    await requestsSeen(crawl, 3);
    while (crawl.stderr.split("\n").filter((line) => line.endsWith(" elapsed")).length < 2) {
      expect(crawl.exited).toBe(false);
      await sleep(10);
    }
    crawl.kill("SIGTERM");
    const { code, stdout, stderr } = await crawl.outcome();
    expect(code).toBe(143);
    const lines = stderr.split("\n");
    expect(lines.slice(-2)).toEqual(["Interrupted by SIGTERM", ""]);
    const stats = lines.slice(0, -2);
    expect(stats.length).toBeGreaterThanOrEqual(2);
    for (const line of stats) expect(line).toMatch(/^crawl: [01] pages?, 0 errors, (-|\d+) queued, \d+\.\d pages\/s, \d+:\d\d elapsed$/);
    // No cursor movement: no carriage return, no escape sequence.
    expect(stderr).not.toContain("\r");
    expect(stderr).not.toContain("\x1b");
    expect(stdout).not.toContain("elapsed");
  });
});
