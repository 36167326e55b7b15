/**
 * The seed's scenario: a random site, crawl options and network, all drawn
 * from one seed, for `npm run simulate` and the conformance suite.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CrawlOptions } from "../crawl/options.js";
import type { FetchStatistic } from "../crawl/records.js";
import { expectedCrawl } from "../site/expected-crawl.js";
import { pagePath, renderPage, syntheticSite, type SyntheticPage, type SyntheticSiteDefinition } from "../site/synthetic.js";
import type { NetworkOptions } from "./network.js";
import { SeededRandom } from "./random.js";
import type { SiteBuilder, World } from "./world.js";

/** The origin of a scenario's site. */
export const SCENARIO_ORIGIN = "http://site.test";
/** The origin of a scenario's second site, when it has one. */
export const SECOND_ORIGIN = "http://b.test";

/** What a seed draws. */
export interface Scenario {
  readonly seed: number;
  /** Starts the site on the world, returns the root and the options the site asks for. */
  readonly site: SiteBuilder;
  /** The synthetic site underneath. */
  readonly definition: SyntheticSiteDefinition;
  /** Crawl options drawn for the seed. */
  readonly options: CrawlOptions;
  /** Latency, bandwidth and fault rates drawn for the seed. */
  readonly network: Omit<NetworkOptions, "seed">;
  /** What the seed put in, in words: `robots crawl-delay 1s, retry-after /p/3, …`. */
  readonly features: readonly string[];
  /**
   * Whether a correct crawl's records come in one order: one task, one
   * root, no `Retry-After` (a URL put back by one loses its place). Else
   * only the set of records is fixed.
   */
  readonly ordered: boolean;
  /**
   * The least time, in virtual ms, between the starts of two requests to
   * {@link SCENARIO_ORIGIN}'s host: `delayMs` or the `Crawl-delay`, whichever
   * is longer; 0 without either.
   */
  readonly hostGapMs: number;
  /**
   * The records a correct crawl makes, when the scenario is one whose crawl
   * can be worked out from the site alone (no fault that changes a record,
   * no page robots.txt forbids): the site's expected crawl, with the pages
   * that answer `503 Retry-After` once tried twice. Null for a hostile
   * scenario, whose stages are compared with each other only.
   */
  readonly expected: readonly FetchStatistic[] | null;
}

/**
 * The scenario of `seed`. Always: a synthetic site at {@link SCENARIO_ORIGIN}
 * (3 to 30 pages, 1 to 4 links a page, redirects and missing pages, a
 * response delay of 0 to 1,000 virtual ms), `maxTasks` from 1 to 10, short
 * timeouts, and a network with a random latency and bandwidth that splits
 * writes at random bytes and drips some responses. Then, each by chance:
 * - a `robots.txt` with a `Crawl-delay`, read with `robots: true`;
 * - a per-host `delayMs`;
 * - pages that answer `503` with `Retry-After: 1` once, then the page;
 * - a second site on another host ({@link SECOND_ORIGIN}), crawled from its
 *   own root, with `maxPerHost` 1 or none;
 * - hostile (a third of the seeds): responses reset or stalled by the
 *   network, a page of malformed bytes, a dropped connection, a body over
 *   `maxBodyBytes`, a `robots.txt` `Disallow`, and roots on a host no DNS
 *   knows and on a port nobody listens on.
 * Nothing but the hostile part changes a correct crawl's records, which is
 * what {@link Scenario.expected} holds.
 */
