/**
 * The bottle: the real stages, unchanged, on a simulated network and a
 * virtual clock, so that any crawl runs in CPU time and replays from a seed
 * (docs/the-bottle.md).
 *
 * Start with {@link simulate} (`npm run simulate -- --seed N --stage S`);
 * underneath, {@link SimulatedNetwork} (the crawl option `network`) and
 * {@link VirtualClock} (@sinonjs/fake-timers) are usable on their own.
 *
 * @module
 */
export { DeadlockError, EPOCH, VirtualClock } from "./clock.js";
export { SimulatedNetwork, type Acceptor, type Fault, type FaultRates, type NetworkOptions } from "./network.js";
export { SeededRandom, seedFor } from "./random.js";
export { SCENARIO_ORIGIN, scenarioFor, type Scenario } from "./scenario.js";
export { replayLine, simulate, stageNamed, STAGES, World, type CrawlFunction, type SimulateOptions, type Simulation, type SiteBuilder, type Stage } from "./simulate.js";
export { SimulatedSocket, systemError, type Link } from "./socket.js";
