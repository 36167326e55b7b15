/**
 * The workshop catches the wrong implementations its checks once let through
 * (wrong-implementations.ts): each, written as the learner's file of its
 * exercise, makes `npm run learn -- N` fail on the check that was added for
 * it. A child process and a vitest run each, so it runs in
 * `npm run test:workflows` with workshop.test.ts.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { exercises } from "../../learn/workshop/exercises.js";
import { learnerFile } from "../../learn/workshop/learner-files.js";
import { wrongImplementations } from "./wrong-implementations.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
/** Inside the repository, so the learner files' imports of `../../src/…` resolve as they do from `learn/`. */
const SCRATCH = resolve(REPO, "test-output", `wrong-${process.pid}`);

afterAll(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** The environment for the workshop: it starts vitest runs of its own, which must not think they are workers of this one. */
function workshopEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST") && name !== "TEST" && name !== "NODE_ENV"));
}

/** Runs `npm run learn -- ...args` on the learner files in `dir`; resolves with what it printed and its exit code. */
function learn(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ out: string; code: number | null }> {
  return new Promise(function run(resolvePromise, reject) {
    const child = spawn(process.execPath, ["--import", "tsx", "learn/workshop/run.ts", ...args], { cwd: REPO, env: { ...workshopEnv(), LEARN_DIR: dir, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", function printed(chunk: string) { out += chunk; });
    child.stderr.setEncoding("utf8").on("data", function complained(chunk: string) { out += chunk; });
    child.on("error", reject);
    child.on("close", function exited(code) { resolvePromise({ out, code }); });
  });
}

describe("the workshop's checks", () => {
  it.each(wrongImplementations.map((wrong, index) => ({ ...wrong, index })))("catch exercise $exercise's $name", { timeout: 180_000 }, async (wrong) => {
    const exercise = exercises.find((candidate) => candidate.number === wrong.exercise) as (typeof exercises)[number];
    const dir = resolve(SCRATCH, String(wrong.index));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const source = readFileSync(resolve(REPO, wrong.source), "utf8").replace(wrong.from, wrong.to);
    writeFileSync(resolve(dir, exercise.file), learnerFile(exercise, source, REPO, dir, "solution"));
    const { out, code } = await learn(dir, [String(wrong.exercise)]);
    expect(code, out).toBe(1);
    expect(out).toMatch(/^✗ Not yet\./m);
    expect(out).toContain(wrong.caughtBy);
  });

  it("stop a loop that never gives the thread back, and leave none of the run's processes behind", { timeout: 180_000 }, async () => {
    // The watchdog killed vitest's main process only: the worker that ran the spinning loop was orphaned and burnt a
    // core for minutes. It kills the run's whole process group now.
    const exercise = exercises.find((candidate) => candidate.number === 2) as (typeof exercises)[number];
    const dir = resolve(SCRATCH, "spinning");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const source = readFileSync(resolve(REPO, exercise.source), "utf8").replace("    this.scheduled = null;\n", "    for (;;) this.scheduled = null;\n");
    writeFileSync(resolve(dir, exercise.file), learnerFile(exercise, source, REPO, dir, "solution"));
    const { out, code } = await learn(dir, ["2"], { LEARN_STUCK_MS: "15000" });
    expect(code, out).toBe(1);
    expect(out).toContain("did not finish within 15 s");
    await new Promise((resolveWait) => setTimeout(resolveWait, 500)); // SIGKILL is delivered, not waited for.
    expect(processesWith(`LEARN_DIR=${dir}`), "a process of the stopped run is still there").toEqual([]);
  });
});

/** The processes (pids) whose environment holds `entry`, read from /proc (Linux). */
function processesWith(entry: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry)) found.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}
