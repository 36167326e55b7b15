/**
 * `npm run learn`: the workshop. Rebuild the lesson's core, one part at a
 * time, each checked by the project's own tests.
 *
 * - `npm run learn` writes the exercise files that are missing under
 *   `learn/`, checks every exercise, and lists them with ✓ or ✗;
 * - `npm run learn -- 4` checks exercise 4 and says, in plain words, the
 *   first check that fails; at a stage's last exercise, once its checks
 *   pass, the contract suite crawls with the crawler built from your parts;
 * - `npm run learn -- 4 --hint` gives the next hint, `--solution` shows the
 *   library's own code, `--reset` writes the exercise's file afresh (yours is
 *   kept beside it, as `.bak`);
 * - `npm run learn -- 4 --watch` checks exercise 4, then again each time its
 *   file is saved, until Ctrl-C.
 *
 * At a stage's last exercise, the earlier parts of the stage are checked
 * first: when one of them fails, the workshop says which (exercise, file,
 * function, stack) instead of letting the contract suite fail on it.
 *
 * `LEARN_DIR` names another folder than `learn/`, and `LEARN_STUCK_MS` a
 * shorter limit for a stuck run (the workshop's own tests use them).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, watch, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { exerciseNumbered, exercises, partsOfStage, type Exercise } from "./exercises.js";
import { fileOfFailure, suspectsIn } from "./blame.js";
import { findBodies, learnerFile } from "./learner-files.js";
import type { Failure, Report } from "./report.js";
import type { Recording } from "../../stepper/recording.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const LEARNER_DIR = resolve(REPO, process.env["LEARN_DIR"] ?? "learn");
/** The learner's folder as the messages name it: `learn` */
const SHOWN_DIR = relative(REPO, LEARNER_DIR);
/**
 * How long one run of checks may take before it counts as stuck: a loop that
 * never gives the thread back cannot be stopped by a check's own timeout. An
 * exercise's own checks take seconds; the contract suite takes longer.
 */
const STUCK_MS = stuckLimits(Number(process.env["LEARN_STUCK_MS"] ?? "0"));

/** The limits; `LEARN_STUCK_MS` (the workshop's own test) sets one for every phase. */
function stuckLimits(every: number): Readonly<Record<"checks" | "earlier" | "contract", number>> {
  return every > 0 ? { checks: every, earlier: every, contract: every } : { checks: 60_000, earlier: 60_000, contract: 180_000 };
}
const VITEST = resolve(REPO, "node_modules/vitest/vitest.mjs");

/** How an exercise's checks came out. */
interface Verdict {
  readonly passed: boolean;
  /** How many checks passed, in the phase that decided. */
  readonly checksPassed: number;
  /** Why it is not done, in plain words; null when it passed. */
  readonly why: Failure | null;
  /** Which phase decided: its own checks, an earlier part's checks (at a stage's end), or the contract suite. */
  readonly phase: "checks" | "earlier" | "contract";
  /** With phase `earlier`: the earlier exercise whose own checks fail. */
  readonly blamed?: Exercise;
}

/** The exercises' own checks, run once per process: the stage's end reuses its earlier parts' verdicts. */
const ownChecks = new Map<number, Promise<Verdict>>();

async function main(args: string[]): Promise<void> {
  const flags = args.filter((arg) => arg.startsWith("--"));
  const numbers = args.filter((arg) => !arg.startsWith("--"));
  const noOpen = flags.includes("--no-open");
  if (noOpen && !flags.includes("--step")) return usage("--no-open goes with --step only");
  const modes = flags.filter((flag) => flag !== "--no-open");
  const unknown = modes.filter((flag) => !["--hint", "--solution", "--reset", "--watch", "--step"].includes(flag));
  if (unknown.length > 0 || numbers.length > 1 || modes.length > 1 || (modes.length > 0 && numbers.length === 0)) return usage(`cannot read ${args.join(" ")}`);
  mkdirSync(LEARNER_DIR, { recursive: true });
  moveFormerFiles();
  const written = writeMissingFiles();
  if (numbers.length === 0) return listAll(written);
  const exercise = exerciseNumbered(Number(numbers[0]));
  if (exercise === undefined) return usage(`there is no exercise ${numbers[0]}: they are numbered 1 to ${exercises.length}`);
  if (modes[0] === "--hint") return giveHint(exercise);
  if (modes[0] === "--solution") return showSolution(exercise);
  if (modes[0] === "--reset") return reset(exercise);
  if (modes[0] === "--watch") return watchOne(exercise);
  if (modes[0] === "--step") return stepOne(exercise, !noOpen);
  await checkOne(exercise);
}

