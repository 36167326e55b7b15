/**
 * The recordings `npm run build` puts in the stepper page
 * (dist/stepper/index.html): each stage's crawl of the demo site in the
 * bottle, with one fixed seed, so the page is the same on every build.
 *
 * @module
 */
import { recordCrawl, type RecordedStage } from "./record.js";
import type { Recording } from "./recording.js";

/** The seed of the page's recordings. */
export const BUILD_SEED = 1;

/** The stages, in the lesson's order. */
export const BUILD_STAGES: readonly RecordedStage[] = ["callbacks", "generators", "asyncawait"];

/**
 * Records the demo site's crawl by each stage, one after the other (a
 * recording installs the bottle's clock on the process's timers, so two
 * cannot run at once).
 *
 * @example
 * const [callbacks, generators, asyncawait] = await buildRecordings();
 */
export async function buildRecordings(): Promise<Recording[]> {
  const recordings: Recording[] = [];
  for (const stage of BUILD_STAGES) recordings.push(await recordCrawl({ stage, seed: BUILD_SEED }));
  return recordings;
}
