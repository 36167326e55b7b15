/**
 * Wrong implementations a learner wrote that the workshop's checks once let
 * through, kept so that they stay caught: each is the library's own module
 * with one edit, the exercise whose checks must now fail on it, and the
 * check that fails. learner-files.test.ts checks that each edit still
 * applies to the library's code (`npm test`); wrong-implementations.test.ts
 * runs the workshop on each (`npm run test:workflows`).
 *
 * @see issue 36, "The workshop's remaining holes"
 */

/** One wrong implementation: `source` with `from` replaced by `to`, checked as exercise `exercise`. */
export interface WrongImplementation {
  /** What is wrong, in a few words. */
  readonly name: string;
  /** The exercise it is a solution of. */
  readonly exercise: number;
  /** The library module it is made from, from the repository's root. */
  readonly source: string;
  /** Text of the library's code, found exactly once. */
  readonly from: string;
  /** What the wrong implementation has instead. */
  readonly to: string;
  /** Part of the name of the check that catches it. */
  readonly caughtBy: string;
}

export const wrongImplementations: readonly WrongImplementation[] = [
  {
    name: "a busy loop capped at 1,000 polls",
    exercise: 1,
    source: "examples/02-nonblocking-busy-loop.ts",
    from: "  while (!parser.done) {",
    to: "  while (!parser.done && polls < 1_000) {",
    caughtBy: "polls as long as the reply takes",
  },
  {
    name: "runOnce that dispatches the ready keys after select() returns",
    exercise: 2,
    source: "src/callbacks/event-loop.ts",
    from: "      ready = this.selector.select(this.dispatch);",
    to: "      const found: Array<() => void> = [];\n      ready = this.selector.select((key, mask) => { found.push(() => this.dispatch(key, mask)); });\n      for (const later of found) later();",
    caughtBy: "does not call a ready socket's callback once an earlier callback",
  },
  {
    name: "runOnce that sleeps with no clamp to 2 ** 31 - 1 ms",
    exercise: 2,
    source: "src/callbacks/event-loop.ts",
    from: "setTimeout(this.runOnce, Math.min(2 ** 31 - 1, wait));",
    to: "setTimeout(this.runOnce, wait);",
    caughtBy: "further away than setTimeout allows",
  },
  {
    name: "finish that keeps the done-callback list",
    exercise: 5,
    source: "src/generators/futures.ts",
    from: "    this.callbacks = NO_CALLBACKS;\n    for (const fn of callbacks) this.schedule(fn);",
    to: "    for (const fn of callbacks) this.schedule(fn);",
    caughtBy: "lets go of its done callbacks once done",
  },
  {
    name: "Task.step that steps again at once when the yielded Future is done already",
    exercise: 6,
    source: "src/generators/tasks.ts",
    from: "    else if (this.throwIn === null) {\n      this.waitingOn = yielded;",
    to: "    else if (this.throwIn === null && yielded.done()) return this.step();\n    else if (this.throwIn === null) {\n      this.waitingOn = yielded;",
    caughtBy: "so two Tasks in sleep(0) take turns",
  },
  {
    name: "callLater that wakes the loop dropping nextTimeout without clearing it",
    exercise: 7,
    source: "src/generators/event-loop.ts",
    from: "    this.timers.push(handle);\n    if (!this.iterating) this.wake();",
    to: "    this.timers.push(handle);\n    if (!this.iterating && this.running && this.nextImmediate === undefined) {\n      this.nextTimeout = undefined;\n      this.nextImmediate = setImmediate(this.turn);\n    }",
    caughtBy: "leave no setTimeout behind",
  },
  {
    name: "turn that plans a setTimeout when a socket event has planned the next iteration already",
    exercise: 7,
    source: "src/generators/event-loop.ts",
    from: "if (next === undefined || this.nextImmediate !== undefined) return;",
    to: "if (next === undefined) return;",
    caughtBy: "leave no setTimeout behind",
  },
  {
    name: "turn that sleeps with no clamp to 2 ** 31 - 1 ms",
    exercise: 7,
    source: "src/generators/event-loop.ts",
    from: "setTimeout(this.turn, Math.min(2 ** 31 - 1, wait));",
    to: "setTimeout(this.turn, wait);",
    caughtBy: "further away than setTimeout allows",
  },
];
