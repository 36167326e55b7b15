/**
 * The seed's scenario: a random site, crawl options and network, all drawn
 * from one seed, for `npm run simulate` and the conformance suite.
 *
 * @module
 */
import type { CrawlOptions } from "../crawl/options.js";
import { syntheticSite, type SyntheticSiteDefinition } from "../site/synthetic.js";
import type { NetworkOptions } from "./network.js";
import { SeededRandom } from "./random.js";
import type { SiteBuilder, World } from "./simulate.js";

/** The origin of a scenario's site. */
export const SCENARIO_ORIGIN = "http://site.test";

/** What a seed draws. */
export interface Scenario {
  /** Starts the site on the world, returns the root. */
  readonly site: SiteBuilder;
  /** The synthetic part of the site, for its expected crawl. */
  readonly definition: SyntheticSiteDefinition;
  /** Crawl options drawn for the seed. */
  readonly options: CrawlOptions;
  /** Latency, bandwidth and fault rates drawn for the seed. */
  readonly network: Omit<NetworkOptions, "seed">;
}

/**
 * The scenario of `seed`: a synthetic site (3 to 30 pages, 1 to 4 links a
 * page, some redirects and missing pages, a response delay of 0 to 1,000
 * virtual ms) at {@link SCENARIO_ORIGIN}, crawl options (`maxTasks` 1 to
 * 10, short timeouts), and a network with a random latency and bandwidth
 * whose writes are split at random bytes. Nothing in it changes a correct
 * crawl's records: {@link Scenario.definition}'s expected crawl is the
 * answer.
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
  const options: CrawlOptions = {
    maxTasks: random.pick([1, 1, 2, 5, 10]),
    idleTimeoutMs: 5_000,
    timeoutMs: 30_000,
    retryDelayMs: 100,
  };
  const network: Omit<NetworkOptions, "seed"> = {
    latencyMs: random.int(1, 50),
    bytesPerMs: random.pick([100, 1_000, 12_500]),
    faults: { split: 0.3 },
  };
  async function site(world: World): Promise<{ roots: string }> {
    const synthetic = await world.synthetic(SCENARIO_ORIGIN, definition);
    return { roots: synthetic.url };
  }
  return { site, definition, options, network };
}
