/**
 * The conformance suite as a function of the stages it runs: the three of
 * this package, or any `crawl()` with a name (a fourth stage in examples/, a
 * learner's). Each seed's scenario (src/bottle/scenario.ts) runs in every
 * stage in the bottle; a seed fails when a stage's records differ from the
 * site's expected crawl or from the first stage's, or when it leaves a
 * socket or a timer open. A failure names the seed and its replay line.
 */
import { describe, expect, it } from "vitest";
import { checkSeed, type Disagreement } from "../../src/bottle/conformance.js";
import type { Stage } from "../../src/bottle/simulate.js";

/** How many seeds, from which: `CONFORMANCE_SEEDS` (default 500) from `CONFORMANCE_FROM` (default 0), so CI can move the window. */
export function seedWindow(env: NodeJS.ProcessEnv = process.env): { from: number; count: number } {
  const from = Number(env.CONFORMANCE_FROM ?? 0);
  const count = Number(env.CONFORMANCE_SEEDS ?? 500);
  if (!Number.isSafeInteger(from) || from < 0 || !Number.isSafeInteger(count) || count < 1) {
    throw new TypeError(`Expected CONFORMANCE_FROM >= 0 and CONFORMANCE_SEEDS >= 1, got ${env.CONFORMANCE_FROM} and ${env.CONFORMANCE_SEEDS}`);
  }
  return { from, count };
}

/** The lines a failing seed prints: what was wrong, and the command that replays it. */
export function failureReport(disagreements: readonly Disagreement[]): string {
  return disagreements.map((each) => `seed ${each.seed}, ${each.stage}: ${each.what}\n  replay: ${each.replay}`).join("\n");
}

/**
 * Declares the suite for `stages`: the seeds in batches of 50, each batch
 * one test. Name a stage of your own by the path of the module that exports
 * its `crawl()`, and its replay lines work: `npm run simulate -- --stage`
 * takes such a path.
 */
export function conformanceSuite(stages: readonly Stage[], window = seedWindow()): void {
  const batches: Array<{ from: number; to: number }> = [];
  for (let from = window.from; from < window.from + window.count; from += 50) batches.push({ from, to: Math.min(from + 50, window.from + window.count) });
  describe(`conformance of ${stages.map((stage) => stage.name).join(", ")}`, () => {
    for (const { from, to } of batches) {
      it(`agrees on seeds ${from} to ${to - 1}, with each other and with the expected crawl`, async () => {
        const disagreements: Disagreement[] = [];
        for (let seed = from; seed < to; seed++) disagreements.push(...(await checkSeed(seed, stages)).disagreements);
        expect(failureReport(disagreements)).toBe("");
      }, 300_000);
    }
  });
}
