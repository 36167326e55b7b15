/**
 * `crawl --state DIR`: the built command, killed (`kill -9`) or interrupted
 * (Ctrl-C) in the middle of a crawl of a real 3,000-page site on 127.0.0.1,
 * then run again with the same arguments. The site counts the requests it
 * saw for each path.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readState } from "../../src/crawl/state.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { execFile } from "node:child_process";
import { CLI_PATH, CliProcess, requireBuiltCli, runCli } from "./cli-process.js";

const MAX_TASKS = 10;
const PAGES = 3000;

let site: SyntheticSite;
const dirs: string[] = [];

beforeAll(async () => {
  requireBuiltCli();
  site = await SyntheticSite.start({ pages: PAGES, linksPerPage: 5, seed: 3, redirects: 20, notFound: 10, delayMs: 1 });
});
afterAll(() => site.close());
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "crawl-state-cli-"));
  dirs.push(dir);
  return dir;
}

/** Resolves once the state in `dir` holds at least `records` records. */
async function untilRecorded(dir: string, records: number, child: CliProcess): Promise<void> {
  for (;;) {
    if ((readState(dir)?.recorded ?? 0) >= records) return;
    if (child.exited) throw new Error(`crawl exited before ${records} records:\n${child.stdout}\n${child.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Requests the site saw for each page path (robots.txt, read again by each run, left out). */
function pageRequests(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { path } of site.site.requests()) {
    if (path !== "/robots.txt") counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  return counts;
}

/** The paths requested more than once. */
function fetchedTwice(): string[] {
  return [...pageRequests()].filter(([, count]) => count > 1).map(([path]) => path);
}

/** The record URLs of a `--json` file. */
function jsonRecords(file: string): string[] {
  const document = JSON.parse(readFileSync(file, "utf8")) as { records: Array<{ url: string }> };
  return document.records.map((record) => record.url);
}

describe.each(["callbacks", "generators", "asyncawait"])("crawl --state, stage %s", (stage) => {
  it("resumes after kill -9 fetching again at most --max-tasks pages, and reports the whole crawl", async () => {
    site.site.resetCounters();
    const dir = tempDir();
    const json = join(dir, "..", `${dir.split("/").at(-1)}.json`);
    dirs.push(json);
    const args = ["--state", dir, "--stage", stage, "--max-tasks", String(MAX_TASKS), "-q", "--json", json, site.url];
    const child = new CliProcess(args);
    await untilRecorded(dir, 1000, child);
    child.kill("SIGKILL");
    const killed = await child.outcome();
    expect(killed.code).toBeNull(); // Killed, not ended.
    const before = readState(dir);
    expect(before?.todo).toBeGreaterThan(0);

    const resumed = await runCli(args, 120_000);
    expect(resumed.code).toBe(0);
    const twice = fetchedTwice();
    expect(twice.length).toBeLessThanOrEqual(MAX_TASKS);
    const records = jsonRecords(json);
    expect(records).toHaveLength(site.expected.records.length);
    expect(new Set(records)).toEqual(new Set(site.expected.records.map((record) => record.url)));
    expect(resumed.stdout).toContain(`state ${dir}: ${site.expected.records.length} records, ${before?.recorded} of them from before: the crawl is finished\n`);
  }, 180_000);
});

describe("crawl --state", () => {
  it("resumes after Ctrl-C, says it is finished when run again, and fetches nothing then", async () => {
    site.site.resetCounters();
    const dir = tempDir();
    const args = ["--state", dir, "--max-tasks", String(MAX_TASKS), "-q", site.url];
    const child = new CliProcess(args);
    await untilRecorded(dir, 800, child);
    child.kill("SIGINT");
    const interrupted = await child.outcome();
    expect(interrupted.code).toBe(130);
    const kept = readState(dir);
    expect(interrupted.stdout).toContain(`state ${dir}: ${kept?.recorded} records, ${kept?.todo} URLs to do: run the same command again to resume\n`);

    const resumed = await runCli(args, 120_000);
    expect(resumed.code).toBe(0);
    expect(fetchedTwice().length).toBeLessThanOrEqual(MAX_TASKS);
    expect(readState(dir)).toMatchObject({ recorded: site.expected.records.length, todo: 0 });

    const requests = site.site.totalRequests;
    const again = await runCli(args);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `state ${dir}: this crawl had already finished (${site.expected.records.length} records), nothing fetched; to crawl afresh, delete ${dir} or give another --state\n`,
    );
    expect(site.site.totalRequests - requests).toBe(0); // Nothing queued: no page, and so no robots.txt either.
  }, 180_000);

  it("refuses a state it cannot write before the first request, with exit status 2 and the errno", async () => {
    site.site.resetCounters();
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "");
    const result = await runCli(["--state", join(file, "state"), "-q", site.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`crawl: --state: ${join(file, "state")} cannot be written: ENOTDIR: not a directory (${file})\nTry 'crawl --help'.\n`);
    if (process.platform === "linux") {
      // /proc/sys: no one may make a folder there, root included, as on a read-only disk (EROFS).
      const proc = await runCli(["--state", "/proc/sys/crawl-state", "-q", site.url]);
      expect([proc.code, proc.stderr]).toEqual([2, "crawl: --state: /proc/sys/crawl-state cannot be written: EACCES: permission denied (/proc/sys)\nTry 'crawl --help'.\n"]);
    }
    expect(site.site.totalRequests).toBe(0);
  }, 60_000);

  it("refuses a state written by another crawl, naming the difference, with exit status 2 and nothing fetched", async () => {
    site.site.resetCounters();
    const dir = tempDir();
    const first = await runCli(["--state", dir, "--max-pages", "5", "-q", site.url]);
    expect(first.code).toBe(0);
    const requests = site.site.totalRequests;
    const other = await runCli(["--state", dir, "--max-depth", "2", "-q", site.url]);
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      `crawl: --state: ${dir} holds another crawl (maxDepth: "Infinity" in the state, 2 now); give another state directory, or delete ${dir} to crawl afresh\nTry 'crawl --help'.\n`,
    );
    const root = await runCli(["--state", dir, "-q", `${site.url}p/1`]);
    expect(root.code).toBe(2);
    expect(root.stderr).toContain(`(roots: ["${site.url}"] in the state, ["${site.url}p/1"] now)`);
    expect(site.site.totalRequests).toBe(requests);
  }, 60_000);

  it.each(["callbacks", "generators", "asyncawait"])("stops with status 1 when the state cannot be written (a file size limit), keeping what was written, which the same command resumes: stage %s", async (stage) => {
    site.site.resetCounters();
    const dir = tempDir();
    const args = ["--state", dir, "--stage", stage, "--max-tasks", String(MAX_TASKS), "-q", site.url];
    // ulimit -f 200: the log may not grow past 200 blocks of 512 bytes; the write past it fails with EFBIG.
    const limited = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const command = `ulimit -f 200; exec "${process.execPath}" "${CLI_PATH}" ${args.map((arg) => `'${arg}'`).join(" ")}`;
      execFile("bash", ["-c", command], { encoding: "utf8" }, (error, _stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stderr }));
    });
    expect(limited.code).toBe(1);
    expect(limited.stderr).toContain(`crawl: state: cannot write ${dir}/crawl.log: EFBIG: file too large, write; what was written is kept, and the same crawl run again resumes from it\n`);
    const kept = readState(dir);
    expect(kept?.recorded).toBeGreaterThan(0);
    const resumed = await runCli(args, 120_000);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`state ${dir}: ${site.expected.records.length} records, ${kept?.recorded} of them from before: the crawl is finished\n`);
    expect(fetchedTwice().length).toBeLessThanOrEqual(MAX_TASKS);
  }, 120_000);
});
