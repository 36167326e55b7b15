/**
 * The crawlers the contract suite checks: one entry per stage, added by each
 * stage's engineer once the stage passes. Every suite in test/contract runs
 * against each entry, so the three stages are held to the same behaviour;
 * the suites run `withFourth`, which adds the fourth stage of
 * examples/18-your-own-stage.ts, but for the few scenarios it leaves to
 * node:http's own parser (each left out with its reason where it is).
 * Check a stage of your own the same way: add it, and run
 * `npx vitest run test/contract -t <its name>` (docs/crawl-core.md, "Check your stage").
 */
import { crawl as crawlWithCallbacks, Crawler as CallbacksCrawler } from "../../src/callbacks/index.js";
import { Crawler as GeneratorsCrawler, crawl as crawlWithGenerators } from "../../src/generators/index.js";
import { Crawler as AsyncAwaitCrawler, crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import { crawl as crawlWithFourth } from "../../examples/18-your-own-stage.js";
import { CrawlCore } from "../../src/crawl/core.js";
import type { CrawlResult } from "../../src/crawl/records.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import type { StageName } from "../../src/observe/channels.js";
import { worldFor } from "../../src/crawl/world.js";
import { within } from "../helpers/within.js";

/**
 * How long one contract crawl may take before it fails as hung, naming the
 * stage and the roots. The crawls are of small loopback sites; the limit is
 * generous because the machines running the tests are shared and noisy.
 */
const CRAWL_HANG_MS = 20_000;

/** One stage's public API, as the contract suite calls it. */
export interface Stage {
  name: StageName;
  crawl: (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;
  Crawler: new (roots: string | string[], options?: CrawlOptions) => { urlAllowed(url: string): boolean };
}

/**
 * `crawl`, failing with "Hung: <stage> crawl of <roots> did not finish within
 * 20000 ms" instead of running into the test timeout when a crawl never ends.
 */
function failingIfHung(name: Stage["name"], crawl: Stage["crawl"]): Stage["crawl"] {
  return function crawlWithinLimit(roots, options) {
    return within(CRAWL_HANG_MS, crawl(roots, options), `${name} crawl of ${String(roots)}`);
  };
}

/** The registered stages. Add yours with one line, e.g. `{ name: "asyncawait", crawl, Crawler }`. */
export const stages: Stage[] = [
  { name: "callbacks", crawl: failingIfHung("callbacks", crawlWithCallbacks), Crawler: CallbacksCrawler },
  { name: "generators", crawl: failingIfHung("generators", crawlWithGenerators), Crawler: GeneratorsCrawler },
  { name: "asyncawait", crawl: failingIfHung("asyncawait", crawlWithAsyncAwait), Crawler: AsyncAwaitCrawler },
];

/** What the suites ask of a stage's `Crawler`, for the fourth stage, which has none: the core's `urlAllowed`, as every `Crawler` passes it on. */
class FourthCrawler {
  private readonly core: CrawlCore;

  constructor(roots: string | string[], options?: CrawlOptions) {
    const settings = resolveOptions(options);
    this.core = new CrawlCore("fourth", roots, settings, worldFor(settings));
  }

  urlAllowed(url: string): boolean {
    return this.core.urlAllowed(url);
  }
}

/**
 * The fourth stage of examples/18-your-own-stage.ts, written from
 * docs/crawl-core.md alone. It has no `Crawler` class: what the suites ask
 * of one, `urlAllowed`, is the core's, which every `Crawler` passes on.
 */
export const fourth: Stage = { name: "fourth", crawl: failingIfHung("fourth", crawlWithFourth), Crawler: FourthCrawler };

/** The three stages and the fourth: for the suites the fourth stage honestly passes. */
export const withFourth: Stage[] = [...stages, fourth];
