/**
 * The stepper page's six views, each drawn as HTML text from one snapshot
 * and the one before it (for what changed). A view is a pure function of
 * (recording, step): the page redraws every view at every step, so going
 * Back draws exactly what was there before, by construction.
 *
 * Marks: a row that is new has class `added`, one whose content differs
 * `changed`, one that is gone is drawn struck through with `removed`; a
 * number that moved has `changed`. A socket in the last select's ready list
 * is `ready`; one that was ready for the same event at the previous select
 * too (the last step of an earlier iteration: the steps of one iteration
 * share its select) is also `still-ready` (level-triggering: the selector
 * reports it again until it is read or unregistered).
 *
 * @module
 */
import type { PlannedWakeup, Recording, SelectorKey, Snapshot, SourceLine, TimerEntry } from "../recording.js";
import { type Change, type HeapNode, type Row, changedValue, diffRows, heapTree, sortedTimers, sourceExcerpt } from "./model.js";

/** The views, in the order the page shows them. */
export const VIEW_NAMES = ["selector", "ready", "timers", "tasks", "core", "stack"] as const;

/** One of the views. */
export type ViewName = (typeof VIEW_NAMES)[number];

/** Each view's title. */
export const VIEW_TITLES: Readonly<Record<ViewName, string>> = {
  selector: "1 · Selector",
  ready: "2 · Ready queue",
  timers: "3 · Timers",
  tasks: "4 · Tasks, Futures, queue",
  core: "5 · Crawl core",
  stack: "6 · Call stack and next line",
};

/** Why a stage lacks a view, by view and stage; a stage not named gets the view's `default`. */
const ABSENT: Readonly<Record<ViewName, Readonly<Record<string, string>>>> = {
  selector: {
    asyncawait: "stage 3 has no selector of its own: undici's sockets are watched by libuv, inside Node.",
    default: "this recording has no selector.",
  },
  ready: {
    callbacks: "stage 1's loop calls each ready socket's callback and each due timer in place: it keeps no callSoon list.",
    asyncawait: "stage 3's ready queue is V8's microtask queue: see the microtasks under view 6.",
    default: "this recording has no ready queue.",
  },
  timers: {
    asyncawait: "stage 3 sleeps with Node's own setTimeout: its timers sit in libuv's heap, not one of ours.",
    default: "this recording has no timer heap.",
  },
  tasks: {
    callbacks: "stage 1 has no Tasks or Futures: each Fetcher keeps its state on `this`, and plain bookkeeping bounds concurrency.",
    default: "this recording has no Tasks or Futures.",
  },
  core: { default: "this recording has no core." },
  stack: { default: "this recording has no call stack." },
};

/** The one-line reason a stage lacks a view. */
export function absentReason(view: ViewName, stage: string): string {
  const reasons = ABSENT[view];
  return reasons[stage] ?? reasons["default"] ?? "not recorded.";
}

const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes `text` for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, function entity(character) { return ENTITIES[character] ?? character; });
}

/** A row's class attribute for its change (none when unchanged). */
function rowClass(change: Change, extra: string[] = []): string {
  const classes = change === "same" ? extra : [change, ...extra];
  return classes.length === 0 ? "" : ` class="${classes.join(" ")}"`;
}

/** A number (or text) in a `<b>`, marked `changed` when it moved since the previous step. */
function figure(label: string, previous: unknown, current: string | number, first: boolean): string {
  const mark = changedValue(previous, current, first) ? ' class="changed"' : "";
  return `<span class="figure"><span class="label">${escapeHtml(label)}</span> <b${mark}>${escapeHtml(String(current))}</b></span>`;
}

