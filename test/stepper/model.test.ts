/**
 * The stepper page's pure parts, in Node: the timer heap as a tree, the rows
 * that changed between two snapshots, where Run-to stops, the deep link, and
 * a loaded file checked for a recording's shape. The recordings are the
 * page's hand-made fixture (stepper/fixture-recording.ts).
 */
import { describe, expect, it } from "vitest";
import { fixtureRecordings } from "../../stepper/fixture-recording.js";
import { type HeapNode, RecordingFormatError, diffRows, fetchedUrls, formatHash, heapTree, parseHash, readRecordings, runTo, sortedTimers, sourceExcerpt } from "../../stepper/page/model.js";
import type { Recording, TimerEntry } from "../../stepper/recording.js";

/** A timer entry with only what the tree and the sort read. */
function timer(id: number, dueInMs: number, seq: number): TimerEntry {
  return { id, dueInMs, seq, cancelled: false, name: `t${id}` };
}

/** The tree's ids, level by level. */
function levels(root: HeapNode | null): number[][] {
  const rows: number[][] = [];
  let level = root === null ? [] : [root];
  while (level.length > 0) {
    rows.push(level.map(function id(node) { return node.entry.id; }));
    level = level.flatMap(function children(node) { return [node.left, node.right].filter(function present(child): child is HeapNode { return child !== null; }); });
  }
  return rows;
}

/** Every parent's entry is due no later than each child's (the heap property). */
function heapOrdered(node: HeapNode | null): boolean {
  if (node === null) return true;
  for (const child of [node.left, node.right]) {
    if (child !== null && (child.entry.dueInMs < node.entry.dueInMs || (child.entry.dueInMs === node.entry.dueInMs && child.entry.seq < node.entry.seq))) return false;
  }
  return heapOrdered(node.left) && heapOrdered(node.right);
}

/** The fixture recording of `stage`. */
function recordingOf(stage: string): Recording {
  const found = fixtureRecordings().find(function byStage(recording) { return recording.stage === stage; });
  if (found === undefined) throw new Error(`no fixture for ${stage}`);
  return found;
}

describe("heapTree", () => {
  it("puts heap[i]'s children at 2i+1 and 2i+2, level by level", () => {
    const heap = [timer(1, 0, 1), timer(2, 5, 2), timer(3, 3, 3), timer(4, 9, 4), timer(5, 6, 5), timer(6, 4, 6)];
    const tree = heapTree(heap);
    expect(levels(tree)).toEqual([[1], [2, 3], [4, 5, 6]]);
    expect(tree?.left?.right?.index).toBe(4);
    expect(tree?.right?.left?.index).toBe(5);
    expect(tree?.right?.right).toBeNull();
  });

  it("draws nothing for an empty heap", () => {
    expect(heapTree([])).toBeNull();
  });

  it("keeps the heap property on every fixture step's heap", () => {
    let heaps = 0;
    for (const recording of fixtureRecordings()) {
      for (const step of recording.steps) {
        if (step.timers === undefined || step.timers.heap.length === 0) continue;
        heaps++;
        expect(heapOrdered(heapTree(step.timers.heap)), `${recording.stage} step ${step.index}`).toBe(true);
      }
    }
    expect(heaps).toBeGreaterThan(10);
  });
});

describe("sortedTimers", () => {
  it("orders by due time, then by sequence, without changing the heap", () => {
    const heap = [timer(1, 0, 4), timer(2, 5, 2), timer(3, 0, 3)];
    expect(sortedTimers(heap).map(function id(entry) { return entry.id; })).toEqual([3, 1, 2]);
    expect(heap.map(function id(entry) { return entry.id; })).toEqual([1, 2, 3]);
  });
});

describe("diffRows", () => {
  const byName = function nameOf(row: { name: string; n?: number }): string { return row.name; };

  it("marks rows added, changed, kept and removed, the removed ones last", () => {
    const rows = diffRows([{ name: "a", n: 1 }, { name: "b", n: 1 }, { name: "c", n: 1 }], [{ name: "a", n: 1 }, { name: "c", n: 2 }, { name: "d" }], byName);
    expect(rows.map(function mark(row) { return `${row.item.name}:${row.change}`; })).toEqual(["a:same", "c:changed", "d:added", "b:removed"]);
  });

  it("marks nothing on the first step", () => {
    expect(diffRows(undefined, [{ name: "a" }], byName).map(function mark(row) { return row.change; })).toEqual(["same"]);
  });

  it("tells two rows with the same key apart by rank", () => {
    const rows = diffRows([{ name: "Task-2.wakeUp" }], [{ name: "Task-2.wakeUp" }, { name: "Task-2.wakeUp" }], byName);
    expect(rows.map(function mark(row) { return row.change; })).toEqual(["same", "added"]);
  });
});

