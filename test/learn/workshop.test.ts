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
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, it } from "vitest";
import { exercises } from "../../learn/workshop/exercises.js";
import { learnerFile } from "../../learn/workshop/learner-files.js";
import { within } from "../helpers/within.js";

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

/** The environment for the workshop: it starts vitest runs of its own, which must not think they are workers of this one. */
function workshopEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && name !== "TEST" && name !== "NODE_ENV"));
}

/** Runs `npm run learn -- ...args` on the learner files in `dir`; resolves with what it printed and its exit code. */
function learn(dir: string, ...args: string[]): Promise<{ out: string; code: number | null }> {
  return new Promise(function run(resolvePromise, reject) {
    const child = spawn(process.execPath, ["--import", "tsx", "learn/workshop/run.ts", ...args], { cwd: REPO, env: { ...workshopEnv(), LEARN_DIR: dir }, stdio: ["ignore", "pipe", "pipe"] });
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

  it("checks one exercise and names its first failing check, then gives hints in order and the library's code", { timeout: 360_000 }, async ({ expect }) => {
    const dir = folder("one");
    const checked = await learn(dir, "5");
    expect(checked.code).toBe(1);
    expect(checked.out).toMatch(/^✗ Not yet\. \d+ checks? pass(es)? before the first that fails:\n {4}Future › .+\n {4}Future\.\w+ is not written yet/m);
    expect(checked.out).toMatch(/^ {2}Look at Future\.\w+/m);
    expect(checked.out).toContain("Stuck? npm run learn -- 5 --hint (hint 1 of 4)");
    const hints = [];
    for (let i = 0; i < 5; i++) hints.push((await learn(dir, "5", "--hint")).out);
    expect(hints.map((hint) => /hint (\d) of 4/.exec(hint)?.[1])).toEqual(["1", "2", "3", "4", "4"]);
    expect(hints[3]).toContain("That was the last hint. The library's own code: npm run learn -- 5 --solution");
    const solution = await learn(dir, "5", "--solution");
    expect(solution.out).toMatch(/^\/\/ src\/generators\/futures\.ts:\d+: Future\.setResult\nsetResult\(value: T\): void \{$/m);
  });

  it("blames an earlier part of the stage, with its file and function, when the stage's crawler would fail on it", { timeout: 240_000 }, async ({ expect }) => {
    const dir = folder("blame");
    const fetcher = exercises.find((exercise) => exercise.number === 3) as (typeof exercises)[number];
    writeFileSync(resolve(dir, fetcher.file), learnerFile(fetcher, readFileSync(resolve(REPO, fetcher.source), "utf8"), REPO, dir, "solution"));
    const { out, code } = await learn(dir, "3"); // Exercise 2's file is the stub: its loop is not written.
    expect(code).toBe(1);
    expect(out).toContain("an earlier part fails its own checks first");
    expect(out).toMatch(/^ {2}Exercise 2, The selector-driven loop \(.*02-selector-loop\.ts\)/m);
    expect(out).toMatch(/EventLoop\.(runOnce|dispatch) is not written yet/);
    expect(out).toMatch(/^ {4}at \S*(runOnce|dispatch) \(.*02-selector-loop\.ts:\d+\)$/m);
    expect(out).toContain("Mend it first: npm run learn -- 2");
    expect(out).not.toContain("contract suite crawls");
  });

  it("moves a learner's file from its name before the renumbering, and says so", async ({ expect }) => {
    const dir = folder("renamed");
    const future = exercises.find((exercise) => exercise.number === 5) as (typeof exercises)[number];
    const stub = learnerFile(future, readFileSync(resolve(REPO, future.source), "utf8"), REPO, dir, "stub");
    const old = stub.replaceAll("Exercise 5 of the workshop", "Exercise 4 of the workshop").replaceAll("(exercise 5, learn/05-future.ts)", "(exercise 4, learn/04-future.ts)");
    writeFileSync(resolve(dir, "04-future.ts"), `${old}\n// my own line\n`);
    const { out } = await learn(dir, "5", "--hint");
    expect(out).toContain("Renamed test-output/");
    expect(out).toMatch(/04-future\.ts to .*05-future\.ts: the workshop has ten exercises now, and this one is number 5\./);
    expect(existsSync(resolve(dir, "04-future.ts"))).toBe(false);
    const moved = readFileSync(resolve(dir, "05-future.ts"), "utf8");
    expect(moved).toContain("// my own line");
    expect(moved).toContain("Exercise 5 of the workshop");
    expect(moved).toContain("(exercise 5, learn/05-future.ts)");
    expect(existsSync(resolve(dir, "04-predict-order.ts"))).toBe(true); // the new exercise 4, written afresh
  });

  it("checks an exercise again each time its file is saved, with --watch, once per burst of writes", { timeout: 480_000 }, async ({ expect }) => {
    const dir = folder("watch");
    const drill = exercises.find((exercise) => exercise.number === 4) as (typeof exercises)[number];
    const file = resolve(dir, drill.file);
    writeFileSync(file, learnerFile(drill, readFileSync(resolve(REPO, drill.source), "utf8"), REPO, dir, "solution"));
    const child = spawn(process.execPath, ["--import", "tsx", "learn/workshop/run.ts", "4", "--watch"], { cwd: REPO, env: { ...workshopEnv(), LEARN_DIR: dir }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const watching = () => out.split("Watching ").length - 1;
    const until = (runs: number) =>
      within(150_000, new Promise<void>((resolveRuns) => {
        const look = () => (watching() >= runs ? resolveRuns() : setTimeout(look, 50));
        look();
      }), `${runs} runs of --watch`);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => { out += chunk; });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => { out += chunk; });
    try {
      await until(1);
      expect(out).toContain("✓ Done");
      for (let i = 0; i < 3; i++) writeFileSync(file, `${readFileSync(file, "utf8")}\n// save ${i}\n`); // one burst: one run
      await until(2);
      writeFileSync(file, readFileSync(file, "utf8").replace(/return \["sync", "tick", "then", "timeout"\];/, 'return ["sync", "then", "tick", "timeout"];'));
      await until(3);
      await new Promise((resolveWait) => setTimeout(resolveWait, 1_000)); // no run nobody asked for
      expect(out.split("Exercise 4: Predict the order").length - 1, out).toBe(3);
      expect(out.split("✓ Done").length - 1, out).toBe(2);
      expect(out).toMatch(/✗ Not yet[\s\S]*predictA/);
    } finally {
      child.kill("SIGTERM");
    }
  });

  it("refuses what it cannot read with a usage message and status 2", async ({ expect }) => {
    const dir = folder("usage");
    const unknown = await learn(dir, "99");
    expect([unknown.code, unknown.out]).toEqual([2, expect.stringContaining("there is no exercise 99: they are numbered 1 to 10")]);
    const flagOnly = await learn(dir, "--hint");
    expect(flagOnly.code).toBe(2);
  });
});
