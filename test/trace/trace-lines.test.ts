/**
 * `crawl --trace`: the line each event becomes, and the command's output as a
 * learner sees it (through the built dist/cli.js).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/cli/command-line.js";
import { traceLine } from "../../src/observe/trace-lines.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { requireBuiltCli, runCli } from "../cli/cli-process.js";

const URL = "http://127.0.0.1:8080/p/1";

describe("traceLine", () => {
  it.each<[TraceEvent, string]>([
    [
      { t: 50.66, stage: "callbacks", type: "fetch-start", url: URL, slot: 3, attempt: 1, queued: 5, unfinished: 9, inFlight: 3 },
      `     50.7ms  callbacks   fetch-start ${URL} slot 3 try 1 queued 5 unfinished 9 in-flight 3`,
    ],
    [{ t: 22.4, stage: "callbacks", type: "dispatch", callback: "connected", url: URL, socket: 4 }, `     22.4ms  callbacks   dispatch connected ${URL} socket#4`],
    [{ t: 1, stage: "callbacks", type: "select", ready: 2 }, "      1.0ms  callbacks   select 2 ready"],
    [{ t: 1, stage: "callbacks", type: "timer", callback: "timedOut" }, "      1.0ms  callbacks   timer timedOut"],
    [{ t: 2, stage: "generators", type: "connect", url: URL, slot: 0 }, `      2.0ms  generators  connect ${URL} slot 0`],
    [{ t: 2, stage: "generators", type: "read", url: URL, slot: 0, bytes: 320 }, `      2.0ms  generators  read ${URL} slot 0 320 bytes`],
    [
      { t: 3, stage: "generators", type: "step", task: 14, coroutine: "waitFor", yielded: "read" },
      "      3.0ms  generators  step task#14 waitFor yielded read",
    ],
    [{ t: 3, stage: "generators", type: "step", task: 2, coroutine: "work", yielded: null }, "      3.0ms  generators  step task#2 work returned"],
    [{ t: 3, stage: "generators", type: "resolve", future: 26, label: "read" }, "      3.0ms  generators  resolve future#26 read"],
    [{ t: 3, stage: "generators", type: "cancel", task: 5 }, "      3.0ms  generators  cancel task#5"],
    [{ t: 4, stage: "asyncawait", type: "take", worker: 2, url: URL }, `      4.0ms  asyncawait  take worker 2 ${URL}`],
    [
      { t: 4, stage: "asyncawait", type: "await", worker: 2, url: URL, what: "client.get" },
      `      4.0ms  asyncawait  await worker 2 client.get ${URL}`,
    ],
    [
      { t: 1234.5, stage: "asyncawait", type: "fetch-end", url: URL, slot: 2, attempt: 2, status: null, error: "ConnectionReset", queued: 0, unfinished: 1, inFlight: 0 },
      `   1234.5ms  asyncawait  fetch-end ${URL} slot 2 try 2 ConnectionReset queued 0 unfinished 1 in-flight 0`,
    ],
  ])("formats %j", (event, line) => {
    expect(traceLine(event)).toBe(line);
  });
});

describe("parseCommandLine --trace and --timeline", () => {
  function commandLine(argv: string[]) {
    const invocation = parseCommandLine(argv);
    if (invocation.kind !== "crawl") throw new Error(`expected a crawl, got ${invocation.kind}`);
    return invocation.commandLine;
  }

  it("sends the trace to stderr when --trace has no FILE", () => {
    expect(commandLine(["--demo", "--trace"]).trace).toBe("-");
    expect(commandLine(["--trace", "--demo"]).trace).toBe("-");
    expect(commandLine(["--demo"]).trace).toBeNull();
  });

  it("takes the word after --trace as its FILE, and --timeline's FILE", () => {
    expect(commandLine(["--demo", "--trace", "t.txt", "--timeline", "out.html"])).toMatchObject({
      trace: "t.txt",
      timeline: "out.html",
    });
  });

  it("refuses --timeline without a file name", () => {
    expect(() => parseCommandLine(["--demo", "--timeline", "-"])).toThrow(/--timeline writes an HTML file/);
    expect(() => parseCommandLine(["--demo", "--timeline"])).toThrow(/--timeline' needs a value/);
  });
});

describe("crawl --trace", () => {
  let directory: string;

  beforeAll(async () => {
    requireBuiltCli();
    directory = await mkdtemp(join(tmpdir(), "crawl-trace-"));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("prints lines to stderr that follow one URL through connect, send, reads and fetch-end", async () => {
    const outcome = await runCli(["--demo", "--stage", "callbacks", "--max-tasks", "3", "-q", "--trace"]);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).not.toMatch(/fetch-start/); // the report stays on stdout, the trace on stderr
    const lines = outcome.stderr.split("\n").filter((line) => line !== "");
    expect(lines.every((line) => /^ +\d+\.\dms {2}callbacks {3}[a-z-]+ /.test(line))).toBe(true);
    // The command reads robots.txt first (robots is on by default there), as a fetch of its own.
    expect(lines[0]).toMatch(/fetch-start http:\/\/127\.0\.0\.1:\d+\/robots\.txt slot 0 try 1/);
    const root = lines.map((line) => /fetch-start (\S+\/) slot \d+ try 1/.exec(line)?.[1]).find((url) => url !== undefined);
    expect(root).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const journey = lines
      .filter((line) => line.includes(` ${root} `))
      .map((line) => line.trim().split(/\s+/).slice(2, 4).join(" "));
    expect(journey).toEqual([
      "fetch-start " + root,
      "dispatch connected",
      "connect " + root,
      "send " + root,
      "dispatch readResponse",
      "first-byte " + root,
      "read " + root,
      "fetch-end " + root,
    ]);
  });

  it("writes the lines to FILE and a timeline page with one panel per stage", async () => {
    const traceFile = join(directory, "trace.txt");
    const timelineFile = join(directory, "timeline.html");
    const outcome = await runCli(["--demo", "--compare", "--max-tasks", "5", "--trace", traceFile, "--timeline", timelineFile]);
    expect(outcome.stderr).toBe("");
    const lines = (await readFile(traceFile, "utf8")).split("\n").filter((line) => line !== "");
    const stagesSeen = new Set(lines.map((line) => line.trim().split(/\s+/)[1]));
    expect([...stagesSeen]).toEqual(["callbacks", "generators", "asyncawait"]);
    const fetchStarts = lines.filter((line) => / fetch-start /.test(line)).length;
    const page = await readFile(timelineFile, "utf8");
    expect(page.match(/<section class="panel"/g)?.length).toBe(3);
    expect(page.match(/<g class="bar/g)?.length).toBe(fetchStarts);
    expect(page).not.toMatch(/<script src=|<link |https?:\/\/(?!127\.0\.0\.1)/);
    expect(outcome.stdout).toContain(`written to ${timelineFile}`);
  });

  it("refuses a trace file that cannot be written before the crawl, as a usage error", async () => {
    const outcome = await runCli(["--demo", "-q", "--trace", join(directory, "missing", "trace.txt")]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^crawl: cannot write --trace .*missing\/trace\.txt: the directory .*missing does not exist$/m);
  });
});
