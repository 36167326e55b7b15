/**
 * The stepper's recorder (stepper/record.ts), run as the page's build and
 * `npm run learn -- N --step` run it: stepper/record-cli.ts under tsx, in a
 * child process (its stacks and the paused lines come from tsx's source
 * maps, which vitest's own module runner does not give, and a learner's
 * files are swapped in by a Node module hook, for the whole process).
 * Each stage's crawl of the demo site in the bottle, seed 1.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exerciseNumbered, partsOfStage } from "../../learn/workshop/exercises.js";
import { learnerFile } from "../../learn/workshop/learner-files.js";
import type { Recording, Snapshot } from "../../stepper/recording.js";
import { wrongImplementations } from "../learn/wrong-implementations.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TSX = resolve(REPO, "node_modules/tsx/dist/cli.mjs");
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "stepper-record-"));

async function record(stage: string, name: string, extra: string[] = [], seed = 1): Promise<Recording> {
  const out = join(dir, `${name}.json`);
  await run(process.execPath, [TSX, "stepper/record-cli.ts", "--stage", stage, "--seed", String(seed), "--out", out, ...extra], { cwd: REPO, maxBuffer: 1 << 24 });
  return JSON.parse(readFileSync(out, "utf8")) as Recording;
}

const recordings = new Map<string, Recording>();

function recordingOf(stage: string): Recording {
  const recording = recordings.get(stage);
  if (recording === undefined) throw new Error(`no recording of ${stage}`);
  return recording;
}

beforeAll(async () => {
  // One after the other: the machine's cores are shared.
  for (const stage of ["callbacks", "generators", "asyncawait"]) recordings.set(stage, await record(stage, stage));
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function some(steps: Snapshot[], test: (step: Snapshot) => boolean): boolean {
  return steps.some(test);
}

describe("recordCrawl", () => {
  it("records stage 1's dispatches, timers and iterations with the selector, the heap, the wake-up planned, the core and the stack", () => {
    const { steps, truncated } = recordingOf("callbacks");
    expect(truncated).toBe(false);
    expect(steps.at(-1)?.kind).toBe("end");
    const callbacks = steps.filter((step) => step.kind === "callback");
    expect(callbacks.length).toBeGreaterThan(50);
    expect(steps.filter((step) => step.kind === "iteration").length).toBeGreaterThan(50);
    expect(some(steps, (step) => (step.selector?.keys.length ?? 0) >= 3)).toBe(true);
    expect(some(steps, (step) => (step.selector?.lastReady?.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.timers?.heap.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => step.timers?.planned.some((wakeup) => wakeup.kind === "setTimeout") === true)).toBe(true);
    expect(some(steps, (step) => step.timers?.planned.some((wakeup) => wakeup.kind === "setImmediate") === true)).toBe(true);
    expect(some(steps, (step) => step.core.jobsOut.length === 3 && step.core.hosts.length === 1)).toBe(true);
    for (const step of callbacks) {
      expect(step.stack.map((line) => line.fn)).toContain("dispatch");
      expect(step.stack[0]?.file).toBe("src/callbacks/event-loop.ts");
      expect(step.next?.file).toMatch(/^src\/callbacks\//);
    }
    expect(steps.every((step) => step.tasks === undefined && step.ready === undefined)).toBe(true);
  });

  it("records stage 2's ready callbacks and Task steps with the ready queue and its boundary, Tasks, Futures, the queue and the timers", () => {
    const { steps } = recordingOf("generators");
    expect(steps.filter((step) => step.kind === "task-step").length).toBeGreaterThan(100);
    expect(steps.filter((step) => step.kind === "callback").length).toBeGreaterThan(100);
    expect(some(steps, (step) => step.ready?.some((entry) => entry.thisIteration) === true && step.ready.some((entry) => !entry.thisIteration))).toBe(true);
    expect(some(steps, (step) => (step.tasks?.length ?? 0) >= 4)).toBe(true);
    for (const step of steps) {
      for (const task of step.tasks ?? []) if (task.state === "waiting") expect(task.pausedAt?.file, `${step.index} ${task.id}`).toMatch(/^src\/generators\//);
    }
    expect(some(steps, (step) => step.futures?.some((future) => future.callbacks.some((name) => name.endsWith(".wakeUp"))) === true)).toBe(true);
    expect(some(steps, (step) => (step.queue?.items.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.queue?.parkedGetters ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.selector?.keys.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.timers?.heap.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.events.futuresResolved?.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.events.tasksDone?.length ?? 0) > 0)).toBe(true);
  });

  it("takes a step where each of stage 2's Futures is resolved, with the code that resolved it on the stack and its done callbacks queued", () => {
    const { steps } = recordingOf("generators");
    const resolving = steps.filter((step) => step.kind === "resolve");
    expect(resolving.length).toBeGreaterThan(50);
    for (const step of steps) if ((step.events.futuresResolved?.length ?? 0) > 0) expect(step.kind, step.label).toBe("resolve");
    for (const step of resolving) {
      expect(step.stack.some((line) => line.file === "src/generators/futures.ts"), step.label).toBe(true);
      expect(step.next?.file, step.label).not.toBe("src/generators/futures.ts");
    }
    expect(some(resolving, (step) => step.ready?.some((entry) => !entry.thisIteration && entry.name.endsWith(" is done)")) === true)).toBe(true);
  });

  it("names each done callback in stage 2's ready queue by the Task it wakes and the Future that is done", () => {
    const { steps } = recordingOf("generators");
    const names = steps.flatMap((step) => (step.ready ?? []).map((entry) => entry.name));
    expect(names.filter((name) => name === "runDoneCallback")).toEqual([]);
    expect(names.some((name) => /^Task \S+\.wakeUp \(\S+ is done\)$/.test(name))).toBe(true);
    const runs = steps.filter((step) => step.kind === "callback" && step.label.includes(".wakeUp ("));
    expect(runs.length).toBeGreaterThan(10);
    for (const step of runs) expect(step.next?.file, step.label).toMatch(/^src\/generators\//);
  });

  it("records stage 3's worker events with the workers, the queue, the virtual timers and the promise jobs queued", () => {
    const { steps } = recordingOf("asyncawait");
    expect(steps.filter((step) => step.kind === "await").length).toBeGreaterThan(100);
    expect(some(steps, (step) => step.tasks?.filter((task) => task.state === "awaiting" && task.waitsOn?.startsWith("client.attempt(") === true).length === 3)).toBe(true);
    expect(some(steps, (step) => step.tasks?.some((task) => task.waitsOn === "q.get()") === true)).toBe(true);
    expect(some(steps, (step) => (step.microtasks?.length ?? 0) > 0)).toBe(true);
    expect(some(steps, (step) => (step.timers?.heap.length ?? 0) > 0)).toBe(true);
    expect(steps.every((step) => step.selector === undefined)).toBe(true);
    expect(steps.filter((step) => step.kind === "await").every((step) => step.stack.some((line) => line.file === "src/asyncawait/crawler.ts"))).toBe(true);
  });

  it.each(["callbacks", "generators"])("counts stage %s's loop iterations up, one at a time", (stage) => {
    const { steps } = recordingOf(stage);
    for (let i = 1; i < steps.length; i++) {
      const grew = (steps[i] as Snapshot).iterations - (steps[i - 1] as Snapshot).iterations;
      expect(grew === 0 || grew === 1, `step ${i}`).toBe(true);
    }
    expect(steps.at(-1)?.iterations).toBe(steps.filter((step) => step.kind === "iteration").length);
  });

  it.each(["callbacks", "generators", "asyncawait"])("names each URL of stage %s's records in events.fetched at the step whose core first counts its record", (stage) => {
    const { steps } = recordingOf(stage);
    const fetched: string[] = [];
    let recorded = 0;
    for (const step of steps) {
      const now = step.events.fetched ?? [];
      fetched.push(...now);
      if (step.kind !== "end") expect(step.core.recorded - recorded, `step ${step.index}`).toBe(now.length);
      recorded = step.core.recorded;
    }
    expect(new Set(fetched).size).toBe(fetched.length);
    expect(fetched.length).toBe(67); // The demo site's crawl, robots.txt on: every record once.
  });

  it("records the same crawl twice, to the byte, from the same seed, in one process and in another", async () => {
    // Twice in one process: what the process counts (sockets' file numbers, Future ids) must not reach a recording.
    const script = join(dir, "twice.mts");
    writeFileSync(script, `import { writeFileSync } from "node:fs";
import { recordCrawl } from ${JSON.stringify(resolve(REPO, "stepper/record.ts"))};
for (const stage of ["generators", "asyncawait"] as const) {
  for (const name of ["first", "second"]) writeFileSync(${JSON.stringify(dir)} + "/" + stage + "-" + name + ".json", JSON.stringify(await recordCrawl({ stage, seed: 1, maxSteps: 200 })));
}
`);
    await run(process.execPath, [TSX, script], { cwd: REPO });
    for (const stage of ["generators", "asyncawait"]) {
      const [first, second] = ["first", "second"].map((name) => readFileSync(join(dir, `${stage}-${name}.json`), "utf8"));
      expect(second, stage).toBe(first);
      expect((JSON.parse(first as string) as Recording).steps.slice(0, 200), stage).toEqual(recordingOf(stage).steps.slice(0, 200));
    }
  }, 60_000);

  it("shows a stage 2 Task step's stack with the Task's step and its generator's frame, at its yield", () => {
    const steps = recordingOf("generators").steps.filter((step) => step.kind === "task-step" && step.label.includes("(the stack at its yield)"));
    expect(steps.length).toBeGreaterThan(50);
    for (const step of steps) {
      const frames = step.stack.map((line) => `${line.file} ${line.fn}`);
      expect(frames.some((frame) => frame.startsWith("src/generators/tasks.ts") && frame.endsWith("step"))).toBe(true);
      expect(frames.some((frame) => /^src\/generators\/(crawler|queues|sockets)\.ts /.test(frame))).toBe(true);
    }
    const crawl = steps.find((step) => step.label.startsWith("Task crawl#1"));
    expect(crawl?.stack.map((line) => line.fn)).toEqual(expect.arrayContaining(["JoinableQueue.join", "Crawler.crawl"]));
  });

  it("stops at maxSteps, marks the recording cut, and ends the crawl", async () => {
    const cut = await record("generators", "cut", ["--max-steps", "40"]);
    expect(cut.truncated).toBe(true);
    expect(cut.steps).toHaveLength(41);
    expect(cut.steps.at(-1)?.kind).toBe("end");
  }, 60_000);

  it("reads the end step's due times off the virtual clock of the step before, in a cut recording too", async () => {
    // Stage 2's loop drops its heap when it closes: its end step has no timer to compare.
    for (const stage of ["callbacks"] as const) {
      const cut = await record(stage, `cut-${stage}`, ["--max-steps", "30"]);
      const [before, end] = cut.steps.slice(-2);
      expect(end?.kind).toBe("end");
      const dueBefore = new Map((before?.timers?.heap ?? []).map((timer) => [timer.id, timer.dueInMs]));
      const kept = (end?.timers?.heap ?? []).filter((timer) => dueBefore.has(timer.id));
      expect(kept.length, stage).toBeGreaterThan(0);
      for (const timer of kept) expect(timer.dueInMs, `${stage} timer ${timer.id}`).toBe(dueBefore.get(timer.id));
      expect(end?.timers?.planned.every((wakeup) => wakeup.kind !== "setTimeout" || Math.abs(wakeup.ms) < 200_000), stage).toBe(true);
    }
  }, 60_000);
});

/** Writes exercise 7's parts (5, 6, 7) as a learner's files, the library's code with one edit, and returns the --swap flags that load them. */
function learnerParts(name: string, source: string, from: string, to: string): string[] {
  const exercise = exerciseNumbered(7);
  if (exercise === undefined) throw new Error("exercise 7 is gone");
  const learner = join(dir, name);
  mkdirSync(learner);
  const swaps: string[] = [];
  for (const part of partsOfStage(exercise)) {
    let text = readFileSync(resolve(REPO, part.source), "utf8");
    if (part.source === source) {
      expect(text.split(from), `${from} in ${source}`).toHaveLength(2);
      text = text.replace(from, to);
    }
    const file = join(learner, part.file);
    writeFileSync(file, learnerFile(part, text, REPO, learner, "solution"));
    swaps.push("--swap", `${part.source}=${file}`);
  }
  return swaps;
}

