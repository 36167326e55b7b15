/**
 * The site of a many-host scenario (P1), alone in its process:
 * `node host-group-child.js '<json>'` with a {@link HostGroupRequest}.
 *
 * It starts a host group (`src/site/host-group.ts`: one fixture site per
 * port of 127.0.0.1) and prints one {@link HostGroupLine} as a JSON line.
 * Then it answers commands on stdin, one per line, each with one JSON line:
 * `start` zeroes the counters and starts counting requests in flight (answer
 * `{}`); `stop` stops and answers an {@link InFlightReport}. It exits when
 * its stdin closes.
 *
 * @module
 */
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { pageRecord, type FetchStatistic } from "../../src/crawl/records.js";
import { startHostGroup, hostGroupLayout, type HostGroup, type HostGroupOptions } from "../../src/site/host-group.js";
import { linksHtml } from "../../src/site/html.js";

/** What the parent asks for. */
export interface HostGroupRequest {
  hosts: number;
  pagesPerHost: number;
  linksPerPage: number;
  seed: number;
  delayMs: number;
  /** The crawl's `maxTasks` and `maxPerHost`, for the bound. */
  maxTasks: number;
  maxPerHost: number;
}

/** What the child prints once it listens: the shape of `src/site/cli.ts`'s line. */
export interface HostGroupLine {
  url: string;
  expected: { count: number; maxDepth: number; records: FetchStatistic[] };
  /** The least wall time (ms) a crawl can take; see {@link latencyBound}. */
  bound: number;
}

/** Requests in flight, as the servers saw them, between `start` and `stop`. */
export interface InFlightReport {
  /** Time-weighted mean of the requests in flight on all hosts together, over {@link busyMs}. */
  averageInFlight: number;
  /** The most requests in flight on all hosts together at any sample. */
  peakInFlight: number;
  /** The most requests in flight at once on each host (exact: the server's own counter), in host order. */
  peakPerHost: number[];
  /** Requests received, all hosts. */
  requests: number;
  /** From the first sample that saw a request in flight to the last one: the servers' view of the crawl's length. */
  busyMs: number;
}

/**
 * The records a full crawl of `group` makes (robots off), breadth first,
 * worked out from the layout alone, and the depth of the deepest page.
 * A page's size is its HTML as the group renders it: links to the same host
 * as paths, to another host as absolute URLs.
 */
function expectedRecords(group: HostGroup, options: HostGroupOptions): { records: FetchStatistic[]; maxDepth: number } {
  const sizes = new Map<string, number>();
  for (const [host, routes] of hostGroupLayout(options).entries()) {
    for (const [path, targets] of routes) {
      const hrefs = targets.map(function href(target) {
        return target.host === host ? target.path : group.sites[target.host].urlFor(target.path);
      });
      sizes.set(group.sites[host].urlFor(path), Buffer.byteLength(linksHtml(hrefs)));
    }
  }
  const depthOf = new Map<string, number>([[group.url, 0]]);
  const records: FetchStatistic[] = [];
  let maxDepth = 0;
  for (const url of group.reachable()) {
    const depth = depthOf.get(url) ?? 0;
    maxDepth = Math.max(maxDepth, depth);
    const links = new Set(group.links.get(url));
    let fresh = 0;
    for (const link of links) {
      if (depthOf.has(link)) continue;
      depthOf.set(link, depth + 1);
      fresh += 1;
    }
    const page = { status: 200, size: sizes.get(url) ?? 0, contentType: "text/html", encoding: "utf-8" };
    records.push(pageRecord(url, page, links.size, fresh));
  }
  return { records, maxDepth };
}

/**
 * The least wall time, in ms, of a crawl of the group: every fetch spread
 * over `min(maxTasks, hosts × maxPerHost)` requests in flight, the busiest
 * host's pages over its `maxPerHost`, and one delay per breadth-first level,
 * whichever is most.
 */
function latencyBound(records: readonly FetchStatistic[], maxDepth: number, request: HostGroupRequest): number {
  const perHost = new Map<string, number>();
  for (const record of records) {
    const origin = new URL(record.url).origin;
    perHost.set(origin, (perHost.get(origin) ?? 0) + 1);
  }
  const busiest = Math.max(0, ...perHost.values());
  const inFlight = Math.min(request.maxTasks, request.hosts * request.maxPerHost);
  const { delayMs } = request;
  return Math.max((records.length * delayMs) / inFlight, (busiest * delayMs) / request.maxPerHost, (maxDepth + 1) * delayMs);
}

/**
 * Counts the requests in flight on every host of a group, every
 * millisecond, each sample weighted by the time since the one before: the
 * time-weighted mean, without touching the sites' code. (A fixture site
 * counts its requests in flight but keeps no history of that count.)
 */
class InFlightSampler {
  private timer: NodeJS.Timeout | null = null;
  private last = 0;
  private integral = 0;
  private firstBusy: number | null = null;
  private lastBusy = 0;
  private peak = 0;

  constructor(private readonly group: HostGroup) {}

  /** Zeroes the group's counters and starts sampling. */
  start(): void {
    this.group.resetCounters();
    this.integral = 0;
    this.firstBusy = null;
    this.lastBusy = 0;
    this.peak = 0;
    this.last = performance.now();
    const sampler = this;
    this.timer = setInterval(function tick() {
      sampler.sample();
    }, 1);
  }

  /** Stops sampling and reports what was seen since {@link start}. */
  stop(): InFlightReport {
    this.sample();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const busyMs = this.firstBusy === null ? 0 : this.lastBusy - this.firstBusy;
    const sites = this.group.sites;
    return {
      averageInFlight: busyMs > 0 ? this.integral / busyMs : 0,
      peakInFlight: this.peak,
      peakPerHost: this.group.peakInFlightPerHost(),
      requests: sites.reduce(function add(sum, site) {
        return sum + site.totalRequests;
      }, 0),
      busyMs,
    };
  }

  private sample(): void {
    const now = performance.now();
    let inFlight = 0;
    for (const site of this.group.sites) inFlight += site.requestsInFlight;
    if (inFlight > 0) {
      // The count seen now stands for the whole interval since the last sample.
      this.integral += inFlight * (now - this.last);
      this.firstBusy ??= this.last;
      this.lastBusy = now;
      this.peak = Math.max(this.peak, inFlight);
    }
    this.last = now;
  }
}

const request = JSON.parse(process.argv[2] ?? "{}") as HostGroupRequest; // written by bench/host-group-process.ts
const options: HostGroupOptions = {
  hosts: request.hosts,
  pagesPerHost: request.pagesPerHost,
  linksPerPage: request.linksPerPage,
  seed: request.seed,
  delayMs: request.delayMs,
};
const group = await startHostGroup(options);
const { records, maxDepth } = expectedRecords(group, options);
const line: HostGroupLine = {
  url: group.url,
  expected: { count: records.length, maxDepth, records },
  bound: latencyBound(records, maxDepth, request),
};
process.stdout.write(`${JSON.stringify(line)}\n`);

const sampler = new InFlightSampler(group);
const commands = createInterface({ input: process.stdin });
commands.on("line", function command(text: string) {
  switch (text.trim()) {
    case "start":
      sampler.start();
      process.stdout.write("{}\n");
      break;
    case "stop":
      process.stdout.write(`${JSON.stringify(sampler.stop())}\n`);
      break;
    default:
      process.stdout.write(`${JSON.stringify({ error: `unknown command ${text}` })}\n`);
  }
});
commands.once("close", async function shutDown() {
  sampler.stop();
  await group.close();
  process.exit(0);
});
