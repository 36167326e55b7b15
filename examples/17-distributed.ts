/**
 * Example 17: one crawl, two processes, one Redis.
 *
 * Stage 3's crawler, unchanged, run in two processes at once, each with a
 * `RedisFrontier` in place of its in-memory queue and seen set. Both open
 * the same crawl (same Redis, same crawl name) and both add the root: the
 * seen check in Redis queues it once. From then on each process's workers
 * take URLs from the one queue in Redis, and each page a process finishes is
 * recorded there under its URL.
 *
 * The example starts everything itself: a redis-server on a free loopback
 * port (in a temp dir, saving nothing), a synthetic site, then the two
 * crawlers, which are this file run again with `--crawler`. Notice:
 * - each process recorded a share of the pages, and the shares do not
 *   overlap: no URL was recorded twice;
 * - each process's own crawl result counts every record, not just its own:
 *   with a shared frontier, `result.records` is read from Redis;
 * - together they recorded the whole site, and Redis ends with nothing
 *   queued and nothing leased, which is how each process's `join()` knew
 *   the crawl was over.
 *
 * The guide: docs/guide-distributed.md. To see a process die mid-crawl and
 * another take over its URLs, try the `crawl` command in two terminals (the
 * guide's "Try this").
 *
 * Run it: `npx tsx examples/17-distributed.ts` (needs `redis-server`:
 * `sudo apt-get install redis-server` on Debian or Ubuntu).
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { crawl } from "../src/asyncawait/index.js";
import type { FetchStatistic } from "../src/crawl/records.js";
import { RedisFrontier } from "../src/distributed/index.js";
import { SyntheticSite } from "../src/site/index.js";

const THIS_FILE = fileURLToPath(import.meta.url);
const REPO = fileURLToPath(new URL("..", import.meta.url));
/** The crawl's name: the two processes share a crawl by sharing its name. */
const CRAWL_NAME = "example-17";
/** Workers per process. */
const MAX_TASKS = 4;

/** What a crawler process reports to the parent, as one JSON line on its stdout. */
interface CrawlerReport {
  /** Its name in the crawl, `HOST:PID:RANDOM`. */
  owner: string;
  /** The URLs whose record this process stored. */
  mine: string[];
  /** The records its crawl result counts: every process's, read from Redis. */
  recorded: number;
}

/** A redis-server child of this process, and how to let go of it. */
interface LocalRedis {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts Debian's `redis-server` on a free loopback port, in a new temp
 * directory, saving nothing to disk; resolves once it accepts connections,
 * or with null when there is no `redis-server` to run.
 */
async function startRedisServer(): Promise<LocalRedis | null> {
  const dir = await mkdtemp(join(tmpdir(), "example-17-"));
  const port = await freeLoopbackPort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
  const server = spawn("redis-server", args, { stdio: ["ignore", "pipe", "inherit"] });
  let log = "";
  const ready = await new Promise<boolean>(function waitUntilReady(resolve, reject) {
    server.once("error", function failedToStart(error: NodeJS.ErrnoException) {
      if (error.code === "ENOENT") resolve(false);
      else reject(error);
    });
    server.once("exit", function exitedEarly(code) {
      reject(new Error(`redis-server exited (code ${code}) before it was ready:\n${log}`));
    });
    server.stdout?.setEncoding("utf8").on("data", function readLog(chunk: string) {
      log += chunk;
      if (log.includes("Ready to accept connections")) resolve(true);
    });
  });
  if (!ready) {
    await rm(dir, { recursive: true, force: true });
    return null;
  }
  server.stdout?.resume(); // Keep reading its log, or a full pipe would stall it.
  return {
    url: `redis://127.0.0.1:${port}/0`,
    async stop() {
      if (server.exitCode === null && server.signalCode === null) {
        server.kill("SIGTERM");
        await once(server, "exit");
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A port the OS says is free on 127.0.0.1 (bound, read, released). */
async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo; // listening on TCP, so an AddressInfo
  probe.close();
  await once(probe, "close");
  return port;
}

/** Runs this file again as a crawler process; its stdout is piped back here. */
function startCrawlerProcess(redisUrl: string, root: string): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", THIS_FILE, "--crawler", redisUrl, root], {
    cwd: REPO,
    stdio: ["pipe", "pipe", "inherit"],
  });
}

/** Hands `onLine` each line `child` prints; resolves when it has exited with 0 and its output is read, else rejects. */
function linesOf(child: ChildProcess, onLine: (line: string) => void): Promise<void> {
  let buffered = "";
  child.stdout?.setEncoding("utf8").on("data", function printed(chunk: string) {
    buffered += chunk;
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) onLine(line);
  });
  return new Promise<void>(function waitForExit(resolve, reject) {
    child.once("error", reject);
    child.once("close", function exited(code, signal) {
      if (code === 0) resolve();
      else reject(new Error(`crawler process ${child.pid} ${signal === null ? `exited with code ${code}` : `was killed by ${signal}`}`));
    });
  });
}

