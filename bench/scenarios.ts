/**
 * The benchmark's scenarios: the synthetic site each one crawls and the
 * options it crawls with (issue 8; P1, issue 14; S4 and S5, issue 18), full
 * size and `--quick`. R1 (issue 15), crawled by several processes through
 * one Redis, is defined in bench/redis-scenario.ts on S1's and S2's sites.
 *
 * @module
 */
import type { KnownStage as StageName } from "../src/observe/events.js";

/** One scenario: a site, a worker count, and the question it asks. */
export interface Scenario {
  /** `S1`, `S2`, `S3`, `S4`, `S5` or `P1`. */
  readonly id: string;
  /** What the scenario measures, for the table. */
  readonly title: string;
  /** Pages of the site, all its hosts together. */
  readonly pages: number;
  /**
   * Hosts the pages are spread over, evenly: 1 is one synthetic site
   * (`src/site/cli.ts`); more is a host group (`src/site/host-group.ts`), one
   * fixture site per port of 127.0.0.1, run by `bench/children/host-group-child.ts`.
   */
  readonly hosts: number;
  /** Links on each page. */
  readonly links: number;
  /** Delay before every response, in ms. */
  readonly delayMs: number;
  /** The crawl's `maxTasks`. */
  readonly maxTasks: number;
  /** The crawl's `maxPerHost`; null: not set (no limit but `maxTasks`). */
  readonly maxPerHost: number | null;
  /** The PRNG seed of the site: same seed, same site, same crawl. */
  readonly seed: number;
  /**
   * True where the figure is peak RSS over the reference crawler's in the
   * same round (S4): the reference then crawls too, whatever `--stages`
   * says, and no warm-up crawl comes first (a cold site slows a crawl; it
   * does not grow the crawler's memory).
   */
  readonly againstReference: boolean;
  /**
   * The only stages that crawl this scenario (those of them `--stages`
   * names); null: every stage `--stages` names.
   */
  readonly stages: readonly StageName[] | null;
  /**
   * False where the crawl keeps no records (S5): it runs with `keepRecords:
   * false` and writes each record as one JSON line to a file, as `crawl
   * --jsonl` does, and the run is checked on that file after the crawl (its
   * lines, their distinct URLs, no errors) against the number of pages the
   * site expects, which is all the site then prints.
   */
  readonly keepRecords: boolean;
  /**
   * The site crawled (issue 39): `project`, the project's synthetic site
   * (src/site/cli.ts, every record compared), or `yardstick`, the site the
   * yardstick was measured on (bench/yardstick/site-server.mjs, crawls
   * checked by counts: bench/yardstick.ts). Absent: `project`.
   */
  readonly site?: "project" | "yardstick";
  /**
   * True where the figure is CPU per page (issue 39): each round, each
   * crawler also crawls a one-page site of the same kind, and its CPU per
   * page is (whole-process CPU of the crawl − that of the one-page crawl) ÷
   * (pages − 1), start-up taken out. Absent: false.
   */
  readonly perPage?: boolean;
  /**
   * `command` where the stages crawl through the `crawl` command as users run
   * it (issue 39, Y1): the bundle scripts/build-bin.mjs builds, `crawl ROOT
   * --stage S -q --max-tasks N --jsonl FILE` (bench/command-process.ts), its
   * records checked from the file, as S5's; the reference and the yardstick
   * crawl as elsewhere, and such a crawl counts no trace and writes no heap
   * snapshot. Absent: `child`, the library imported by
   * bench/children/crawl-child.ts.
   */
  readonly through?: "child" | "command";
}

