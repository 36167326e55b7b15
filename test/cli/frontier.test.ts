/**
 * `crawl --frontier URL --crawl-name NAME`: the built command against a real
 * redis-server and a fixture site, as a user runs it (the usage errors are in
 * command-line.test.ts; the exit status a bad --frontier URL gets is at the end).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frontierLine, statusText, withoutPassword } from "../../src/cli/frontier-status.js";
import type { FixtureSite } from "../../src/site/index.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { CliProcess, requireBuiltCli, runCli } from "./cli-process.js";
import { closedPort, fourRecordSite } from "./sites.js";

/** The per-URL lines the report lists between its header and its counters. */
function reportUrlLines(stdout: string): string[] {
  const report = stdout.slice(stdout.indexOf("*** Report ***"));
  return report.split("\n").filter((line) => line.startsWith("http://"));
}

/** The line after the report that names the frontier. */
function frontierLineOf(stdout: string): string | undefined {
  return stdout.split("\n").find((line) => line.startsWith("frontier "));
}

/** A process's name in a crawl, as the frontier makes it: HOST:PID:RANDOM. */
const OWNER = String.raw`[^\s()]+:\d+:[0-9a-f]{6}`;

describeWithRedis("crawl --frontier", () => {
  let redis: RedisServer;
  let site: FixtureSite;
  let names = 0;

  beforeAll(async () => {
    requireBuiltCli();
    redis = await startRedis();
    site = await fourRecordSite();
    // A page whose links never answer: a crawl that only Ctrl-C (or Redis going away) ends early.
    site.addPage("/slow", ["/silent/1", "/silent/2", "/silent/3", "/silent/4"]);
    for (const n of [1, 2, 3, 4]) site.addFault(`/silent/${n}`, { kind: "silent" });
  });
  afterAll(async () => {
    await site?.close();
    await redis?.remove();
  });

  /** `--frontier URL --crawl-name NAME`, for a name no other test uses. */
  function frontierFlags(name = `crawl${++names}`): string[] {
    return ["--frontier", redis.url, "--crawl-name", name];
  }

  it("crawls through Redis to the same records as without it, and says what this process recorded", async () => {
    const plain = await runCli(["--ignore-robots", `${site.url}/`]);
    const shared = await runCli([...frontierFlags("same"), "--ignore-robots", `${site.url}/`]);
    expect(shared.stderr).toBe("");
    expect(shared.code).toBe(0);
    expect(reportUrlLines(shared.stdout)).toEqual(reportUrlLines(plain.stdout));
    expect(reportUrlLines(shared.stdout)).toHaveLength(4);
    expect(shared.stdout).toContain("Todo: 0\nDone: 4\n");
    expect(frontierLineOf(shared.stdout)).toMatch(
      new RegExp(`^frontier ${redis.url}, crawl same: 4 records in Redis; this process \\(${OWNER}\\) recorded 4$`),
    );
  });

  it("ends a finished crawl at once when run again, with the same records and no request to the site", async () => {
    const flags = [...frontierFlags(), `${site.url}/`];
    const first = await runCli(flags);
    site.resetCounters();
    const again = await runCli(flags);
    expect(again.code).toBe(0);
    expect(site.totalRequests).toBe(0);
    expect(reportUrlLines(again.stdout)).toEqual(reportUrlLines(first.stdout));
    expect(again.stdout).toContain("Todo: 0\nDone: 4\n");
    expect(frontierLineOf(again.stdout)).toMatch(/: 4 records in Redis; this process \(.+\) recorded 0$/);
  });

  it("refuses a --no-redis-records process joining a crawl that keeps its records, and says options as the help does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-records-"));
    try {
      const flags = [...frontierFlags(), "--ignore-robots", `${site.url}/`];
      expect((await runCli([...flags, "--exclude", "\\.pdf$"])).code).toBe(0);
      const joining = await runCli([...flags, "--exclude", "\\.pdf$", "--no-redis-records", "--jsonl", join(dir, "records.jsonl")]);
      expect(joining.code).toBe(1);
      expect(joining.stderr).toBe(`crawl: crawl ${flags[3]} was started with records kept in Redis, and this process keeps them in each process's --jsonl only (--no-redis-records); crawl it with the same ROOTs and options, or give this crawl another --crawl-name\n`);
      const other = await runCli(flags);
      expect(other.stderr).toContain(`was started with exclude /\\.pdf$/, and this process has none;`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("resumes a crawl that --max-pages stopped, fetching only the URLs left", async () => {
    const flags = [...frontierFlags(), "--ignore-robots", `${site.url}/`];
    const first = await runCli([...flags, "--max-pages", "1"]);
    expect(first.code).toBe(0);
    expect(reportUrlLines(first.stdout).map((line) => line.split(" ")[0])).toEqual([`${site.url}/`]);
    expect(first.stdout).toContain("Todo: 3\nDone: 1\n");
    site.resetCounters();
    const resumed = await runCli(flags);
    expect(resumed.code).toBe(0);
    expect(site.requestsFor("/")).toBe(0);
    expect(site.totalRequests).toBe(3); // /a, /b and /old
    expect(reportUrlLines(resumed.stdout).map((line) => line.split(" ")[0])).toEqual(
      [`${site.url}/`, `${site.url}/a`, `${site.url}/b`, `${site.url}/old`],
    );
    expect(frontierLineOf(resumed.stdout)).toMatch(/: 4 records in Redis; this process \(.+\) recorded 3$/);
  });

  it("prints the crawl's state with --status: exits 1 saying so before the crawl, the counts and the process after", async () => {
    const flags = frontierFlags("told");
    const before = await runCli([...flags, "--status"]);
    expect(before).toEqual({
      code: 1,
      stdout: "",
      stderr: `crawl: frontier ${redis.url}, crawl told: nothing in Redis under this name (a crawl starts when a process crawls a ROOT with this --frontier and --crawl-name)\n`,
    });
    const crawled = await runCli([...flags, "--ignore-robots", `${site.url}/`]);
    const owner = /this process \((\S+)\)/.exec(crawled.stdout)?.[1];
    const after = await runCli([...flags, "--status"]);
    expect(after.code).toBe(0);
    expect(after.stderr).toBe("");
    const lines = after.stdout.split("\n");
    expect(lines.slice(0, 6)).toEqual([
      `frontier ${redis.url}, crawl told: finished`,
      "queued         0",
      "leased         0",
      "records        4",
      "seen           4",
      "processes      1",
    ]);
    expect(lines[6]).toMatch(new RegExp(`^  ${owner}  alive \\d+\\.\\d s ago  leased 0$`));
    expect(lines.slice(7)).toEqual([""]);
  });

  it.each([
    ["Ctrl-C", "SIGINT", 130, "Interrupted\n"],
    ["SIGTERM", "SIGTERM", 143, "Interrupted by SIGTERM\n"],
  ] as const)("hands its leased URLs back at %s (%s), prints its report and exits with %i; the URLs wait queued", async (_, signal, exit, message) => {
    const flags = frontierFlags();
    const crawl = new CliProcess([...flags, "-v", "--max-tasks", "2", "--ignore-robots", `${site.url}/slow`]);
    await crawl.waitForStdout(`${site.url}/slow 200`);
    // Two silent pages are being fetched, each leased to this process, and two wait in the queue.
    let status = "";
    for (let look = 0; look < 100 && !status.includes("\nleased         2\n"); look++) {
      status = (await runCli([...flags, "--status"])).stdout;
    }
    expect(status).toContain("\nqueued         2\nleased         2\n");
    crawl.kill(signal);
    const { code, stdout, stderr } = await crawl.outcome();
    expect(code).toBe(exit);
    expect(stderr).toBe(message);
    expect(stdout).toContain("Todo: 4\nDone: 1\n");
    expect(frontierLineOf(stdout)).toMatch(/: 1 record in Redis; this process \(.+\) recorded 1, and handed the URLs it held back to the queue$/);
    const after = await runCli([...flags, "--status"]);
    expect(after.stdout.split("\n").slice(0, 6)).toEqual([
      `frontier ${redis.url}, crawl ${flags[3]}: stopped with 4 URLs queued; crawl with the same flags again to resume it`,
      "queued         4",
      "leased         0",
      "records        1",
      "seen           5",
      "processes      1",
    ]);
  });

  it("stops with status 1 and the frontier's message when Redis goes away during the crawl", async () => {
    const doomed = await startRedis();
    try {
      // A lease of 1 s: Redis is waited for half of it before the crawl stops.
      const crawl = new CliProcess(["--frontier", doomed.url, "--crawl-name", "doomed", "-v", "--ignore-robots", "--lease", "1", `${site.url}/slow`]);
      await crawl.waitForStdout(`${site.url}/slow 200`);
      await doomed.kill();
      const { code, stderr } = await crawl.outcome();
      expect(code).toBe(1);
      expect(stderr).toMatch(
        new RegExp(`^crawl: Redis at ${doomed.url} stopped answering: .+; this Redis keeps nothing on disk \\(no appendonly, no save\\): if it restarts, the crawl is lost, and running it again starts it over\\n$`),
      );
    } finally {
      await doomed.remove();
    }
  });
});

describe("crawl --frontier without Redis", () => {
  let port: number;
  beforeAll(async () => {
    requireBuiltCli();
    port = await closedPort();
  });

  it.each([[["http://127.0.0.1:1/"]], [["--status"]]])("exits with 1 and says so when Redis cannot be reached: %j", async (args) => {
    const url = `redis://127.0.0.1:${port}/0`;
    const { code, stdout, stderr } = await runCli(["--frontier", url, "--crawl-name", "nowhere", ...args]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe(`crawl: cannot use Redis at ${url}: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it("never prints the password in the frontier's URL", async () => {
    const url = `redis://:s3cret@127.0.0.1:${port}/0`;
    const { stderr } = await runCli(["--frontier", url, "--crawl-name", "nowhere", "--status"]);
    expect(stderr).toBe(`crawl: cannot use Redis at redis://:***@127.0.0.1:${port}/0: connect ECONNREFUSED 127.0.0.1:${port}\n`);
    const flags = { url, name: "n", leaseMs: 30_000 };
    expect(frontierLine(flags, "h:1:abcdef", 5, 2, false)).toBe(`frontier redis://:***@127.0.0.1:${port}/0, crawl n: 5 records in Redis; this process (h:1:abcdef) recorded 2\n`);
    expect(statusText(flags, { queued: 0, leased: 0, records: 0, seen: 0, workers: [], created: false })).not.toContain("s3cret");
    expect(withoutPassword(`redis://127.0.0.1:${port}/0`)).toBe(`redis://127.0.0.1:${port}/0`);
    expect(withoutPassword(`redis://s3cret@127.0.0.1:${port}/0`)).toBe(`redis://***@127.0.0.1:${port}/0`);
    for (const bad of ["redis://:s3cret@", "redis//:s3cret@h", "http://:s3cret@h/"]) {
      const usage = await runCli(["--frontier", bad, "--crawl-name", "n", "--status"]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("--frontier");
      expect(usage.stderr + usage.stdout).not.toContain("s3cret");
    }
  });
});

describe("crawl --frontier with a bad URL", () => {
  it.each(["http://x", "redis://", "nonsense"])("exits 2 naming --frontier for %s", async (url) => {
    requireBuiltCli();
    const outcome = await runCli(["--frontier", url, "--crawl-name", "bad-url", "http://127.0.0.1:9/"]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^crawl: --frontier/m);
    expect(outcome.stdout).toBe("");
  });
});
