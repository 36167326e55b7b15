/**
 * The primer (docs/start-here.md) and the workshop are read together: the
 * primer sends the reader to each exercise in turn, and names the library's
 * file for a part only after the exercise that has the reader write it, so
 * that nothing is read before it is written.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exercises as workshop } from "../learn/workshop/exercises.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const primer = readFileSync(join(root, "docs/start-here.md"), "utf8");

/** The workshop's exercises, by number, and the library file whose bodies each has the reader write (none for the drills). */
const exercises: Array<[number, string | null]> = [
  [1, null], // the busy loop of example 02
  [2, "src/callbacks/event-loop.ts"],
  [3, "src/callbacks/fetcher.ts"],
  [4, null], // predict the order
  [5, "src/generators/futures.ts"],
  [6, "src/generators/tasks.ts"],
  [7, "src/generators/event-loop.ts"],
  [8, "src/generators/queues.ts"],
  [9, null], // the driver
  [10, "src/asyncawait/joinable-queue.ts"],
];

/** Where the primer sends the reader to exercise `n`, or -1. */
function sendsTo(n: number): number {
  return primer.indexOf(`Now do exercise ${n}: \`npm run learn -- ${n}\``);
}

describe("docs/start-here.md", () => {
  it("sends the reader to every exercise, once each, in the workshop's order", () => {
    const places = exercises.map(([n]) => sendsTo(n));
    expect(places.filter((place) => place < 0)).toEqual([]);
    expect(places).toEqual([...places].sort((a, b) => a - b));
    for (const [n] of exercises) expect(primer.split(`Now do exercise ${n}:`).length - 1, `exercise ${n}`).toBe(1);
  });

  it("names the file an exercise has the reader write only after sending the reader to that exercise", () => {
    const early = exercises.flatMap(([n, file]) => {
      if (file === null) return [];
      const first = primer.indexOf(file);
      return first >= 0 && first < sendsTo(n) ? [`${file}, line ${primer.slice(0, first).split("\n").length}, before exercise ${n}`] : [];
    });
    expect(early).toEqual([]);
  });

  it("explains macrotasks and Node's phases before the first exercise whose file speaks of them", () => {
    // Exercise 2's doc comments say "macrotask" (src/callbacks/event-loop.ts): a learner met the word there first.
    const speaking = workshop.filter((exercise) => readFileSync(join(root, exercise.source), "utf8").includes("macrotask"));
    expect(speaking.map((exercise) => exercise.number)).toContain(2);
    const first = Math.min(...speaking.map((exercise) => sendsTo(exercise.number)));
    const explained = { macrotask: primer.indexOf("is a *macrotask*"), microtask: primer.indexOf("called a *microtask*"), phases: primer.indexOf("| check | callbacks of `setImmediate` |") };
    for (const [term, at] of Object.entries(explained)) {
      expect(at, term).toBeGreaterThan(0);
      expect(at, term).toBeLessThan(first);
    }
  });

  it("never asks the reader to read a body before writing it", () => {
    const reads = [...primer.matchAll(/\bread\s+`([\w.]+)(\(\))?`/gi)].map((match) => ({ name: match[1], at: match.index ?? 0 }));
    const written: Array<[string, number]> = [
      ["runOnce", 2],
      ["dispatch", 2],
      ["Task.step", 6],
      ["step", 6],
      ["wakeUp", 6],
      ["callLater", 7],
      ["turn", 7],
      ["join", 8],
      ["taskDone", 8],
    ];
    const early = reads.filter((read) => written.some(([name, n]) => name === read.name && read.at < sendsTo(n)));
    expect(early.map((read) => read.name)).toEqual([]);
  });
});