export function scenarioFor(seed: number): Scenario {
  const random = new SeededRandom(seed);
  const definition = syntheticSite({
    pages: random.int(3, 30),
    linksPerPage: random.int(1, 4),
    seed,
    redirects: random.int(0, 3),
    notFound: random.int(0, 2),
    delayMs: random.pick([0, 0, 10, 250, 1_000]),
  });
  const pages = definition.options.pages;
  const features: string[] = [];
  const options: CrawlOptions = {
    maxTasks: random.pick([1, 1, 2, 5, 10]),
    idleTimeoutMs: 5_000,
    timeoutMs: 30_000,
    retryDelayMs: 100,
    maxBodyBytes: 100_000,
  };
  const network: Omit<NetworkOptions, "seed"> = {
    latencyMs: random.int(1, 50),
    bytesPerMs: random.pick([100, 1_000, 12_500]),
    faults: { split: 0.3, drip: 0.05 },
  };
  const robotsLines: string[] = [];
  let crawlDelayMs = 0;
  if (random.chance(0.3)) {
    const crawlDelay = random.pick(["0.5", "1", "2"]);
    crawlDelayMs = Number(crawlDelay) * 1_000;
    robotsLines.push(`Crawl-delay: ${crawlDelay}`);
    options.robots = true;
    features.push(`robots crawl-delay ${crawlDelay}s`);
  }
  if (random.chance(0.2)) {
    options.delayMs = random.pick([100, 500]);
    features.push(`delayMs ${options.delayMs}`);
  }
  const retryAfter = new Set<string>();
  if (random.chance(0.3)) {
    for (let n = random.int(1, 2); n > 0; n--) retryAfter.add(pagePath(random.int(1, pages - 1)));
    features.push(`retry-after ${[...retryAfter].join(" ")}`);
  }
  const second = random.chance(0.25)
    ? syntheticSite({ pages: random.int(2, 10), linksPerPage: random.int(1, 3), seed: seed + 1_000_003, delayMs: random.pick([0, 100]) })
    : null;
  const roots = [`${SCENARIO_ORIGIN}/`];
  if (second !== null) {
    roots.push(`${SECOND_ORIGIN}/`);
    if (random.chance(0.5)) options.maxPerHost = 1;
    features.push(`second host${options.maxPerHost === 1 ? ", maxPerHost 1" : ""}`);
  }
  const hostile = new Map<string, "raw" | "drop" | "huge">();
  if (random.chance(1 / 3)) {
    network.faults = { ...network.faults, reset: 0.05, stall: 0.03 };
    for (const kind of ["raw", "drop", "huge"] as const) if (random.chance(0.5)) hostile.set(pagePath(random.int(1, pages - 1)), kind);
    if (random.chance(0.5)) {
      const disallowed = pagePath(random.int(1, pages - 1));
      robotsLines.push(`Disallow: ${disallowed}`);
      options.robots = true;
      features.push(`robots disallow ${disallowed}`);
    }
    if (random.chance(0.3)) {
      roots.push("http://gone.test/", `${SCENARIO_ORIGIN}:8080/`);
      features.push("roots on an unknown host and a closed port");
    }
    features.push(`hostile: network resets and stalls${[...hostile].map(([path, kind]) => `, ${kind} ${path}`).join("")}`);
  }
  const robotsTxt = robotsLines.length === 0 ? null : `User-agent: *\n${robotsLines.join("\n")}\n`;
  async function site(world: World): Promise<{ roots: string[] }> {
    const synthetic = await world.synthetic(SCENARIO_ORIGIN, definition);
    if (second !== null) await world.synthetic(SECOND_ORIGIN, second);
    const fixture = synthetic.site;
    if (robotsTxt !== null) fixture.addRobots(robotsTxt);
    for (const path of retryAfter) {
      const route = definition.routes.get(path);
      if (route?.kind === "page") fixture.addHandler(path, refuseOnceThenServe(path, route));
    }
    for (const [path, kind] of hostile) {
      if (kind === "raw") fixture.addFault(path, { kind: "raw", bytes: "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 13\r\n\r\nnot the body" });
      else if (kind === "drop") fixture.addFault(path, { kind: "drop" });
      else fixture.addFault(path, { kind: "huge", bytes: 200_000 });
    }
    return { roots };
  }
  const isHostile = network.faults?.reset !== undefined;
  const expected = isHostile ? null : expectedRecords(definition, retryAfter);
  if (expected !== null && second !== null) expected.push(...expectedCrawl(second, { origin: SECOND_ORIGIN }).records);
  const ordered = options.maxTasks === 1 && retryAfter.size === 0 && roots.length === 1;
  const hostGapMs = Math.max(options.delayMs ?? 0, crawlDelayMs);
  return { seed, site, definition, options, network, features, ordered, hostGapMs, expected };
}

/** The expected crawl's records, the `Retry-After` pages tried twice. */
function expectedRecords(definition: SyntheticSiteDefinition, retryAfter: ReadonlySet<string>): FetchStatistic[] {
  return expectedCrawl(definition, { origin: SCENARIO_ORIGIN }).records.map(function withTries(record) {
    return retryAfter.has(new URL(record.url).pathname) ? { ...record, tries: 2 } : record;
  });
}

/** A route that answers the first request with `503 Retry-After: 1`, and every later one with the page. */
function refuseOnceThenServe(path: string, route: SyntheticPage): (request: IncomingMessage, response: ServerResponse) => void {
  const rendered = renderPage(path, route);
  const headers = { ...rendered.headers, "Content-Length": String(rendered.body.length) };
  let refused = false;
  return function refuseOnce(_request, response) {
    if (!refused) {
      refused = true;
      response.writeHead(503, { "Retry-After": "1", "Content-Type": "text/plain", "Content-Length": "5" }).end("busy\n");
      return;
    }
    response.writeHead(200, headers).end(rendered.body);
  };
}
