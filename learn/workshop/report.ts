/**
 * A vitest reporter for the workshop: for each exercise (a vitest project
 * named by its number), how many checks passed and failed, and the first
 * check that failed, in plain words, written as JSON for the runner to print.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { SerializedError, UserConsoleLog } from "vitest";
import type { Reporter, TestModule } from "vitest/node";

/** The first check that failed: its name and why. */
export interface Failure {
  /** The check's name: its describe blocks and its own, joined with " › ". */
  readonly check: string;
  /** The error's first lines. */
  readonly why: string;
  /** Where in the learner's file it was thrown, when the stack says so (`learn/05-future.ts:120`). */
  readonly where: string | null;
  /** The stack's frames in the learner's files, innermost first: `Future.setResult (learn/05-future.ts:120)`. */
  readonly stack?: readonly string[];
}

/** One exercise's checks, once they ran. */
export interface Outcome {
  passed: number;
  failed: number;
  firstFailure: Failure | null;
}

/** What the reporter writes: each exercise's outcome by number, errors that no check caught, and the first error the code printed. */
export interface Report {
  readonly exercises: Record<string, Outcome>;
  readonly escaped: Failure[];
  /** The first thing printed on stderr that names an error: a loop's exception handler reporting what a callback threw. */
  readonly printed: string | null;
}

/** Writes a {@link Report} to `path` when the run ends. */
export class WorkshopReporter implements Reporter {
  private printed: string | null = null;

  constructor(private readonly path: string, private readonly learnerDir: string, private readonly repo: string) {}

  onUserConsoleLog(log: UserConsoleLog): void {
    if (this.printed === null && log.type === "stderr" && /Error/.test(log.content)) this.printed = log.content.split("\n").slice(0, 3).join("\n");
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const report: Report = { exercises: {}, escaped: [], printed: this.printed };
    for (const module of modules) {
      report.exercises[module.project.name] ??= { passed: 0, failed: 0, firstFailure: null };
      const outcome = report.exercises[module.project.name] as Outcome;
      for (const error of module.errors()) {
        // The test file could not even load: the learner's file does not compile, or throws at its top level.
        outcome.failed += 1;
        outcome.firstFailure ??= this.failure(`loading ${module.relativeModuleId}`, error);
      }
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") outcome.passed += 1;
        if (result.state !== "failed") continue;
        outcome.failed += 1;
        outcome.firstFailure ??= this.failure(test.fullName, result.errors[0]);
      }
    }
    for (const error of unhandledErrors) {
      const where = typeof error["VITEST_TEST_PATH"] === "string" ? ` (while ${String(error["VITEST_TEST_PATH"]).split("/").slice(-2).join("/")} ran)` : "";
      report.escaped.push(this.failure(`an exception no check caught escaped to Node${where}`, error));
    }
    writeFileSync(this.path, JSON.stringify(report, null, 2));
  }

  private failure(check: string, error: SerializedError | undefined): Failure {
    const message = error === undefined ? "it failed" : `${error.name !== undefined && error.name !== "Error" && error.name !== "AssertionError" ? `${error.name}: ` : ""}${error.message}`;
    // Up to 24 lines: an order check prints both orders side by side (test/helpers/side-by-side.ts).
    const why = message.split("\n").slice(0, 24).join("\n");
    return { check: check.replace(/ > /g, " › "), why, where: this.whereInLearnerFile(error), stack: this.learnerFrames(error) };
  }

  /** The error's frames in the learner's folder, as `EventLoop.runOnce (learn/02-selector-loop.ts:201)`. */
  private learnerFrames(error: SerializedError | undefined): string[] {
    return this.frames(error).map((frame) => `${frame.method || "<anonymous>"} (${relative(this.repo, frame.file)}:${frame.line})`);
  }

  /** The first frame of the error's stack in the learner's folder, from the repository's root, as `learn/05-future.ts:120`. */
  private whereInLearnerFile(error: SerializedError | undefined): string | null {
    const frame = this.frames(error)[0];
    return frame === undefined ? null : `${relative(this.repo, frame.file)}:${frame.line}`;
  }

  /**
   * The error's stack frames in the learner's folder: vitest parses a
   * check's error (`stacks`); an error that escaped to Node comes with its
   * stack as text only, read here.
   */
  private frames(error: SerializedError | undefined): Array<{ method: string; file: string; line: number }> {
    const parsed = error?.stacks ?? [];
    const text = error?.stack;
    const frames = parsed.length > 0 || typeof text !== "string" ? parsed : [...text.matchAll(/^\s*at (?:(.+?) \()?(\/[^()]+?):(\d+):\d+\)?$/gm)].map((match) => ({ method: match[1] ?? "", file: match[2] as string, line: Number(match[3]) }));
    return frames.filter((frame) => frame.file.startsWith(this.learnerDir));
  }
}
