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

describe.each(STAGES)("crawl --stage %s at SIGTERM, with a fetch in flight", (stage) => {
  it("lets the fetch in flight finish and records it, takes no new URL, and ends at once at a second SIGTERM", async () => {
    const slow = await FixtureSite.start();
    try {
      // "/" links to "/held", whose response waits for the test, and "/later", which nothing may fetch after SIGTERM.
      slow.addPage("/", ["/held", "/later"]);
      slow.addPage("/later", []);
      let answer: (() => void) | null = null;
      slow.addHandler("/held", function heldUntilReleased(_request, response) {
        answer = () => response.writeHead(200, { "Content-Type": "text/html" }).end("<p>at last</p>");
      });
      const jsonl = join(directory, `${stage}-finish.jsonl`);
      const crawl = new CliProcess(["--jsonl", jsonl, "--ignore-robots", "--max-tasks", "1", "--stage", stage, `${slow.url}/`]);
      while (answer === null) {
        expect(crawl.exited).toBe(false);
        await sleep(10);
      }
      crawl.kill("SIGTERM");
      while (!crawl.stderr.includes("Interrupted by SIGTERM")) await sleep(10); // The signal was handled: the fetch is still in flight.
      (answer as () => void)();
      const { code, stdout } = await crawl.outcome();
      expect(code).toBe(143);
      const urls = (await readFile(jsonl, "utf8")).split("\n").filter((line) => line !== "").map((line) => (JSON.parse(line) as { url: string }).url);
      expect(urls).toEqual([`${slow.url}/`, `${slow.url}/held`]);
      expect(slow.requestsFor("/later")).toBe(0);
      expect(stdout).toContain("Todo: 1\nDone: 2\n");

      // A second SIGTERM does not wait for the fetch in flight.
      answer = null;
      const again = new CliProcess(["--ignore-robots", "--max-tasks", "1", "--stage", stage, `${slow.url}/`]);
      while (answer === null) {
        expect(again.exited).toBe(false);
        await sleep(10);
      }
      again.kill("SIGTERM");
      while (!again.stderr.includes("Interrupted by SIGTERM")) await sleep(10);
      again.kill("SIGTERM");
      expect((await again.outcome()).code).toBe(143);
      expect(slow.requestsFor("/held")).toBe(2); // Never answered the second time: the process ended without it.
      while (slow.openConnections > 0) await sleep(10); // Nothing left open: the process's sockets closed with it.
    } finally {
      await slow.close();
    }
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
    // SIGTERM lets the fetches in flight finish for a few seconds, and the progress lines go on meanwhile.
    const lines = stderr.split("\n");
    expect(lines.filter((line) => line === "Interrupted by SIGTERM")).toHaveLength(1);
    expect(lines.at(-1)).toBe("");
    const stats = lines.filter((line) => line !== "Interrupted by SIGTERM" && line !== "");
    expect(stats.length).toBeGreaterThanOrEqual(2);
    for (const line of stats) expect(line).toMatch(/^crawl: [01] pages?, 0 errors, (-|\d+) queued, \d+\.\d pages\/s, \d+:\d\d elapsed$/);
    // No cursor movement: no carriage return, no escape sequence.
    expect(stderr).not.toContain("\r");
    expect(stderr).not.toContain("\x1b");
    expect(stdout).not.toContain("elapsed");
  });
});
