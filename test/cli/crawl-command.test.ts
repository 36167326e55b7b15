import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComparisonJson, CrawlResultJson } from "../../src/cli/result-json.js";
import { FixtureSite } from "../../src/site/index.js";
import { CliProcess, requireBuiltCli, runCli } from "./cli-process.js";
import { closedPort as findClosedPort, fourRecordSite } from "./sites.js";

const STAGES = ["callbacks", "generators", "asyncawait"] as const;

let site: FixtureSite;
/** A port nothing listens on: a root there gets ConnectionRefused (with a detail saying robots.txt could not be read while it is obeyed). */
let closedPort: number;
/** A site whose robots.txt disallows /private. */
let robotsSite: FixtureSite;

beforeAll(async () => {
  requireBuiltCli();
  closedPort = await findClosedPort();
  site = await fourRecordSite();
  // The same with one link to a port that refuses connections: an error record.
  site.addPage("/with-error", ["/b", `http://127.0.0.1:${closedPort}/gone`]);
  // A page whose links never answer: a crawl that only Ctrl-C ends early.
  site.addPage("/slow", ["/silent/1", "/silent/2", "/silent/3", "/silent/4"]);
  for (const n of [1, 2, 3, 4]) site.addFault(`/silent/${n}`, { kind: "silent" });

  robotsSite = await FixtureSite.start();
  robotsSite.addPage("/robots.txt", "User-agent: *\nDisallow: /private\n", "text/plain");
  robotsSite.addPage("/", ["/public", "/private/secret"]).addPage("/public", []).addPage("/private/secret", []);
});

afterAll(async () => {
  await site?.close();
  await robotsSite?.close();
});

/** The per-URL lines the report lists between its header and its counters. */
function reportUrlLines(stdout: string): string[] {
  const report = stdout.slice(stdout.indexOf("*** Report ***"));
  return report.split("\n").filter((line) => line.startsWith("http://"));
}

