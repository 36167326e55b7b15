/**
 * The "predict the order" drill (exercise 4 of the workshop): five short
 * snippets that mix synchronous code, microtasks (`process.nextTick`,
 * `queueMicrotask`, a Promise's `then`, what follows an `await`) and
 * macrotasks (`setTimeout`, `setImmediate`). For each snippet you write the
 * order in which its `log` calls run, as the list of what they log; the
 * check runs the snippet and compares.
 *
 * The rules you need (the primer, docs/start-here.md, its section on macrotasks and microtasks):
 *
 * 1. The code that is running runs to its end first: nothing interrupts it.
 * 2. Then Node empties the microtask queues, completely, before any
 *    macrotask: first every `process.nextTick` callback, then every Promise
 *    callback (`then`, `queueMicrotask`, the rest of an `async` function
 *    after an `await`), each queue first in, first out. A microtask that
 *    queues another microtask gets it run in the same emptying.
 * 3. Then the next macrotask. Node's loop goes round its phases: timers
 *    (`setTimeout`), then the poll for I/O, then check (`setImmediate`).
 *    From inside a `setTimeout` callback, a `setImmediate` callback runs
 *    before a new `setTimeout(…, 0)` one. After each macrotask callback,
 *    the microtasks run again (rule 2).
 * 4. An `async` function runs synchronously up to its first `await`. The
 *    code after `await x` is a microtask, queued once `x` is settled.
 *
 * @module
 */

/** What a snippet is given: it calls `log` with a word, and the check keeps the words in the order of the calls. */
export type Log = (word: string) => void;

/** A: one of each kind. */
export function snippetA(log: Log): void {
  setTimeout(function timeout() { log("timeout"); }, 0);
  Promise.resolve().then(function then() { log("then"); });
  process.nextTick(function tick() { log("tick"); });
  log("sync");
}

/** Your answer for {@link snippetA}: what it logs, in the order it logs it. */
export function predictA(): string[] {
  return ["sync", "tick", "then", "timeout"];
}

/** B: a microtask that queues another microtask, and a macrotask queued first. */
export function snippetB(log: Log): void {
  setImmediate(function immediate() { log("immediate"); });
  queueMicrotask(function first() {
    log("first");
    queueMicrotask(function second() { log("second"); });
  });
  Promise.resolve().then(function other() { log("other"); });
}

/** Your answer for {@link snippetB}. */
export function predictB(): string[] {
  return ["first", "other", "second", "immediate"];
}

/** C: an async function, called and not awaited. */
export function snippetC(log: Log): void {
  async function worker(): Promise<void> {
    log("worker starts");
    await null;
    log("worker resumes");
  }
  log("before");
  void worker();
  log("after");
}

/** Your answer for {@link snippetC}. */
export function predictC(): string[] {
  return ["before", "worker starts", "after", "worker resumes"];
}

/** D: from inside a timer, a new timer and an immediate. */
export function snippetD(log: Log): void {
  setTimeout(function outer() {
    log("outer");
    setTimeout(function timeout() { log("timeout"); }, 0);
    setImmediate(function immediate() { log("immediate"); });
    Promise.resolve().then(function then() { log("then"); });
  }, 0);
}

/** Your answer for {@link snippetD}. */
export function predictD(): string[] {
  return ["outer", "then", "immediate", "timeout"];
}

/** E: two async functions taking turns at their awaits. */
export function snippetE(log: Log): void {
  async function one(): Promise<void> {
    log("one 1");
    await null;
    log("one 2");
    await null;
    log("one 3");
  }
  async function two(): Promise<void> {
    log("two 1");
    await null;
    log("two 2");
  }
  void one();
  void two();
  setTimeout(function later() { log("later"); }, 0);
}

/** Your answer for {@link snippetE}. */
export function predictE(): string[] {
  return ["one 1", "two 1", "one 2", "two 2", "one 3", "later"];
}

/** The snippets and the answers, by letter: the check runs each snippet and compares what it logged with your answer. */
export const drills = [
  { letter: "A", snippet: snippetA, predict: predictA },
  { letter: "B", snippet: snippetB, predict: predictB },
  { letter: "C", snippet: snippetC, predict: predictC },
  { letter: "D", snippet: snippetD, predict: predictD },
  { letter: "E", snippet: snippetE, predict: predictE },
] as const;
