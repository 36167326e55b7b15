/**
 * `crawl --trace-url REGEX` and the `UrlTrace` behind it: one URL's lines
 * picked out of a crawl's trace, in the order they happened.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/command-line.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { StageName, TraceEvent } from "../../src/observe/events.js";
import { UrlTrace } from "../../src/observe/trace-url.js";
import type { FixtureSite } from "../../src/site/index.js";
import { requireBuiltCli, runCli } from "../cli/cli-process.js";
import { fourRecordSite } from "../cli/sites.js";

const A = "http://127.0.0.1:1/a";
const B = "http://127.0.0.1:1/b";
const COUNTERS = { queued: 0, unfinished: 1, inFlight: 1 };

/** A UrlTrace for `pattern` and the lines it wrote, each without its time and stage columns. */
function following(pattern: RegExp | string): { follow: UrlTrace; lines: string[] } {
  const lines: string[] = [];
  const follow = new UrlTrace(pattern, function collect(line) {
    lines.push(line.replace(/^ +\d+\.\dms {2}\w+ +/, ""));
  });
  return { follow, lines };
}

function fetchStart(stage: StageName, url: string): TraceEvent {
  return { t: 1, stage, type: "fetch-start", url, slot: 0, attempt: 1, ...COUNTERS };
}

function read(stage: StageName, url: string): TraceEvent {
  return { t: 2, stage, type: "read", url, slot: 0, bytes: 10 };
}

function page(url: string, referrer: string | null): FetchStatistic {
  const fields = { nextUrl: null, status: 200, error: null, size: 40, contentType: "text/html", encoding: "utf-8", detail: null, depth: 1, tries: 1, fetchedAt: "2026-11-27T21:00:00.000Z" };
  return { url, ...fields, numUrls: 3, numNewUrls: 2, referrer };
}

describe("UrlTrace", () => {
  it("writes the matching URL's events and record, and none of another URL's", () => {
    const { follow, lines } = following(/\/a$/);
    for (const event of [fetchStart("asyncawait", A), fetchStart("asyncawait", B), read("asyncawait", B), read("asyncawait", A)]) follow.trace(event);
    follow.record(page(B, null));
    follow.record(page(A, B));
    follow.end();
    expect(lines).toEqual([
      `fetch-start ${A} slot 0 try 1 queued 0 unfinished 1 in-flight 1`,
      `read ${A} slot 0 10 bytes`,
      `record ${A} 200 text/html 40 bytes, 3 links found, 2 queued (from ${B})`,
    ]);
    expect(follow.matched).toBe(1);
  });

  it("keeps a stage-2 step only when the URL's events came in its run", () => {
    const { follow, lines } = following("/a$");
    const step = (task: number, yielded: string): TraceEvent => ({ t: 3, stage: "generators", type: "step", task, coroutine: "work", yielded });
    follow.trace(fetchStart("generators", B));
    follow.trace(step(1, "waitFor")); // B's run
    follow.trace(fetchStart("generators", A));
    follow.trace(step(2, "waitFor")); // A's run
    follow.trace(step(3, "get")); // nobody's
    follow.trace(read("generators", A));
    follow.trace(step(4, "read")); // A's run
    expect(lines).toEqual([`fetch-start ${A} slot 0 try 1 queued 0 unfinished 1 in-flight 1`, "step task#2 work yielded waitFor", `read ${A} slot 0 10 bytes`, "step task#4 work yielded read"]);
  });

  it("keeps a stage-1 select only when its turn dispatched the URL's socket", () => {
    const { follow, lines } = following(/\/a$/);
    const select = (ready: number): TraceEvent => ({ t: 3, stage: "callbacks", type: "select", ready });
    follow.trace({ t: 1, stage: "callbacks", type: "dispatch", callback: "readResponse", url: B, socket: 2 });
    follow.trace(select(1));
    follow.trace(fetchStart("callbacks", A)); // started by a callback, but no dispatch of A's socket yet
    follow.trace(select(2));
    follow.trace({ t: 1, stage: "callbacks", type: "dispatch", callback: "connected", url: A, socket: 3 });
    follow.trace(select(3));
    expect(lines).toEqual([`fetch-start ${A} slot 0 try 1 queued 0 unfinished 1 in-flight 1`, `dispatch connected ${A} socket#3`, "select 3 ready"]);
  });

  it("says so at the end when nothing matched, with the number of URLs fetched", () => {
    const { follow, lines } = following(/nothing/g);
    follow.trace(fetchStart("callbacks", A));
    follow.trace(fetchStart("callbacks", B));
    follow.trace(fetchStart("callbacks", B));
    follow.end();
    expect(lines).toEqual(["no URL matched /nothing/ (of the 2 URLs fetched)"]);
  });

  it("searches the whole URL, as test() does without the g and y flags", () => {
    const { follow, lines } = following(/\/a$/gy); // sticky, a RegExp would match only at lastIndex
    follow.trace(fetchStart("asyncawait", A));
    follow.trace(fetchStart("asyncawait", `${B}/a`));
    expect(lines).toHaveLength(2);
  });

  it("throws a TypeError for a string that is not a regular expression", () => {
    expect(() => new UrlTrace("(", function ignore() {})).toThrow(TypeError);
  });
});

