/**
 * The vitest configuration `npm run learn` runs the checks with: one project
 * per exercise, each running the project's own tests with the library's
 * module swapped for the learner's file. The runner (run.ts) says which
 * exercises, which phase and which folder through the environment:
 *
 * - `LEARN_EXERCISES`: the numbers, comma-separated;
 * - `LEARN_PHASE`: `checks` (the exercise's own tests, its module swapped) or
 *   `contract` (the contract suite, every part of the stage swapped);
 * - `LEARN_DIR`: the learner's folder (`learn/`), `LEARN_REPORT`: where the
 *   reporter writes what it found.
 *
 * @module
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { CONTRACT_CHECKS, exerciseNumbered, partsOfStage, type Exercise } from "./exercises.js";
import { WorkshopReporter } from "./report.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const learnerDir = resolve(REPO, process.env["LEARN_DIR"] ?? "learn");
const phase = process.env["LEARN_PHASE"] === "contract" ? "contract" : "checks";
const chosen = (process.env["LEARN_EXERCISES"] ?? "").split(",").filter(Boolean).map(function numbered(number): Exercise {
  const exercise = exerciseNumbered(Number(number));
  if (exercise === undefined) throw new Error(`LEARN_EXERCISES names no exercise ${number}`);
  return exercise;
});

/**
 * A plugin that answers every import of a swapped library module with the
 * learner's file instead: from the tests, from the rest of the library, and
 * from the learner's other files alike, so the crawler is built from the
 * learner's parts.
 */
function learnerModules(swaps: ReadonlyMap<string, string>): Plugin {
  return {
    name: "workshop-learner-modules",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (importer === undefined || !source.startsWith(".")) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved === null ? null : (swaps.get(resolved.id) ?? null);
    },
  };
}

/** The library modules an exercise's run swaps, each for its learner's file. */
function swapsFor(exercise: Exercise): Map<string, string> {
  const swapped = phase === "contract" ? partsOfStage(exercise) : [exercise];
  return new Map(swapped.map((part) => [resolve(REPO, part.source), resolve(learnerDir, part.file)]));
}

export default defineConfig({
  test: {
    root: REPO,
    reporters: [new WorkshopReporter(process.env["LEARN_REPORT"] ?? resolve(learnerDir, ".report.json"), learnerDir, REPO)],
    projects: chosen.map((exercise) => ({
      plugins: [learnerModules(swapsFor(exercise))],
      test: {
        name: String(exercise.number),
        root: REPO,
        include: [...(phase === "contract" ? CONTRACT_CHECKS : exercise.checks)],
        // The contract suite against this stage only: its describe blocks are named "'callbacks' crawler…".
        ...(phase === "contract" ? { testNamePattern: `'${exercise.stage}' crawler` } : {}),
        // A learner's loop that never wakes fails its check in seconds, not in the suite's minute;
        // a contract crawl has its own limit (20 s, then "Hung: …"), this one is above it.
        testTimeout: phase === "contract" ? 30_000 : 10_000,
        hookTimeout: 10_000,
      },
    })),
  },
});
