/**
 * Heap bytes per waiting unit of one stage, alone in its process:
 * `node --expose-gc memory-child.js '<json>'` with a {@link MemoryRequest};
 * prints one {@link MemoryReport} as a JSON line.
 *
 * What waits, per stage (issue 8):
 * - callbacks: a `Fetcher` between two callbacks, as it is while its
 *   response is on the way: parser and timeout timer set, `readResponse`
 *   registered with the selector. A real socket each is out of reach at
 *   100,000 (the file-descriptor limit), so each Fetcher is registered on an
 *   unconnected `net.Socket`; the sockets are made first and their own cost
 *   is reported apart, not counted in the unit.
 * - generators and asyncawait: an idle worker of the real `Crawler`, parked
 *   on its queue's `get()` (a Task paused on a Future; an async function
 *   paused on a promise). A crawl starts its workers lazily, one for each job
 *   no worker holds (issue 35), so a crawl of a silent site holds one worker
 *   whatever its `maxTasks`: the workers are started here instead, `units`
 *   calls of the Crawler's own `work()` on a Crawler that has not begun, and
 *   the unit is the heap they hold, divided by `units`.
 *
 * @module
 */
import { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { EventLoop, Fetcher } from "../../src/callbacks/index.js";
import type { FetchOutcome } from "../../src/callbacks/index.js";
import { ResponseParser } from "../../src/http/parser.js";
import { DEFAULT_OPTIONS } from "../../src/crawl/options.js";
import { EVENT_READ } from "../../src/kernel/selector.js";
import type { KnownStage as StageName } from "../../src/observe/events.js";

/** What the parent asks for. */
export interface MemoryRequest {
  stage: StageName;
  units: number;
}

/** What the child prints. */
export interface MemoryReport {
  stage: StageName;
  units: number;
  /** Heap bytes per waiting unit. */
  bytesPerUnit: number;
  /** Stage 1 only: heap bytes of each stand-in socket, not counted in `bytesPerUnit`. */
  socketBytes: number | null;
}

const gc = globalThis.gc;
if (gc === undefined) throw new Error("run with --expose-gc");

/** Heap in use after a full collection. */
function heapAfterGc(): number {
  gc?.();
  gc?.(); // A second pass frees what the first one's finalisers let go.
  return process.memoryUsage().heapUsed;
}

function fetched(_fetcher: Fetcher, _outcome: FetchOutcome): void {}

/** Stage 1: `units` Fetchers waiting for their responses. */
function measureFetchers(units: number): MemoryReport {
  const loop = new EventLoop(); // never run: nothing fires while we measure
  const before = heapAfterGc();
  const sockets: Socket[] = [];
  for (let i = 0; i < units; i++) sockets.push(new Socket());
  const withSockets = heapAfterGc();
  const fetchers: Fetcher[] = [];
  for (const [i, socket] of sockets.entries()) {
    const fetcher = new Fetcher(`http://127.0.0.1:8080/p/${i}`, loop, DEFAULT_OPTIONS, fetched);
    // The state fetch() and connected() leave behind, minus the real connection.
    fetcher.tries = 1;
    fetcher.parser = new ResponseParser({ maxBodyBytes: DEFAULT_OPTIONS.maxBodyBytes });
    fetcher.timer = loop.callLater(DEFAULT_OPTIONS.timeoutMs, fetcher.timedOut);
    fetcher.socket = socket;
    loop.selector.register(socket, EVENT_READ, fetcher.readResponse);
    fetchers.push(fetcher);
  }
  const withFetchers = heapAfterGc();
  const report: MemoryReport = {
    stage: "callbacks",
    units: fetchers.length,
    bytesPerUnit: (withFetchers - withSockets) / units,
    socketBytes: (withSockets - before) / units,
  };
  loop.selector.close();
  return report;
}

/** The private parts of a stage's Crawler that this measurement starts by hand: its worker coroutine and its queue. */
interface WorkerParts {
  work(): unknown;
  q: { shutdown?(): void };
}

/**
 * Stages 2 and 3: `units` workers of a real Crawler parked on its queue's
 * `get()`. Stage 2's run as Tasks on a loop, one iteration of which brings
 * each to its `get()`; stage 3's each run to their first `await`.
 */
async function measureWorkers(stage: StageName, units: number): Promise<MemoryReport> {
  const before = heapAfterGc();
  let held = 0;
  if (stage === "generators") {
    const { Crawler, EventLoop, Task } = await import("../../src/generators/index.js");
    const crawler = new Crawler("http://127.0.0.1:1/") as unknown as WorkerParts; // Its private work() and q: see WorkerParts.
    const loop = new EventLoop();
    const workers = Array.from({ length: units }, () => new Task(crawler.work() as Generator<never, void, undefined>, loop, "work"));
    loop.runOnce(); // Each worker steps to its q.get(), and waits there.
    held = heapAfterGc() - before;
    for (const worker of workers) worker.cancel();
    loop.runOnce();
    loop.close();
  } else {
    const { Crawler } = await import("../../src/asyncawait/index.js");
    const crawler = new Crawler("http://127.0.0.1:1/") as unknown as WorkerParts;
    const workers = Array.from({ length: units }, () => crawler.work() as Promise<void>); // Each runs to its `await this.q.get()`.
    await sleep(0);
    held = heapAfterGc() - before;
    crawler.q.shutdown?.(); // The parked workers end with QueueShutDown, as at a crawl's end.
    await Promise.all(workers);
  }
  return { stage, units, bytesPerUnit: held / units, socketBytes: null };
}

const request = JSON.parse(process.argv[2] ?? "{}") as MemoryRequest; // written by bench/memory-process.ts
const report = request.stage === "callbacks" ? measureFetchers(request.units) : await measureWorkers(request.stage, request.units);
process.stdout.write(`${JSON.stringify(report)}\n`);