/**
 * One crawler process: opens the crawl's frontier in Redis, says "ready",
 * waits for the parent to close its stdin (the starting gun, so neither
 * process starts before the other is connected), crawls, and prints a
 * {@link CrawlerReport}.
 */
async function crawlerProcess(redisUrl: string, root: string): Promise<void> {
  const frontier = await RedisFrontier.open({ url: redisUrl, name: CRAWL_NAME });
  try {
    console.log("ready");
    await once(process.stdin.resume(), "end");
    const mine: string[] = [];
    function recordedHere(record: FetchStatistic): void {
      mine.push(record.url); // onRecord sees only the records this process stored.
    }
    const result = await crawl(root, { maxTasks: MAX_TASKS, onRecord: recordedHere }, frontier);
    const report: CrawlerReport = { owner: frontier.owner, mine, recorded: result.recorded };
    console.log(JSON.stringify(report));
  } finally {
    await frontier.close();
  }
}

/** Starts Redis, a site and two crawler processes on one crawl, and prints who recorded what. */
export async function main(): Promise<void> {
  console.log("Stage 3 with a Redis frontier: two processes' workers wait on one queue kept in Redis");
  const redis = await startRedisServer();
  if (redis === null) {
    console.log("redis-server not found: this example runs one. Install it (Debian or Ubuntu: sudo apt-get install redis-server) and run it again.");
    return;
  }
  const site = await SyntheticSite.start({ pages: 150, linksPerPage: 5, seed: 17, delayMs: 20 });
  const crawlers: ChildProcess[] = [];
  try {
    const pages = site.expected.records.length;
    console.log(`Redis at ${redis.url} (a temp dir, nothing saved); a site of ${pages} pages at ${site.url}`);
    console.log(`Two crawler processes, each stage 3 with ${MAX_TASKS} workers and a RedisFrontier on the crawl "${CRAWL_NAME}":`);

    const reports: CrawlerReport[] = [];
    let ready = 0;
    crawlers.push(startCrawlerProcess(redis.url, site.url), startCrawlerProcess(redis.url, site.url));
    await Promise.all(
      crawlers.map(function listen(crawler, index) {
        return linesOf(crawler, function heard(line) {
          if (line === "ready") {
            ready += 1;
            if (ready === crawlers.length) for (const each of crawlers) each.stdin?.end(); // Both connected: go.
          } else if (line.startsWith("{")) {
            reports[index] = JSON.parse(line) as CrawlerReport;
          }
        });
      }),
    );

    const recordedBy = new Map<string, number>(); // URL → how many processes recorded it
    for (const [index, report] of reports.entries()) {
      const paths = report.mine.slice(0, 4).map((url) => new URL(url).pathname);
      console.log(`  process ${index + 1} (${report.owner}): ${report.mine.length} pages recorded, e.g. ${paths.join(", ")}, …`);
      for (const url of report.mine) recordedBy.set(url, (recordedBy.get(url) ?? 0) + 1);
    }
    const counted = reports.map((report) => report.recorded).join(" and ");
    console.log(`Their crawl results count ${counted} records: result.records is read from Redis, every process's.`);

    const frontier = await RedisFrontier.open({ url: redis.url, name: CRAWL_NAME });
    const status = await frontier.status();
    await frontier.close();
    console.log(`In Redis: ${status.records} records for ${status.seen} URLs seen, ${status.queued} queued, ${status.leased} leased, ${status.workers.length} processes took part.`);

    const twice = [...recordedBy.values()].filter((times) => times > 1).length;
    const missing = site.expected.records.filter((record) => !recordedBy.has(record.url)).length;
    const onePerPage = twice === 0 && missing === 0 && status.records === pages;
    console.log(`Every page has one record: ${onePerPage ? "yes" : "no"} (${twice} recorded by both processes, ${missing} by neither).`);
  } finally {
    for (const crawler of crawlers) if (crawler.exitCode === null) crawler.kill();
    await site.close();
    await redis.stop();
  }
}

if (process.argv[1] === THIS_FILE) {
  if (process.argv[2] === "--crawler") await crawlerProcess(process.argv[3] ?? "", process.argv[4] ?? "");
  else await main();
}
