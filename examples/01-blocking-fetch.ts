/**
 * Example 01: a blocking fetch, for contrast, and why the main thread must
 * never make one.
 *
 * The chapter starts from the plain way to fetch a page: connect, send, then
 * `recv` in a loop, each call waiting until the kernel has something. While
 * it waits, the thread does nothing else, so fetching a thousand pages at
 * once would take a thousand threads.
 *
 * JavaScript has no blocking `recv` at all. The nearest thing Node offers is
 * a synchronous child process: `execFileSync` stops the calling thread until
 * the child exits. Here the child is a tiny Node script that fetches one URL
 * over HTTP/1.0 (like the chapter's first request) and prints the raw bytes.
 *
 * 1. In a worker thread, the blocking fetch works: the worker waits, and the
 *    main thread is free to do its work. In this example the main thread is
 *    also the demo web site, so it answers the very request the worker
 *    waits for.
 * 2. On the main thread, the same call can never succeed against the demo
 *    site: the server that should answer runs on the thread that is now
 *    blocked. Nothing else in the process runs either (no timer, no socket,
 *    no promise), so the call ends only when its time limit kills the child.
 *    That is why every stage in this project waits without blocking.
 *
 * Run it: `npx tsx examples/01-blocking-fetch.ts [URL]`
 *
 * @see Chapter, "The Traditional Approach" (the blocking `fetch` and threads)
 * @module
 */
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { parseResponse } from "../src/http/parser.js";
import { openRoot } from "./open-root.js";

/**
 * The child: connect, send an HTTP/1.0 GET, collect every byte until the
 * server closes, write them to stdout. It is asynchronous inside (Node has no
 * other sockets); what blocks is the parent waiting for it.
 */
const FETCH_SCRIPT = `
const net = require("node:net");
const url = new URL(process.argv[1]);
const socket = net.connect(Number(url.port || 80), url.hostname);
socket.write("GET " + url.pathname + url.search + " HTTP/1.0\\r\\nHost: " + url.host + "\\r\\n\\r\\n");
const chunks = [];
socket.on("data", function received(chunk) { chunks.push(chunk); });
socket.on("end", function closed() { process.stdout.write(Buffer.concat(chunks)); });
`;

/**
 * The worker thread: one blocking call, then the bytes go back to the main
 * thread. Worker code given as a string runs as CommonJS.
 */
const WORKER_SCRIPT = `
const { execFileSync } = require("node:child_process");
const { parentPort, workerData } = require("node:worker_threads");
const bytes = execFileSync(process.execPath, ["-e", workerData.script, workerData.url]);
parentPort.postMessage(bytes);
`;

/** Fetches `url` in a worker thread that blocks until the page is there. */
async function blockingFetchInWorker(url: string): Promise<Uint8Array> {
  const worker = new Worker(WORKER_SCRIPT, { eval: true, workerData: { script: FETCH_SCRIPT, url } });
  // The main thread awaits: it keeps running everything else meanwhile.
  const [bytes]: unknown[] = await once(worker, "message");
  await worker.terminate();
  if (!(bytes instanceof Uint8Array)) throw new TypeError("The worker sent something other than bytes");
  return bytes;
}

/** Makes the same blocking call on the main thread; returns whether it failed. */
function blockingFetchOnMainThread(url: string, timeoutMs: number): boolean {
  try {
    // From here until the child is killed, this thread runs nothing else.
    execFileSync(process.execPath, ["-e", FETCH_SCRIPT, url], { timeout: timeoutMs, stdio: "pipe" });
    return false;
  } catch {
    return true;
  }
}

/** Runs both halves of the example and prints what happened. */
export async function main(rootUrl?: string): Promise<void> {
  console.log("Before the stages: one blocking fetch holds its thread");
  const root = await openRoot(rootUrl);
  try {
    const before = root.demo?.site.totalRequests ?? 0;
    const response = parseResponse(await blockingFetchInWorker(root.url), { maxBodyBytes: 10 * 1024 * 1024 });
    console.log(`Worker thread: blocked until ${root.url} answered ${response.status}, ${response.body.length} body bytes.`);
    if (root.demo === null) return; // A server elsewhere: the main thread's half would only wait for it.

    const answered = root.demo.site.totalRequests - before;
    console.log(`Main thread: not blocked, so the demo site on it answered ${plural(answered, "request")} meanwhile (the worker's).`);
    const timeoutMs = 1000;
    console.log(
      blockingFetchOnMainThread(root.url, timeoutMs)
        ? `Main thread: the same blocking call gave up after ${timeoutMs} ms. The demo site runs on this thread, ` +
            "so it could not answer while the thread waited: everything else in the process stopped too."
        : "Main thread: the blocking call returned (the server must run in another process).",
    );
  } finally {
    await root.close();
  }
}

/** `1 request`, `2 requests`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