function usage(problem: string): void {
  console.error(`npm run learn: ${problem}.
Usage: npm run learn                 check every exercise and list them
       npm run learn -- N            check exercise N, and say what fails first
       npm run learn -- N --hint     the next hint for exercise N
       npm run learn -- N --solution the library's own code for exercise N
       npm run learn -- N --reset    exercise N's file afresh (yours is kept as .bak)
       npm run learn -- N --watch    check exercise N again each time its file is saved (Ctrl-C ends)
       npm run learn -- N --step     record a crawl by your parts up to exercise N and open it in the stepper page
                                     (add --no-open to only write the page and print its path)`);
  process.exitCode = 2;
}

/**
 * Moves a learner's file from its name before the workshop had ten
 * exercises (`learn/04-future.ts`) to its name now (`learn/05-future.ts`),
 * its number mended in its header, in its stubs' messages and in the hints
 * counted; says so. When both names are there, leaves the old one alone and
 * says so.
 */
function moveFormerFiles(): void {
  const renumbered = new Map<number, number>();
  for (const exercise of exercises) {
    if (exercise.formerFile === undefined) continue;
    const former = resolve(LEARNER_DIR, exercise.formerFile);
    if (!existsSync(former)) continue;
    const was = Number(exercise.formerFile.slice(0, 2));
    if (existsSync(learnerPath(exercise))) {
      console.log(`${SHOWN_DIR}/${exercise.formerFile} is the old name of exercise ${exercise.number}'s file, and ${shown(exercise)} is there too: the workshop checks ${shown(exercise)} and leaves the old one alone (copy your code across, then delete it).`);
      continue;
    }
    const text = readFileSync(former, "utf8")
      .replaceAll(`Exercise ${was} of the workshop`, `Exercise ${exercise.number} of the workshop`)
      .replaceAll(`npm run learn -- ${was} `, `npm run learn -- ${exercise.number} `)
      .replaceAll(`(exercise ${was}, learn/${exercise.formerFile})`, `(exercise ${exercise.number}, learn/${exercise.file})`);
    writeFileSync(learnerPath(exercise), text);
    rmSync(former);
    renumbered.set(was, exercise.number);
    console.log(`Renamed ${SHOWN_DIR}/${exercise.formerFile} to ${shown(exercise)}: the workshop has ten exercises now, and this one is number ${exercise.number}.`);
  }
  if (renumbered.size === 0 || !existsSync(progressPath())) return;
  const progress = JSON.parse(readFileSync(progressPath(), "utf8")) as { hints?: Record<string, number> };
  const hints = Object.fromEntries(Object.entries(progress.hints ?? {}).map(([number, given]) => [String(renumbered.get(Number(number)) ?? number), given]));
  writeFileSync(progressPath(), JSON.stringify({ ...progress, hints }, null, 2));
}

/** Writes the exercise files not there yet; returns them. */
function writeMissingFiles(): Exercise[] {
  const written = exercises.filter((exercise) => !existsSync(learnerPath(exercise)));
  for (const exercise of written) writeStub(exercise);
  return written;
}

function writeStub(exercise: Exercise): void {
  const source = readFileSync(resolve(REPO, exercise.source), "utf8");
  writeFileSync(learnerPath(exercise), learnerFile(exercise, source, REPO, LEARNER_DIR, "stub"));
}

function learnerPath(exercise: Exercise): string {
  return resolve(LEARNER_DIR, exercise.file);
}

/** `learn/05-future.ts` */
function shown(exercise: Exercise): string {
  return `${SHOWN_DIR}/${exercise.file}`;
}