/** A table with a head and rows already drawn; `empty` when there are none. */
function table(head: string[], rows: string[], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${escapeHtml(empty)}</p>`;
  return `<table><thead><tr>${head.map(function th(cell) { return `<th>${escapeHtml(cell)}</th>`; }).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** A source place as `fn` at `file:line`. */
function place(line: SourceLine | null): string {
  if (line === null) return "—";
  return `<code>${escapeHtml(line.fn)}</code> <span class="where">${escapeHtml(line.file)}:${line.line}</span>`;
}

/** Cells of one row. */
function cells(values: string[]): string {
  return values.map(function td(value) { return `<td>${value}</td>`; }).join("");
}

/** A list of names as text, or a dash. */
function names(list: readonly string[]): string {
  return list.length === 0 ? "—" : escapeHtml(list.join(", "));
}

/** A queue drawn in order, its new entries marked; the entries gone since the previous step listed after it, not numbered. */
function queueList(previous: readonly string[] | undefined, current: readonly string[], empty: string, gonePhrase: string): string {
  const rows = diffRows(previous, current, String);
  const kept = rows.filter(function notRemoved(row) { return row.change !== "removed"; });
  const gone = rows.filter(function removed(row) { return row.change === "removed"; });
  return [
    kept.length === 0 ? `<p class="empty">${escapeHtml(empty)}</p>` : `<ol class="queue">${kept.map(function entry(row) { return `<li${rowClass(row.change)}><code>${escapeHtml(row.item)}</code></li>`; }).join("")}</ol>`,
    gone.length === 0 ? "" : `<p class="gone">${escapeHtml(gonePhrase)}: ${gone.map(function goneEntry(row) { return `<code class="removed">${escapeHtml(row.item)}</code>`; }).join(" ")}</p>`,
  ].join("");
}

/** The "not in this stage" box. */
function absent(view: ViewName, stage: string): string {
  return `<p class="absent"><b>not in this stage</b>: ${escapeHtml(absentReason(view, stage))}</p>`;
}

/** Each socket of a ready list with the events it was ready for. */
function readyEvents(ready: { socket: string; events: ("read" | "write")[] }[] | null | undefined): Map<string, Set<string>> {
  const bySocket = new Map<string, Set<string>>();
  for (const entry of ready ?? []) bySocket.set(entry.socket, new Set(entry.events));
  return bySocket;
}

/** Whether `socket` was ready for one of `events` in `before`. */
function readyAgain(before: Map<string, Set<string>>, socket: string, events: readonly string[]): boolean {
  const was = before.get(socket);
  return was !== undefined && events.some(function sameEvent(event) { return was.has(event); });
}

/**
 * The step that holds the select before `index`'s: the last step of an
 * earlier iteration, since every step of one iteration shows that
 * iteration's select. Null when `index` is in the first iteration.
 */
export function previousSelectStep(recording: Recording, index: number): Snapshot | null {
  const iteration = recording.steps[index]?.iterations;
  if (iteration === undefined) return null;
  for (let at = index - 1; at >= 0; at--) {
    const step = recording.steps[at] as Snapshot;
    if (step.iterations < iteration) return step;
  }
  return null;
}

/**
 * View 1: the selector's keys, the candidates, the last select's ready list.
 * `previousSelect` is the step holding the select before this one (null:
 * none; by default `previous`, right when a recording has one step per
 * iteration): a socket ready for the same event there too is marked still
 * ready.
 */
export function selectorView(stage: string, step: Snapshot, previous: Snapshot | undefined, previousSelect: Snapshot | null | undefined = previous): string {
  const selector = step.selector;
  if (selector === undefined) return absent("selector", stage);
  const before = previous?.selector;
  const readyNow = readyEvents(selector.lastReady);
  const readyBefore = readyEvents(previousSelect?.selector?.lastReady);
  const keyRows = diffRows<SelectorKey>(before?.keys, selector.keys, function socketKey(key) { return key.socket; }).map(function keyRow(row) {
    const key = row.item;
    const now = readyNow.get(key.socket);
    const lit = row.change !== "removed" && now !== undefined;
    const extra = lit ? (readyAgain(readyBefore, key.socket, [...now]) ? ["ready", "still-ready"] : ["ready"]) : [];
    const events = key.events.map(function eventName(event) { return event === "read" ? "EVENT_READ" : "EVENT_WRITE"; }).join(" | ");
    return `<tr${rowClass(row.change, extra)}>${cells([escapeHtml(key.socket), escapeHtml(events), `<code>${escapeHtml(key.callback)}</code>`])}</tr>`;
  });
  const candidateRows = diffRows(before?.candidates, selector.candidates, String).map(function candidate(row) {
    return `<li${rowClass(row.change)}>${escapeHtml(row.item)}</li>`;
  });
  const ready = selector.lastReady;
  const readyRows = ready === null ? [] : ready.map(function readyEntry(entry) {
    const again = readyAgain(readyBefore, entry.socket, entry.events);
    return `<li class="ready${again ? " still-ready" : ""}">${escapeHtml(entry.socket)} ${escapeHtml(entry.events.join("+"))}${again ? ' <span class="note">still ready</span>' : ""}</li>`;
  });
  return [
    `<h3>Registered keys</h3>`,
    table(["socket", "events", "callback / Future"], keyRows, "no key registered"),
    `<h3>Candidates</h3>`,
    candidateRows.length === 0 ? `<p class="empty">none</p>` : `<ul class="chips">${candidateRows.join("")}</ul>`,
    `<h3>Last select() ready</h3>`,
    ready === null ? `<p class="empty">no select yet</p>` : readyRows.length === 0 ? `<p class="empty">nothing ready</p>` : `<ul class="chips">${readyRows.join("")}</ul>`,
  ].join("");
}

/**
 * View 2: the ready queue, with the line between this iteration and the
 * next. At a step of kind `callback` ("The loop runs X") the loop has just
 * taken X out of the queue to call it: the last entry gone since the
 * previous step is drawn as running now, the others as run.
 */
export function readyView(stage: string, step: Snapshot, previous: Snapshot | undefined): string {
  const ready = step.ready;
  if (ready === undefined) return absent("ready", stage);
  const rows = diffRows(previous?.ready, ready, function nameKey(entry) { return entry.name; });
  const current = rows.filter(function notRemoved(row) { return row.change !== "removed"; });
  const now = current.filter(function thisIteration(row) { return row.item.thisIteration; });
  const later = current.filter(function nextIteration(row) { return !row.item.thisIteration; });
  const gone = rows.filter(function removed(row) { return row.change === "removed"; });
  const running = step.kind === "callback" ? gone.at(-1) : undefined;
  const ran = running === undefined ? gone : gone.slice(0, -1);
  const item = function readyItem(row: Row<{ name: string }>): string { return `<li${rowClass(row.change)}><code>${escapeHtml(row.item.name)}</code></li>`; };
  return [
    running === undefined ? "" : `<p class="running">runs now, taken from the queue: <code>${escapeHtml(running.item.name)}</code></p>`,
    `<ol class="queue">${now.map(item).join("")}</ol>`,
    now.length === 0 ? `<p class="empty">${running === undefined ? "nothing runs in this iteration" : "nothing else runs in this iteration"}</p>` : "",
    `<p class="divider">runs this iteration ▲ · ▼ waits for the next</p>`,
    `<ol class="queue" start="${now.length + 1}">${later.map(item).join("")}</ol>`,
    later.length === 0 ? `<p class="empty">nothing waits for the next</p>` : "",
    ran.length === 0 ? "" : `<p class="gone">ran since the previous step: ${ran.map(function goneItem(row) { return `<code class="removed">${escapeHtml(row.item.name)}</code>`; }).join(" ")}</p>`,
  ].join("");
}

/** One node of the heap tree and its subtrees, as nested lists. */
function heapNode(node: HeapNode, changes: Map<number, Change>): string {
  const entry = node.entry;
  const classes = [entry.cancelled ? "cancelled" : "", node.index === 0 ? "root" : ""].filter(Boolean);
  const change = changes.get(entry.id) ?? "same";
  const children = [node.left, node.right].filter(function present(child): child is HeapNode { return child !== null; });
  const label = `<span${rowClass(change, classes)} title="heap[${node.index}]">#${entry.id} ${escapeHtml(entry.name)}<br><small>+${entry.dueInMs} ms · seq ${entry.seq}</small></span>`;
  return `<li>${label}${children.length === 0 ? "" : `<ul>${children.map(function child(next) { return heapNode(next, changes); }).join("")}</ul>`}</li>`;
}

/** One wake-up planned in Node, as text: `setTimeout(48 ms) — sleep 48 ms until timer 7 (timeIsUp)`. */
function wakeupText(wakeup: PlannedWakeup): string {
  return `${wakeup.kind}(${wakeup.kind === "setTimeout" ? `${wakeup.ms} ms` : ""}) — ${wakeup.why}`;
}

/**
 * The wake-ups the loop has planned in Node: none, one on its line, or a
 * list headed "N wake-ups planned" (a learner's loop that leaves a stray
 * timer plans two; the library's plans one at most).
 */
function plannedPart(stage: string, planned: readonly PlannedWakeup[], mark: string): string {
  const label = `<span class="label">planned in Node</span>`;
  const none = stage === "asyncawait" ? "nothing of ours: stage 3 has no loop of its own, Node's loop runs these timers" : "nothing planned: the loop is running, or stopped";
  if (planned.length === 0) return `<p${mark}>${label} ${escapeHtml(none)}</p>`;
  const [only] = planned;
  if (planned.length === 1 && only !== undefined) return `<p${mark}>${label} ${escapeHtml(wakeupText(only))}</p>`;
  const items = planned.map(function wakeupItem(wakeup) { return `<li>${escapeHtml(wakeupText(wakeup))}</li>`; }).join("");
  return `<div${mark}>${label} <b class="many">${planned.length} wake-ups planned</b><ol class="wakeups">${items}</ol></div>`;
}

/** View 3: the timer heap as a tree and as a sorted list, and the wake-up planned in Node. */
export function timersView(stage: string, step: Snapshot, previous: Snapshot | undefined): string {
  const timers = step.timers;
  if (timers === undefined) return absent("timers", stage);
  const rows = diffRows<TimerEntry>(previous?.timers?.heap, timers.heap, function idKey(entry) { return String(entry.id); });
  const changes = new Map(rows.map(function byId(row): [number, Change] { return [row.item.id, row.change]; }));
  const tree = heapTree(timers.heap);
  const sorted = sortedTimers(timers.heap).map(function timerRow(entry) {
    const change = changes.get(entry.id) ?? "same";
    return `<tr${rowClass(change, entry.cancelled ? ["cancelled"] : [])}>${cells([`#${entry.id}`, escapeHtml(entry.name), `+${entry.dueInMs} ms`, String(entry.seq), entry.cancelled ? "cancelled" : ""])}</tr>`;
  });
  const gone = rows.filter(function removed(row) { return row.change === "removed"; });
  const planned = timers.planned;
  const plannedBefore = previous?.timers?.planned ?? [];
  const plannedMark = changedValue(plannedBefore, planned, previous === undefined) ? ' class="planned changed"' : ' class="planned"';
  return [
    plannedPart(stage, planned, plannedMark),
    `<div class="timer-columns"><div><h3>Heap as a tree</h3>`,
    tree === null ? `<p class="empty">heap empty</p>` : `<ul class="tree">${heapNode(tree, changes)}</ul>`,
    `</div><div><h3>Sorted by due time</h3>`,
    table(["id", "callback", "due", "seq", ""], sorted, "no timer"),
    gone.length === 0 ? "" : `<p class="gone">left the heap: ${gone.map(function goneTimer(row) { return `<span class="removed">#${row.item.id} ${escapeHtml(row.item.name)}</span>`; }).join(" ")}</p>`,
    `</div></div>`,
  ].join("");
}

/** View 4: Tasks, Futures and the joinable queue. */
export function tasksView(stage: string, step: Snapshot, previous: Snapshot | undefined): string {
  if (step.tasks === undefined && step.futures === undefined && step.queue === undefined) return absent("tasks", stage);
  const first = previous === undefined;
  const taskRows = diffRows(previous?.tasks, step.tasks ?? [], function idKey(task) { return task.id; }).map(function taskRow(row) {
    const task = row.item;
    return `<tr${rowClass(row.change)}>${cells([escapeHtml(task.id), `<code>${escapeHtml(task.coroutine)}</code>`, escapeHtml(task.state), escapeHtml(task.waitsOn ?? "—"), place(task.pausedAt)])}</tr>`;
  });
  const futureRows = diffRows(previous?.futures, step.futures ?? [], function idKey(future) { return future.id; }).map(function futureRow(row) {
    const future = row.item;
    return `<tr${rowClass(row.change, [`state-${future.state}`])}>${cells([escapeHtml(future.id), escapeHtml(future.state), names(future.callbacks)])}</tr>`;
  });
  const queue = step.queue;
  const queueBefore = previous?.queue ?? undefined;
  const queuePart =
    queue === undefined || queue === null
      ? `<p class="empty">no queue</p>`
      : [
          `<p class="figures">`,
          figure("unfinished", queueBefore?.unfinished, queue.unfinished, first),
          figure("parked getters", queueBefore?.parkedGetters, queue.parkedGetters, first),
          figure("join waiters", queueBefore?.joinWaiters, queue.joinWaiters, first),
          `</p>`,
          queueList(queueBefore?.items, queue.items, "no item waiting", "taken since the previous step"),
        ].join("");
  return [
    `<h3>Tasks</h3>`,
    table(["task", "coroutine", "state", "waits on", "paused at"], taskRows, "no Task"),
    `<h3>Futures</h3>`,
    table(["future", "state", "done callbacks"], futureRows, "no Future pending"),
    `<h3>Joinable queue</h3>`,
    queuePart,
  ].join("");
}

/** View 5: the crawl core's jobs out, host lines and counts. */
export function coreView(_stage: string, step: Snapshot, previous: Snapshot | undefined): string {
  const core = step.core;
  const before = previous?.core;
  const first = previous === undefined;
  const jobRows = diffRows(before?.jobsOut, core.jobsOut, function urlKey(job) { return job.url; }).map(function jobRow(row) {
    return `<tr${rowClass(row.change)}>${cells([escapeHtml(row.item.url), escapeHtml(row.item.state)])}</tr>`;
  });
  const hostRows = diffRows(before?.hosts, core.hosts, function originKey(host) { return host.origin; }).map(function hostRow(row) {
    const host = row.item;
    const next = host.nextStartInMs === null ? "now" : `+${host.nextStartInMs} ms`;
    return `<tr${rowClass(row.change)}>${cells([escapeHtml(host.origin), String(host.waiting), String(host.inFlight), next])}</tr>`;
  });
  return [
    `<p class="figures">`,
    figure("seen", before?.seen, core.seen, first),
    figure("to do", before?.todo, core.todo, first),
    figure("recorded", before?.recorded, core.recorded, first),
    figure("jobs out", before?.jobsOut.length, core.jobsOut.length, first),
    `</p>`,
    `<h3>Jobs out</h3>`,
    table(["url", "state"], jobRows, "no job out"),
    `<h3>Host lines</h3>`,
    table(["origin", "waiting", "in flight", "next allowed start"], hostRows, "no host yet"),
  ].join("");
}

/** View 6: the call stack at this dispatch, the next line in its file, and for stage 3 the microtask and nextTick queues. */
export function stackView(recording: Recording, step: Snapshot, previous: Snapshot | undefined): string {
  const frames = diffRows(previous?.stack, step.stack, function frameKey(frame) { return frame.fn; }).filter(function notRemoved(row) { return row.change !== "removed"; });
  const stackRows = frames.map(function frameRow(row, depth) {
    return `<li${rowClass(row.change)}>${depth === 0 ? '<span class="note">innermost</span> ' : ""}${place(row.item)}</li>`;
  });
  const next = step.next;
  const excerpt = next === null ? [] : sourceExcerpt(recording.sources, next.file, next.line);
  const source =
    next === null
      ? `<p class="empty">${step.kind === "end" && recording.truncated === true ? "nothing runs next: the recorder stopped the crawl" : "nothing runs next: the crawl is over"}</p>`
      : excerpt.length === 0
        ? `<p>${place(next)} <span class="empty">(file not in the recording)</span></p>`
        : `<p class="file">${escapeHtml(next.file)} · <code>${escapeHtml(next.fn)}</code></p><pre class="source">${excerpt
            .map(function sourceLine(line) { return `<span${line.here ? ' class="here"' : ""}><span class="number">${line.number}</span>${escapeHtml(line.text)}</span>`; })
            .join("")}</pre>`;
  const queues =
    step.microtasks === undefined && step.nextTicks === undefined
      ? `<p class="absent"><b>microtask and nextTick queues: not in this stage</b>: stages 1 and 2 use no Promise, so nothing of theirs waits in either queue.</p>`
      : [
          `<div class="timer-columns"><div><h3>nextTick queue</h3>`,
          queueList(previous?.nextTicks, step.nextTicks ?? [], "empty", "ran since the previous step"),
          `</div><div><h3>Microtask queue</h3>`,
          queueList(previous?.microtasks, step.microtasks ?? [], "empty", "ran since the previous step"),
          `</div></div>`,
        ].join("");
  const ended = step.kind === "end";
  const cut = ended && recording.truncated === true;
  const emptyStack = cut ? "empty: the recording was cut here" : ended ? "empty: the crawl is over" : "empty: the loop waits in Node";
  const endClass = cut || stackRows.length > 0 ? "ended failed" : "ended";
  return [
    ended ? `<p class="${endClass}">${endLabel(recording, step)}</p>` : "",
    `<h3>${ended && stackRows.length > 0 ? "Stack of the failure" : "Call stack"}</h3>`,
    stackRows.length === 0 ? `<p class="empty">${emptyStack}</p>` : `<ol class="stack">${stackRows.join("")}</ol>`,
    `<h3>Runs next</h3>`,
    source,
    queues,
  ].join("");
}

/** Every view of `recording` at step `index`, as HTML, each with the changes since step `index − 1` marked. */
export function renderViews(recording: Recording, index: number): Record<ViewName, string> {
  const step = recording.steps[index];
  if (step === undefined) throw new RangeError(`Expected a step from 0 to ${recording.steps.length - 1}, got ${index}`);
  const previous = index > 0 ? recording.steps[index - 1] : undefined;
  const stage = recording.stage;
  return {
    selector: selectorView(stage, step, previous, previousSelectStep(recording, index)),
    ready: readyView(stage, step, previous),
    timers: timersView(stage, step, previous),
    tasks: tasksView(stage, step, previous),
    core: coreView(stage, step, previous),
    stack: stackView(recording, step, previous),
  };
}

/**
 * The end step's label as HTML. A recording cut at maxSteps ends with the
 * recorder's abort of the crawl, which the stage reports as an end ("The
 * crawl ends: 0 records…"): the page says it was cut, the stage's words after.
 */
export function endLabel(recording: Recording, step: Snapshot): string {
  if (step.kind !== "end" || recording.truncated !== true) return escapeHtml(step.label);
  return `<b>Recording cut at maxSteps</b>: the recorder stopped the crawl here, it did not end (the stage then said: ${escapeHtml(step.label)})`;
}

/** The longest label the heading shows whole: a longer one is cut, so that the views stay on screen. */
export const HEADING_LABEL_MAX = 240;

/**
 * The step's heading line: its number, kind, label, virtual time and
 * iterations. A label longer than {@link HEADING_LABEL_MAX} (a learner's
 * `turn` that leaves a `setTimeout` behind at every iteration ends with
 * "plans setTimeout(turn, …)" hundreds of times) is cut at a clause and says
 * so; the whole label is its tooltip, and view 3 lists every wake-up.
 */
export function stepHeading(recording: Recording, index: number): string {
  const step = recording.steps[index];
  if (step === undefined) return "";
  if (step.label.length > HEADING_LABEL_MAX && !(step.kind === "end" && recording.truncated === true)) {
    const clause = step.label.lastIndexOf(" and ", HEADING_LABEL_MAX);
    const shown = step.label.slice(0, clause > 0 ? clause : HEADING_LABEL_MAX);
    return `<span class="kind">${escapeHtml(step.kind)}</span> <span title="${escapeHtml(step.label)}">${escapeHtml(shown)} … <span class="note">(label cut: ${step.label.length} characters; the views show it all)</span></span> <span class="when">t = ${step.now} ms · iteration ${step.iterations}</span>`;
  }
  return `<span class="kind">${escapeHtml(step.kind)}</span> ${endLabel(recording, step)} <span class="when">t = ${step.now} ms · iteration ${step.iterations}</span>`;
}

/**
 * The notice above the views about the recording as a whole, or "" when
 * there is none: a recording cut at its step limit (`truncated`) never
 * reached its end, which is what a loop that spins looks like.
 */
export function recordingNotice(recording: Recording): string {
  if (recording.truncated !== true) return "";
  return `<b>recording cut at maxSteps: the loop may spin</b> — ${recording.steps.length} steps recorded, the crawl did not end.`;
}
