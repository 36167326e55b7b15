/**
 * Whom the workshop blames for a failing check (learn/workshop/blame.ts):
 * the function whose frame failed, with file and line, and the exercise
 * whose file the stack is in, even an earlier one.
 */
import { describe, expect, it } from "vitest";
import { fileOfFailure, suspectsIn } from "../../learn/workshop/blame.js";
import { exerciseNumbered, type Exercise } from "../../learn/workshop/exercises.js";
import type { Failure } from "../../learn/workshop/report.js";

const queue = exerciseNumbered(8) as Exercise;
const loop = exerciseNumbered(7) as Exercise;
const fileOf = (exercise: Exercise): string => `learn/${exercise.file}`;

/** A stray setTimeout of exercise 7's loop, failing exercise 8's contract suite: every frame in learn/07-event-loop.ts. */
const strayTimer: Failure = {
  check: "an exception no check caught escaped to Node",
  why: "InvalidStateError: The event loop is closed",
  where: "learn/07-event-loop.ts:231",
  stack: ["EventLoop.iterate (learn/07-event-loop.ts:231)", "Timeout.turn (learn/07-event-loop.ts:273)"],
};

describe("the workshop's blame", () => {
  it("follows the stack into an earlier exercise's file when no frame is in the exercise's own", () => {
    expect(fileOfFailure(queue, strayTimer, fileOf)).toBe(loop);
  });

  it("keeps the exercise when a frame is in its own file, or when the stack has no learner frame", () => {
    const both = { ...strayTimer, stack: ["EventLoop.iterate (learn/07-event-loop.ts:231)", "JoinableQueue.taskDone (learn/08-queue.ts:90)"] };
    expect(fileOfFailure(queue, both, fileOf)).toBe(queue);
    expect(fileOfFailure(queue, { ...strayTimer, stack: [] }, fileOf)).toBe(queue);
  });

  it("names the one written function whose frame failed, with file and line, whatever V8 calls its receiver", () => {
    expect(suspectsIn(loop, fileOf(loop), strayTimer)).toEqual(["EventLoop.turn (learn/07-event-loop.ts:273)"]);
  });

  it("names the functions the check names when no frame is in the file, and all of them when none is named", () => {
    const assertion: Failure = { check: "sleep › turn sleeps while only a far timer waits", why: "expected 30 to be less than or equal to 4", where: null, stack: [] };
    expect(suspectsIn(loop, fileOf(loop), assertion)).toEqual(["EventLoop.turn"]);
    expect(suspectsIn(loop, fileOf(loop), { ...assertion, check: "sleep › wakes shorter sleepers first" })).toEqual(["EventLoop.callLater", "EventLoop.turn"]);
  });
});
