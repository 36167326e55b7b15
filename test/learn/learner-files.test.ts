/**
 * The workshop's learner files (learn/workshop/learner-files.ts): a stub
 * takes out exactly the bodies its exercise names, and a solution is the
 * library's module itself. The whole workshop, run against both, is
 * workshop.test.ts (`npm run test:workflows`). The wrong implementations the
 * checks once let through (wrong-implementations.ts) still apply, each to a
 * body its exercise writes; wrong-implementations.test.ts runs the workshop
 * on them.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exercises } from "../../learn/workshop/exercises.js";
import { findBodies, learnerFile } from "../../learn/workshop/learner-files.js";
import { wrongImplementations } from "./wrong-implementations.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

describe("learner files", () => {
  it.each(exercises)("exercise $number's stub replaces exactly the bodies it names, and its solution is the library's module", (exercise) => {
    const source = readFileSync(resolve(REPO, exercise.source), "utf8");
    const stub = learnerFile(exercise, source, REPO, resolve(REPO, "learn"), "stub");
    const messages = [...stub.matchAll(/throw new Error\("(\S+) is not written yet/g)].map((match) => match[1]);
    expect(messages).toEqual(findBodies(source, exercise.source, exercise.write).map((body) => body.name));
    for (const [, specifier] of stub.matchAll(/from "(\.{1,2}\/[^"]+)\.js"/g)) {
      expect(existsSync(resolve(REPO, "learn", `${specifier}.ts`)), `${specifier} from learn/`).toBe(true); // its imports point back at the library
    }
    const solution = learnerFile(exercise, source, REPO, resolve(REPO, "learn"), "solution");
    // Apart from its header and the imports that point back at the library, the solution is the module itself.
    const withoutImports = (text: string) => text.replace(/(["'])\.{1,2}\/[^"']+\1/g, "<import>");
    const body = solution.slice(solution.indexOf("\n", solution.indexOf("// Check it:")) + 1);
    expect(withoutImports(body)).toBe(withoutImports(source));
  });

  it.each(wrongImplementations)("the wrong implementation '$name' still applies, to a body exercise $exercise writes", (wrong) => {
    const exercise = exercises.find((candidate) => candidate.number === wrong.exercise);
    expect(exercise?.source).toBe(wrong.source);
    const source = readFileSync(resolve(REPO, wrong.source), "utf8");
    expect(source.split(wrong.from)).toHaveLength(2); // found exactly once
    const at = source.indexOf(wrong.from);
    const bodies = findBodies(source, wrong.source, exercise?.write ?? []);
    expect(bodies.some((body) => body.start <= at && at + wrong.from.length <= body.end), "the edit is outside the bodies the learner writes").toBe(true);
  });
});
