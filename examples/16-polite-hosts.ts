/**
 * Example 16: a polite crawl of three hosts, by each stage.
 *
 * Three fixture sites on three ports of 127.0.0.1 are three hosts (a host is
 * an origin). Host 1's `robots.txt` disallows `/p/`, host 2's asks for a
 * `Crawl-delay` of 0.15 s, host 0 has none (a 404: everything allowed). Each
 * stage crawls them with `{ robots: true, maxPerHost: 1, delayMs: 100 }`:
 * each host's `robots.txt` first, then one request at a time per host, each
 * started at least 100 ms (host 2: 150 ms) after the one before, while six
 * tasks share the three hosts.
 *
 * The crawl core (src/crawl/core.ts, with `HostLines` in
 * src/crawl/politeness.ts) decides for all three stages: it hands out a URL
 * only when its host lets it go, and while URLs wait for a host's delay alone
 * it hands out a wait, which each stage waits for its own way (a loop timer,
 * `yield* sleep()`, an awaited timer). Look at the lines per
 * host: at most 1 request in flight, page fetches started at least the delay
 * apart (from the `trace`, where each host's `robots.txt` is its first fetch), and host 1 never asked for the pages its
 * `robots.txt` disallows (their records have the error `RobotsDisallowed`).
 * The server sees each request a little after its start, the time it takes
 * to connect, so two arrivals can be a few ms closer than the delay. The
 * last line shows the waiting: host 2's pages, one every 150 ms.
 *
 * Run it: `npx tsx examples/16-polite-hosts.ts`
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { crawl as crawlWithAsyncAwait } from "../src/asyncawait/index.js";
import { crawl as crawlWithCallbacks } from "../src/callbacks/index.js";
import { crawl as crawlWithGenerators } from "../src/generators/index.js";
import type { CrawlOptions } from "../src/crawl/options.js";
import type { CrawlResult } from "../src/crawl/records.js";
import type { TraceEvent } from "../src/observe/events.js";
import { startHostGroup } from "../src/site/index.js";

/** One stage's `crawl` function. */
type Crawl = (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;

const STAGES: ReadonlyArray<[how: string, crawl: Crawl]> = [
  ["stage 1: a callLater timer and a list per host", crawlWithCallbacks],
  ["stage 2: a Task that sleeps", crawlWithGenerators],
  ["stage 3: an awaited timer promise", crawlWithAsyncAwait],
];

const POLITE = { robots: true, maxPerHost: 1, delayMs: 100, maxTasks: 6 } satisfies CrawlOptions;

/** Host 0: no robots.txt; host 1: a disallowed subtree; host 2: a Crawl-delay. */
function robotsOf(host: number): string | null {
  if (host === 1) return "User-agent: *\nDisallow: /p/\n";
  if (host === 2) return "User-agent: *\nCrawl-delay: 0.15\n";
  return null;
}

/** The smallest gap between two consecutive times (ms, in order), in words: `≥ 100 ms apart`, or `only once`. */
function gapOf(times: readonly number[]): string {
  if (times.length < 2) return times.length === 1 ? "only once" : "never";
  let smallest = Infinity;
  for (let i = 1; i < times.length; i++) smallest = Math.min(smallest, times[i] - times[i - 1]);
  return `≥ ${Math.floor(smallest)} ms apart`;
}

/** Crawls a group of three hosts with each stage, politely, and prints what each host saw. */
export async function main(): Promise<void> {
  console.log("All three stages: a polite crawl of three hosts, each stage waiting for a host its own way");
  const group = await startHostGroup({ hosts: 3, pagesPerHost: 6, delayMs: 20, robots: robotsOf });
  const { origins } = group;
  try {
    console.log(`Hosts 0, 1, 2: ${origins.join(", ")}; crawling with ${JSON.stringify(POLITE)}`);
    for (const [how, crawl] of STAGES) {
      group.resetCounters();
      // Each host's page fetches, from the trace: when they started (ms since the crawl started), which path.
      const starts = Array.from(origins, function none(): Array<{ t: number; path: string }> {
        return [];
      });
      function watch(event: TraceEvent): void {
        if (event.type !== "fetch-start") return;
        const url = new URL(event.url);
        starts[origins.indexOf(url.origin)]?.push({ t: event.t, path: url.pathname });
      }
      const result = await crawl(group.url, { ...POLITE, trace: watch });

      const disallowed = result.records.filter(function isDisallowed(record) {
        return record.error === "RobotsDisallowed";
      }).length;
      console.log(`\n${how}`);
      console.log(`  records: ${result.records.length}, RobotsDisallowed: ${disallowed} (never requested)`);
      const delays = Array.from(origins, function delayOf(): number {
        return POLITE.delayMs;
      });
      for (const robots of result.robots) {
        const host = origins.indexOf(robots.origin);
        if (robots.crawlDelayMs !== null) delays[host] = Math.max(POLITE.delayMs, robots.crawlDelayMs);
        const crawlDelay = robots.crawlDelayMs === null ? "no Crawl-delay" : `Crawl-delay ${robots.crawlDelayMs} ms`;
        console.log(`  host ${host}'s robots.txt: status ${robots.status}, verdict ${robots.verdict}, ${crawlDelay}`);
      }
      const peaks = group.peakInFlightPerHost();
      for (const [host, site] of group.sites.entries()) {
        const arrivals = site.requests().map(function arrivedAt(request) {
          return request.at;
        });
        const started = starts[host].map(function startedAt(start) {
          return start.t;
        });
        console.log(
          `  host ${host}: ${arrivals.length} requests, at most ${peaks[host]} in flight; delay ${delays[host]} ms, ` +
            `fetches started ${gapOf(started)}, requests arrived ${gapOf(arrivals)}`,
        );
      }
      const firstFetches = starts[2].slice(0, 4).map(function startLine(start) {
        return `${start.path} at ${Math.round(start.t)} ms`;
      });
      console.log(`  host 2's first fetches started: ${firstFetches.join(", ")}, …`);
    }
  } finally {
    await group.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