async function listAll(written: Exercise[]): Promise<void> {
  console.log("The workshop: rebuild the lesson's core, one part at a time (learn/README.md).");
  if (written.length > 0) console.log(`Wrote ${written.map(shown).join(", ")}: the exercises, for you to edit.`);
  console.log(`Checking ${exercises.length} exercises…\n`);
  const verdicts = await inTurns(exercises, 2, check);
  const width = Math.max(...exercises.map((exercise) => exercise.title.length));
  for (const [i, exercise] of exercises.entries()) {
    const verdict = verdicts[i] as Verdict;
    console.log(`  ${verdict.passed ? "✓" : "✗"} ${String(exercise.number).padStart(2)}. ${exercise.title.padEnd(width)}  ${shown(exercise)}`);
    if (verdict.why !== null) console.log(`        ${oneLine(verdict, exercise)}`);
  }
  const next = exercises.find((_exercise, i) => !(verdicts[i] as Verdict).passed);
  console.log("");
  if (next === undefined) console.log("All done: every stage's crawler, built from your parts, passes the contract suite.");
  else console.log(`Next: exercise ${next.number}. \`npm run learn -- ${next.number}\` checks it and says what fails first; add --hint for a hint, --solution for the library's code.`);
}

/** The first line of why an exercise is not done, for the list, with the functions to look at. */
function oneLine(verdict: Verdict, exercise: Exercise): string {
  const why = verdict.why as Failure;
  const first = why.why.split("\n")[0] ?? "";
  if (verdict.phase === "earlier" && verdict.blamed !== undefined) return `exercise ${verdict.blamed.number} first (${shown(verdict.blamed)}, ${suspects(verdict.blamed, why).join(", ")}): ${first}`;
  const inFile = followStack(exercise, why);
  if (inFile !== exercise) return `${verdict.phase === "contract" ? "the contract suite fails" : "it fails"} inside exercise ${inFile.number}'s file (${suspects(inFile, why).join(", ")}): ${first}`;
  const look = ` [look at ${suspects(exercise, why).join(", ")}]`;
  return verdict.phase === "contract" ? `the contract suite: ${why.check}: ${first}${look}` : `${first}${look}`;
}

/** The learner's functions a failure is about, with file and line when a frame says (blame.ts). */
function suspects(exercise: Exercise, failure: Failure): string[] {
  return suspectsIn(exercise, relative(REPO, learnerPath(exercise)), failure);
}

/** The exercise whose file a failure happened in (blame.ts): `exercise`, or an earlier one whose file holds every frame. */
function followStack(exercise: Exercise, failure: Failure): Exercise {
  return fileOfFailure(exercise, failure, function fileOf(other: Exercise): string { return relative(REPO, learnerPath(other)); });
}

