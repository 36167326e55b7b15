/**
 * FIXTURE, used only by the stepper page's own tests and by its build until
 * the recorder is merged: a small, hand-made recording for each stage, shaped
 * as stepper/recording.ts says and as the recorder writes one (the demo
 * site's /, /a and /b with two workers), but written by hand, not taken from
 * a crawl. The source lines it names are found in the real files by a
 * pattern, so the page shows real code; the states and events are made up
 * to be plausible, and to cover every mark the page draws: a key added,
 * changed and removed, a socket ready twice (level-triggering), a cancelled
 * timer, a ready queue on both sides of its line, a Future resolved, a Task
 * done, a URL fetched, the microtask and nextTick queues.
 *
 * The real recordings come from the recorder (`buildRecordings()` of the
 * record helper's module); stepper/build.ts imports one or the other on one line.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { CoreView, FutureView, QueueView, Recording, SelectorKey, Snapshot, SourceLine, StepEvents, TaskView } from "./recording.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SITE = "http://demo.test";

/** A timer as the fixture keeps it: due at an absolute virtual time, drawn relative to the step's `now`. */
interface FixtureTimer {
  id: number;
  when: number;
  seq: number;
  cancelled: boolean;
  name: string;
}

/** What a story changes from step to step: a snapshot's fields, with timers kept absolute. */
interface StoryState {
  now: number;
  iterations: number;
  selector?: Snapshot["selector"];
  ready?: Snapshot["ready"];
  timers?: { heap: FixtureTimer[]; planned: NonNullable<Snapshot["timers"]>["planned"] };
  tasks?: TaskView[];
  futures?: FutureView[];
  queue?: QueueView | null;
  core: CoreView;
  stack: SourceLine[];
  next: SourceLine | null;
  microtasks?: string[];
  nextTicks?: string[];
}

/** Writes a recording step by step: each `step()` changes the state, then keeps a whole copy of it. */
class Story {
  readonly steps: Snapshot[] = [];
  readonly sources: Record<string, string[]> = {};

  constructor(readonly state: StoryState) {}

  /** The 1-based line of `file` that first matches `pattern`, as a place in function `fn`; the file joins the sources. */
  at(file: string, pattern: RegExp, fn: string): SourceLine {
    let lines = this.sources[file];
    if (lines === undefined) {
      lines = readFileSync(`${ROOT}${file}`, "utf8").split("\n");
      this.sources[file] = lines;
    }
    // Another branch may reword the line: then the function's first mention, then the file's first line, so the
    // fixture still draws (a place a little off) instead of failing the page's tests over someone else's edit.
    const name = fn.split(".").at(-1) ?? fn;
    let index = lines.findIndex(function matches(line) { return pattern.test(line); });
    if (index === -1) index = lines.findIndex(function mentions(line) { return line.includes(name); });
    return { file, line: Math.max(0, index) + 1, fn };
  }

  /** Applies `change`, then records the whole state as the next step. */
  step(kind: string, label: string, events: StepEvents, change: (state: StoryState) => void): void {
    change(this.state);
    const { timers, ...rest } = structuredClone(this.state);
    const now = rest.now;
    const snapshot: Snapshot = { index: this.steps.length, kind, label, ...rest, events };
    if (timers !== undefined) {
      snapshot.timers = {
        heap: timers.heap.map(function relative(timer) { return { id: timer.id, dueInMs: timer.when - now, seq: timer.seq, cancelled: timer.cancelled, name: timer.name }; }),
        planned: timers.planned,
      };
    }
    this.steps.push(snapshot);
  }

  /** The last step, as the recorder writes it: kind "end", nothing on the stack, nothing next. */
  end(label: string): void {
    this.step("end", label, {}, function over(s) {
      s.stack = [];
      s.next = null;
    });
  }

  recording(stage: string): Recording {
    return { stage, seed: 7, root: `${SITE}/`, sources: this.sources, steps: this.steps, truncated: false };
  }
}

/** Pushes a timer onto a heap array (heapq's sift-up on `when`, then `seq`), as the loops' TimerHeap does. */
function heapPush(heap: FixtureTimer[], timer: FixtureTimer): void {
  heap.push(timer);
  let index = heap.length - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    const above = heap[parent];
    const here = heap[index];
    if (above === undefined || here === undefined || above.when < here.when || (above.when === here.when && above.seq < here.seq)) break;
    heap[parent] = here;
    heap[index] = above;
    index = parent;
  }
}

