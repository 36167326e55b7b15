/**
 * The stepper page's views as the HTML text they are drawn from, in Node:
 * what each view marks as changed since the previous step, level-triggering
 * (a socket ready at two selects in a row), the ready queue's line, greyed
 * cancelled timers, and the "not in this stage" reasons. The recordings are
 * the page's hand-made fixture (stepper/fixture-recording.ts).
 */
import { describe, expect, it } from "vitest";
import { fixtureRecordings } from "../../stepper/fixture-recording.js";
import { HEADING_LABEL_MAX, VIEW_NAMES, absentReason, escapeHtml, readyView, recordingNotice, renderViews, selectorView, stackView, stepHeading, timersView } from "../../stepper/page/views.js";
import type { Recording, Snapshot } from "../../stepper/recording.js";

/** The fixture recording of `stage`. */
function recordingOf(stage: string): Recording {
  const found = fixtureRecordings().find(function byStage(recording) { return recording.stage === stage; });
  if (found === undefined) throw new Error(`no fixture for ${stage}`);
  return found;
}

/** A snapshot with only the core, the stack and the events: every optional view absent. */
function bare(index: number): Snapshot {
  return { index, kind: "iteration", label: "", now: 0, iterations: index, core: { jobsOut: [], hosts: [], seen: 0, todo: 0, recorded: 0 }, stack: [], next: null, events: {} };
}

