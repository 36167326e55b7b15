/**
 * Runs every example as a learner does, `node --import tsx examples/NN-….ts`,
 * each in a child process that starts the demo site by itself, and checks
 * what it prints: the facts the example teaches, not its layout, its
 * timings, or counts that vary with timing. So the examples cannot rot, and
 * they need no summary object for a test to read.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, it } from "vitest";
import { startDemoSite } from "../src/site/index.js";
import { describeWithRedis } from "./helpers/redis-server.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));

/** Per child: several run at once on shared cores, so be generous (the test's own timeout is 60 s). */
const CHILD_TIMEOUT_MS = 45_000;

/**
 * Runs `examples/<file>` with `args` and resolves with what it printed on
 * stdout. Rejects, with the child's stderr and stdout, when it exits with
 * anything but 0 or runs past {@link CHILD_TIMEOUT_MS}.
 */
function runExample(file: string, ...args: string[]): Promise<string> {
  return new Promise<string>(function run(resolve, reject) {
    const child = spawn(process.execPath, ["--import", "tsx", `examples/${file}`, ...args], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: CHILD_TIMEOUT_MS,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", function printed(chunk: string) {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", function complained(chunk: string) {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", function exited(code, signal) {
      if (code === 0) {
        resolve(stdout);
        return;
      }
      const how = signal === null ? `exited with code ${code}` : `was killed by ${signal} (time limit ${CHILD_TIMEOUT_MS} ms)`;
      reject(new Error(`examples/${file} ${how}\n--- stderr ---\n${stderr}--- stdout ---\n${stdout}`));
    });
  });
}

/** The groups `pattern` captures in `text`; throws, showing `text`, when it does not match. */
function captured(text: string, pattern: RegExp): string[] {
  const match = pattern.exec(text);
  if (match === null) throw new Error(`Expected the output to match ${pattern}; it was:\n${text}`);
  return match.slice(1);
}

/** The number `pattern`'s first group captures in `text`. */
function numberIn(text: string, pattern: RegExp): number {
  return Number(captured(text, pattern)[0]);
}

/** Records a full crawl of the demo site makes, as the site itself computes them. */
let demoRecords = 0;

beforeAll(async () => {
  const demo = await startDemoSite();
  demoRecords = demo.expected.records.length;
  await demo.close();
});

/** The most fetches in flight at once, as a crawl example prints it from its trace. */
const PEAK = /at most (\d+) fetches were in flight at once/;

/** The most requests in flight at once, as a crawl example prints the demo site's own count. */
const SERVER_PEAK = /^Seen from the other end, the demo site had at most (\d+) requests in flight at once\.$/m;

/** A trace line's time and stage column, as `crawl --trace` prints them (`traceLine`). */
function traceLinePattern(stage: string, rest: string): RegExp {
  return new RegExp(`^ +\\d+\\.\\dms  ${stage.padEnd(10)}  ${rest}$`);
}

/** The two trace lines a crawl example prints after saying which command prints them all. */
function traceExcerpt(out: string, stage: string): string[] {
  const command = `npm run crawl -- --demo --stage ${stage} --trace`; // nothing in it a RegExp reads as special
  return captured(out, new RegExp(`^\\(\`${command}\` prints every event\\):\\n(.*)\\n(.*)\\n`, "m"));
}