describe("recordCrawl on a learner's parts", () => {
  it("shows two planned wake-ups, or more, for exercise 7's turn that plans a setTimeout when a socket event planned the next iteration, and one for the library's", async () => {
    const wrong = wrongImplementations.find((each) => each.name.startsWith("turn that plans a setTimeout when a socket event"));
    if (wrong === undefined) throw new Error("the wrong implementation is gone");
    const recording = await record("generators", "learner-stray", ["--max-steps", "200", ...learnerParts("stray", wrong.source, wrong.from, wrong.to)]);
    const planned = (steps: Snapshot[]) => Math.max(...steps.map((step) => step.timers?.planned.length ?? 0));
    expect(planned(recording.steps)).toBeGreaterThanOrEqual(2); // Each stray setTimeout stays planned until it fires: they pile up.
    expect(planned(recordingOf("generators").steps)).toBe(1);
    // The loop that runs is the learner's: its frames are in the learner's file.
    expect(recording.steps.some((step) => step.stack.some((line) => line.file.endsWith("07-event-loop.ts")))).toBe(true);
  }, 60_000);

  it("shows a turn that always wakes the loop racing: iterations one a step, virtual time still, the recording cut", async () => {
    const swaps = learnerParts("spin", "src/generators/event-loop.ts", "    if (this.ready.length > 0) return this.wake();", "    return this.wake();");
    const recording = await record("generators", "learner-spin", ["--max-steps", "200", ...swaps]);
    expect(recording.truncated).toBe(true);
    const before = recording.steps.slice(0, -1);
    expect(before.filter((step) => step.kind === "iteration").length).toBeGreaterThan(150);
    expect(before.at(-1)?.now).toBe(0);
    expect(before.at(-1)?.iterations).toBeGreaterThan(150);
  }, 60_000);

  it("shows a Task stepping inside setResult for a Future that calls its done callbacks at once, and never for the library's", async () => {
    const swaps = learnerParts("sync", "src/generators/futures.ts", "    else this.loop.callSoon(function runDoneCallback() { fn(future); });", "    else fn(future);");
    const recording = await record("generators", "learner-sync", ["--max-steps", "200", ...swaps]);
    const insideSetResult = (steps: Snapshot[]) => steps.filter((step) => step.kind === "task-step" && step.stack.some((line) => line.fn === "Future.setResult") && step.stack.some((line) => line.fn === "Task.step"));
    expect(insideSetResult(recording.steps).length).toBeGreaterThan(0);
    expect(insideSetResult(recordingOf("generators").steps)).toEqual([]);
  }, 60_000);
});