describe("parseCommandLine --trace-url", () => {
  it("compiles REGEX, and leaves it null when not given", () => {
    const invocation = parseCommandLine(["--demo", "--trace-url", "/p/1$"]);
    expect(invocation.kind === "crawl" && invocation.commandLine.traceUrl).toEqual(/\/p\/1$/);
    const plain = parseCommandLine(["--demo"]);
    expect(plain.kind === "crawl" && plain.commandLine.traceUrl).toBeNull();
  });

  it("refuses a bad regular expression with a usage error naming --trace-url", () => {
    expect(() => parseCommandLine(["--demo", "--trace-url", "("])).toThrow(/^bad --trace-url: expected a valid regular expression, got "\("$/);
  });
});

/** The trace lines of a run: stderr's non-empty lines, or a file's. */
function linesOf(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

/** A line's stage, event name and first URL (the one it is about; a record's referrer comes after). */
function parts(line: string): { stage: string; event: string; url: string | null } {
  const [, stage = "", event = ""] = line.trim().split(/\s+/);
  return { stage, event, url: /https?:\/\/\S+/.exec(line)?.[0] ?? null };
}

describe("crawl --trace-url", () => {
  let site: FixtureSite;
  let directory: string;

  beforeAll(async () => {
    requireBuiltCli();
    site = await fourRecordSite();
    directory = await mkdtemp(join(tmpdir(), "crawl-trace-url-"));
  });
  afterAll(async () => {
    await site.close();
    await rm(directory, { recursive: true, force: true });
  });

  it.each(["callbacks", "generators", "asyncawait"])("follows one page through connect, send, read and fetch-end to its record in %s", async (stage) => {
    const page = new URL("/a", site.url).href;
    const outcome = await runCli([site.url, "--stage", stage, "-q", "--trace-url", "/a$"]);
    expect(outcome.code).toBe(0);
    const lines = linesOf(outcome.stderr);
    // Every line is this stage's, and every line that names a URL is about the page.
    expect(lines.every((line) => parts(line).stage === stage)).toBe(true);
    expect(lines.filter((line) => parts(line).url !== null).every((line) => parts(line).url === page)).toBe(true);
    const events = lines.map((line) => parts(line).event);
    const order = ["fetch-start", "connect", "send", "read", "fetch-end", "record"].map((event) => events.indexOf(event));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(lines[events.indexOf("record")]).toContain(`record ${page} 200 text/html`);
    // The loop's lines kept are the ones tied to the page: each follows one of its own lines.
    const loopLines = events.flatMap((event, i) => (event === "step" || event === "select" ? [i] : []));
    expect(loopLines.every((i) => parts(lines[i - 1]).url === page)).toBe(true);
    if (stage === "callbacks") expect(events).toContain("dispatch");
    if (stage === "generators") expect(events).toContain("step");
    if (stage === "asyncawait") expect([events[0], events.at(-1)]).toEqual(["take", "done"]);
  });

  it("prints a line per stage saying nothing matched, and exits 0", async () => {
    const outcome = await runCli([site.url, "--compare", "-q", "--trace-url", "/nothing-here$"]);
    expect(outcome.code).toBe(0);
    const lines = linesOf(outcome.stderr);
    expect(lines.map((line) => parts(line).stage)).toEqual(["callbacks", "generators", "asyncawait"]);
    // robots.txt, /, /a, /b and /old
    expect(lines.every((line) => line.endsWith("no URL matched /\\/nothing-here$/ (of the 5 URLs fetched)"))).toBe(true);
  });

  it("writes every stage's lines of the demo's root to --trace's FILE with --compare", async () => {
    const traceFile = join(directory, "root.txt");
    const outcome = await runCli(["--demo", "--compare", "-q", "--trace", traceFile, "--trace-url", ":\\d+/$"]);
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toBe("");
    const lines = linesOf(await readFile(traceFile, "utf8"));
    const stages = lines.map((line) => parts(line).stage);
    expect([...new Set(stages)]).toEqual(["callbacks", "generators", "asyncawait"]);
    for (const stage of ["callbacks", "generators", "asyncawait"]) {
      const starts = lines.filter((line) => parts(line).stage === stage && parts(line).event === "fetch-start");
      expect(starts).toHaveLength(1);
      expect(parts(starts[0]).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    }
  });

  it("is a usage error naming --trace-url when REGEX is not a regular expression", async () => {
    const outcome = await runCli(["--demo", "--trace-url", "("]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^crawl: bad --trace-url: expected a valid regular expression/);
  });
});