async function checkOne(exercise: Exercise): Promise<void> {
  console.log(`Exercise ${exercise.number}: ${exercise.title} (${shown(exercise)})`);
  console.log(`Checks: ${exercise.checks.join(", ")}, with ${exercise.source} swapped for your file.`);
  const verdict = await check(exercise, function contractStarts(): void {
    const parts = partsOfStage(exercise).map(shown).join(", ");
    console.log(`Your parts pass their checks. Now the contract suite crawls with the ${exercise.stage} crawler built from them (${parts})…`);
  });
  console.log("");
  if (verdict.passed) {
    console.log(`✓ Done: ${verdict.checksPassed} ${verdict.phase === "contract" ? "contract checks pass: your stage crawls as the library's does." : "checks pass."}`);
    const next = exerciseNumbered(exercise.number + 1);
    if (next !== undefined) console.log(`Next: exercise ${next.number}, ${next.title}: npm run learn -- ${next.number}`);
    return;
  }
  const why = verdict.why as Failure;
  const earlier = verdict.phase === "earlier" && verdict.blamed !== undefined;
  const blamed = earlier ? (verdict.blamed as Exercise) : followStack(exercise, why);
  if (earlier) {
    console.log(`✗ Not yet: the ${exercise.stage} crawler is built from ${partsOfStage(exercise).map(shown).join(", ")}, and an earlier part fails its own checks first.`);
    console.log(`  Exercise ${blamed.number}, ${blamed.title} (${shown(blamed)}): ${verdict.checksPassed} ${verdict.checksPassed === 1 ? "check passes" : "checks pass"} before the first that fails:`);
  } else if (blamed !== exercise) {
    console.log(`✗ Not yet: a check${verdict.phase === "contract" ? " of the contract suite" : ""} fails inside exercise ${blamed.number}'s file, not yours: every frame of your code in its stack is in ${shown(blamed)} (${blamed.title}).`);
    console.log(`  Exercise ${blamed.number}'s own checks pass; this one, ${verdict.checksPassed} ${verdict.checksPassed === 1 ? "check" : "checks"} later, does not:`);
  } else {
    console.log(`✗ Not yet. ${verdict.checksPassed} ${verdict.checksPassed === 1 ? "check passes" : "checks pass"} before the first that fails${verdict.phase === "contract" ? ", in the contract suite" : ""}:`);
  }
  console.log(`    ${why.check}`);
  for (const line of why.why.split("\n")) console.log(`    ${line}`);
  if (why.stack !== undefined && why.stack.length > 0) for (const frame of why.stack.slice(0, 6)) console.log(`    at ${frame}`);
  else if (why.where !== null) console.log(`    at ${why.where}`);
  console.log(`  Look at ${suspects(blamed, why).join(", ")} in ${shown(blamed)}.`);
  if (blamed !== exercise) {
    console.log(earlier ? `Mend it first: npm run learn -- ${blamed.number}` : `Mend it there, then check both: npm run learn -- ${blamed.number}, then npm run learn -- ${exercise.number}`);
    process.exitCode = 1;
    return;
  }
  if (verdict.phase === "contract") console.log(`The crawler is built from ${partsOfStage(exercise).map(shown).join(", ")}; their own checks pass, so look at ${shown(exercise)} first.`);
  const given = hintsGiven(exercise);
  if (given < exercise.hints.length) console.log(`Stuck? npm run learn -- ${exercise.number} --hint (hint ${given + 1} of ${exercise.hints.length})`);
  else console.log(`Stuck? npm run learn -- ${exercise.number} --solution shows the library's own code.`);
  process.exitCode = 1;
}

/**
 * Runs the exercise's checks with its file swapped in; at a stage's end, if
 * they pass, the earlier parts' own checks, and if those pass too, the
 * contract suite against the stage built from the learner's parts. So a
 * stage's crawler that fails because of an earlier part blames that part.
 */
async function check(exercise: Exercise, contractStarts: () => void = function quietly(): void {}): Promise<Verdict> {
  const own = await checksOf(exercise);
  if (!own.passed || !exercise.endsStage) return own;
  for (const earlier of partsOfStage(exercise).filter((part) => part !== exercise)) {
    const verdict = await checksOf(earlier);
    if (!verdict.passed) return { ...verdict, phase: "earlier", blamed: earlier };
  }
  contractStarts();
  return runChecks(exercise, "contract");
}

/** The exercise's own checks, run once per process. */
function checksOf(exercise: Exercise): Promise<Verdict> {
  let verdict = ownChecks.get(exercise.number);
  if (verdict === undefined) {
    verdict = runChecks(exercise, "checks");
    ownChecks.set(exercise.number, verdict);
  }
  return verdict;
}

/**
 * Checks the exercise, then again each time its file is saved (a burst of
 * writes is one save: 300 ms of quiet first), until Ctrl-C. A save during a
 * run is checked once that run ends.
 */
async function watchOne(exercise: Exercise): Promise<void> {
  let running = false;
  let again = false;
  let quiet: NodeJS.Timeout | null = null;
  async function run(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    do {
      again = false;
      ownChecks.clear();
      process.exitCode = undefined;
      await checkOne(exercise);
      console.log(`\nWatching ${shown(exercise)}: save it to check it again (Ctrl-C ends).`);
    } while (again);
    running = false;
  }
  // The folder, not the file: an editor that saves by replacing the file would leave a watch on the file deaf.
  watch(LEARNER_DIR, function changed(_event, name) {
    if (name !== exercise.file) return;
    if (quiet !== null) clearTimeout(quiet);
    quiet = setTimeout(function saved() {
      quiet = null;
      void run();
    }, 300);
  });
  await run();
}