/**
 * The scenarios of issue 8, throughput with no delay (S1), latency with a
 * 50 ms delay (S2) and C10K, ten thousand slow responses in flight at once
 * (S3); the politeness scenario of issue 14 (P1): 20 hosts of 200 pages
 * answering in 100 ms (docs/benchmarks.md says why not 50),
 * at most 2 requests in flight on each, 40 workers, so the crawl can keep 40
 * requests in flight only if no host's line ever runs dry and no worker
 * waits for a busy host. `robots` stays off (the library's default): P1
 * measures how the stages share out the requests, not `robots.txt`. And
 * the big crawl of issue 18 (S4): 300,000 pages as fast as they come, where
 * what counts is the crawler's peak RSS against the plain node:http
 * crawler's; and (S5) a million pages crawled by stage 3 with `keepRecords:
 * false` and every record written to a JSON Lines file, where what counts is
 * the crawler's peak RSS alone: its seen set and its queue.
 */
export const SCENARIOS: readonly Scenario[] = [
  { id: "S1", title: "throughput", pages: 2_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S2", title: "latency", pages: 2_000, hosts: 1, links: 10, delayMs: 50, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S3", title: "C10K", pages: 10_000, hosts: 1, links: 10, delayMs: 1_000, maxTasks: 10_000, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "P1", title: "politeness", pages: 4_000, hosts: 20, links: 10, delayMs: 100, maxTasks: 40, maxPerHost: 2, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S4", title: "memory per page", pages: 300_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: true, stages: null, keepRecords: true },
  { id: "S5", title: "records not kept", pages: 1_000_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: ["asyncawait"], keepRecords: false },
  // Issue 39: S1's shape on the yardstick's own site, the stages through the command, and CPU per page at 100,000 and 300,000 pages there.
  { id: "Y1", title: "throughput", pages: 2_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", through: "command" },
  { id: "PP1", title: "CPU per page", pages: 100_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", perPage: true },
  { id: "PP2", title: "CPU per page", pages: 300_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 100, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", perPage: true },
];

/** The same shapes, small enough for a test to run in seconds (`--quick`). */
export const QUICK_SCENARIOS: readonly Scenario[] = [
  { id: "S1", title: "throughput", pages: 200, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S2", title: "latency", pages: 200, hosts: 1, links: 10, delayMs: 20, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S3", title: "C10K", pages: 500, hosts: 1, links: 10, delayMs: 200, maxTasks: 500, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "P1", title: "politeness", pages: 200, hosts: 5, links: 10, delayMs: 20, maxTasks: 10, maxPerHost: 2, seed: 1, againstReference: false, stages: null, keepRecords: true },
  { id: "S4", title: "memory per page", pages: 300, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: true, stages: null, keepRecords: true },
  { id: "S5", title: "records not kept", pages: 300, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: ["asyncawait"], keepRecords: false },
  { id: "Y1", title: "throughput", pages: 200, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", through: "command" },
  { id: "PP1", title: "CPU per page", pages: 500, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", perPage: true },
  { id: "PP2", title: "CPU per page", pages: 1_000, hosts: 1, links: 10, delayMs: 0, maxTasks: 20, maxPerHost: null, seed: 1, againstReference: false, stages: null, keepRecords: true, site: "yardstick", perPage: true },
];

/**
 * The scenarios `npm run bench` runs when `--scenarios` is not given: all of
 * them, and R1 (one crawl, many processes, one Redis: bench/redis-scenario.ts),
 * which has a shape of its own.
 */
export const DEFAULT_SCENARIO_IDS: string = [
  ...SCENARIOS.map(function idOf(scenario) {
    return scenario.id;
  }),
  "R1",
].join(",");

/**
 * Whether `scenario`'s figure is the crawler's memory on a big crawl (S4,
 * S5): then no warm-up crawl comes first, and the report has a section on
 * its memory per page.
 */
export function measuresMemory(scenario: Scenario): boolean {
  return scenario.againstReference || !scenario.keepRecords;
}

/**
 * The most requests a crawl of `scenario` can have in flight at once:
 * `min(maxTasks, hosts × maxPerHost)`.
 */
export function idealInFlight(scenario: Scenario): number {
  return Math.min(scenario.maxTasks, scenario.hosts * (scenario.maxPerHost ?? Infinity));
}