/** Pops the earliest timer off a heap array (heapq's sift-down). */
function heapPop(heap: FixtureTimer[]): void {
  const last = heap.pop();
  if (last === undefined || heap.length === 0) return;
  heap[0] = last;
  let index = 0;
  for (;;) {
    const left = 2 * index + 1;
    const right = left + 1;
    let least = index;
    for (const child of [left, right]) {
      const a = heap[child];
      const b = heap[least];
      if (a !== undefined && b !== undefined && (a.when < b.when || (a.when === b.when && a.seq < b.seq))) least = child;
    }
    if (least === index) return;
    const a = heap[least];
    const b = heap[index];
    if (a === undefined || b === undefined) return;
    heap[least] = b;
    heap[index] = a;
    index = least;
  }
}

/** Marks timer `id` of a heap cancelled (it stays in the heap until it would be due, as in asyncio). */
function cancelTimer(heap: FixtureTimer[], id: number): void {
  for (const timer of heap) if (timer.id === id) timer.cancelled = true;
}

/** A core with one host and the given counts. */
function core(jobsOut: CoreView["jobsOut"], seen: number, todo: number, recorded: number, nextStartInMs: number | null, waiting = 0): CoreView {
  return { jobsOut, hosts: [{ origin: SITE, waiting, inFlight: jobsOut.length, nextStartInMs }], seen, todo, recorded };
}