/** One vitest run, in a process of its own, stopping at the first failing check. */
async function runChecks(exercise: Exercise, phase: Verdict["phase"]): Promise<Verdict> {
  const reportPath = resolve(LEARNER_DIR, `.report-${exercise.number}-${phase}.json`);
  rmSync(reportPath, { force: true });
  const finished = await runVitest(["run", "--config", "learn/workshop/vitest.config.ts", "--bail", "1"], {
    LEARN_DIR: LEARNER_DIR,
    LEARN_EXERCISES: String(exercise.number),
    LEARN_PHASE: phase,
    LEARN_REPORT: reportPath,
  }, STUCK_MS[phase]);
  if (!finished.ok) {
    const why = `The checks did not finish within ${STUCK_MS[phase] / 1000} s: does a loop of yours never give the thread back (a \`for (;;)\` with no \`await\`, a callback that schedules itself at once)?`;
    return { passed: false, checksPassed: 0, why: { check: "all of them", why, where: null }, phase };
  }
  if (!existsSync(reportPath)) {
    return { passed: false, checksPassed: 0, why: { check: "starting the checks", why: finished.output.trim().split("\n").slice(-8).join("\n"), where: null }, phase };
  }
  const report = JSON.parse(readFileSync(reportPath, "utf8")) as Report;
  rmSync(reportPath, { force: true });
  const outcome = report.exercises[String(exercise.number)] ?? { passed: 0, failed: 0, firstFailure: null };
  const why = outcome.firstFailure ?? report.escaped[0] ?? null;
  if (why === null && outcome.passed > 0) return { passed: true, checksPassed: outcome.passed, why: null, phase };
  return { passed: false, checksPassed: outcome.passed, why: plainWords(why ?? { check: "the checks", why: "no check ran", where: null }, report, exercise), phase };
}

/**
 * Puts a failure in the learner's words: a "not written yet" error that the
 * loop caught and printed, or that escaped to Node, says more than the
 * timeout it caused; a timeout says what it means.
 */
function plainWords(failure: Failure, report: Report, exercise: Exercise): Failure {
  if (/not written yet/.test(failure.why)) return failure;
  const away = `(It was thrown inside a loop, away from the check, so the check itself only saw: ${firstLine(failure.why)})`;
  const escaped = report.escaped.find((error) => NOT_WRITTEN.test(error.why));
  if (escaped !== undefined) return { ...failure, why: `${NOT_WRITTEN.exec(escaped.why)?.[0]}\n${away}`, where: escaped.where, stack: escaped.stack ?? [] };
  const printed = NOT_WRITTEN.exec(report.printed ?? "")?.[0];
  if (printed !== undefined) return { ...failure, why: `${printed}\n${away}` };
  // A body still a stub says more than what its error turned into (a Task that failed, a count that stayed 0).
  const stub = NOT_WRITTEN.exec(existsSync(learnerPath(exercise)) ? readFileSync(learnerPath(exercise), "utf8") : "")?.[0];
  if (stub !== undefined) return { ...failure, why: `${stub}\n(The check itself saw: ${firstLine(failure.why)})` };
  const thrown = report.escaped.find((error) => (error.stack ?? []).length > 0);
  if (thrown !== undefined && /Test timed out|Hung:/.test(failure.why)) {
    return { ...failure, why: `${firstLine(failure.why)}\nYour code threw, away from the check: ${firstLine(thrown.why)}`, where: thrown.where, stack: thrown.stack ?? [] };
  }
  const timedOut = /Test timed out in (\d+)ms/.exec(failure.why);
  if (timedOut !== null) {
    const seconds = Number(timedOut[1]) / 1000;
    return { ...failure, why: `It waited ${seconds} s for something that never happened: a callback nobody called, a Future nobody resolved, or a loop that stopped turning.${report.printed === null ? "" : `\nYour code printed: ${report.printed}`}` };
  }
  return report.printed === null ? failure : { ...failure, why: `${failure.why}\nYour code printed: ${report.printed}` };
}

/** The stubs' error message: `Future.setResult is not written yet (exercise 4, learn/04-future.ts)`. */
const NOT_WRITTEN = /[\w.]+ is not written yet \([^)]*\)/;

function firstLine(text: string): string {
  return text.split("\n")[0] ?? "";
}

