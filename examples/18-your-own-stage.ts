/**
 * Example 18: a stage of your own, written from docs/crawl-core.md alone.
 *
 * The three stages wait three ways (callbacks, generators, async/await);
 * every decision they share is the crawl core's. So a fourth stage is only
 * a fourth way of waiting: here the plainest one Node offers, one `async`
 * loop that waits for "a job ended", an `async` function per job, and
 * `node:http` with a keep-alive Agent for the requests. Every other line is
 * a call the contract names, and docs/crawl-core.md ("Write your own stage")
 * walks through them one by one. The contract suite runs it beside the three
 * stages (test/contract/stages.ts, `withFourth`).
 *
 * Run it: `npx tsx examples/18-your-own-stage.ts [URL]`
 *
 * @module
 */
import { once, setMaxListeners } from "node:events";
import http from "node:http";
import https from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { crawl as crawlWithAsyncAwait } from "../src/asyncawait/index.js";
import { coreFor, cutShort, errorDetail, errorName, FetchFailure, listenForAbort, report, requestHeaders, skippableBody } from "../src/shared/index.js";
import type { CrawlOptions, CrawlResult, Job, JobRequest, Outcome } from "../src/shared/index.js";
import { openRoot } from "./open-root.js";

/** Crawls from `roots` as every stage does: the core decides, this function only waits. */
export async function crawl(roots: string | string[], options?: CrawlOptions): Promise<CrawlResult> {
  const core = coreFor("fourth", roots, options);
  const settings = core.options;
  // Connections kept for the next request to an origin, opened through the crawl's `network` when it has one (the bottle's).
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true, ca: settings.ca ?? undefined, rejectUnauthorized: settings.rejectUnauthorized }) };
  const network = settings.network;
  if (network !== null) for (const [agent, secure] of [[agents.http, false], [agents.https, true]] as const) {
    agent.createConnection = function connect(o: { host?: string | null; port?: number | string | null; servername?: string }) {
      return network.connect({ host: o.host ?? "localhost", port: Number(o.port), secure, servername: secure ? (o.servername ?? o.host ?? null) : null });
    };
  }
  const stopping = new AbortController(); // Ends the requests and pauses in flight when the crawl is aborted.
  setMaxListeners(Infinity, stopping.signal); // Each listens to it: as many as maxTasks, which Node would warn of past 10.
  let wake = function nothingWaits(): void {};
  function aborted(): void {
    core.stop();
    stopping.abort();
  }

  /** One job, from `next()` to `finish()`: a wait, or attempts until `settle` says done. */
  async function run(job: Job): Promise<void> {
    try {
      if (job.kind === "wait") await sleep(job.delayMs, undefined, { signal: stopping.signal });
      while (job.kind !== "wait" && !core.stopped) {
        core.started(job);
        const [outcome, detail] = await attempt(core.request(job));
        const step = core.settle(job, outcome, detail);
        if (step.kind === "done") break;
        if (step.kind === "hook") { core.hooked(job, await step.hook.settled()); break; } // The onPage hook returned a promise.
        await sleep(step.delayMs, undefined, { signal: stopping.signal }); // A robots.txt's retry.
      }
    } catch {
      // A pause the abort ended, or a bug: finish() leaves the URL to do, or records it.
    } finally {
      core.finish(job);
      wake();
    }
  }

  /** One GET, the request every stage sends: the response as received, or the name of what went wrong. */
  async function attempt(request: JobRequest): Promise<[Outcome, string | null]> {
    const secure = request.url.startsWith("https:");
    const headers = requestHeaders(request.userAgent, request.headers);
    const req = (secure ? https : http).get(request.url, { agent: secure ? agents.https : agents.http, headers, signal: stopping.signal, timeout: request.idleTimeoutMs });
    let timedOut: FetchFailure | null = null; // What ended the request, when its time ran out.
    function timeout(): void {
      timedOut = new FetchFailure("Timeout", "timeoutMs or idleTimeoutMs ran out");
      req.destroy(timedOut);
    }
    const timer = setTimeout(timeout, request.timeoutMs);
    req.on("timeout", timeout).on("error", function seenBelow() {}); // Errors reach us through once() and the body's loop.
    let before = 0; // What a kept socket had read before this request: the rest is this response's.
    req.on("socket", function assigned(socket) { before = socket.bytesRead; });
    try {
      const [res]: http.IncomingMessage[] = await once(req, "response");
      const status = res.statusCode ?? 0;
      // node:http keeps only set-cookie as an array: one cookie a line, as the shared parser joins them (src/http/parser.ts).
      const head = Object.fromEntries(Object.entries(res.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join("\n") : (value ?? "")]));
      if (request.body === "skippable" && request.skipNonHtml && skippableBody(status, head)) {
        res.destroy();
        return [{ status, headers: head, body: new Uint8Array(0), bodySkipped: true }, null];
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res) {
        size += chunk.length;
        if (size > request.maxBodyBytes) throw new FetchFailure("BodyTooLarge", `The body is longer than maxBodyBytes (${request.maxBodyBytes})`);
        chunks.push(chunk);
      }
      return [{ status, headers: head, body: Buffer.concat(chunks) }, null];
    } catch (error) {
      req.destroy();
      const failure = timedOut ?? cutShort(error, (req.socket?.bytesRead ?? before) - before);
      return [errorName(failure), errorDetail(failure)];
    } finally {
      clearTimeout(timer);
    }
  }

  core.begin(null, function now() { return performance.now(); });
  const stopListening = listenForAbort(core, settings.signal, aborted);
  try {
    for (;;) {
      for (let job = core.next(); job !== null; job = core.next()) void run(job);
      if (core.done) break;
      await new Promise<void>(function untilAJobEnds(resolve) { wake = resolve; });
    }
  } finally {
    stopListening();
    agents.http.destroy();
    agents.https.destroy();
  }
  return core.end();
}

/** Crawls the root with the fourth stage, then with it and stage 3 one task each, and compares their records. */
export async function main(rootUrl?: string): Promise<void> {
  const root = await openRoot(rootUrl);
  try {
    console.log(`A fourth stage, one async loop over node:http: crawling ${root.url} with maxTasks 5`);
    console.log(report(await crawl(root.url, { maxTasks: 5 }), { quiet: true }));
    const site = root.demo?.site;
    if (site !== undefined) console.log(`The demo site had ${site.totalRequests} requests over ${site.connectionsOpened} connections: the Agent keeps them alive.`);
    const [ours, theirs] = [await crawl(root.url, { maxTasks: 1 }), await crawlWithAsyncAwait(root.url, { maxTasks: 1 })].map(function withoutTimes(result) {
      return JSON.stringify(result.records.map(({ fetchedAt: _fetchedAt, ...record }) => record));
    });
    console.log(`maxTasks 1: the same records in the same order as stage 3's: ${ours === theirs ? "yes" : "NO"}`);
  } finally {
    await root.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2]);