// Independent child processes: run them side by side (vitest's maxConcurrency, 5 by default).
describe.concurrent("examples", () => {
  it("01 fetches in a blocked worker while the main thread serves, and cannot fetch from the blocked main thread", async ({ expect }) => {
    const out = await runExample("01-blocking-fetch.ts");
    expect(out).toMatch(/Worker thread: blocked until http:\/\/127\.0\.0\.1:\d+\/ answered 200, [1-9]\d* body bytes/);
    expect(out).toContain("answered 1 request meanwhile");
    expect(out).toContain("the same blocking call gave up");
  });

  it("02 never connects while spinning, then connects and reads by polling", async ({ expect }) => {
    const out = await runExample("02-nonblocking-busy-loop.ts");
    expect(out).toContain("without giving Node a turn: still connecting? yes");
    expect(out).toMatch(/connected and sent the request after [1-9]\d* polls?\./);
    expect(out).toMatch(/to read the response: status 200, [1-9]\d* body bytes/);
  });

  it("03 fetches one page through the chain of callbacks", async ({ expect }) => {
    const out = await runExample("03-callbacks-fetch-one-page.ts");
    expect(out).toMatch(/^Steps: fetch-start → connect → send → .+ → fetch-end$/m);
    expect(out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/: status 200, text\/html, \d+ bytes, [1-9]\d* links$/m);
  });

  it("04 crawls the demo site with callbacks, never more fetches in flight than maxTasks, and shows the loop calling the root's Fetcher back", async ({ expect }) => {
    const out = await runExample("04-callbacks-crawl.ts");
    expect(out).toContain("Stage 1, callbacks: crawling http://127.0.0.1:");
    expect(out).toMatch(new RegExp(`^Todo: 0\\nDone: ${demoRecords}$`, "m"));
    expect(out).toMatch(/^How stage 1 waited: the loop turned [1-9]\d* times \(one select\(\) each\) and called [1-9]\d* callbacks/m);
    expect(numberIn(out, PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, PEAK)).toBeLessThanOrEqual(10);
    expect(numberIn(out, SERVER_PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, SERVER_PEAK)).toBeLessThanOrEqual(10);
    // connected when the root's socket could be written, readResponse when it could be read: one socket.
    const [connected, readResponse] = traceExcerpt(out, "callbacks");
    const [root, socket] = captured(connected, traceLinePattern("callbacks", "dispatch connected (http://127\\.0\\.0\\.1:\\d+/) socket#(\\d+)"));
    expect(readResponse).toMatch(traceLinePattern("callbacks", `dispatch readResponse ${root.replaceAll(".", "\\.")} socket#${socket}`));
  });

  it("05 loses the caller from the callback's stack and keeps it in the coroutine's", async ({ expect }) => {
    const out = await runExample("05-stack-ripping.ts");
    const [callbacksStack, generatorsStack] = captured(
      out,
      /Stage 1 \(callbacks\) stack[^\n]*\n([\s\S]*?)\n\nStage 2 \(generators\) stack[^\n]*\n([\s\S]*?)\n\n/,
    );
    expect(callbacksStack).toContain("parseBody");
    expect(callbacksStack).not.toMatch(/fetchPage|crawlOne/);
    expect(generatorsStack).toMatch(/parseBody[\s\S]*fetchPageCoroutine[\s\S]*crawlOneCoroutine/);
    expect(out).toContain("Stage 1's stack shows neither fetchPage nor crawlOne");
    expect(out).toContain("stage 2's still shows fetchPageCoroutine and crawlOneCoroutine");
  });

  it("06 drives generators with next, throw and return, and delegates with yield*", async ({ expect }) => {
    const out = await runExample("06-generators-how-they-work.ts");
    const lines = out.split("\n");
    expect(lines).toContain("  accumulate received 10");
    expect(lines).toContain("  accumulate caught Error: enough at its yield");
    expect(lines.filter((line) => line.includes("runs its finally block"))).toHaveLength(2);
    expect(lines).toContain("  outer got 42 from yield*");
    expect(out).toContain("done: { value: 43, done: true }");
  });

  it("07 fetches one page with a Future and a Task, where a bare yield receives undefined", async ({ expect }) => {
    const out = await runExample("07-generators-future-and-task.ts");
    expect(out).toMatch(/^Made: Task \{ done: false, cancelled: false \}/m);
    expect(out).toMatch(/^Done: Task \{ done: true, cancelled: false \}: status 200, [1-9]\d* body bytes/m);
    expect(numberIn(out, /yielded (\d+) Futures/)).toBeGreaterThanOrEqual(2);
    const [sentIn] = captured(out, /Each bare `yield` evaluated to: ([^.]+)\./);
    expect(new Set(sentIn.split(", "))).toEqual(new Set(["undefined"]));
  });

  it("08 fetches the root and four of its links at once with yield* and gather", async ({ expect }) => {
    const out = await runExample("08-generators-yield-star.ts");
    expect(numberIn(out, /^http:\/\/127\.0\.0\.1:\d+\/: status 200, \d+ bytes, (\d+) links$/m)).toBeGreaterThanOrEqual(4);
    expect(out).toContain("Its first 4 links, fetched at once with gather");
    expect(out.match(/^ {2}http:\/\/127\.0\.0\.1:\d+\/\S*: status \d{3}, /gm)).toHaveLength(4);
  });

  it("09 crawls the demo site with generator coroutines, never more fetches in flight than maxTasks, and shows a Task paused on a Future", async ({ expect }) => {
    const out = await runExample("09-generators-crawl.ts");
    expect(out).toContain("Stage 2, generators: crawling http://127.0.0.1:");
    expect(out).toMatch(new RegExp(`^Todo: 0\\nDone: ${demoRecords}$`, "m"));
    expect(out).toMatch(/^How stage 2 waited: 10 worker Tasks, [1-9]\d* Task steps, each running a coroutine to its next yield\*/m);
    expect(numberIn(out, PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, PEAK)).toBeLessThanOrEqual(10);
    expect(numberIn(out, SERVER_PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, SERVER_PEAK)).toBeLessThanOrEqual(10);
    // The root's request Task, sent, waits for its socket to be readable; the loop resolves that Future.
    const [paused, resolved] = traceExcerpt(out, "generators");
    expect(paused).toMatch(traceLinePattern("generators", "step task#\\d+ waitFor yielded read"));
    expect(resolved).toMatch(traceLinePattern("generators", "resolve future#\\d+ read"));
  });

  it("10 interleaves Brett Cannon's three countdowns on our loop, each in its own order", async ({ expect }) => {
    const out = await runExample("10-generators-countdown.ts", "0.1");
    const lines = out.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(/^Total elapsed time is \d+\.\d\d seconds$/);
    const launches = lines.slice(0, -1);
    expect(launches).toHaveLength(3 * 2 + 5 + 3 + 4 + 3);
    function linesOf(label: string): string[] {
      return launches.filter((line) => line.startsWith(`${label} `));
    }
    expect(linesOf("A")).toEqual([
      "A waiting 0 seconds before starting countdown",
      "A starting after waiting 0 seconds",
      "A T-minus 5",
      "A T-minus 4",
      "A T-minus 3",
      "A T-minus 2",
      "A T-minus 1",
      "A lift-off!",
    ]);
    expect(linesOf("B")).toEqual([
      "B waiting 2 seconds before starting countdown",
      "B starting after waiting 2 seconds",
      "B T-minus 3",
      "B T-minus 2",
      "B T-minus 1",
      "B lift-off!",
    ]);
    expect(linesOf("C")).toHaveLength(7);
    // All three start waiting before any of them goes on: none blocks the others.
    expect(launches.slice(0, 3)).toEqual([
      "A waiting 0 seconds before starting countdown",
      "B waiting 2 seconds before starting countdown",
      "C waiting 1 seconds before starting countdown",
    ]);
    expect(launches[3]).toBe("A starting after waiting 0 seconds");
    // The launches interleave: C starts while A counts, B after C.
    expect(launches.indexOf("C starting after waiting 1 seconds")).toBeLessThan(launches.indexOf("A T-minus 3"));
    expect(launches.indexOf("C starting after waiting 1 seconds")).toBeLessThan(
      launches.indexOf("B starting after waiting 2 seconds"),
    );
    expect(launches.indexOf("B starting after waiting 2 seconds")).toBeLessThan(launches.indexOf("A T-minus 1"));
    // All three lift off together, last.
    expect(launches.slice(-3).sort()).toEqual(["A lift-off!", "B lift-off!", "C lift-off!"]);
  });

  it("11 awaits a Future, a Task, a failed Future and a plain thenable", async ({ expect }) => {
    const out = await runExample("11-await-our-future.ts");
    expect(out).toContain('await later → "resolved by a timer on our loop"');
    expect(out).toMatch(/await new Task\(request\(url\)\) → status 200/);
    expect(out).toContain("await failing → throws RangeError: failed on our loop, right at the await");
    expect(out).toContain("await { then(resolve) { resolve(42) } } → 42");
  });

  it("12 crawls the demo site with async workers, never more requests in flight than workers, and shows a worker suspended at its await", async ({ expect }) => {
    const out = await runExample("12-asyncawait-crawl.ts");
    expect(out).toContain("Stage 3, async/await: crawling http://127.0.0.1:");
    expect(out).toMatch(new RegExp(`^Todo: 0\\nDone: ${demoRecords}$`, "m"));
    // One await on the client per attempt, and every record took at least one.
    expect(numberIn(out, /^How stage 3 waited: 5 workers suspended (\d+) times at `await client\.get\(url\)`/m)).toBeGreaterThanOrEqual(demoRecords);
    expect(numberIn(out, PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, PEAK)).toBeLessThanOrEqual(5);
    expect(numberIn(out, SERVER_PEAK)).toBeGreaterThan(1);
    expect(numberIn(out, SERVER_PEAK)).toBeLessThanOrEqual(5);
    // The first worker takes the root, the only URL known, and is the one that resumes with its response.
    const [suspended, resumed] = traceExcerpt(out, "asyncawait");
    const [root] = captured(suspended, traceLinePattern("asyncawait", "await worker 0 client\\.get (http://127\\.0\\.0\\.1:\\d+/)"));
    expect(resumed).toMatch(traceLinePattern("asyncawait", `resume worker 0 ${root.replaceAll(".", "\\.")}`));
  });

  it("13 ends idle workers with shutdown() after join(), and cancels a crawl from outside", async ({ expect }) => {
    const out = await runExample("13-asyncawait-cancel-workers.ts");
    const items = [...out.matchAll(/^ {2}w\d handles item (\d)$/gm)].map((match) => match[1]);
    expect(items.sort()).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(out).toContain("the workers ended with: QueueShutDown, QueueShutDown, QueueShutDown");
    expect(out).toContain("the signal aborted at the 10th record");
    const [records, todo] = captured(out, /crawl\(\) resolved with (\d+) records and (\d+) URLs left to do/).map(Number);
    expect(records).toBeGreaterThanOrEqual(10);
    expect(records).toBeLessThan(demoRecords);
    expect(todo).toBeGreaterThan(0);
  });

  it("14 finds the three stages' records identical, each within maxTasks", async ({ expect }) => {
    const out = await runExample("14-compare-stages.ts");
    for (const stage of ["callbacks", "generators", "asyncawait"]) {
      const [records, peak] = captured(out, new RegExp(`^${stage} +(\\d+) +\\d+ +\\d+ +\\d+ +(\\d+)$`, "m")).map(Number);
      expect(records, stage).toBe(demoRecords);
      expect(peak, stage).toBeGreaterThan(1);
      expect(peak, stage).toBeLessThanOrEqual(10);
    }
    expect(out).toContain("maxTasks 1: same records in the same order: yes");
    expect(out).toContain("maxTasks 10: same records as a set (numNewUrls and referrer aside): yes");
  });

  it("15 shows overlapping fetches, within maxTasks, interrupted only at yield* or await, in every stage", async ({ expect }) => {
    const out = await runExample("15-watch-the-loop.ts");
    const rows = [...out.matchAll(/^(callbacks|generators|asyncawait) +(\d+) +(\d+) +(\d+) +(-|\d+)$/gm)];
    expect(rows.map((row) => row[1])).toEqual(["callbacks", "generators", "asyncawait"]);
    for (const [, stage, attempts, overlapping, peak, interruptions] of rows) {
      expect(Number(attempts), stage).toBeGreaterThanOrEqual(demoRecords);
      expect(Number(overlapping), stage).toBeGreaterThan(Number(attempts) / 2);
      expect(Number(peak), stage).toBeGreaterThan(1);
      expect(Number(peak), stage).toBeLessThanOrEqual(5);
      expect(interruptions, stage).toBe(stage === "callbacks" ? "-" : "0");
    }
    expect(out).toMatch(/fetch-start http:\/\/127\.0\.0\.1:\d+\/ slot 0 try 1/);
    expect(out).toMatch(/dispatch connected .* socket#\d+\n.*connect .*\n.*send /);
    expect(out).toContain("maxTasks is 5: no stage ever had more fetches in flight.");
  });

  it("16 crawls three hosts politely with every stage: robots.txt obeyed, one request per host at a time, the delays kept", async ({ expect }) => {
    const out = await runExample("16-polite-hosts.ts");
    const blocks = out.split(/^(?=stage \d: )/m).slice(1);
    expect(blocks.map((block) => block.split("\n")[0])).toEqual([
      "stage 1: a callLater timer and a list per host",
      "stage 2: a Task that sleeps",
      "stage 3: an awaited timer promise",
    ]);
    const counts = blocks.map((block) => captured(block, /records: (\d+), RobotsDisallowed: (\d+)/).join(" "));
    expect(new Set(counts).size, "the same records in every stage").toBe(1);
    for (const block of blocks) {
      expect(numberIn(block, /RobotsDisallowed: (\d+)/)).toBeGreaterThan(0);
      expect(block).toContain("host 0's robots.txt: status 404, verdict allow-all, no Crawl-delay");
      expect(block).toContain("host 1's robots.txt: status 200, verdict rules, no Crawl-delay");
      expect(block).toContain("host 2's robots.txt: status 200, verdict rules, Crawl-delay 150 ms");
      // Host 1 disallows everything but its root: the server saw robots.txt and / only.
      expect(block).toMatch(/^ {2}host 1: 2 requests, at most 1 in flight;/m);
      const hosts = [...block.matchAll(/^ {2}host \d: \d+ requests, at most (\d+) in flight; delay (\d+) ms, fetches started (?:≥ (\d+) ms apart|only once)/gm)];
      expect(hosts).toHaveLength(3);
      for (const [line, peak, delay, gap] of hosts) {
        expect(Number(peak), line).toBe(1);
        // The trace reads its clock when a fetch-start is published, just after the host let the fetch
        // go; a garbage collection between the two (tens of ms on a loaded machine) delays that reading
        // for one fetch and so shortens the gap after it. A quarter of the delay is slack enough, and
        // still far from the 1 ms apart that fetches start with no delay at all.
        if (gap !== undefined) expect(Number(gap), line).toBeGreaterThanOrEqual(Number(delay) * 0.75);
      }
      expect(block).toMatch(/host 2's first fetches started: \/robots\.txt at \d+ ms, \/ at \d+ ms, \/p\/1 at \d+ ms/);
    }
  });

  // It runs a redis-server of its own: without one on PATH, the test shows as skipped.
  describeWithRedis("with a redis-server", () => {
    it("17 shares one crawl between two processes through Redis, each page recorded once, by one of them", async ({ expect }) => {
      const out = await runExample("17-distributed.ts");
      const pages = numberIn(out, /a site of (\d+) pages at http:\/\/127\.0\.0\.1:\d+\//);
      const processes = [...out.matchAll(/^ {2}process (\d) \((\S+:\d+:[0-9a-f]+)\): (\d+) pages recorded, e\.g\. \//gm)];
      expect(processes.map((match) => match[1])).toEqual(["1", "2"]);
      expect(new Set(processes.map((match) => match[2])).size, "two owners").toBe(2);
      const shares = processes.map((match) => Number(match[3]));
      for (const share of shares) expect(share).toBeGreaterThan(0);
      expect(shares[0] + shares[1]).toBe(pages);
      expect(out).toContain(`Their crawl results count ${pages} and ${pages} records: result.records is read from Redis`);
      expect(out).toContain(`In Redis: ${pages} records for ${pages} URLs seen, 0 queued, 0 leased, 2 processes took part.`);
      expect(out).toContain("Every page has one record: yes (0 recorded by both processes, 0 by neither).");
    });
  });
});