/** Stage 1: a Fetcher's callbacks on the selector, its idle timers on the heap. */
function callbacksRecording(): Recording {
  const story = new Story({ now: 0, iterations: 0, selector: { keys: [], candidates: [], lastReady: null }, timers: { heap: [], planned: [] }, core: core([], 1, 1, 0, null, 1), stack: [], next: null });
  const loop = "src/callbacks/event-loop.ts";
  const fetcher = "src/callbacks/fetcher.ts";
  const crawler = "src/callbacks/crawler.ts";
  const crawl = story.at(crawler, /^\s*crawl\(onDone/, "Crawler.crawl");
  const fetch = story.at(fetcher, /^\s*fetch\(\): void/, "Fetcher.fetch");
  const connected = story.at(fetcher, /readonly connected: IoCallback/, "connected");
  const readResponse = story.at(fetcher, /readonly readResponse: IoCallback/, "readResponse");
  const runOnce = story.at(loop, /protected readonly runOnce = /, "runOnce");
  const select = story.at(loop, /ready = this\.selector\.select\(this\.dispatch\)/, "runOnce");
  const dispatch = story.at(loop, /protected readonly dispatch = /, "dispatch");
  const registerWrite = story.at(fetcher, /register\(this\.socket, EVENT_WRITE, this\.connected\)/, "Fetcher.fetch");
  const registerRead = story.at(fetcher, /register\(key\.socket, EVENT_READ, this\.readResponse\)/, "connected");
  const sleep = story.at(loop, /this\.sleepTimer = setTimeout\(this\.runOnce/, "runOnce");
  const key = function selectorKey(fd: number, event: "read" | "write"): SelectorKey {
    return { socket: `fd ${fd}`, events: [event], callback: event === "write" ? "connected" : "readResponse" };
  };
  const stack = function ioStack(callback: SourceLine): SourceLine[] { return [callback, dispatch, select, runOnce]; };

  story.step("callback", "crawl() starts: the core hands out http://demo.test/, and a Fetcher starts it", { dispatch: true }, function start(s) {
    s.selector = { keys: [key(7, "write")], candidates: [], lastReady: null };
    s.timers = { heap: [{ id: 1, when: 5000, seq: 1, cancelled: false, name: "idle timeout fd 7" }], planned: [{ kind: "setImmediate", ms: 0, why: "runOnce: select the socket just registered" }] };
    s.core = core([{ url: `${SITE}/`, state: "connecting" }], 1, 0, 0, 10);
    s.stack = [fetch, crawl];
    s.next = registerWrite;
  });
  story.step("iteration", "select(): fd 7 is writable → connected sends GET /, registers EVENT_READ → readResponse", { dispatch: true }, function connectedRoot(s) {
    s.now = 1;
    s.iterations = 1;
    s.selector = { keys: [key(7, "read")], candidates: ["fd 7"], lastReady: [{ socket: "fd 7", events: ["write"] }] };
    s.core = core([{ url: `${SITE}/`, state: "sent" }], 1, 0, 0, 9);
    if (s.timers !== undefined) s.timers.planned = [{ kind: "setTimeout", ms: 4999, why: "sleep 4999 ms until timer 1, or until a socket wakes the selector" }];
    s.stack = stack(connected);
    s.next = registerRead;
  });
  story.step("iteration", "select(): nothing ready: the loop sleeps in Node", {}, function idle(s) {
    s.now = 4;
    s.iterations = 2;
    if (s.selector !== undefined) s.selector = { ...s.selector, lastReady: [] };
    if (s.timers !== undefined) s.timers.planned = [{ kind: "setTimeout", ms: 4996, why: "sleep 4996 ms until timer 1 (idle timeout fd 7)" }];
    s.core = core([{ url: `${SITE}/`, state: "sent" }], 1, 0, 0, 6);
    s.stack = [sleep, runOnce];
    s.next = select;
  });
  story.step("iteration", "select(): fd 7 readable → readResponse reads 4096 of 6000 bytes; the idle timer restarts", { dispatch: true }, function firstChunk(s) {
    s.now = 12;
    s.iterations = 3;
    if (s.selector !== undefined) s.selector = { ...s.selector, lastReady: [{ socket: "fd 7", events: ["read"] }] };
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 1);
      heapPush(s.timers.heap, { id: 2, when: 5012, seq: 2, cancelled: false, name: "idle timeout fd 7" });
      s.timers.planned = [{ kind: "setImmediate", ms: 0, why: "runOnce: a socket is still ready" }];
    }
    s.core = core([{ url: `${SITE}/`, state: "reading" }], 1, 0, 0, null);
    s.stack = stack(readResponse);
    s.next = readResponse;
  });
  story.step("iteration", "select(): fd 7 still readable (1904 bytes left: level-triggered) → readResponse ends the response; / links /a and /b", { dispatch: true, fetched: [`${SITE}/`] }, function rootDone(s) {
    s.now = 12;
    s.iterations = 4;
    s.selector = { keys: [key(8, "write"), key(9, "write")], candidates: ["fd 7"], lastReady: [{ socket: "fd 7", events: ["read"] }] };
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 2);
      heapPush(s.timers.heap, { id: 3, when: 5012, seq: 3, cancelled: false, name: "idle timeout fd 8" });
      heapPush(s.timers.heap, { id: 4, when: 5012, seq: 4, cancelled: false, name: "idle timeout fd 9" });
      s.timers.planned = [{ kind: "setImmediate", ms: 0, why: "runOnce: select the sockets just registered" }];
    }
    s.core = core([{ url: `${SITE}/a`, state: "connecting" }, { url: `${SITE}/b`, state: "connecting" }], 3, 0, 1, 10);
    s.stack = stack(readResponse);
    s.next = registerWrite;
  });
  story.step("iteration", "select(): fd 8 and fd 9 writable → connected, twice", { dispatch: true }, function connectedPair(s) {
    s.now = 13;
    s.iterations = 5;
    s.selector = { keys: [key(8, "read"), key(9, "read")], candidates: ["fd 8", "fd 9"], lastReady: [{ socket: "fd 8", events: ["write"] }, { socket: "fd 9", events: ["write"] }] };
    if (s.timers !== undefined) s.timers.planned = [{ kind: "setTimeout", ms: 4999, why: "sleep 4999 ms until timer 1 (cancelled, popped when due)" }];
    s.core = core([{ url: `${SITE}/a`, state: "sent" }, { url: `${SITE}/b`, state: "sent" }], 3, 0, 1, 9);
    s.stack = stack(connected);
    s.next = registerRead;
  });
  story.step("iteration", "select(): fd 9 readable → readResponse: /b is whole", { dispatch: true, fetched: [`${SITE}/b`] }, function bDone(s) {
    s.now = 25;
    s.iterations = 6;
    s.selector = { keys: [key(8, "read")], candidates: ["fd 8", "fd 9"], lastReady: [{ socket: "fd 9", events: ["read"] }] };
    if (s.timers !== undefined) cancelTimer(s.timers.heap, 4);
    s.core = core([{ url: `${SITE}/a`, state: "reading" }], 3, 0, 2, null);
    s.stack = stack(readResponse);
    s.next = readResponse;
  });
  story.step("iteration", "select(): fd 8 readable → readResponse: /a is whole; nothing left to do, the loop stops", { dispatch: true, fetched: [`${SITE}/a`] }, function aDone(s) {
    s.now = 26;
    s.iterations = 7;
    s.selector = { keys: [], candidates: ["fd 8"], lastReady: [{ socket: "fd 8", events: ["read"] }] };
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 3);
      heapPop(s.timers.heap);
      s.timers.planned = [];
    }
    s.core = core([], 3, 0, 3, null);
    s.stack = stack(readResponse);
    s.next = null;
  });
  story.end(`The crawl ends: ${story.state.core.recorded} records in ${story.state.now} virtual ms`);
  return story.recording("callbacks");
}

