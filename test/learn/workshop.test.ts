/**
 * The workshop (`npm run learn`) checks what it says it checks: run against
 * the library's own code, every exercise passes, contract suites included;
 * run against the stubs it hands out, every exercise fails, saying in plain
 * words which body is not written yet. So neither the checks nor the stubs
 * can rot as the library changes.
 *
 * Each run is the whole workshop in child processes, each starting vitest
 * runs of its own: half a minute on two cores. So it runs apart, in
 * `npm run test:workflows` (vitest.workflows.config.ts), not in `npm test`;
 * CI runs both. How a learner file is made from a library module is checked
 * in `npm test`, by learner-files.test.ts.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, it } from "vitest";
import { exercises } from "../../learn/workshop/exercises.js";
import { learnerFile } from "../../learn/workshop/learner-files.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** Inside the repository, so the learner files' imports of `../../src/…` resolve as they do from `learn/`. */
const SCRATCH = resolve(REPO, "test-output", `workshop-${process.pid}`);

afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** A fresh folder for a run's learner files. */
function folder(name: string): string {
  const dir = resolve(SCRATCH, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Runs `npm run learn -- ...args` on the learner files in `dir`; resolves with what it printed and its exit code. */
function learn(dir: string, ...args: string[]): Promise<{ out: string; code: number | null }> {
  // The workshop starts vitest runs of its own: they must not think they are workers of this one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && name !== "TEST" && name !== "NODE_ENV"));
  return new Promise(function run(resolvePromise, reject) {
    const child = spawn(process.execPath, ["--import", "tsx", "learn/workshop/run.ts", ...args], { cwd: REPO, env: { ...env, LEARN_DIR: dir }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", function printed(chunk: string) { out += chunk; });
    child.stderr.setEncoding("utf8").on("data", function complained(chunk: string) { out += chunk; });
    child.on("error", reject);
    child.on("close", function exited(code) { resolvePromise({ out, code }); });
  });
}

/** The list's line for each exercise: its mark and number. */
function marks(out: string): string[] {
  return [...out.matchAll(/^ {2}([✓✗]) +(\d+)\. /gm)].map((match) => `${match[1]} ${match[2]}`);
}

describe.concurrent("the workshop", () => {
  it("passes every exercise, contract suites included, against the library's own code", { timeout: 240_000 }, async ({ expect }) => {
    const dir = folder("reference");
    for (const exercise of exercises) {
      const source = readFileSync(resolve(REPO, exercise.source), "utf8");
      writeFileSync(resolve(dir, exercise.file), learnerFile(exercise, source, REPO, dir, "solution"));
    }
    const { out, code } = await learn(dir);
    expect(marks(out), out).toEqual(exercises.map((exercise) => `✓ ${exercise.number}`));
    expect(out).toContain("All done: every stage's crawler, built from your parts, passes the contract suite.");
    expect(code).toBe(0);
  });

  it("writes the stubs and fails every exercise on them, each saying which body is not written yet", { timeout: 240_000 }, async ({ expect }) => {
    const dir = folder("stubs");
    const { out } = await learn(dir);
    expect(marks(out), out).toEqual(exercises.map((exercise) => `✗ ${exercise.number}`));
    for (const exercise of exercises) {
      // Under each ✗, the first failing check's reason: one of the exercise's own bodies.
      const reason = new RegExp(`^ {2}✗ +${exercise.number}\\. .*\\n +(\\S+) is not written yet \\(exercise ${exercise.number}, learn/${exercise.file}\\)`, "m");
      expect(exercise.write, out).toContain(reason.exec(out)?.[1]);
    }
    expect(out).toContain("Next: exercise 1.");
  });

  it("checks one exercise and names its first failing check, then gives hints in order and the library's code", { timeout: 120_000 }, async ({ expect }) => {
    const dir = folder("one");
    const checked = await learn(dir, "4");
    expect(checked.code).toBe(1);
    expect(checked.out).toMatch(/^✗ Not yet\. \d+ checks? pass(es)? before the first that fails:\n {4}Future › .+\n {4}Future\.\w+ is not written yet/m);
    expect(checked.out).toContain("Stuck? npm run learn -- 4 --hint (hint 1 of 4)");
    const hints = [];
    for (let i = 0; i < 5; i++) hints.push((await learn(dir, "4", "--hint")).out);
    expect(hints.map((hint) => /hint (\d) of 4/.exec(hint)?.[1])).toEqual(["1", "2", "3", "4", "4"]);
    expect(hints[3]).toContain("That was the last hint. The library's own code: npm run learn -- 4 --solution");
    const solution = await learn(dir, "4", "--solution");
    expect(solution.out).toMatch(/^\/\/ src\/generators\/futures\.ts:\d+: Future\.setResult\nsetResult\(value: T\): void \{$/m);
  });

  it("refuses what it cannot read with a usage message and status 2", async ({ expect }) => {
    const dir = folder("usage");
    const unknown = await learn(dir, "99");
    expect([unknown.code, unknown.out]).toEqual([2, expect.stringContaining("there is no exercise 99: they are numbered 1 to 8")]);
    const flagOnly = await learn(dir, "--hint");
    expect(flagOnly.code).toBe(2);
  });
});