describe("crawl --demo --compare", () => {
  it("runs the three stages on the demo site and finds them identical", async () => {
    const { code, stdout, stderr } = await runCli(["--demo", "--compare"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const [intro, blank, header] = stdout.split("\n");
    expect(intro).toMatch(/^Each stage crawled http:\/\/127\.0\.0\.1:\d+\/ in turn, with maxTasks 100:$/);
    expect(blank).toBe("");
    expect(header.trim().split(/\s+/)).toEqual([...STAGES]);
    expect(stdout).toMatch(/^records +\d+ +\d+ +\d+$/m);
    expect(stdout).toMatch(/^peak concurrency /m);
    expect(stdout).toMatch(/^ {2}seen by server +\d+ +\d+ +\d+$/m);
    expect(stdout).toMatch(/^identical: the 3 stages made the same records$/m);
    expect(stdout).toContain("Next: add --timeline timeline.html");
  });
});

describe("crawl --json", () => {
  it("writes only the CrawlResult as JSON to stdout with -, and the report to stderr", async () => {
    const { code, stdout, stderr } = await runCli([
      "--json", "-", "--exclude", "b$", "--max-pages", "10", "--lenient", "--timeout", "2.5", `${site.url}/`,
    ]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as CrawlResultJson;
    expect(result.stage).toBe("asyncawait");
    expect(result.interrupted).toBe(false);
    expect(result.records.map((record) => record.url).sort()).toEqual(
      [`${site.url}/`, `${site.url}/a`, `${site.url}/old`].sort(),
    );
    expect(result.records.find((record) => record.url === `${site.url}/old`)).toMatchObject({
      status: 302,
      nextUrl: `${site.url}/a`,
      referrer: `${site.url}/`,
    });
    expect(result.records.find((record) => record.url === `${site.url}/`)?.referrer).toBeNull();
    expect(result.recorded).toBe(3);
    expect(result.seen).toEqual([`${site.url}/`, `${site.url}/a`, `${site.url}/old`]);
    expect(result.todo).toBe(0);
    expect(result.finishedAt).toBeGreaterThanOrEqual(result.startedAt);
    expect(result.options).toEqual({
      maxRedirect: 10,
      maxTries: 4,
      maxTasks: 100,
      exclude: "b$",
      include: null,
      noParent: false,
      maxDepth: null,
      strict: false,
      timeoutMs: 2500,
      idleTimeoutMs: 30_000,
      retryDelayMs: 500,
      maxPages: 10,
      maxBodyBytes: 10 * 1024 * 1024,
      skipNonHtml: false,
      userAgent: "coroutine-crawler/0.1.0",
      headers: [],
      rejectUnauthorized: true,
      robots: true,
      sitemaps: false,
      maxPerHost: null,
      delayMs: 0,
      delayJitter: 0,
      seed: expect.any(Number),
      maxCrawlDelayMs: 30_000,
      maxRetryAfterMs: 60_000,
      keepRecords: true,
      allowedDomains: null,
      cookies: false,
      proxy: null,
    });
    // The fixture site has no robots.txt: a 404, so everything is allowed.
    expect(result.robots).toEqual([
      { origin: site.url, url: `${site.url}/robots.txt`, status: 404, error: null, detail: null, verdict: "allow-all", crawlDelayMs: null, attempts: 1 },
    ]);
    expect(stderr).toContain("*** Report ***");
    expect(stderr).toContain("Done: 3");
  });

  it("writes to a file, and shows no limit and no exclude as null", async () => {
    const directory = await mkdtemp(join(tmpdir(), "crawl-json-"));
    try {
      const file = join(directory, "result.json");
      const { code, stdout } = await runCli(["--json", file, "--stage", "callbacks", `${site.url}/`]);
      expect(code).toBe(0);
      expect(stdout).toContain("*** Report ***");
      const result = JSON.parse(await readFile(file, "utf8")) as CrawlResultJson;
      expect(result.stage).toBe("callbacks");
      expect(result.records).toHaveLength(4);
      expect(result.options).toMatchObject({ exclude: null, maxPages: null, strict: true });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("writes the crawl controls in force, naming the headers without their values", async () => {
    const { code, stdout } = await runCli([
      "--json", "-", "--include", "/a$", "--no-parent", "--max-depth", "2", "--skip-non-html",
      "--header", "Cookie: session=secret", "--header", "Accept-Language: fr", `${site.url}/`,
    ]);
    expect(code).toBe(0);
    expect(stdout).not.toContain("secret");
    const result = JSON.parse(stdout) as CrawlResultJson;
    expect(result.options).toMatchObject({
      include: "\\/a$", noParent: true, maxDepth: 2, skipNonHtml: true, headers: ["Cookie", "Accept-Language"],
    });
  });

  it("writes every stage's result and the verdict with --compare", async () => {
    const { code, stdout, stderr } = await runCli(["--compare", "--json", "-", `${site.url}/`]);
    expect(code).toBe(0);
    const comparison = JSON.parse(stdout) as ComparisonJson;
    expect(comparison.identical).toBe(true);
    expect(comparison.stages.map((result) => result.stage)).toEqual([...STAGES]);
    for (const result of comparison.stages) expect(result.records).toHaveLength(4);
    expect(stderr).toContain("identical");
  });
});

describe("crawl --compare with robots.txt", () => {
  it("finds the three stages identical, each reading robots.txt once and never requesting what it disallows", async () => {
    robotsSite.resetCounters();
    const { code, stdout } = await runCli(["--compare", `${robotsSite.url}/`]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}RobotsDisallowed +1 +1 +1$/m);
    expect(stdout).toMatch(/^robots\.txt read +1 +1 +1$/m);
    expect(stdout).toMatch(/^identical: the 3 stages made the same records$/m);
    expect(robotsSite.requestsFor("/robots.txt")).toBe(3);
    expect(robotsSite.requestsFor("/private/secret")).toBe(0);
  });
});

describe("crawl --json with robots.txt", () => {
  it("writes each origin's robots.txt fetch apart from the records", async () => {
    const { code, stdout } = await runCli(["--json", "-", `${robotsSite.url}/`]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as CrawlResultJson;
    expect(result.robots).toEqual([
      { origin: robotsSite.url, url: `${robotsSite.url}/robots.txt`, status: 200, error: null, detail: null, verdict: "rules", crawlDelayMs: null, attempts: 1 },
    ]);
    expect(result.records.find((record) => record.url === `${robotsSite.url}/private/secret`)).toMatchObject({
      status: null,
      error: "RobotsDisallowed",
      referrer: `${robotsSite.url}/`,
    });
    expect(result.records.map((record) => record.url)).not.toContain(`${robotsSite.url}/robots.txt`);
  });

  it("writes an empty robots list, and robots false, with --ignore-robots", async () => {
    const { code, stdout } = await runCli(["--json", "-", "--ignore-robots", "--max-per-host", "2", "--delay", "0.005", `${robotsSite.url}/`]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as CrawlResultJson;
    expect(result.robots).toEqual([]);
    expect(result.options).toMatchObject({ robots: false, maxPerHost: 2, delayMs: 5 });
    expect(result.records).toHaveLength(3);
  });
});

describe("crawl --compare of a root that refuses connections", () => {
  it("does not call the three empty crawls identical, and exits with 3", async () => {
    const { code, stdout } = await runCli(["--compare", "--max-tries", "1", `http://127.0.0.1:${closedPort}/`]);
    expect(code).toBe(3);
    // Its robots.txt cannot be read either, so the root is never requested: its record has the failure's name.
    expect(stdout).toMatch(/^ {2}ConnectionRefused +1 +1 +1$/m);
    expect(stdout).toMatch(/^robots\.txt read +1 +1 +1$/m);
    expect(stdout).toContain("nothing fetched: no root got a response in any of the 3 stages (1 root: connection refused; see the table)\n");
    expect(stdout).not.toContain("identical");
  });
});

describe("crawl usage errors", () => {
  it.each([
    [["--bogus", "a.com"], "crawl: unknown option '--bogus'"],
    [["--max-tasks", "lots", "a.com"], "crawl: --max-tasks expects a whole number, got 'lots'"],
    [["--max-tries", "0", "a.com"], "crawl: bad --max-tries: expected `maxTries` to be an integer from 1 and up, got 0"],
    [["--exclude", "[", "a.com"], "crawl: bad --exclude: expected `exclude` to be a valid regular expression, got \"[\""],
    [[], "crawl: no ROOT given (or use --demo)"],
    [["--stage", "threads", "a.com"], "crawl: unknown stage 'threads' (choose callbacks, generators, asyncawait)"],
    [["--max-per-host", "0", "a.com"], "crawl: bad --max-per-host: expected `maxPerHost` to be an integer from 1 and up, got 0"],
    [["--delay", "1s", "a.com"], "crawl: --delay expects a number of seconds, got '1s'"],
    [["--delay-jitter", "2", "a.com"], "crawl: bad --delay-jitter: expected `delayJitter` to be a number from 0 to 1, got 2"],
    [["--max-crawl-delay", "-1", "a.com"], "crawl: --max-crawl-delay expects a number of seconds, got '-1'"],
    [["--max-retry-after", "soon", "a.com"], "crawl: --max-retry-after expects a number of seconds, got 'soon'"],
    [["--ignore-robots=1", "a.com"], "crawl: option '--ignore-robots' takes no value"],
    [["--compare", "--jsonl", "r.jsonl", "a.com"], "crawl: --compare and --jsonl cannot be used together: --compare keeps every stage's records to compare them"],
    [["--json", "-", "--jsonl", "-", "a.com"], "crawl: --json - and --jsonl - cannot both write to stdout; give one a FILE"],
  ])("exits with 2 and one line for %j", async (args, message) => {
    const { code, stdout, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(`${message}\nTry 'crawl --help'.\n`);
  });

  it("prints the help and the version", async () => {
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: crawl \[options\] ROOT\.\.\./);
    expect(help.stdout).toContain("--max-tasks N");
    expect(help.stdout).toContain("Politeness (a root not on this machine gets --max-per-host 2 --delay 0.5\nunless given: at most 2 requests a second");
    expect(help.stdout).toContain("the 1 a second its new projects set):\n  --ignore-robots ");
    expect(help.stdout).toContain("  -o, --output FILE");
    expect(help.stdout).toContain("  --jsonl [FILE]");
    for (const flag of ["--max-per-host N", "--delay SECONDS", "--delay-jitter F", "--max-crawl-delay SECONDS", "--max-retry-after SECONDS", "--user-agent TEXT"]) {
      expect(help.stdout).toContain(`  ${flag}`);
    }
    const version = await runCli(["--version"]);
    expect(version).toEqual({ code: 0, stdout: "crawl (coroutine-crawler) 0.1.0\n", stderr: "" });
  });
});

describe.each(STAGES)("crawl --stage %s", (stage) => {
  it("prints the report, and nothing on stderr when it is not a terminal", async () => {
    site.resetCounters();
    const { code, stdout, stderr } = await runCli(["--stage", stage, `${site.url}/`]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
    expect(stdout.startsWith("*** Report ***\n")).toBe(true);
    expect(reportUrlLines(stdout)).toHaveLength(4);
    expect(stdout).toContain(`${site.url}/old 302 -> ${site.url}/a`);
    expect(stdout).toContain("Todo: 0\nDone: 4\n");
    // robots.txt is read once, before the first page: a 404, so everything is allowed.
    expect(site.requestsFor("/robots.txt")).toBe(1);
    expect(site.totalRequests).toBe(5);
    expect(stdout).toContain(`\nrobots.txt ${site.url}: 404; everything allowed\n0 URLs disallowed by robots.txt (read at 1 origin)\n`);
  });

  it("does not request a path robots.txt disallows, and lists it as an error", async () => {
    robotsSite.resetCounters();
    const { code, stdout } = await runCli(["--stage", stage, `${robotsSite.url}/`]);
    expect(code).toBe(0);
    expect(robotsSite.requestsFor("/private/secret")).toBe(0);
    expect(robotsSite.requestsFor("/robots.txt")).toBe(1);
    const lines = reportUrlLines(stdout);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(`${robotsSite.url}/private/secret error RobotsDisallowed`);
    expect(lines.filter((line) => line.includes(" 200 text/html "))).toHaveLength(2);
    expect(stdout).toContain("\n1 URL disallowed by robots.txt (read at 1 origin)\n");
    expect(stdout).toMatch(/^ +1 RobotsDisallowed$/m);
  });

  it("neither reads robots.txt nor obeys it with --ignore-robots", async () => {
    robotsSite.resetCounters();
    const { code, stdout } = await runCli(["--ignore-robots", "--stage", stage, `${robotsSite.url}/`]);
    expect(code).toBe(0);
    expect(robotsSite.requestsFor("/robots.txt")).toBe(0);
    expect(robotsSite.requestsFor("/private/secret")).toBe(1);
    expect(reportUrlLines(stdout)).toHaveLength(3);
    expect(stdout).not.toContain("robots.txt");
  });

  it("prints a line per URL as it completes with -v, before the report", async () => {
    const { code, stdout } = await runCli(["-v", "--stage", stage, `${site.url}/`]);
    expect(code).toBe(0);
    const live = stdout.slice(0, stdout.indexOf("*** Report ***")).trimEnd().split("\n");
    expect(live).toHaveLength(4);
    expect([...live].sort()).toEqual(reportUrlLines(stdout));
    expect(stdout).toMatch(/^Options: maxTasks=100 /m);
    // Each URL names the page that linked to it; the root names none.
    expect(live).toContain(`${site.url}/old 302 -> ${site.url}/a (from ${site.url}/)`);
    expect(live.filter((line) => line.startsWith(`${site.url}/ `))).toEqual([expect.not.stringContaining("(from ")]);
  });

  it("lists only the errors with -q, and only the robots.txt that could not be read", async () => {
    const { code, stdout } = await runCli(["-q", "--max-tries", "1", "--stage", stage, `${site.url}/with-error`]);
    expect(code).toBe(0);
    // The refused port's robots.txt cannot be read either, so /gone is never requested.
    const why = `robots.txt http://127.0.0.1:${closedPort}/robots.txt could not be read (1 attempt): ConnectionRefused; the origin cannot be reached, so its pages would fail the same way: robots.txt is only where that was met first`;
    expect(reportUrlLines(stdout)).toEqual([`http://127.0.0.1:${closedPort}/gone error ConnectionRefused (${why})`]);
    expect(stdout.split("\n").filter((line) => line.startsWith("robots.txt "))).toEqual([
      `robots.txt http://127.0.0.1:${closedPort}: unreachable (ConnectionRefused after 1 attempt); nothing fetched there`,
    ]);
    expect(stdout).toContain("Done: 3");
  });

  it("reports a root that cannot be fetched, says nothing was fetched, and exits with 3", async () => {
    const args = ["--ignore-robots", "--max-tries", "2", "--stage", stage, `http://127.0.0.1:${closedPort}/`];
    const { code, stdout, stderr } = await runCli(args);
    expect(code).toBe(3);
    expect(reportUrlLines(stdout)).toEqual([`http://127.0.0.1:${closedPort}/ error ConnectionRefused`]);
    expect(stdout).toContain("Todo: 0\nDone: 1\n");
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: connection refused; see the report)\n");
  });

  it("names a refused connection, not robots.txt, when a root's origin cannot be reached, and exits with 3", async () => {
    const { code, stdout, stderr } = await runCli(["--max-tries", "2", "--stage", stage, `http://127.0.0.1:${closedPort}/`]);
    expect(code).toBe(3);
    // The page gets the failure's name, and says robots.txt is why it was never requested.
    const why = `robots.txt http://127.0.0.1:${closedPort}/robots.txt could not be read (2 attempts): ConnectionRefused; the origin cannot be reached, so its pages would fail the same way: robots.txt is only where that was met first`;
    expect(reportUrlLines(stdout)).toEqual([`http://127.0.0.1:${closedPort}/ error ConnectionRefused (${why})`]);
    expect(stdout).toContain(`\nrobots.txt http://127.0.0.1:${closedPort}: unreachable (ConnectionRefused after 2 attempts); nothing fetched there\n`);
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: connection refused; see the report)\n");
  });

  it("names a host that does not resolve, met reading its robots.txt, and exits with 3", async () => {
    // RFC 6761: no `.invalid` name resolves (where no resolver answers at all, it is EAI_AGAIN: still HostNotFound).
    const { code, stderr } = await runCli(["--max-tries", "1", "--stage", stage, "http://crawl-command.invalid/"]);
    expect(code).toBe(3);
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: host not found; see the report)\n");
  });

  it("says robots.txt is why when it disallows the root", async () => {
    const { code, stderr } = await runCli(["--stage", stage, `${robotsSite.url}/private/secret`]);
    expect(code).toBe(3);
    expect(stderr).toBe("crawl: nothing fetched: no root got a response (1 root: not fetched because robots.txt disallows it; see the report)\n");
  });

  it("exits with 0 when one root of several got a response", async () => {
    const { code, stderr } = await runCli(["--max-tries", "1", "--stage", stage, `http://127.0.0.1:${closedPort}/`, `${site.url}/b`]);
    expect(code).toBe(0);
    expect(stderr).toBe("");
  });

  it("stops at Ctrl-C, prints Interrupted and the partial report, and exits with 130", async () => {
    const crawl = new CliProcess(["-v", "--max-tasks", "2", "--stage", stage, `${site.url}/slow`]);
    await crawl.waitForStdout(`${site.url}/slow 200`);
    crawl.kill("SIGINT");
    const { code, stdout, stderr } = await crawl.outcome();
    expect(code).toBe(130);
    expect(stderr).toBe("Interrupted\n");
    // Two silent pages were in flight (cancelled, no record), two waited in the queue.
    expect(reportUrlLines(stdout)).toHaveLength(1);
    expect(stdout).toContain("Todo: 4\nDone: 1\n");
  });
});
