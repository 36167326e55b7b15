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
 *   paused on a promise). The root is served by a silent server, so one
 *   worker waits for it and every other one waits for the queue. The unit is
 *   the heap of a crawl with `units + 1` workers minus that of a crawl with
 *   one, divided by `units`: what the crawl itself holds cancels out.
 *
 * @module
 */
import { createServer, Socket, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { EventLoop, Fetcher } from "../../src/callbacks/index.js";
import type { FetchOutcome } from "../../src/callbacks/index.js";
import { ResponseParser } from "../../src/http/parser.js";
import { DEFAULT_OPTIONS } from "../../src/crawl/options.js";
import { EVENT_READ } from "../../src/kernel/selector.js";
import type { KnownStage as StageName } from "../../src/observe/events.js";
import { loadCrawl } from "./load-stage.js";

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

/** A server that accepts connections and never answers: the root's fetch waits forever. */
async function silentServer(): Promise<{ server: Server; url: string; connected: Promise<void>; sockets: Set<Socket> }> {
  const server = createServer();
  const sockets = new Set<Socket>();
  const connected = new Promise<void>(function firstConnection(resolve) {
    server.on("connection", function accepted(socket: Socket) {
      sockets.add(socket);
      resolve();
    });
  });
  await new Promise<void>(function listen(resolve) {
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo; // listening on TCP: an AddressInfo
  return { server, url: `http://127.0.0.1:${port}/`, connected, sockets };
}

/** Heap held by a crawl with `workers` workers once all but one wait on the queue. */
async function heapOfParkedCrawl(stage: StageName, workers: number): Promise<number> {
  const crawl = await loadCrawl(stage);
  const { server, url, connected, sockets } = await silentServer();
  const controller = new AbortController();
  const before = heapAfterGc();
  const done = crawl(url, { maxTasks: workers, signal: controller.signal, timeoutMs: 600_000 });
  await connected;
  // Let every worker reach its get(): wait until the heap stops changing.
  let held = heapAfterGc() - before;
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const now = heapAfterGc() - before;
    const settled = Math.abs(now - held) < 0.005 * Math.abs(held) + 4096;
    held = now;
    if (settled) break;
  }
  controller.abort();
  await done;
  server.close();
  for (const socket of sockets) socket.destroy();
  return held;
}

/** Stages 2 and 3: idle workers of a real crawl. */
async function measureWorkers(stage: StageName, units: number): Promise<MemoryReport> {
  const one = await heapOfParkedCrawl(stage, 1);
  const many = await heapOfParkedCrawl(stage, units + 1);
  return { stage, units, bytesPerUnit: (many - one) / units, socketBytes: null };
}

const request = JSON.parse(process.argv[2] ?? "{}") as MemoryRequest; // written by bench/memory-process.ts
const report = request.stage === "callbacks" ? measureFetchers(request.units) : await measureWorkers(request.stage, request.units);
process.stdout.write(`${JSON.stringify(report)}\n`);