const TSX = resolve(REPO, "node_modules/tsx/dist/cli.mjs");

/**
 * Records a crawl of the demo site by the exercise's stage built from the
 * learner's files (the stage's parts up to this exercise, as the contract
 * phase swaps them) for the stepper page: stepper/record-cli.ts, in a
 * process group of its own (a learner's spinning loop is killed whole after
 * the contract's limit), writes `.step/NN-stage.json` in the learner's
 * folder; then writes `.step/index.html`, the stepper page with that
 * recording first (and the library's three after it, read from
 * dist/stepper/index.html when `npm run build` has written it: a page opened
 * from file:// cannot fetch a file), prints its path and opens it, unless
 * `open` is false (`--no-open`) or there is no display.
 */
async function stepOne(exercise: Exercise, open: boolean): Promise<void> {
  const stage = exercise.stage;
  if (stage === null) return usage(`exercise ${exercise.number} builds no crawler to step through: --step takes ${exercises.filter((each) => each.stage !== null).map((each) => each.number).join(", ")}`);
  const out = resolve(LEARNER_DIR, ".step", `${String(exercise.number).padStart(2, "0")}-${stage}.json`);
  mkdirSync(resolve(LEARNER_DIR, ".step"), { recursive: true });
  const swaps = partsOfStage(exercise).flatMap((part) => ["--swap", `${resolve(REPO, part.source)}=${learnerPath(part)}`]);
  console.log(`Recording the ${stage} stage's crawl of the demo site with ${partsOfStage(exercise).map(shown).join(", ")}…`);
  const ok = await new Promise<boolean>(function record(resolvePromise) {
    const child = spawn(process.execPath, [TSX, "stepper/record-cli.ts", "--stage", stage, "--seed", "1", "--out", out, ...swaps], { cwd: REPO, stdio: "inherit", detached: true });
    const pid = child.pid;
    if (pid !== undefined) runningGroups.add(pid);
    const timer = setTimeout(function stuckRecording() {
      if (pid !== undefined) killGroup(pid);
    }, STUCK_MS.contract);
    child.on("close", function recorded(code) {
      clearTimeout(timer);
      if (pid !== undefined) {
        runningGroups.delete(pid);
        killGroup(pid);
      }
      resolvePromise(code === 0);
    });
  });
  if (!ok) {
    console.log(`No recording: the recorder did not finish (above, why). A crawl that fails is recorded up to its failure; one that never stops is cut at 2,000 steps.`);
    process.exitCode = 1;
    return;
  }
  // Imported here, not at the top: the page's writer brings esbuild and the recorder, which no other command needs.
  const { STEPPER_PAGE, recordingsInPage, writeStepperPage } = await import("../../stepper/build.js");
  const { openPage } = await import("../../stepper/open.js");
  const mine = JSON.parse(readFileSync(out, "utf8")) as Recording;
  mine.title = `exercise ${exercise.number}, your parts (${stage})`;
  const library = existsSync(STEPPER_PAGE) ? recordingsInPage(STEPPER_PAGE) : [];
  const page = resolve(LEARNER_DIR, ".step", "index.html");
  await writeStepperPage(page, [mine, ...library]);
  console.log(`Your recording: ${relative(process.cwd(), out)} (${mine.steps.length} steps${mine.truncated ? ", cut at maxSteps: the loop may spin" : ""}).`);
  console.log(
    `The stepper page with it: ${relative(process.cwd(), page)}${library.length > 0 ? ", the library's three recordings after it to compare" : " (the library's recordings join it once `npm run build` has written dist/stepper/index.html)"}.`,
  );
  if (open) openPage(page);
}

/** The process groups of the vitest runs under way: each run's main process and its workers. */
const runningGroups = new Set<number>();

/** Kills a vitest run's whole process group: its main process and its workers, where a learner's loop may spin. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/** Ctrl-C (or a SIGTERM) ends the runs under way too: in groups of their own, they would not get the signal. */
function endRunsAndExit(signal: NodeJS.Signals): void {
  for (const pid of runningGroups) killGroup(pid);
  process.exit(signal === "SIGINT" ? 130 : 143);
}
process.once("SIGINT", endRunsAndExit);
process.once("SIGTERM", endRunsAndExit);
process.once("exit", function endRuns() {
  for (const pid of runningGroups) killGroup(pid);
});