describe("renderViews", () => {
  it("draws the same HTML for a step whichever way it is reached: it depends on the step alone", () => {
    const recording = recordingOf("generators");
    expect(renderViews(recording, 5)).toEqual(renderViews(recordingOf("generators"), 5));
  });

  it("draws every view of every step of each stage", () => {
    for (const recording of fixtureRecordings()) {
      for (let index = 0; index < recording.steps.length; index++) {
        const views = renderViews(recording, index);
        expect(Object.keys(views)).toEqual([...VIEW_NAMES]);
        for (const view of VIEW_NAMES) expect(views[view].length, `${recording.stage} ${index} ${view}`).toBeGreaterThan(20);
      }
    }
  });

  it("marks nothing changed on the first step", () => {
    for (const recording of fixtureRecordings()) {
      const html = Object.values(renderViews(recording, 0)).join("");
      expect(html).not.toMatch(/class="(added|changed|removed)/);
    }
  });

  it("throws RangeError for a step past the last", () => {
    const recording = recordingOf("callbacks");
    expect(function past() { return renderViews(recording, recording.steps.length); }).toThrow(RangeError);
  });
});

describe("selectorView", () => {
  it("lights a socket ready at two selects in a row as still ready (level-triggering)", () => {
    const recording = recordingOf("callbacks");
    // Step 3 reads 4096 of 6000 bytes from fd 7; at step 4 fd 7 is ready again.
    expect(selectorView("callbacks", recording.steps[3] as Snapshot, recording.steps[2])).not.toContain("still-ready");
    const again = selectorView("callbacks", recording.steps[4] as Snapshot, recording.steps[3]);
    expect(again).toContain('<li class="ready still-ready">fd 7 read');
    expect(again).toContain("still ready");
  });

  it("compares with the previous iteration's select: not a later step of the same iteration, not another event", () => {
    /** A step of iteration `iteration` whose select found `ready` ready. */
    function selected(index: number, iteration: number, ready: { socket: string; events: ("read" | "write")[] }[]): Snapshot {
      return { ...bare(index), iterations: iteration, selector: { keys: [{ socket: "fd 7", events: ["read"], callback: "readResponse" }], candidates: ["fd 7"], lastReady: ready } };
    }
    const steps = [
      selected(0, 1, [{ socket: "fd 7", events: ["write"] }]), // iteration 1: connected is called
      selected(1, 1, [{ socket: "fd 7", events: ["write"] }]), // iteration 1 ends: the same select
      selected(2, 2, [{ socket: "fd 7", events: ["read"] }]), // iteration 2: ready again, for another event
      selected(3, 3, [{ socket: "fd 7", events: ["read"] }]), // iteration 3: ready to read again
    ];
    const recording: Recording = { stage: "callbacks", seed: 1, root: "", sources: {}, steps, truncated: false };
    expect(renderViews(recording, 1).selector).not.toContain("still-ready");
    expect(renderViews(recording, 2).selector).not.toContain("still-ready");
    expect(renderViews(recording, 3).selector).toContain('<li class="ready still-ready">fd 7 read');
  });

  it("marks keys added and removed since the previous step", () => {
    const recording = recordingOf("callbacks");
    const html = selectorView("callbacks", recording.steps[4] as Snapshot, recording.steps[3]);
    expect(html).toMatch(/<tr class="added"><td>fd 8<\/td>/);
    expect(html).toMatch(/<tr class="removed"><td>fd 7<\/td>/);
  });
});

describe("readyView", () => {
  it("draws the entries that run this iteration above the line and the others below it", () => {
    const step: Snapshot = { ...bare(1), ready: [{ name: "Task-2.step", thisIteration: true }, { name: "Task-3.wakeUp", thisIteration: false }] };
    const html = readyView("generators", step, bare(0));
    const line = html.indexOf('class="divider"');
    expect(html.indexOf("Task-2.step")).toBeLessThan(line);
    expect(html.indexOf("Task-3.wakeUp")).toBeGreaterThan(line);
  });
});

describe("timersView", () => {
  it("greys a cancelled timer in the tree and in the sorted list, and says why the loop sleeps", () => {
    const recording = recordingOf("callbacks");
    const html = timersView("callbacks", recording.steps[3] as Snapshot, recording.steps[2]);
    expect(html.match(/class="[^"]*cancelled[^"]*"/g)?.length).toBe(2);
    expect(html).toContain("setImmediate() — runOnce: a socket is still ready");
    const sleeping = timersView("callbacks", recording.steps[2] as Snapshot, recording.steps[1]);
    expect(sleeping).toContain("setTimeout(4996 ms) — sleep 4996 ms until timer 1");
  });
});

describe("planned wake-ups", () => {
  it("draws every wake-up a loop planned and counts them when there are two", () => {
    const stray: Snapshot = {
      ...bare(1),
      timers: { heap: [], planned: [{ kind: "setTimeout", ms: 48, why: "sleep 48 ms until timer 7 (timeIsUp)" }, { kind: "setImmediate", ms: 0, why: "sockets were ready" }] },
    };
    const html = timersView("generators", stray, bare(0));
    expect(html).toContain("2 wake-ups planned");
    expect(html.match(/<li>/g)?.length).toBe(2);
    const one: Snapshot = { ...bare(1), timers: { heap: [], planned: [{ kind: "setImmediate", ms: 0, why: "sockets were ready" }] } };
    expect(timersView("generators", one, bare(0))).not.toContain("wake-ups planned");
  });
});

describe("the end step and a cut recording", () => {
  it("shows how the crawl ended, and the stack of a failure", () => {
    const failed: Snapshot = { ...bare(2), kind: "end", label: "The crawl failed: TypeError: boom", stack: [{ file: "learn/07-event-loop.ts", line: 12, fn: "turn" }] };
    const recording: Recording = { stage: "generators", seed: 1, root: "http://demo.test/", sources: {}, steps: [bare(0), bare(1), failed], truncated: false };
    const html = stackView(recording, failed, bare(1));
    expect(html).toContain('class="ended failed"');
    expect(html).toContain("The crawl failed: TypeError: boom");
    expect(html).toContain("Stack of the failure");
    expect(html).toContain("learn/07-event-loop.ts:12");
    const ends = recordingOf("callbacks");
    const last = ends.steps.length - 1;
    expect(renderViews(ends, last).stack).toContain('<p class="ended">The crawl ends');
  });

  it("gives a notice for a recording cut at maxSteps, and none for a whole one", () => {
    const recording = recordingOf("generators");
    expect(recordingNotice(recording)).toBe("");
    expect(recordingNotice({ ...recording, truncated: true })).toContain("recording cut at maxSteps: the loop may spin");
  });

  it("says the end step of a cut recording is the cut, not the crawl's end", () => {
    const end: Snapshot = { ...bare(2), kind: "end", label: "The crawl ends: 0 records in 0 virtual ms" };
    const cut: Recording = { stage: "callbacks", seed: 1, root: "http://demo.test/", sources: {}, steps: [bare(0), bare(1), end], truncated: true };
    for (const html of [stepHeading(cut, 2), renderViews(cut, 2).stack]) {
      expect(html).toContain("Recording cut at maxSteps");
      expect(html).toContain("it did not end");
    }
    expect(renderViews(cut, 2).stack).not.toContain("the crawl is over");
    expect(renderViews(cut, 2).stack).toContain('class="ended failed"');
    const whole: Recording = { ...cut, truncated: false };
    expect(stepHeading(whole, 2)).not.toContain("Recording cut");
    expect(renderViews(whole, 2).stack).toContain("the crawl is over");
  });
});

describe("readyView at a callback step", () => {
  it("draws the entry the loop has just taken as running now, not as run", () => {
    const before: Snapshot = { ...bare(0), ready: [{ name: "runDoneCallback", thisIteration: true }, { name: "onWritable", thisIteration: true }] };
    const taking: Snapshot = { ...bare(1), kind: "callback", label: "The loop runs runDoneCallback", ready: [{ name: "onWritable", thisIteration: true }] };
    const html = readyView("generators", taking, before);
    expect(html).toContain("runs now, taken from the queue: <code>runDoneCallback</code>");
    expect(html).not.toContain("ran since the previous step");
    const ended: Snapshot = { ...bare(2), kind: "iteration", ready: [] };
    const after = readyView("generators", ended, taking);
    expect(after).toContain("ran since the previous step");
    expect(after).not.toContain("runs now");
    expect(after).toContain("nothing runs in this iteration");
  });
});

describe("stepHeading", () => {
  it("cuts a label longer than HEADING_LABEL_MAX at a clause and keeps it whole in the tooltip", () => {
    const label = `Iteration 3 ends: the loop plans setImmediate(turn)${" and plans setTimeout(turn, 119849)".repeat(200)}`;
    const long: Snapshot = { ...bare(1), label };
    const recording: Recording = { stage: "generators", seed: 1, root: "", sources: {}, steps: [bare(0), long], truncated: false };
    const html = stepHeading(recording, 1);
    expect(html).toContain(`title="${label}"`);
    expect(html.replace(/title="[^"]*"/, "").length).toBeLessThan(HEADING_LABEL_MAX + 300);
    expect(html).toContain(`(label cut: ${label.length} characters`);
    expect(html).not.toMatch(/ and \u2026/);
    expect(stepHeading({ ...recording, steps: [bare(0), { ...long, label: "Iteration 3 ends: the loop plans setImmediate(turn)" }] }, 1)).not.toContain("label cut");
  });
});

describe("absent views", () => {
  it("says a view is not in the stage, with the stage's reason", () => {
    const html = renderViews(recordingOf("asyncawait"), 0);
    expect(html.selector).toContain("not in this stage");
    expect(html.selector).toContain(escapeHtml(absentReason("selector", "asyncawait")));
    expect(html.timers).toContain("not in this stage");
    expect(html.stack).toContain("Microtask queue");
    const callbacks = renderViews(recordingOf("callbacks"), 0);
    expect(callbacks.tasks).toContain(escapeHtml(absentReason("tasks", "callbacks")));
    expect(callbacks.ready).toContain("callSoon");
    expect(callbacks.stack).toContain("microtask and nextTick queues: not in this stage");
  });
});

describe("escapeHtml", () => {
  it("escapes what could open a tag or end an attribute", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  });
});
