/**
 * The stepper's recording: what a real stage did, step by step, while it
 * crawled a site in the bottle (src/bottle: simulated network, virtual
 * clock, a seed). The recorder (stepper/record.ts) writes it from the
 * stage's own objects; the page (stepper/page/) only draws it. Every
 * snapshot is whole, so Back shows exactly the state before.
 *
 * @module
 */

/** A place in the source: the file (relative to the package root), 1-based line, and the function. */
export interface SourceLine {
  file: string;
  line: number;
  fn: string;
}

/** One registered selector key (stage 1 and 2). */
export interface SelectorKey {
  /** The socket's name as the stage knows it (`fd 7`, or the connection's host:port). */
  socket: string;
  events: ("read" | "write")[];
  /** What runs when it is ready: the callback's name (stage 1) or the Future it resolves (stage 2). */
  callback: string;
}

/** One timer of the loop's heap. */
export interface TimerEntry {
  id: number;
  /** When it is due, in ms relative to the snapshot's `now`. */
  dueInMs: number;
  /** Its sequence number (the heap's tie-break). */
  seq: number;
  cancelled: boolean;
  /** The callback's name. */
  name: string;
}

/**
 * A wake-up the loop has planned in Node (stage 1 and 2): a `setTimeout`
 * or `setImmediate` whose callback is the loop's iteration. A loop plans one
 * at most; a list, so that a loop that plans two (a learner's) shows two.
 */
export interface PlannedWakeup {
  kind: "setTimeout" | "setImmediate";
  /** In how many virtual ms it fires (0 for `setImmediate`). */
  ms: number;
  /** Why: "sleep 48 ms until timer 7 (timeIsUp)", "sockets were ready". */
  why: string;
}

/** A Task of stage 2, or a worker of stage 3. */
export interface TaskView {
  id: string;
  coroutine: string;
  state: string;
  /** The Future (or promise) it waits on, or null. */
  waitsOn: string | null;
  /** Where its generator (or async function) is paused. */
  pausedAt: SourceLine | null;
}

export interface FutureView {
  id: string;
  state: "pending" | "resolved" | "rejected" | "cancelled";
  /** Its done callbacks, named. */
  callbacks: string[];
}

/** The joinable queue (stage 2 and 3). */
export interface QueueView {
  items: string[];
  parkedGetters: number;
  unfinished: number;
  joinWaiters: number;
}

/** The crawl core's state. */
export interface CoreView {
  jobsOut: { url: string; state: string }[];
  hosts: { origin: string; waiting: number; inFlight: number; nextStartInMs: number | null }[];
  seen: number;
  todo: number;
  recorded: number;
}

/** Events that happened in this step, for Run-to. */
export interface StepEvents {
  /** A loop dispatch (a callback or a Task step) happened. */
  dispatch?: boolean;
  /** Names of Futures resolved in this step. */
  futuresResolved?: string[];
  /** URLs whose record was made in this step. */
  fetched?: string[];
  /** Tasks that finished in this step. */
  tasksDone?: string[];
}

/** The whole state after one step. Views a stage does not have are absent. */
export interface Snapshot {
  index: number;
  /** What kind of step: "iteration" (an iteration's end), "callback", "task-step", "resolve" (stage 2: a Future has just been resolved), "await", "worker-event", and "end" (the last: the crawl ended, or failed, its stack in `stack`). */
  kind: string;
  /** A one-line description ("Task crawl#2 steps: fetch resumes after connect"). */
  label: string;
  /** Virtual ms since the crawl began. */
  now: number;
  /** Loop iterations so far (stages 1 and 2; 0 in stage 3, which has no loop of its own). */
  iterations: number;
  selector?: { keys: SelectorKey[]; candidates: string[]; lastReady: { socket: string; events: ("read" | "write")[] }[] | null };
  ready?: { name: string; thisIteration: boolean }[];
  timers?: { heap: TimerEntry[]; planned: PlannedWakeup[] };
  tasks?: TaskView[];
  futures?: FutureView[];
  queue?: QueueView | null;
  core: CoreView;
  /** The call stack at this dispatch, innermost first. */
  stack: SourceLine[];
  /** The line that runs next. */
  next: SourceLine | null;
  /** Stage 3: the promise jobs queued now whose promise this package's files made, each named by the function that made it (docs/the-bottle.md, "Recordings for the stepper"). */
  microtasks?: string[];
  /** Stage 3: the `process.nextTick` callbacks queued now, each named by this package's function that queued it, else "Node". */
  nextTicks?: string[];
  events: StepEvents;
}

/** A stage's crawl of one site, recorded. */
export interface Recording {
  stage: string;
  /** The name the page's stage picker gives it, when not the stage's ("exercise 7, your parts (generators)"); the recorder writes none. */
  title?: string;
  seed: number;
  /** The root URL crawled. */
  root: string;
  /** The source files the snapshots name, as lines, so the page shows the line that runs. */
  sources: Record<string, string[]>;
  steps: Snapshot[];
  /** True when the recording stopped at its step limit (`maxSteps`) before the crawl ended. */
  truncated: boolean;
}