/**
 * Runs vitest with `env`; `ok` is false when it had to be stopped after
 * `stuckMs`. The run is a process group of its own (`detached`), and a stuck
 * one is killed whole: killing vitest's main process alone left the worker
 * that ran the learner's spinning loop orphaned, burning a core for minutes.
 */
function runVitest(args: string[], env: Record<string, string>, stuckMs: number): Promise<{ ok: boolean; output: string }> {
  return new Promise(function run(resolvePromise) {
    const child = spawn(process.execPath, [VITEST, ...args], { cwd: REPO, env: { ...process.env, ...env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const pid = child.pid;
    if (pid !== undefined) runningGroups.add(pid);
    let output = "";
    let stuck = false;
    child.stdout.setEncoding("utf8").on("data", function printed(chunk: string) { output += chunk; });
    child.stderr.setEncoding("utf8").on("data", function complained(chunk: string) { output += chunk; });
    const timer = setTimeout(function stuckRun() {
      stuck = true;
      if (pid !== undefined) killGroup(pid);
    }, stuckMs);
    child.on("close", function exited() {
      clearTimeout(timer);
      if (pid !== undefined) {
        runningGroups.delete(pid);
        killGroup(pid); // A worker left behind by a run that ended is ended with it.
      }
      resolvePromise({ ok: !stuck, output });
    });
  });
}

/** Calls `work` on each item, at most `width` at a time; the results in the items' order. */
async function inTurns<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  }
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

/** The progress file: how many hints each exercise has had. */
function progressPath(): string {
  return resolve(LEARNER_DIR, ".progress.json");
}

function hintsGiven(exercise: Exercise): number {
  if (!existsSync(progressPath())) return 0;
  const progress = JSON.parse(readFileSync(progressPath(), "utf8")) as { hints?: Record<string, number> };
  return progress.hints?.[String(exercise.number)] ?? 0;
}

function giveHint(exercise: Exercise): void {
  const given = hintsGiven(exercise);
  const index = Math.min(given, exercise.hints.length - 1);
  console.log(`Exercise ${exercise.number}, hint ${index + 1} of ${exercise.hints.length}:\n`);
  console.log(exercise.hints[index]);
  if (index + 1 < exercise.hints.length) console.log(`\nAnother: npm run learn -- ${exercise.number} --hint`);
  else console.log(`\nThat was the last hint. The library's own code: npm run learn -- ${exercise.number} --solution`);
  const progress = existsSync(progressPath()) ? (JSON.parse(readFileSync(progressPath(), "utf8")) as { hints?: Record<string, number> }) : {};
  writeFileSync(progressPath(), JSON.stringify({ ...progress, hints: { ...progress.hints, [exercise.number]: index + 1 } }, null, 2));
}

function showSolution(exercise: Exercise): void {
  const source = readFileSync(resolve(REPO, exercise.source), "utf8");
  console.log(`Exercise ${exercise.number}: the library's own code, from ${exercise.source}.\n`);
  for (const body of findBodies(source, exercise.source, exercise.write)) {
    console.log(`// ${exercise.source}:${body.line}: ${body.name}`);
    console.log(`${dedent(body.declaration)}\n`);
  }
}

/** A member's text with the indent of its lines after the first taken off, as the first line has none. */
function dedent(declaration: string): string {
  const lines = declaration.split("\n");
  const last = lines.at(-1) ?? "";
  const indent = /^\s*/.exec(last)?.[0].length ?? 0; // The closing brace sits where the declaration starts.
  return lines.map((line, i) => (i === 0 ? line : line.slice(Math.min(indent, /^\s*/.exec(line)?.[0].length ?? 0)))).join("\n");
}

function reset(exercise: Exercise): void {
  const path = learnerPath(exercise);
  if (existsSync(path)) renameSync(path, `${path}.bak`);
  writeStub(exercise);
  console.log(`Wrote ${shown(exercise)} afresh; yours is ${shown(exercise)}.bak.`);
}

await main(process.argv.slice(2));
