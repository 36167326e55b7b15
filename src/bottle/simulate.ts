/**
 * `simulate()`: one crawl of one stage, in the bottle, from a seed.
 *
 * @module
 */
import { crawl as callbacksCrawl } from "../callbacks/index.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { CrawlResult } from "../crawl/records.js";
import { crawl as generatorsCrawl } from "../generators/index.js";
import { crawl as asyncawaitCrawl } from "../asyncawait/index.js";
import type { TraceEvent } from "../observe/events.js";
import { traceLine } from "../observe/trace-lines.js";
import type { FixtureSite } from "../site/fixture-site.js";
import { VirtualClock } from "./clock.js";
import { SimulatedNetwork, type NetworkOptions } from "./network.js";
import { scenarioFor } from "./scenario.js";
import { World, type SiteBuilder } from "./world.js";

export { World, type SiteBuilder } from "./world.js";

/** What every stage's `crawl()` is: the contract a crawl in the bottle is run through. */
export type CrawlFunction = (roots: string | string[], options?: CrawlOptions) => Promise<CrawlResult>;

/** A stage to simulate: its name (in traces and replay lines) and its `crawl()`. */
export interface Stage {
  readonly name: string;
  readonly crawl: CrawlFunction;
  /**
   * False for a stage whose HTTP client reads malformed bytes its own way
   * (a stage over `node:http`, like examples/18): in a hostile scenario its
   * records are not compared (its crawl must still end, leave nothing open
   * and keep its hosts' delays). Default true: every record is compared.
   */
  readonly hostile?: boolean;
}

/** The three stages of this package, by name. A fourth is passed as a {@link Stage}. */
export const STAGES: readonly Stage[] = [
  { name: "callbacks", crawl: callbacksCrawl },
  { name: "generators", crawl: generatorsCrawl },
  { name: "asyncawait", crawl: asyncawaitCrawl },
];

/** What {@link simulate} runs. */
export interface SimulateOptions {
  /** Seeds the network's draws, and picks the scenario when `site` is absent. */
  seed: number;
  /** The stage: a name of {@link STAGES}, or any `crawl()` with a name. */
  stage: string | Stage;
  /** The sites and roots; default: the seed's scenario ({@link scenarioFor}), options included. */
  site?: SiteBuilder;
  /** Crawl options, over the scenario's (`network` and `trace` are the bottle's). */
  options?: Omit<CrawlOptions, "network" | "trace">;
  /** The network's latency, bandwidth and fault rates, over the scenario's; its seed is `seed`. */
  network?: Omit<NetworkOptions, "seed">;
  /** Whether to keep the trace lines (default true). */
  trace?: boolean;
}

/** What one simulated crawl gave. */
export interface Simulation {
  /** The stage's name. */
  readonly stage: string;
  readonly seed: number;
  /** The crawl's result, as the stage returned it. */
  readonly result: CrawlResult;
  /** The crawl's trace, one line per event as `crawl --trace` writes them, socket, task and future numbers counted from 1 in this crawl. */
  readonly trace: readonly string[];
  /** Virtual milliseconds from the start of the crawl to its end. */
  readonly virtualMs: number;
  /** Connections the network opened. */
  readonly connections: number;
  /** Faults the network drew, by kind. */
  readonly faults: Readonly<Record<string, number>>;
  /** What was still open once the crawl ended and the sites closed: both 0 unless something leaks. */
  readonly leftOpen: { readonly sockets: number; readonly timers: number };
  /** The one line that runs this simulation again. */
  readonly replay: string;
}

/**
 * Runs one crawl of `stage` in the bottle: a {@link SimulatedNetwork}
 * seeded with `seed`, serving the sites `site` builds (by default the seed's
 * scenario), under a {@link VirtualClock}. The stage's own `crawl()` runs,
 * unchanged, with the network as its `network` option; time moves only when
 * nothing can run. When the crawl is over, the sites close and the clock
 * fires what timers are left, so `leftOpen` says whether anything leaked.
 * The clock is uninstalled however the crawl ends.
 *
 * Same seed, stage and site → the same records and the same trace lines,
 * byte for byte, in any run and any process.
 *
 * @throws TypeError for an unknown stage name; whatever the crawl rejects
 * with; `DeadlockError` if the crawl can no longer end.
 * @example
 * const { result, trace } = await simulate({ seed: 7, stage: "generators" });
 */
export async function simulate(what: SimulateOptions): Promise<Simulation> {
  const stage = stageNamed(what.stage);
  const clock = new VirtualClock();
  clock.install();
  try {
    const scenario = scenarioFor(what.seed);
    const network = new SimulatedNetwork({ ...scenario.network, ...what.network, seed: what.seed });
    const world = new World(network);
    const lines: string[] = [];
    const numbers = new TraceNumbers();
    const traced = what.trace !== false;
    const result = await clock.run(async function crawlInTheBottle() {
      const built = await (what.site ?? scenario.site)(world);
      // The crawl's own random source (delayJitter) is seeded with the bottle's seed too, unless the options name one.
      const options: CrawlOptions = { seed: what.seed, ...(what.site === undefined ? scenario.options : {}), ...built.options, ...what.options, network };
      if (traced) options.trace = function traceEvent(event: TraceEvent) {
        lines.push(traceLine(numbers.renumber(event)));
      };
      return stage.crawl(built.roots, options);
    });
    const virtualMs = clock.now;
    await clock.run(function closeSites() {
      return Promise.all(world.sites.map(closeSite));
    });
    const timers = await clock.drain();
    return {
      stage: stage.name,
      seed: what.seed,
      result,
      trace: lines,
      virtualMs,
      connections: network.connections,
      faults: { ...network.faultCounts },
      leftOpen: { sockets: network.openSockets, timers },
      replay: replayLine(what.seed, stage.name),
    };
  } finally {
    clock.uninstall();
  }
}

/** The command that replays a seed on a stage. */
export function replayLine(seed: number, stage: string): string {
  return `npm run simulate -- --seed ${seed} --stage ${stage}`;
}

/** The stage called `stage`, or the stage given. @throws TypeError for an unknown name. */
export function stageNamed(stage: string | Stage): Stage {
  if (typeof stage !== "string") return stage;
  const found = STAGES.find(function named(each) {
    return each.name === stage;
  });
  if (found === undefined) throw new TypeError(`Unknown stage ${JSON.stringify(stage)}: expected ${STAGES.map(nameOf).join(", ")}`);
  return found;
}

function nameOf(stage: Stage): string {
  return stage.name;
}

function closeSite(site: FixtureSite): Promise<void> {
  return site.close();
}

/**
 * Renumbers what the trace names by process-wide counters (sockets' file
 * numbers, stage 2's tasks and futures) in order of first appearance in
 * this crawl, so a crawl's trace does not depend on what ran before it in
 * the process.
 */
class TraceNumbers {
  private readonly sockets = new Map<number, number>();
  private readonly tasks = new Map<number, number>();
  private readonly futures = new Map<number, number>();

  renumber(event: TraceEvent): TraceEvent {
    switch (event.type) {
      case "dispatch":
        return { ...event, socket: local(this.sockets, event.socket) };
      case "step":
      case "cancel":
        return { ...event, task: local(this.tasks, event.task) };
      case "resolve":
        return { ...event, future: local(this.futures, event.future) };
      default:
        return event;
    }
  }
}

function local(numbers: Map<number, number>, global: number): number {
  let number = numbers.get(global);
  if (number === undefined) {
    number = numbers.size + 1;
    numbers.set(global, number);
  }
  return number;
}