/** Stage 2: Tasks stepping on the ready queue, Futures the selector resolves, the joinable queue. */
function generatorsRecording(): Recording {
  const story = new Story({
    now: 0,
    iterations: 0,
    selector: { keys: [], candidates: [], lastReady: null },
    ready: [{ name: "Task-1.step", thisIteration: true }],
    timers: { heap: [], planned: [{ kind: "setImmediate", ms: 0, why: "runOnce: 1 callback ready" }] },
    tasks: [{ id: "Task-1", coroutine: "crawl", state: "pending", waitsOn: null, pausedAt: null }],
    futures: [],
    queue: { items: [`${SITE}/`], parkedGetters: 0, unfinished: 1, joinWaiters: 0 },
    core: core([], 1, 1, 0, null, 1),
    stack: [],
    next: null,
  });
  const crawler = "src/generators/crawler.ts";
  const tasks = "src/generators/tasks.ts";
  const loop = "src/generators/event-loop.ts";
  const join = story.at(crawler, /yield\* this\.q\.join\(\)/, "Crawler.crawl");
  const get = story.at(crawler, /const job = yield\* this\.q\.get\(\)/, "Crawler.work");
  const attempt = story.at(crawler, /yield\* attempt\(job\.url/, "Crawler.fetch");
  const settle = story.at(crawler, /this\.core\.settle\(job, outcome, detail\)/, "Crawler.fetch");
  const cancelWorkers = story.at(crawler, /for \(const worker of this\.workers\) worker\.cancel\(\)/, "Crawler.crawl");
  const callSoon = story.at(tasks, /this\.loop\.callSoon\(this\.step\)/, "Task constructor");
  const runOnce = story.at(loop, /^\s*runOnce\(\): void/, "EventLoop.runOnce");
  const step = { file: tasks, line: callSoon.line, fn: "Task.step" };
  const task = function taskView(id: string, coroutine: string, state: string, waitsOn: string | null, pausedAt: SourceLine | null): TaskView {
    return { id, coroutine, state, waitsOn, pausedAt };
  };
  const workers = function workerViews(w2: [string, string | null, SourceLine | null], w3: [string, string | null, SourceLine | null]): TaskView[] {
    return [task("Task-2", "work", ...w2), task("Task-3", "work", ...w3)];
  };
  const key = function selectorKey(fd: number, event: "read" | "write", future: string): SelectorKey {
    return { socket: `fd ${fd}`, events: [event], callback: future };
  };

  story.step("task-step", "Task-1 steps: crawl() starts two workers and waits on the queue's join()", { dispatch: true }, function crawlStarts(s) {
    s.iterations = 1;
    s.ready = [{ name: "Task-2.step", thisIteration: false }, { name: "Task-3.step", thisIteration: false }];
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", null, null], ["pending", null, null])];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }];
    s.queue = { items: [`${SITE}/`], parkedGetters: 0, unfinished: 1, joinWaiters: 1 };
    s.stack = [{ ...join, fn: "crawl" }, step, runOnce];
    s.next = get;
  });
  story.step("task-step", "Task-2 steps: work() takes http://demo.test/ and connects: fd 7 → Future connect#2", { dispatch: true }, function workerTakes(s) {
    s.iterations = 2;
    s.ready = [{ name: "Task-3.step", thisIteration: true }];
    s.selector = { keys: [key(7, "write", "connect#2")], candidates: [], lastReady: null };
    s.timers = { heap: [{ id: 1, when: 10000, seq: 1, cancelled: false, name: "timeout connect#2" }], planned: [{ kind: "setImmediate", ms: 0, why: "runOnce: 1 callback ready" }] };
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", "Future connect#2", attempt], ["pending", null, null])];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "connect#2", state: "pending", callbacks: ["Task-2.wakeUp"] }];
    s.queue = { items: [], parkedGetters: 0, unfinished: 1, joinWaiters: 1 };
    s.core = core([{ url: `${SITE}/`, state: "connecting" }], 1, 0, 0, 10);
    s.stack = [{ ...attempt, fn: "fetch" }, { ...get, fn: "work" }, step, runOnce];
    s.next = get;
  });
  story.step("task-step", "Task-3 steps: the queue is empty, so work() parks in get() on Future get#3", { dispatch: true }, function workerParks(s) {
    s.iterations = 2;
    s.ready = [];
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", "Future connect#2", attempt], ["pending", "Future get#3", get])];
    s.futures = [...(s.futures ?? []), { id: "get#3", state: "pending", callbacks: ["Task-3.wakeUp"] }];
    s.queue = { items: [], parkedGetters: 1, unfinished: 1, joinWaiters: 1 };
    if (s.timers !== undefined) s.timers.planned = [{ kind: "setTimeout", ms: 10000, why: "sleep 10000 ms until timer 1, or until a socket wakes the selector" }];
    s.stack = [{ ...get, fn: "work" }, step, runOnce];
    s.next = null;
  });
  story.step("iteration", "select(): fd 7 writable → connect#2 resolved; Task-2.wakeUp waits for the next iteration", { dispatch: true, futuresResolved: ["connect#2"] }, function connectResolved(s) {
    s.now = 1;
    s.iterations = 3;
    s.selector = { keys: [], candidates: ["fd 7"], lastReady: [{ socket: "fd 7", events: ["write"] }] };
    s.ready = [{ name: "Task-2.wakeUp", thisIteration: false }];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "connect#2", state: "resolved", callbacks: [] }, { id: "get#3", state: "pending", callbacks: ["Task-3.wakeUp"] }];
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 1);
      s.timers.planned = [{ kind: "setImmediate", ms: 0, why: "runOnce: 1 callback ready" }];
    }
    s.stack = [{ file: loop, line: runOnce.line, fn: "socketReady" }, runOnce];
    s.next = attempt;
  });
  story.step("task-step", "Task-2 wakes: sends GET / and waits to read: fd 7 → Future read#4", { dispatch: true }, function sends(s) {
    s.iterations = 4;
    s.ready = [];
    s.selector = { keys: [key(7, "read", "read#4")], candidates: [], lastReady: [] };
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "get#3", state: "pending", callbacks: ["Task-3.wakeUp"] }, { id: "read#4", state: "pending", callbacks: ["Task-2.wakeUp"] }];
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", "Future read#4", attempt], ["pending", "Future get#3", get])];
    s.timers = { heap: [{ id: 1, when: 10000, seq: 1, cancelled: true, name: "timeout connect#2" }], planned: [] };
    heapPush(s.timers.heap, { id: 2, when: 10001, seq: 2, cancelled: false, name: "timeout read#4" });
    s.timers.planned = [{ kind: "setTimeout", ms: 9999, why: "sleep 9999 ms until timer 1 (cancelled, popped when due)" }];
    s.core = core([{ url: `${SITE}/`, state: "sent" }], 1, 0, 0, 9);
    s.stack = [{ ...attempt, fn: "fetch" }, { ...get, fn: "work" }, step, runOnce];
    s.next = attempt;
  });
  story.step("iteration", "select(): fd 7 readable → read#4 resolved", { dispatch: true, futuresResolved: ["read#4"] }, function readResolved(s) {
    s.now = 11;
    s.iterations = 5;
    s.selector = { keys: [], candidates: ["fd 7"], lastReady: [{ socket: "fd 7", events: ["read"] }] };
    s.ready = [{ name: "Task-2.wakeUp", thisIteration: false }];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "get#3", state: "pending", callbacks: ["Task-3.wakeUp"] }, { id: "read#4", state: "resolved", callbacks: [] }];
    s.stack = [{ file: loop, line: runOnce.line, fn: "socketReady" }, runOnce];
    s.next = attempt;
  });
  story.step("task-step", "Task-2 wakes: / is whole; the core queues /a and /b, which wakes Task-3's get#3; Task-2 takes /b and connects", { dispatch: true, fetched: [`${SITE}/`], futuresResolved: ["get#3"] }, function rootDone(s) {
    s.iterations = 6;
    s.ready = [{ name: "Task-3.wakeUp", thisIteration: false }];
    s.selector = { keys: [key(8, "write", "connect#5")], candidates: [], lastReady: [] };
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "get#3", state: "resolved", callbacks: [] }, { id: "connect#5", state: "pending", callbacks: ["Task-2.wakeUp"] }];
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", "Future connect#5", attempt], ["pending", null, get])];
    s.queue = { items: [], parkedGetters: 0, unfinished: 2, joinWaiters: 1 };
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 2);
      heapPush(s.timers.heap, { id: 3, when: 10011, seq: 3, cancelled: false, name: "timeout connect#5" });
      s.timers.planned = [{ kind: "setImmediate", ms: 0, why: "runOnce: 1 callback ready" }];
    }
    s.core = core([{ url: `${SITE}/b`, state: "connecting" }], 3, 1, 1, 10, 1);
    s.stack = [{ ...settle, fn: "fetch" }, { ...get, fn: "work" }, step, runOnce];
    s.next = settle;
  });
  story.step("task-step", "Task-3 wakes with /a and connects: fd 9 → Future connect#6", { dispatch: true }, function aStarts(s) {
    s.iterations = 7;
    s.ready = [];
    s.selector = { keys: [key(8, "write", "connect#5"), key(9, "write", "connect#6")], candidates: [], lastReady: [] };
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "connect#5", state: "pending", callbacks: ["Task-2.wakeUp"] }, { id: "connect#6", state: "pending", callbacks: ["Task-3.wakeUp"] }];
    s.tasks = [task("Task-1", "crawl", "pending", "Future join#1", join), ...workers(["pending", "Future connect#5", attempt], ["pending", "Future connect#6", attempt])];
    if (s.timers !== undefined) {
      heapPush(s.timers.heap, { id: 4, when: 10011, seq: 4, cancelled: false, name: "timeout connect#6" });
      s.timers.planned = [{ kind: "setTimeout", ms: 9989, why: "sleep 9989 ms until timer 1 (cancelled, popped when due)" }];
    }
    s.core = core([{ url: `${SITE}/b`, state: "connecting" }, { url: `${SITE}/a`, state: "connecting" }], 3, 0, 1, 10);
    s.stack = [{ ...attempt, fn: "fetch" }, { ...get, fn: "work" }, step, runOnce];
    s.next = null;
  });
  story.step("iteration", "select(): fd 8 and fd 9 → connect#5 and connect#6 resolved; both wake-ups wait for the next iteration", { dispatch: true, futuresResolved: ["connect#5", "connect#6"] }, function bothConnect(s) {
    s.now = 12;
    s.iterations = 8;
    s.selector = { keys: [], candidates: ["fd 8", "fd 9"], lastReady: [{ socket: "fd 8", events: ["write"] }, { socket: "fd 9", events: ["write"] }] };
    s.ready = [{ name: "Task-2.wakeUp", thisIteration: false }, { name: "Task-3.wakeUp", thisIteration: false }];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["Task-1.wakeUp"] }, { id: "connect#5", state: "resolved", callbacks: [] }, { id: "connect#6", state: "resolved", callbacks: [] }];
    s.stack = [{ file: loop, line: runOnce.line, fn: "socketReady" }, runOnce];
    s.next = attempt;
  });
  story.step("task-step", "Task-2 and Task-3 run in this iteration: /b and /a are fetched and settled; the queue's count reaches 0 → join#1 resolved", { dispatch: true, fetched: [`${SITE}/b`, `${SITE}/a`], futuresResolved: ["join#1"] }, function bothDone(s) {
    s.now = 30;
    s.iterations = 9;
    s.ready = [{ name: "Task-1.wakeUp", thisIteration: false }];
    s.futures = [{ id: "join#1", state: "resolved", callbacks: [] }, { id: "get#7", state: "pending", callbacks: ["Task-2.wakeUp"] }, { id: "get#8", state: "pending", callbacks: ["Task-3.wakeUp"] }];
    s.tasks = [task("Task-1", "crawl", "pending", null, join), ...workers(["pending", "Future get#7", get], ["pending", "Future get#8", get])];
    s.queue = { items: [], parkedGetters: 2, unfinished: 0, joinWaiters: 0 };
    if (s.timers !== undefined) {
      cancelTimer(s.timers.heap, 3);
      cancelTimer(s.timers.heap, 4);
      s.timers.planned = [{ kind: "setImmediate", ms: 0, why: "runOnce: 1 callback ready" }];
    }
    s.core = core([], 3, 0, 3, null);
    s.stack = [{ ...settle, fn: "fetch" }, { ...get, fn: "work" }, step, runOnce];
    s.next = join;
  });
  story.step("task-step", "Task-1 wakes from join(): it cancels the two idle workers", { dispatch: true }, function cancel(s) {
    s.iterations = 10;
    s.ready = [{ name: "Task-2.step", thisIteration: false }, { name: "Task-3.step", thisIteration: false }];
    s.tasks = [task("Task-1", "crawl", "pending", "Future gather#9", cancelWorkers), ...workers(["cancelling", null, get], ["cancelling", null, get])];
    s.futures = [{ id: "gather#9", state: "pending", callbacks: ["Task-1.wakeUp"] }];
    s.stack = [{ ...cancelWorkers, fn: "crawl" }, step, runOnce];
    s.next = cancelWorkers;
  });
  story.step("task-step", "Task-2 and Task-3 step with CancelledError thrown in at get(): both end cancelled", { dispatch: true, tasksDone: ["Task-2", "Task-3"], futuresResolved: ["gather#9"] }, function cancelled(s) {
    s.iterations = 11;
    s.ready = [{ name: "Task-1.wakeUp", thisIteration: false }];
    s.tasks = [task("Task-1", "crawl", "pending", null, cancelWorkers), ...workers(["cancelled", null, null], ["cancelled", null, null])];
    s.futures = [{ id: "gather#9", state: "resolved", callbacks: [] }];
    s.queue = { items: [], parkedGetters: 0, unfinished: 0, joinWaiters: 0 };
    s.stack = [{ ...get, fn: "work" }, step, runOnce];
    s.next = cancelWorkers;
  });
  story.step("task-step", "Task-1 ends: crawl() returns the result; the loop stops", { dispatch: true, tasksDone: ["Task-1"] }, function done(s) {
    s.iterations = 12;
    s.ready = [];
    s.tasks = [task("Task-1", "crawl", "done", null, null), ...workers(["cancelled", null, null], ["cancelled", null, null])];
    s.futures = [];
    if (s.timers !== undefined) s.timers.planned = [];
    s.stack = [step, runOnce];
    s.next = null;
  });
  story.end(`The crawl ends: ${story.state.core.recorded} records in ${story.state.now} virtual ms`);
  return story.recording("generators");
}