describe("runTo", () => {
  it("stops at the first later step whose events name the URL fetched", () => {
    const recording = recordingOf("generators");
    const url = "http://demo.test/a";
    const found = runTo(recording, 0, { kind: "fetched", url });
    expect(found).not.toBeNull();
    const index = found ?? -1;
    expect(recording.steps[index]?.events.fetched).toContain(url);
    for (let earlier = 1; earlier < index; earlier++) expect(recording.steps[earlier]?.events.fetched ?? []).not.toContain(url);
  });

  it("finds the next dispatch, Future resolved and Task done after the step shown, or null past the last", () => {
    const recording = recordingOf("generators");
    const future = runTo(recording, 0, { kind: "future" }) ?? -1;
    expect(recording.steps[future]?.events.futuresResolved?.length).toBeGreaterThan(0);
    const done = runTo(recording, 0, { kind: "task-done" }) ?? -1;
    expect(recording.steps[done]?.events.tasksDone?.length).toBeGreaterThan(0);
    expect(runTo(recording, 3, { kind: "dispatch" })).toBe(4);
    expect(runTo(recording, recording.steps.length - 1, { kind: "dispatch" })).toBeNull();
  });

  it("lists each URL fetched once, in the order its record was made", () => {
    expect(fetchedUrls(recordingOf("callbacks"))).toEqual(["http://demo.test/", "http://demo.test/b", "http://demo.test/a"]);
  });
});

describe("parseHash", () => {
  it("reads #step=N and #stage=S&step=N, and what formatHash writes", () => {
    expect(parseHash("#step=12")).toEqual({ stage: null, step: 12 });
    expect(parseHash("#stage=generators&step=3")).toEqual({ stage: "generators", step: 3 });
    expect(parseHash(formatHash("asyncawait", 7))).toEqual({ stage: "asyncawait", step: 7 });
  });

  it("ignores a step that is not a whole number", () => {
    expect(parseHash("#step=-1")).toEqual({ stage: null, step: null });
    expect(parseHash("#step=2.5")).toEqual({ stage: null, step: null });
    expect(parseHash("")).toEqual({ stage: null, step: null });
  });
});

describe("sourceExcerpt", () => {
  it("gives the line with its context, marked, clipped at the file's ends", () => {
    const sources = { "f.ts": ["one", "two", "three", "four", "five"] };
    expect(sourceExcerpt(sources, "f.ts", 2, 2)).toEqual([
      { number: 1, text: "one", here: false },
      { number: 2, text: "two", here: true },
      { number: 3, text: "three", here: false },
      { number: 4, text: "four", here: false },
    ]);
    expect(sourceExcerpt(sources, "missing.ts", 1)).toEqual([]);
  });
});

describe("readRecordings", () => {
  it("accepts one recording or a list of them", () => {
    const [first] = fixtureRecordings();
    expect(readRecordings(first)).toHaveLength(1);
    expect(readRecordings(fixtureRecordings())).toHaveLength(3);
  });

  it("throws RecordingFormatError naming the field that is wrong", () => {
    expect(function noStage() { return readRecordings({ sources: {}, steps: [] }); }).toThrow(RecordingFormatError);
    expect(function noStage() { return readRecordings({ sources: {}, steps: [] }); }).toThrow(/`stage`/);
    expect(function badStep() { return readRecordings({ stage: "x", sources: {}, steps: [{ index: 0 }] }); }).toThrow(/`steps\[0\]`/);
    expect(function emptyList() { return readRecordings([]); }).toThrow(/empty list/);
  });

  it("rejects a recording of the first format: no `truncated`, a single planned wake-up, no last step of kind end", () => {
    const [first] = fixtureRecordings();
    if (first === undefined) throw new Error("no fixture");
    const { truncated: _dropped, ...untruncated } = first;
    expect(function noTruncated() { return readRecordings(untruncated); }).toThrow(/`truncated`/);
    const single = structuredClone(first);
    const step = single.steps[1];
    if (step?.timers === undefined) throw new Error("the fixture's step 1 has no timers");
    (step.timers as unknown as { planned: unknown }).planned = { kind: "setImmediate", ms: 0, why: "" };
    expect(function onePlanned() { return readRecordings(single); }).toThrow(/`steps\[1\]\.timers\.planned`/);
    expect(function noEnd() { return readRecordings({ ...first, steps: first.steps.slice(0, -1) }); }).toThrow(/kind "end"/);
  });
});