describe("record-cli", () => {
  it("exits 2 with a message naming the flag for a bad --seed, and for a bad --stage", async () => {
    for (const [args, flag] of [[["--stage", "callbacks", "--seed", "x"], "--seed"], [["--stage", "threads", "--seed", "1"], "--stage"]] as const) {
      const failure = await run(process.execPath, [TSX, "stepper/record-cli.ts", ...args], { cwd: REPO }).then(
        () => null,
        (error: { code?: number; stderr?: string }) => error,
      );
      expect(failure?.code).toBe(2);
      expect(failure?.stderr).toContain(flag);
    }
  }, 60_000);
});

describe("npm run learn -- N --step", () => {
  it("records the crawl by the learner's parts, up to the throw of a body not written yet, and says where the recording and the page are", async () => {
    const learner = join(dir, "learn-step");
    const { stdout } = await run(process.execPath, [TSX, "learn/workshop/run.ts", "3", "--step", "--no-open"], { cwd: REPO, env: { ...process.env, LEARN_DIR: learner } });
    const recording = JSON.parse(readFileSync(join(learner, ".step", "03-callbacks.json"), "utf8")) as Recording;
    expect(recording.steps.at(-1)?.label).toContain("Fetcher.fetch is not written yet");
    expect(recording.steps.at(-1)?.stack[0]?.file).toMatch(/03-fetcher\.ts$/);
    expect(stdout).toContain(join(".step", "index.html"));
    expect(stdout).toContain("03-callbacks.json");
    expect(existsSync(join(learner, ".step", "index.html"))).toBe(true);
  }, 60_000);

  it("exits 2 for an exercise no crawler is built from", async () => {
    const failure = await run(process.execPath, [TSX, "learn/workshop/run.ts", "4", "--step"], { cwd: REPO, env: { ...process.env, LEARN_DIR: join(dir, "learn-step-4") } }).then(
      () => null,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain("--step takes 2, 3, 5, 6, 7, 8, 10");
  }, 60_000);
});

describe("recordCrawl with --scenario", () => {
  it("crawls the seed's random scenario: seed 3's crawl-delay shows as a host line's next start and a planned sleep", async () => {
    const recording = await record("generators", "scenario-3", ["--scenario"], 3);
    expect(recording.root).toBe("http://site.test/");
    expect(recording.steps.at(-1)?.label).toMatch(/^The crawl ends: \d+ records/);
    expect(recording.steps.some((step) => step.core.hosts.some((host) => (host.nextStartInMs ?? 0) > 0))).toBe(true);
    expect(recording.steps.some((step) => step.timers?.planned.some((wakeup) => wakeup.kind === "setTimeout" && wakeup.why.startsWith("sleep ")) === true)).toBe(true);
  }, 60_000);
});