/** Stage 3: workers awaiting, the promise jobs that resume them, and Node's nextTick queue. */
function asyncawaitRecording(): Recording {
  const story = new Story({
    now: 0,
    iterations: 0,
    tasks: [],
    futures: [],
    queue: { items: [`${SITE}/`], parkedGetters: 0, unfinished: 1, joinWaiters: 0 },
    core: core([], 1, 1, 0, null, 1),
    stack: [],
    next: null,
    microtasks: [],
    nextTicks: [],
  });
  const crawler = "src/asyncawait/crawler.ts";
  const join = story.at(crawler, /await this\.q\.join\(\)/, "Crawler.crawl");
  const get = story.at(crawler, /const job = await this\.q\.get\(\)/, "Crawler.work");
  const all = story.at(crawler, /await Promise\.all\(this\.workers\)/, "Crawler.crawl");
  const worker = function workerView(id: string, state: string, waitsOn: string | null, pausedAt: SourceLine | null): TaskView {
    return { id, coroutine: "work", state, waitsOn, pausedAt };
  };
  const crawlTask = function crawlView(state: string, waitsOn: string | null, pausedAt: SourceLine | null): TaskView {
    return { id: "crawl", coroutine: "crawl", state, waitsOn, pausedAt };
  };

  story.step("await", "crawl() starts two workers and awaits q.join()", { dispatch: true }, function start(s) {
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "running", null, null), worker("worker-2", "running", null, null)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }];
    s.queue = { items: [`${SITE}/`], parkedGetters: 0, unfinished: 1, joinWaiters: 1 };
    s.microtasks = ["worker-1: resume after await q.get()"];
    s.stack = [{ ...join, fn: "crawl" }];
    s.next = get;
  });
  story.step("await", "worker-1 resumes with http://demo.test/ and awaits its request", { dispatch: true }, function workerTakes(s) {
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise request#2", get), worker("worker-2", "awaiting", "promise get#3", get)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "request#2", state: "pending", callbacks: ["worker-1 resumes"] }, { id: "get#3", state: "pending", callbacks: ["worker-2 resumes"] }];
    s.queue = { items: [], parkedGetters: 1, unfinished: 1, joinWaiters: 1 };
    s.microtasks = [];
    s.core = core([{ url: `${SITE}/`, state: "requesting" }], 1, 0, 0, 10);
    s.stack = [{ ...get, fn: "work" }];
    s.next = get;
  });
  story.step("worker-event", "undici: the socket's data arrives; Node queues its callback on the nextTick queue", {}, function data(s) {
    s.now = 11;
    s.iterations = 1;
    s.nextTicks = ["undici: onData (socket fd 7)"];
    s.stack = [];
    s.next = null;
  });
  story.step("worker-event", "undici parses the response: request#2 resolved; worker-1's resumption is a microtask", { futuresResolved: ["request#2"] }, function resolved(s) {
    s.nextTicks = [];
    s.microtasks = ["worker-1: resume after await request"];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "request#2", state: "resolved", callbacks: [] }, { id: "get#3", state: "pending", callbacks: ["worker-2 resumes"] }];
  });
  story.step("await", "worker-1 resumes: / is recorded; /a and /b are queued, which resolves worker-2's get#3", { dispatch: true, fetched: [`${SITE}/`], futuresResolved: ["get#3"] }, function rootDone(s) {
    s.microtasks = ["worker-2: resume with /a", "worker-1: resume with /b"];
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise get#4", get), worker("worker-2", "awaiting", "promise get#3", get)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "get#3", state: "resolved", callbacks: ["worker-2 resumes"] }, { id: "get#4", state: "resolved", callbacks: ["worker-1 resumes"] }];
    s.queue = { items: [], parkedGetters: 0, unfinished: 2, joinWaiters: 1 };
    s.core = core([], 3, 2, 1, 10, 2);
    s.stack = [{ ...get, fn: "work" }];
    s.next = get;
  });
  story.step("await", "worker-2 resumes with /a and awaits its request", { dispatch: true }, function aStarts(s) {
    s.microtasks = ["worker-1: resume with /b"];
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise get#4", get), worker("worker-2", "awaiting", "promise request#5", get)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "get#4", state: "resolved", callbacks: ["worker-1 resumes"] }, { id: "request#5", state: "pending", callbacks: ["worker-2 resumes"] }];
    s.core = core([{ url: `${SITE}/a`, state: "requesting" }], 3, 1, 1, 10, 1);
  });
  story.step("await", "worker-1 resumes with /b and awaits its request", { dispatch: true }, function bStarts(s) {
    s.microtasks = [];
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise request#6", get), worker("worker-2", "awaiting", "promise request#5", get)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "request#5", state: "pending", callbacks: ["worker-2 resumes"] }, { id: "request#6", state: "pending", callbacks: ["worker-1 resumes"] }];
    s.core = core([{ url: `${SITE}/a`, state: "requesting" }, { url: `${SITE}/b`, state: "requesting" }], 3, 0, 1, 10);
  });
  story.step("worker-event", "undici: both responses are whole: request#5 and request#6 resolved", { futuresResolved: ["request#5", "request#6"] }, function bothArrive(s) {
    s.now = 24;
    s.iterations = 2;
    s.microtasks = ["worker-2: resume after await request", "worker-1: resume after await request"];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "request#5", state: "resolved", callbacks: [] }, { id: "request#6", state: "resolved", callbacks: [] }];
    s.stack = [];
    s.next = get;
  });
  story.step("await", "worker-2 resumes: /a is recorded; it awaits q.get() again", { dispatch: true, fetched: [`${SITE}/a`] }, function aDone(s) {
    s.microtasks = ["worker-1: resume after await request"];
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise request#6", get), worker("worker-2", "awaiting", "promise get#7", get)];
    s.futures = [{ id: "join#1", state: "pending", callbacks: ["crawl resumes"] }, { id: "get#7", state: "pending", callbacks: ["worker-2 resumes"] }];
    s.queue = { items: [], parkedGetters: 1, unfinished: 1, joinWaiters: 1 };
    s.core = core([{ url: `${SITE}/b`, state: "reading" }], 3, 0, 2, null);
    s.stack = [{ ...get, fn: "work" }];
  });
  story.step("await", "worker-1 resumes: /b is recorded; the unfinished count reaches 0 → join#1 resolved", { dispatch: true, fetched: [`${SITE}/b`], futuresResolved: ["join#1"] }, function bDone(s) {
    s.microtasks = ["crawl: resume after await q.join()"];
    s.tasks = [crawlTask("awaiting", "promise join#1", join), worker("worker-1", "awaiting", "promise get#8", get), worker("worker-2", "awaiting", "promise get#7", get)];
    s.futures = [{ id: "join#1", state: "resolved", callbacks: [] }, { id: "get#7", state: "pending", callbacks: ["worker-2 resumes"] }, { id: "get#8", state: "pending", callbacks: ["worker-1 resumes"] }];
    s.queue = { items: [], parkedGetters: 2, unfinished: 0, joinWaiters: 0 };
    s.core = core([], 3, 0, 3, null);
  });
  story.step("await", "crawl resumes: q.shutdown() rejects both parked get()s with QueueShutDown", { dispatch: true }, function shutdown(s) {
    s.microtasks = ["worker-2: resume (QueueShutDown)", "worker-1: resume (QueueShutDown)"];
    s.tasks = [crawlTask("awaiting", "promise all#9", all), worker("worker-1", "awaiting", "promise get#8", get), worker("worker-2", "awaiting", "promise get#7", get)];
    s.futures = [{ id: "get#7", state: "rejected", callbacks: [] }, { id: "get#8", state: "rejected", callbacks: [] }, { id: "all#9", state: "pending", callbacks: ["crawl resumes"] }];
    s.queue = { items: [], parkedGetters: 0, unfinished: 0, joinWaiters: 0 };
    s.stack = [{ ...join, fn: "crawl" }];
    s.next = all;
  });
  story.step("await", "worker-2 and worker-1 end; Promise.all resolves", { dispatch: true, tasksDone: ["worker-2", "worker-1"], futuresResolved: ["all#9"] }, function workersEnd(s) {
    s.microtasks = ["crawl: resume after await Promise.all"];
    s.tasks = [crawlTask("awaiting", "promise all#9", all), worker("worker-1", "done", null, null), worker("worker-2", "done", null, null)];
    s.futures = [{ id: "all#9", state: "resolved", callbacks: [] }];
    s.stack = [{ ...get, fn: "work" }];
  });
  story.step("await", "crawl resumes and returns the result", { dispatch: true, tasksDone: ["crawl"] }, function done(s) {
    s.microtasks = [];
    s.tasks = [crawlTask("done", null, null), worker("worker-1", "done", null, null), worker("worker-2", "done", null, null)];
    s.futures = [];
    s.stack = [{ ...all, fn: "crawl" }];
    s.next = null;
  });
  story.end(`The crawl ends: ${story.state.core.recorded} records in ${story.state.now} virtual ms`);
  return story.recording("asyncawait");
}

/**
 * FIXTURE: the three hand-made recordings, in stage order. Same signature as
 * the recorder's `buildRecordings()`, so the build takes either.
 */
export async function buildRecordings(): Promise<Recording[]> {
  return [callbacksRecording(), generatorsRecording(), asyncawaitRecording()];
}

/** The fixture's recordings, synchronously (for the page's unit tests). */
export function fixtureRecordings(): Recording[] {
  return [callbacksRecording(), generatorsRecording(), asyncawaitRecording()];
}
