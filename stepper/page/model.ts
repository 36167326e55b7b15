/**
 * The stepper page's pure parts: what changed between two snapshots, the
 * timer heap as a tree, where a Run-to stops, a deep link, and a loaded
 * recording checked for shape. Nothing here touches the DOM, so the unit
 * tests in test/stepper/ run it in Node and the page runs the same code.
 *
 * @module
 */
import type { Recording, Snapshot, TimerEntry } from "../recording.js";

/** How a row of a view changed since the previous step. */
export type Change = "same" | "changed" | "added" | "removed";

/** One row of a view, with its change. */
export interface Row<T> {
  item: T;
  change: Change;
}

/**
 * Lines up the rows of two snapshots by key: a row of `current` is "added" if
 * its key was not in `previous`, "changed" if it was with other content, else
 * "same"; a row of `previous` whose key is gone follows as "removed". With no
 * previous snapshot (the first step), nothing is marked.
 *
 * Two rows with the same key (the same callback queued twice) are told apart
 * by their rank among rows of that key: `keyOf` need not be unique.
 */
export function diffRows<T>(previous: readonly T[] | undefined, current: readonly T[], keyOf: (item: T) => string): Row<T>[] {
  if (previous === undefined) return current.map(function unmarked(item) { return { item, change: "same" as Change }; });
  const before = new Map<string, string>();
  for (const [key, item] of ranked(previous, keyOf)) before.set(key, JSON.stringify(item));
  const rows: Row<T>[] = [];
  const now = new Set<string>();
  for (const [key, item] of ranked(current, keyOf)) {
    now.add(key);
    const was = before.get(key);
    rows.push({ item, change: was === undefined ? "added" : was === JSON.stringify(item) ? "same" : "changed" });
  }
  for (const [key, item] of ranked(previous, keyOf)) if (!now.has(key)) rows.push({ item, change: "removed" });
  return rows;
}

/** Each item with its key made unique by rank: `name`, `name#2`, … */
function ranked<T>(items: readonly T[], keyOf: (item: T) => string): [string, T][] {
  const counts = new Map<string, number>();
  return items.map(function rankedKey(item): [string, T] {
    const key = keyOf(item);
    const seen = (counts.get(key) ?? 0) + 1;
    counts.set(key, seen);
    return [seen === 1 ? key : `${key}#${seen}`, item];
  });
}

/** Whether a value differs from the previous step's (false on the first step). */
export function changedValue(previous: unknown, current: unknown, first: boolean): boolean {
  return !first && JSON.stringify(previous) !== JSON.stringify(current);
}

/** A node of the timer heap drawn as a binary tree: the entry at heap index `index`. */
export interface HeapNode {
  entry: TimerEntry;
  index: number;
  left: HeapNode | null;
  right: HeapNode | null;
}

/**
 * The heap's array as the binary tree it stands for: the entry at index i has
 * its children at 2i+1 and 2i+2 (heapq's layout, and the loop's TimerHeap).
 * The root is the earliest timer; no child is due before its parent.
 */
export function heapTree(heap: readonly TimerEntry[], index = 0): HeapNode | null {
  const entry = heap[index];
  if (entry === undefined) return null;
  return { entry, index, left: heapTree(heap, 2 * index + 1), right: heapTree(heap, 2 * index + 2) };
}

/** The heap's entries in the order they fall due: by `dueInMs`, then by sequence (the heap's tie-break). */
export function sortedTimers(heap: readonly TimerEntry[]): TimerEntry[] {
  return [...heap].sort(function byDueThenSeq(a, b) { return a.dueInMs - b.dueInMs || a.seq - b.seq; });
}

/** What a Run-to runs to. */
export type RunTo =
  | { kind: "dispatch" }
  | { kind: "future" }
  | { kind: "fetched"; url: string }
  | { kind: "task-done" };

/** Whether a step's events meet a Run-to condition. */
export function meets(step: Snapshot, condition: RunTo): boolean {
  const events = step.events;
  switch (condition.kind) {
    case "dispatch": return events.dispatch === true;
    case "future": return (events.futuresResolved ?? []).length > 0;
    case "fetched": return (events.fetched ?? []).includes(condition.url);
    case "task-done": return (events.tasksDone ?? []).length > 0;
  }
}

