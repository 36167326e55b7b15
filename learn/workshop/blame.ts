/**
 * Whom a failing check blames: which exercise's file it failed in, and which
 * of the learner's functions, with file and line, to look at. Pure
 * functions of a {@link Failure}, for the runner (run.ts) to print.
 *
 * @module
 */
import { exercises, type Exercise } from "./exercises.js";
import type { Failure } from "./report.js";

/** A frame as the report gives it, `EventLoop.turn (learn/07-event-loop.ts:285)`, taken apart; null if it is not one. */
export function parseFrame(frame: string): { method: string; file: string; line: number } | null {
  const match = /^(.*) \((.+):(\d+)\)$/.exec(frame);
  return match === null ? null : { method: match[1] as string, file: match[2] as string, line: Number(match[3]) };
}

/** `turn` for `EventLoop.turn` or `Immediate.turn` (V8 names a frame by its receiver). */
function lastName(name: string): string {
  return name.split(".").at(-1) ?? name;
}

/**
 * The learner's functions a failure is about. When the stack has a frame of
 * one of `exercise.write` in the exercise's file (`file`, as the frames name
 * it), the innermost such frame, with its file and line
 * (`EventLoop.turn (learn/07-event-loop.ts:285)`); otherwise those that the
 * check's name or message names (`runOnce` names `EventLoop.runOnce`), or
 * all of them when none is named.
 */
export function suspectsIn(exercise: Exercise, file: string, failure: Failure): string[] {
  for (const frame of (failure.stack ?? []).map(parseFrame)) {
    if (frame === null || frame.file !== file) continue;
    const name = exercise.write.find((written) => lastName(written) === lastName(frame.method));
    if (name !== undefined) return [`${name} (${frame.file}:${frame.line})`];
  }
  const text = [failure.check, failure.why, ...(failure.stack ?? [])].join("\n");
  const named = exercise.write.filter((name) => new RegExp(`\\b${lastName(name)}\\b`).test(text));
  return named.length > 0 ? named : [...exercise.write];
}

/**
 * The exercise whose file a failure happened in: when no frame of the
 * failure's stack is in `exercise`'s file and the innermost of the
 * learner's frames is in another exercise's file, that exercise (a stray
 * timer of exercise 7's loop failed exercise 8's contract suite with every
 * frame in learn/07-event-loop.ts, and the workshop blamed learn/08-queue.ts);
 * otherwise `exercise`. `fileOf` names an exercise's file as the frames do.
 */
export function fileOfFailure(exercise: Exercise, failure: Failure, fileOf: (exercise: Exercise) => string): Exercise {
  const files = (failure.stack ?? []).map(parseFrame).flatMap((frame) => (frame === null ? [] : [frame.file]));
  if (files.length === 0 || files.includes(fileOf(exercise))) return exercise;
  return exercises.find((other) => fileOf(other) === files[0]) ?? exercise;
}