/** The first step after `from` that meets `condition`, or null when no later step does. */
export function runTo(recording: Recording, from: number, condition: RunTo): number | null {
  for (let index = from + 1; index < recording.steps.length; index++) {
    const step = recording.steps[index];
    if (step !== undefined && meets(step, condition)) return index;
  }
  return null;
}

/** Every URL the recording fetched, in the order its records were made. */
export function fetchedUrls(recording: Recording): string[] {
  const urls: string[] = [];
  for (const step of recording.steps) for (const url of step.events.fetched ?? []) if (!urls.includes(url)) urls.push(url);
  return urls;
}

/** A deep link: `#step=12`, or `#stage=generators&step=12`. */
export interface DeepLink {
  stage: string | null;
  step: number | null;
}

/** Reads a page's `location.hash`; a part that is absent or not a whole number ≥ 0 is null. */
export function parseHash(hash: string): DeepLink {
  const parameters = new URLSearchParams(hash.replace(/^#/, ""));
  const step = parameters.get("step");
  const stage = parameters.get("stage");
  return { stage: stage === null || stage === "" ? null : stage, step: step !== null && /^\d+$/.test(step) ? Number(step) : null };
}

/** The hash that links to `step` of `stage`. */
export function formatHash(stage: string, step: number): string {
  return `#stage=${encodeURIComponent(stage)}&step=${step}`;
}

/** One line of a source excerpt. */
export interface ExcerptLine {
  number: number;
  text: string;
  here: boolean;
}

/** `context` lines either side of 1-based `line` of `file`, the line itself marked; empty when the file is not in the recording. */
export function sourceExcerpt(sources: Recording["sources"], file: string, line: number, context = 3): ExcerptLine[] {
  const lines = sources[file];
  if (lines === undefined) return [];
  const first = Math.max(1, line - context);
  const last = Math.min(lines.length, line + context);
  const excerpt: ExcerptLine[] = [];
  for (let number = first; number <= last; number++) excerpt.push({ number, text: lines[number - 1] ?? "", here: number === line });
  return excerpt;
}

/** A loaded file that is not a recording. */
export class RecordingFormatError extends Error {
  override readonly name = "RecordingFormatError";
}

/**
 * Checks that parsed JSON has a recording's shape (or is a list of them) and
 * returns the recordings. Only what the page reads to start is checked: the
 * stage, the sources, `truncated`, steps that each have a core, events and a
 * stack (and, with timers, a list of planned wake-ups), the last of kind
 * "end".
 *
 * @throws {@link RecordingFormatError} naming the first field that is wrong.
 */
export function readRecordings(json: unknown): Recording[] {
  const list = Array.isArray(json) ? json : [json];
  if (list.length === 0) throw new RecordingFormatError("the file holds an empty list, not a recording");
  return list.map(function checked(candidate: unknown, position: number): Recording {
    const where = list.length > 1 ? `recording ${position}: ` : "";
    if (!isObject(candidate)) throw new RecordingFormatError(`${where}expected an object with stage, sources and steps`);
    if (typeof candidate["stage"] !== "string") throw new RecordingFormatError(`${where}\`stage\` is not a string`);
    if (!isObject(candidate["sources"])) throw new RecordingFormatError(`${where}\`sources\` is not an object of files`);
    const steps = candidate["steps"];
    if (!Array.isArray(steps) || steps.length === 0) throw new RecordingFormatError(`${where}\`steps\` is not a list of snapshots`);
    steps.forEach(function checkStep(step: unknown, index: number) {
      if (!isObject(step) || !isObject(step["core"]) || !isObject(step["events"]) || !Array.isArray(step["stack"])) {
        throw new RecordingFormatError(`${where}\`steps[${index}]\` lacks core, events or stack`);
      }
      const timers = step["timers"];
      if (timers !== undefined && (!isObject(timers) || !Array.isArray(timers["planned"]))) {
        throw new RecordingFormatError(`${where}\`steps[${index}].timers.planned\` is not a list of wake-ups`);
      }
    });
    if (typeof candidate["truncated"] !== "boolean") throw new RecordingFormatError(`${where}\`truncated\` is not true or false (a recording from an older recorder?)`);
    const last: unknown = steps[steps.length - 1];
    if (!isObject(last) || last["kind"] !== "end") throw new RecordingFormatError(`${where}the last step is not of kind "end": the recording is not whole`);
    // Checked above for what the page reads first; the rest is drawn as found.
    return candidate as unknown as Recording;
  });
}

/** Whether a value is a plain object (not null, not an array). */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
