/**
 * The stepper's recorder: runs a stage's real, unchanged `crawl()` in the
 * bottle (src/bottle: simulated network, virtual clock, a seed) and takes a
 * whole {@link Snapshot} of the loop, the Tasks, the queue, the timers and
 * the crawl core at each step, so that the page (stepper/page/) draws what
 * the real code held and Back is exact.
 *
 * How it sees without changing a lesson file:
 * - the stages' own messages on `coroutine-crawler:loop` and
 *   `coroutine-crawler:crawl` (src/observe/channels.ts), whose subscribers
 *   run synchronously, inside the dispatch, the Task step or the worker that
 *   publishes: the stack captured there is the real one;
 * - the loop, the queue and the core, found as they start (their
 *   `runForever`, `putNowait` and `begin`, wrapped for the recording only),
 *   and read by their plain fields;
 * - a few functions wrapped on the instance, for the moments no message marks:
 *   an iteration's end (the loop's `runOnce`/`turn`), the ready keys of a
 *   `select()`, each callback of stage 2's ready batch, a Future yielded
 *   (the stack at the yield, with the generator's frames);
 * - V8, through `node:inspector`, for where a function begins and where a
 *   paused generator stands; `node:async_hooks` for stage 3's promise jobs
 *   and `nextTick`s.
 * Every wrapper is undone when the recording ends.
 *
 * Same seed, stage and site → the same recording, byte for byte: sockets,
 * timers, Futures, Tasks and workers are numbered from 1 in each recording.
 *
 * @module
 */
import { createHook, type AsyncHook } from "node:async_hooks";
import diagnostics_channel from "node:diagnostics_channel";
import { promiseHooks } from "node:v8";
import { EventLoop as CallbacksLoop } from "../src/callbacks/event-loop.js";
import { SimulatedNetwork } from "../src/bottle/network.js";
import { scenarioFor } from "../src/bottle/scenario.js";
import { simulate, type SiteBuilder } from "../src/bottle/simulate.js";
import type { NetworkOptions } from "../src/bottle/network.js";
import { CrawlCore, type Job } from "../src/crawl/core.js";
import type { CrawlOptions } from "../src/crawl/options.js";
import { EventLoop as GeneratorsLoop } from "../src/generators/event-loop.js";
import { Future } from "../src/generators/futures.js";
import { JoinableQueue as GeneratorsQueue } from "../src/generators/queues.js";
import { JoinableQueue as AsyncQueue } from "../src/asyncawait/joinable-queue.js";
import type { CrawlMessage, LoopMessage } from "../src/observe/channels.js";
import { demoSiteDefinition } from "../src/site/demo-site.js";
import { captureStack, Inspector, parseStack, sourcesOf } from "./inspect.js";
import type { CoreView, FutureView, PlannedWakeup, QueueView, Recording, SelectorKey, Snapshot, SourceLine, StepEvents, TaskView, TimerEntry } from "./recording.js";

/** The stages the recorder runs. */
export type RecordedStage = "callbacks" | "generators" | "asyncawait";

/** What {@link recordCrawl} records. */
export interface RecordOptions {
  stage: RecordedStage;
  /** Seeds the simulated network (and the crawl's random source). */
  seed: number;
  /** The sites and roots (see src/bottle/world.ts); default: the demo site ({@link demoSite}). */
  site?: SiteBuilder;
  /** True: the seed's random scenario instead (`scenarioFor(seed)`, src/bottle/scenario.ts: its site, options and network, as `npm run simulate` runs it). */
  scenario?: boolean;
  /** The network's latency, bandwidth and faults; default {@link DEMO_NETWORK}. */
  network?: Omit<NetworkOptions, "seed">;
  /** Crawl options over the site's (`signal` is the recorder's). */
  options?: Omit<CrawlOptions, "network" | "trace" | "signal">;
  /** Steps recorded at most (default {@link DEFAULT_MAX_STEPS}); at the limit the crawl is aborted and the recording ends `truncated`. */
  maxSteps?: number;
}

/** The step limit when none is given: a demo-site crawl of any stage fits (measured in docs/the-bottle.md, "Recordings"). */
export const DEFAULT_MAX_STEPS = 2_000;

/** The demo crawl's network: a 2 ms latency, 1,000 bytes per ms, no faults, so each step is one the lesson explains. */
export const DEMO_NETWORK: Omit<NetworkOptions, "seed"> = { latencyMs: 2, bytesPerMs: 1_000, faults: { split: 0, drip: 0, reset: 0, stall: 0 } };

/** The demo site's origin in the bottle. */
export const DEMO_ORIGIN = "http://demo.test";

/**
 * The demo site (src/site/demo-site.ts) served in the bottle at
 * {@link DEMO_ORIGIN}, crawled with `robots` on (so its host line and its
 * `robots.txt` show) and three tasks (so concurrency shows and the views stay
 * readable).
 */
export function demoSite(): SiteBuilder {
  return async function demoInTheBottle(world) {
    const demo = await world.synthetic(DEMO_ORIGIN, demoSiteDefinition());
    return { roots: demo.site.url, options: { robots: true, maxTasks: 3 } };
  };
}

/**
 * Records one crawl of `stage` in the bottle, a whole snapshot per step:
 * stage 1 each dispatched callback and each timer (`callback`) and each
 * iteration's end (`iteration`); stage 2 each callback of the ready batch
 * (`callback`), each Task step (`task-step`) and each iteration's end;
 * stage 3 each await and resumption of a worker (`await`) and each job
 * taken and done (`worker-event`).
 *
 * @throws TypeError for an unknown stage, a seed that is not an integer, or a `maxSteps` that is not a positive integer.
 * @throws RecordingBusyError while another recording runs in this process.
 * @example
 * const recording = await recordCrawl({ stage: "generators", seed: 1 });
 * console.log(recording.steps.length, recording.steps[10]?.label);
 */
export async function recordCrawl(options: RecordOptions): Promise<Recording> {
  const { stage, seed } = options;
  if (stage !== "callbacks" && stage !== "generators" && stage !== "asyncawait") throw new TypeError(`Expected \`stage\` to be callbacks, generators or asyncawait, got ${JSON.stringify(stage)}`);
  if (!Number.isSafeInteger(seed)) throw new TypeError(`Expected \`seed\` to be an integer, got ${String(seed)}`);
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  if (!Number.isSafeInteger(maxSteps) || maxSteps < 1) throw new TypeError(`Expected \`maxSteps\` to be a positive integer, got ${String(maxSteps)}`);
  if (recording) throw new RecordingBusyError("recordCrawl() is recording already: one recording at a time, since the bottle's clock takes over the process's timers");
  recording = true;
  const controller = new AbortController();
  const recorder = new Recorder(maxSteps, function abortAtTheLimit() { queueMicrotask(function abort() { controller.abort(); }); });
  const observer = stage === "callbacks" ? new CallbacksObserver(recorder) : stage === "generators" ? new GeneratorsObserver(recorder) : new AsyncAwaitObserver(recorder);
  recorder.observer = observer;
  const patches = new Patches();
  let root = "";
  try {
    recorder.install(patches);
    observer.install(patches);
    const scenario = options.scenario === true && options.site === undefined ? scenarioFor(seed) : null;
    const site = options.site ?? scenario?.site ?? demoSite();
    const rootsOf: SiteBuilder = async function siteWithItsRoot(world) {
      const built = await site(world);
      root = typeof built.roots === "string" ? built.roots : (built.roots[0] ?? "");
      return built;
    };
    const simulation = await Promise.race([
      simulate({ seed, stage, site: rootsOf, network: options.network ?? scenario?.network ?? DEMO_NETWORK, options: { ...scenario?.options, ...options.options, signal: controller.signal }, trace: false }),
      recorder.givenUp,
    ]);
    if (simulation !== null) recorder.step("end", `The crawl ends: ${simulation.result.records.length} records in ${simulation.virtualMs} virtual ms`, [], null);
  } catch (error) {
    recorder.step("end", `The crawl failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`, error instanceof Error ? parseStack(error.stack ?? "") : [], null);
  } finally {
    observer.close();
    patches.restore();
    recorder.close();
    recording = false;
  }
  return { stage, seed, root, sources: sourcesOf(recorder.files), steps: recorder.steps, truncated: recorder.truncated };
}

/** A second {@link recordCrawl} while one runs. */
export class RecordingBusyError extends Error {
  override readonly name = "RecordingBusyError";
}

let recording = false;

/** A plain view of an object's fields, private ones included: the recorder reads, it never writes through it. */
type Fields = Record<string | symbol, unknown>;

function fieldsOf(object: object): Fields {
  return object as Fields;
}

/** Functions and methods wrapped for one recording, and put back after it. */
class Patches {
  private readonly undo: Array<() => void> = [];

  wrap(target: object, key: string | symbol, wrapper: (original: (...args: never[]) => unknown) => (...args: never[]) => unknown): void {
    const fields = fieldsOf(target);
    const own = Object.hasOwn(target, key);
    const original = fields[key] as (...args: never[]) => unknown;
    fields[key] = wrapper(original);
    this.undo.push(function putBack() {
      if (own) fields[key] = original;
      else delete fields[key];
    });
  }

  restore(): void {
    for (const undo of this.undo.reverse()) undo();
    this.undo.length = 0;
  }
}

/** Numbers things from 1 in the order a recording first meets them. */
class Numbering {
  private readonly numbers = new Map<unknown, number>();

  of(thing: unknown): number {
    let number = this.numbers.get(thing);
    if (number === undefined) {
      number = this.numbers.size + 1;
      this.numbers.set(thing, number);
    }
    return number;
  }
}

/** A stage's part of the recording: what it watches, and the views it adds to each snapshot. */
interface StageObserver {
  install(patches: Patches): void;
  views(): Partial<Snapshot>;
  close(): void;
}

/** What every stage shares: the steps, the core, the sockets, the immediates and the virtual clock. */
class Recorder {
  readonly steps: Snapshot[] = [];
  truncated = false;
  iterations = 0;
  observer: StageObserver | null = null;
  core: CrawlCore | null = null;
  readonly inspector = new Inspector();
  readonly files = new Set<string>();
  /** The client sockets the network opened, in order, with their names. */
  readonly sockets: Array<{ socket: object; name: string }> = [];
  readonly immediates = new Set<NodeJS.Immediate>();
  readonly timerNumbers = new Numbering();
  /** Resolves with null when a crawl past its step limit will not stop: the recording ends without it. */
  readonly givenUp: Promise<null>;
  private giveUp: (value: null) => void = noop;
  /** The last reading of {@link Recorder.clock}, and the one it keeps from the end step on. */
  private lastClock: number | null = null;
  private frozenClock: number | null = null;
  /** The same for the fake timers' own clock (`setTimeout.clock.now`), which {@link Recorder.clockNow} reads. */
  private lastTimerClock: number | null = null;
  private frozenTimerClock: number | null = null;
  private readonly jobs = new Set<Job>();
  private recordsSeen = 0;
  private startedAt = 0;
  /** Virtual ms at the end: the sites close and the clock drains after the crawl, which is no step of it. */
  private ended: number | null = null;
  private afterLimit = 0;
  private readonly pending: Required<Pick<StepEvents, "futuresResolved" | "tasksDone">> = { futuresResolved: [], tasksDone: [] };

  constructor(
    private readonly maxSteps: number,
    private readonly atLimit: () => void,
  ) {
    const recorder = this;
    this.givenUp = new Promise(function waitToGiveUp(resolve) { recorder.giveUp = resolve; });
  }

  install(patches: Patches): void {
    const recorder = this;
    patches.wrap(CrawlCore.prototype, "begin", function wrapBegin(original) {
      return function begin(this: CrawlCore, ...args: never[]) {
        recorder.watchCore(this);
        return original.apply(this, args);
      };
    });
    patches.wrap(SimulatedNetwork.prototype, "connect", function wrapConnect(original) {
      return function connect(this: SimulatedNetwork, ...args: never[]) {
        const socket = original.apply(this, args) as object;
        const address = args[0] as unknown as { host: string; port: number };
        recorder.sockets.push({ socket, name: `socket ${recorder.sockets.length + 1} (${address.host}:${address.port})` });
        return socket;
      };
    });
    patches.wrap(globalThis, "setImmediate", function wrapSetImmediate(original) {
      return function setImmediate(...args: never[]) {
        const immediate = original(...args) as NodeJS.Immediate;
        recorder.immediates.add(immediate);
        return immediate;
      };
    });
  }

  /** The crawl's core: its jobs handed out are kept (`next()`, wrapped on this core only) for the jobs-out view. */
  private watchCore(core: CrawlCore): void {
    if (this.core !== null) return;
    this.core = core;
    this.startedAt = performance.now();
    const jobs = this.jobs;
    const next = core.next;
    fieldsOf(core)["next"] = function nextJob(this: CrawlCore): Job | null {
      const job = next.call(this);
      if (job !== null) jobs.add(job);
      return job;
    };
  }

  /** Virtual ms since the crawl began. */
  now(): number {
    if (this.ended !== null) return this.ended;
    return this.core === null ? 0 : round(performance.now() - this.startedAt);
  }

  /**
   * The process's `performance.now()` that due times are read against: the
   * bottle's virtual clock while the crawl runs, and the last step's reading
   * at the end step, when the bottle may have handed the real clock back (a
   * cut recording's timers would read off real time).
   */
  clock(): number {
    if (this.frozenClock !== null) return this.frozenClock;
    this.lastClock = performance.now();
    return this.lastClock;
  }

  /** The socket's name in this recording (`socket 2 (demo.test:80)`). */
  socketName(socket: object): string {
    return this.sockets.find(function same(each) { return each.socket === socket; })?.name ?? "a socket";
  }

  resolved(future: string): void {
    this.pending.futuresResolved.push(future);
  }

  taskDone(task: string): void {
    this.pending.tasksDone.push(task);
  }

  /** Takes a whole snapshot now; past the limit, counts what it does not take, and gives up on a crawl that will not stop. */
  step(kind: string, label: string, stack: SourceLine[], next: SourceLine | null): void {
    if (kind === "end") {
      this.ended ??= this.steps.at(-1)?.now ?? 0;
      this.frozenClock ??= this.lastClock ?? performance.now();
      this.frozenTimerClock ??= this.lastTimerClock;
    }
    if (this.steps.length >= this.maxSteps && kind !== "end") {
      this.afterLimit += 1;
      if (this.afterLimit > 100_000) this.giveUp(null);
      return;
    }
    for (const line of stack) this.files.add(line.file);
    if (next !== null) this.files.add(next.file);
    const views = this.observer?.views() ?? {};
    for (const task of views.tasks ?? []) if (task.pausedAt !== null) this.files.add(task.pausedAt.file);
    const snapshot: Snapshot = { index: this.steps.length, kind, label, now: this.now(), iterations: this.iterations, ...views, core: this.coreView(), stack, next, events: this.events(kind) };
    this.steps.push(snapshot);
    if (this.steps.length === this.maxSteps && kind !== "end") {
      this.truncated = true;
      this.atLimit();
    }
  }

  private events(kind: string): StepEvents {
    const events: StepEvents = {};
    if (kind === "callback" || kind === "task-step") events.dispatch = true;
    if (this.pending.futuresResolved.length > 0) events.futuresResolved = this.pending.futuresResolved.splice(0);
    const records = this.core?.records ?? [];
    if (records.length > this.recordsSeen) events.fetched = records.slice(this.recordsSeen).map(function urlOf(record) { return record.url; });
    this.recordsSeen = records.length;
    if (this.pending.tasksDone.length > 0) events.tasksDone = this.pending.tasksDone.splice(0);
    return events;
  }

  private coreView(): CoreView {
    const core = this.core;
    if (core === null) return { jobsOut: [], hosts: [], seen: 0, todo: 0, recorded: 0 };
    const now = this.clock();
    const view = core.view();
    const jobsOut: CoreView["jobsOut"] = [];
    for (const job of this.jobs) {
      if (job.state === "finished") this.jobs.delete(job);
      else jobsOut.push({ url: job.kind === "wait" ? `wait ${round(job.until - now)} ms` : job.url, state: job.kind === "wait" ? "waiting" : job.state });
    }
    const hosts = view.hosts.map(function hostView(host) {
      return { origin: host.origin, waiting: host.waiting, inFlight: host.inFlight, nextStartInMs: host.nextStart > now ? round(host.nextStart - now) : null };
    });
    return { jobsOut, hosts, seen: view.seen, todo: view.todo, recorded: view.recorded };
  }

  /** The virtual clock's pending timers (fake-timers' clock, which the bottle installs on `setTimeout`). */
  virtualTimers(): Array<{ func: unknown; callAt: number; id: number }> {
    const clock = (globalThis.setTimeout as unknown as { clock?: { now: number; timers?: Map<number, { func: unknown; callAt: number; id: number }> } }).clock;
    return clock?.timers === undefined ? [] : [...clock.timers.values()];
  }

  /** The virtual clock's time, in ms. */
  clockNow(): number {
    if (this.frozenTimerClock !== null) return this.frozenTimerClock;
    this.lastTimerClock = (globalThis.setTimeout as unknown as { clock?: { now: number } }).clock?.now ?? this.lastTimerClock ?? 0;
    return this.lastTimerClock;
  }

  /**
   * The wake-ups a hand-made loop has planned in Node: the immediates and
   * virtual timeouts whose callback is one of `iteration` (the loop's
   * `runOnce` or `turn`), each with why.
   */
  planned(iteration: ReadonlySet<unknown>, heap: TimerEntry[], why: () => string): PlannedWakeup[] {
    const planned: PlannedWakeup[] = [];
    for (const immediate of this.immediates) {
      const fields = fieldsOf(immediate);
      if (fields["_destroyed"] === true) this.immediates.delete(immediate);
      else if (iteration.has(fields["_onImmediate"])) planned.push({ kind: "setImmediate", ms: 0, why: why() });
    }
    const now = this.clockNow();
    for (const timer of this.virtualTimers()) {
      if (!iteration.has(timer.func)) continue;
      const ms = round(timer.callAt - now);
      const due = heap.find(function live(each) { return !each.cancelled; });
      const meant = due !== undefined && Math.abs(Math.min(2 ** 31 - 1, Math.max(0, due.dueInMs)) - ms) < 1;
      planned.push({ kind: "setTimeout", ms, why: meant && due !== undefined ? `sleep ${ms} ms until timer ${due.id} (${due.name})` : `sleep ${ms} ms: no timer of the heap is due then` });
    }
    return planned;
  }

  /** A hand-made loop's timer heap, in the heap array's order. */
  heapOf(loop: object): TimerEntry[] {
    const heap = fieldsOf(loop)["timers"] as object | undefined;
    const items = heap === undefined ? [] : ((fieldsOf(heap)["items"] as Array<{ when: number; sequence: number; callback: { name: string }; cancelled(): boolean }> | undefined) ?? []);
    const now = this.clock();
    const numbers = this.timerNumbers;
    return items.map(function timerEntry(timer) {
      return { id: numbers.of(timer), dueInMs: round(timer.when - now), seq: timer.sequence, cancelled: timer.cancelled(), name: timer.callback.name || "anonymous" };
    });
  }

  /** A selector's keys (the sockets registered, in the order the network opened them) and candidates. */
  selectorOf(selector: object, lastReady: NonNullable<Snapshot["selector"]>["lastReady"]): NonNullable<Snapshot["selector"]> {
    const keys: SelectorKey[] = [];
    const getKey = fieldsOf(selector)["getKey"] as (socket: object) => { events: number; data: { name: string } } | undefined;
    for (const { socket, name } of this.sockets) {
      const key = getKey.call(selector, socket);
      if (key !== undefined) keys.push({ socket: name, events: eventsOf(key.events), callback: key.data.name || "anonymous" });
    }
    const candidates = [...((fieldsOf(selector)["candidates"] as Set<object> | undefined) ?? [])].map((socket) => this.socketName(socket));
    return { keys, candidates, lastReady };
  }

  close(): void {
    this.inspector.close();
    this.giveUp(null);
  }
}

function noop(): void {}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function eventsOf(mask: number): ("read" | "write")[] {
  const events: ("read" | "write")[] = [];
  if (mask & 1) events.push("read");
  if (mask & 2) events.push("write");
  return events;
}

/** A ready key as the recorder reads it. */
interface ReadyKey {
  socket: object;
  data: (...args: never[]) => unknown;
}

/**
 * Wraps the selector's `select()` (on this selector only) so that each
 * iteration's ready list is known: `selected` gets the list as it fills,
 * `dispatching` each key before its callback runs.
 */
function watchSelect(selector: object, recorder: Recorder, selected: (ready: NonNullable<NonNullable<Snapshot["selector"]>["lastReady"]>) => void, dispatching: (key: ReadyKey) => void): void {
  const fields = fieldsOf(selector);
  if (typeof fields["select"] !== "function") return;
  const select = fields["select"] as (onReady: (key: never, mask: number) => void) => number;
  fields["select"] = function selectReady(onReady: (key: never, mask: number) => void): number {
    const ready: { socket: string; events: ("read" | "write")[] }[] = [];
    selected(ready);
    return select.call(selector, function readyKey(key: never, mask: number) {
      const readyKey = key as unknown as ReadyKey;
      ready.push({ socket: recorder.socketName(readyKey.socket), events: eventsOf(mask) });
      dispatching(readyKey);
      onReady(key, mask);
    });
  };
}

function subscribe(name: string, onMessage: (message: unknown) => void): () => void {
  diagnostics_channel.subscribe(name, onMessage);
  return function unsubscribe() { diagnostics_channel.unsubscribe(name, onMessage); };
}

/**
 * Stage 1: a step at each dispatched callback and each timer (the `dispatch`
 * and `timer` messages of the loop), and at each iteration's end (its
 * `runOnce`, wrapped), with the selector, the heap and the wake-up planned.
 */
class CallbacksObserver implements StageObserver {
  private loop: CallbacksLoop | null = null;
  /** The loop's own iteration, the line that runs next when a wake-up is planned. */
  private runOnce: () => void = noop;
  private readonly iteration = new Set<unknown>();
  private lastReady: { socket: string; events: ("read" | "write")[] }[] | null = null;
  private key: ReadyKey | null = null;
  private timer: { callback: (...args: never[]) => unknown } | null = null;
  private unsubscribe: () => void = noop;

  constructor(private readonly recorder: Recorder) {}

  install(patches: Patches): void {
    const observer = this;
    patches.wrap(CallbacksLoop.prototype, "runForever", function wrapRunForever(original) {
      return function runForever(this: CallbacksLoop, ...args: never[]) {
        if (observer.loop === null) observer.attach(this);
        return original.apply(this, args);
      };
    });
    this.unsubscribe = subscribe("coroutine-crawler:loop", function onLoop(message) { observer.onLoop(message as LoopMessage); });
  }

  private attach(loop: CallbacksLoop): void {
    this.loop = loop;
    const observer = this;
    const recorder = this.recorder;
    const fields = fieldsOf(loop);
    // A learner's loop without these fields is recorded by its messages alone: nothing of it is wrapped.
    if (typeof fields["runOnce"] !== "function" || typeof fields["runTimer"] !== "function") return;
    const runOnce = fields["runOnce"] as () => void;
    this.runOnce = runOnce;
    const iterate = function iterate(): void {
      recorder.iterations += 1;
      observer.lastReady = null;
      try {
        runOnce();
      } finally {
        observer.iterationEnds();
      }
    };
    fields["runOnce"] = iterate;
    this.iteration.add(runOnce).add(iterate);
    watchSelect(loop.selector, recorder, function selected(ready) { observer.lastReady = ready; }, function dispatching(key) { observer.key = key; });
    const runTheTimer = fields["runTimer"] as (timer: never) => void;
    fields["runTimer"] = function runTimer(timer: never): void {
      observer.timer = timer;
      runTheTimer.call(loop, timer);
    };
  }

  private onLoop(message: LoopMessage): void {
    const { loop, recorder } = this;
    if (loop === null || message.loop !== loop.id) return;
    if (message.type === "dispatch" && this.key !== null) {
      const ready = this.lastReady?.at(-1);
      recorder.step("callback", `${ready?.socket ?? "a socket"} is ready to ${ready?.events.join(" and ") ?? "read"}: the loop calls ${message.callback}`, captureStack(), recorder.inspector.functionAt(this.key.data));
    } else if (message.type === "timer" && this.timer !== null) {
      const id = recorder.timerNumbers.of(this.timer);
      recorder.step("callback", `timer ${id} is due: the loop calls ${message.callback}`, captureStack(), recorder.inspector.functionAt(this.timer.callback));
    }
  }

  private iterationEnds(): void {
    const loop = this.loop as CallbacksLoop;
    const planned = this.views().timers?.planned ?? [];
    const plan = planned.length === 0 ? (loop.isRunning() ? "sleeps until a socket event" : "has stopped") : planned.map(function said(each) { return each.kind === "setTimeout" ? `plans setTimeout(runOnce, ${each.ms})` : "plans setImmediate(runOnce)"; }).join(" and ");
    const ready = this.lastReady?.length ?? 0;
    this.recorder.step("iteration", `Iteration ${this.recorder.iterations} ends (${ready} socket${ready === 1 ? "" : "s"} ready): the loop ${plan}`, captureStack(), planned.length === 0 ? null : this.recorder.inspector.functionAt(this.runOnce));
  }

  views(): Partial<Snapshot> {
    const loop = this.loop;
    if (loop === null) return {};
    const recorder = this.recorder;
    const heap = recorder.heapOf(loop);
    const selector = recorder.selectorOf(loop.selector, this.lastReady);
    const why = function why(): string {
      if (selector.candidates.length > 0) return "sockets were ready: select again at once (level-triggered)";
      const due = heap.find(function live(each) { return !each.cancelled && each.dueInMs <= 0; });
      return due !== undefined ? `timer ${due.id} (${due.name}) is due` : "woken: a socket event, a new timer, or stop()";
    };
    return { selector, timers: { heap, planned: recorder.planned(this.iteration, heap, why) } };
  }

  close(): void {
    this.unsubscribe();
  }
}

/** A Future's done callback on its way to the loop: what it calls, and the Future that is done. */
interface DoneCallback {
  fn: unknown;
  future: object;
}

/** Where a generator stood when it yielded a Future: the stack then, innermost first. */
type YieldStack = SourceLine[];

/**
 * Stage 2: a step before each callback of the ready batch (the batch's
 * iterator, set on the batch when the loop takes it), at each Task step (the
 * `step` message, with the stack at the Future's yield when there was one:
 * the generator's frames on it), and at each iteration's end (`turn`).
 */
class GeneratorsObserver implements StageObserver {
  private loop: GeneratorsLoop | null = null;
  /** The loop's own turn, the line that runs next when a wake-up is planned. */
  private turn: () => void = noop;
  private queue: GeneratorsQueue<Job> | null = null;
  private readonly iteration = new Set<unknown>();
  private batch: unknown[] | null = null;
  private batchAt = 0;
  private lastYield: YieldStack | null = null;
  private lastYielded: object | null = null;
  private lastReady: { socket: string; events: ("read" | "write")[] }[] | null = null;
  private running: object | null = null;
  private readonly paused = new WeakMap<object, SourceLine | null>();
  private readonly futureNumbers = new Numbering();
  private unsubscribe: () => void = noop;
  /** The done callback a Future is handing to `callSoon` right now (its `schedule`), and whose it is. */
  private scheduling: DoneCallback | null = null;
  /** Each `runDoneCallback` closure the loop holds, by what it will call: a Task's `wakeUp`, most often. */
  private readonly doneCallbacks = new WeakMap<object, DoneCallback>();

  constructor(private readonly recorder: Recorder) {}

  install(patches: Patches): void {
    const observer = this;
    patches.wrap(GeneratorsLoop.prototype, "runForever", function wrapRunForever(original) {
      return function runForever(this: GeneratorsLoop, ...args: never[]) {
        if (observer.loop === null) observer.attach(this);
        return original.apply(this, args);
      };
    });
    patches.wrap(GeneratorsQueue.prototype, "putNowait", function wrapPutNowait(original) {
      return function putNowait(this: GeneratorsQueue<Job>, ...args: never[]) {
        observer.queue ??= this;
        return original.apply(this, args);
      };
    });
    // A Future hands each done callback to the loop inside a closure of its own
    // (`runDoneCallback`): remember what each closure calls, to name it by the Task it wakes.
    if (typeof fieldsOf(Future.prototype)["schedule"] === "function") patches.wrap(Future.prototype, "schedule", function wrapSchedule(original) {
      return function schedule(this: Future<unknown>, ...args: never[]) {
        observer.scheduling = { fn: args[0] as unknown, future: this };
        try {
          return original.apply(this, args);
        } finally {
          observer.scheduling = null;
        }
      };
    });
    // A step where a Future of the loop's is resolved, once its done callbacks are in the ready queue.
    if (typeof fieldsOf(Future.prototype)["finish"] === "function") patches.wrap(Future.prototype, "finish", function wrapFinish(original) {
      return function finish(this: Future<unknown>, ...args: never[]) {
        const result = original.apply(this, args);
        if (observer.loop !== null && fieldsOf(this)["loop"] === observer.loop && args[0] === "finished") observer.resolvedStep(this);
        return result;
      };
    });
    patches.wrap(GeneratorsLoop.prototype, "callSoon", function wrapCallSoon(original) {
      return function callSoon(this: GeneratorsLoop, ...args: never[]) {
        if (observer.scheduling !== null && typeof args[0] === "function") observer.doneCallbacks.set(args[0], observer.scheduling);
        return original.apply(this, args);
      };
    });
    patches.wrap(Future.prototype, Symbol.iterator, function wrapIterator(original) {
      return function* futureYielded(this: Future<unknown>): Generator<unknown, unknown, undefined> {
        if (!this.done()) {
          observer.lastYield = captureStack();
          observer.lastYielded = this;
        }
        return yield* original.call(this as never) as Generator<unknown, unknown, undefined>;
      };
    });
    this.unsubscribe = subscribe("coroutine-crawler:loop", function onLoop(message) { observer.onLoop(message as LoopMessage); });
  }

  private attach(loop: GeneratorsLoop): void {
    this.loop = loop;
    const observer = this;
    const recorder = this.recorder;
    const fields = fieldsOf(loop);
    // A learner's loop without these fields is recorded by its messages alone: nothing of it is wrapped.
    if (typeof fields["turn"] !== "function" || !Array.isArray(fields["ready"])) return;
    const turn = fields["turn"] as () => void;
    this.turn = turn;
    const turnOnce = function turnOnce(): void {
      recorder.iterations += 1;
      try {
        turn();
      } finally {
        observer.batch = null;
        observer.iterationEnds();
      }
    };
    fields["turn"] = turnOnce;
    this.iteration.add(turn).add(turnOnce);
    watchSelect(loop.selector, recorder, function selected(ready) { observer.lastReady = ready; }, noop);
    let current = fields["ready"] as unknown[];
    Object.defineProperty(loop, "ready", {
      configurable: true,
      enumerable: true,
      get() { return current; },
      set(next: unknown[]) {
        observer.takeBatch(current);
        current = next;
      },
    });
  }

  /** The loop takes its ready list as this iteration's batch: each callback's turn is a step. */
  private takeBatch(batch: unknown[]): void {
    if (!Array.isArray(batch)) return;
    this.batch = batch;
    this.batchAt = 0;
    const observer = this;
    Object.defineProperty(batch, Symbol.iterator, {
      configurable: true,
      value: function* eachCallback(this: unknown[]): Generator<unknown, void, undefined> {
        for (let i = 0; i < this.length; i++) {
          observer.batchAt = i + 1;
          observer.beforeCallback(this[i] as (...args: never[]) => unknown);
          yield this[i];
        }
      },
    });
  }

  private beforeCallback(callback: (...args: never[]) => unknown): void {
    this.lastYield = null;
    const task = this.taskStepping(callback);
    const next = task === null ? this.recorder.inspector.functionAt(callback) : this.pausedAt(task);
    this.recorder.step("callback", `The loop runs ${this.callbackName(callback)}`, captureStack(), next);
  }

  private onLoop(message: LoopMessage): void {
    const { loop, recorder } = this;
    if (loop === null || message.loop !== loop.id) return;
    if (message.type === "resolve") {
      recorder.resolved(`${message.label}#${this.futureNumbers.of(message.future)}`);
      return;
    }
    if (message.type !== "step") return;
    const task = loop.tasks.list().find(function withId(each) { return each.id === message.task; }) ?? null;
    const name = `Task ${message.coroutine}#${this.futureNumbers.of(message.task)}`;
    const atYield = this.lastYield;
    const yieldedFuture = this.lastYielded;
    this.lastYield = this.lastYielded = null;
    if (task !== null) this.paused.delete(task);
    if (task !== null && atYield?.[0] !== undefined) this.paused.set(task, atYield[0]);
    this.running = task;
    const stack = atYield ?? captureStack();
    if (message.yielded === null) {
      recorder.taskDone(name);
      recorder.step("task-step", `${name} steps: its coroutine ends`, stack, null);
    } else {
      const what = yieldedFuture !== null && atYield !== null ? this.futureName(yieldedFuture) : message.yielded;
      recorder.step("task-step", `${name} steps: its coroutine yields ${what}${atYield === null ? "" : " (the stack at its yield)"}`, stack, task === null ? null : this.pausedAt(task));
    }
    this.running = null;
  }

  /** A step where `future` has just been resolved: the code that resolved it is on the stack, its done callbacks in the ready queue. */
  private resolvedStep(future: object): void {
    const stack = captureStack();
    const resolver = stack.find(function outsideFutures(line) { return line.file !== "src/generators/futures.ts"; }) ?? null;
    this.recorder.step("resolve", `${this.futureName(future)} is resolved: its done callbacks wait in the ready queue`, stack, resolver);
  }

  private iterationEnds(): void {
    const loop = this.loop as GeneratorsLoop;
    const planned = this.views().timers?.planned ?? [];
    const plan = planned.length === 0 ? (loop.isRunning() ? "sleeps until a socket event or a callSoon" : "has stopped") : planned.map(function said(each) { return each.kind === "setTimeout" ? `plans setTimeout(turn, ${each.ms})` : "plans setImmediate(turn)"; }).join(" and ");
    this.recorder.step("iteration", `Iteration ${this.recorder.iterations} ends: the loop ${plan}`, captureStack(), planned.length === 0 ? null : this.recorder.inspector.functionAt(this.turn));
  }

  private tasks(): object[] {
    return this.loop === null ? [] : this.loop.tasks.list();
  }

  /** The Task whose step (or wake-up) this callback is, if any: directly, or through a Future's done-callback closure. */
  private taskStepping(callback: unknown): object | null {
    const target = (typeof callback === "function" && this.doneCallbacks.get(callback)?.fn) || callback;
    return this.tasks().find(function steps(task) { const fields = fieldsOf(task); return fields["step"] === target || fields["wakeUp"] === target; }) ?? null;
  }

  private callbackName(callback: (...args: never[]) => unknown): string {
    const done = this.doneCallbacks.get(callback);
    if (done !== undefined) return `${this.callbackName(done.fn as (...args: never[]) => unknown)} (${this.futureName(done.future)} is done)`;
    for (const task of this.tasks()) {
      const fields = fieldsOf(task);
      if (fields["step"] === callback) return `${this.futureName(task)}.step`;
      if (fields["wakeUp"] === callback) return `${this.futureName(task)}.wakeUp`;
    }
    return callback.name || "anonymous";
  }

  private futureName(future: object): string {
    const fields = fieldsOf(future);
    const name = `${String(fields["label"])}#${this.futureNumbers.of(fields["id"])}`;
    return this.tasks().includes(future) || typeof fields["step"] === "function" ? `Task ${name}` : name;
  }

  /**
   * Where the Task's coroutine is paused: the line of its last yield of a
   * Future (the innermost generator), else where V8 says its generator
   * stands (the outermost: a bare `yield`, as `sleep()`'s); asked once per step.
   */
  private pausedAt(task: object): SourceLine | null {
    const known = this.paused.get(task);
    if (known !== undefined) return known;
    const fields = fieldsOf(task);
    const coro = fields["coro"];
    const found = typeof coro === "object" && coro !== null ? this.recorder.inspector.generatorAt(coro, String(fields["label"])) : null;
    this.paused.set(task, found);
    return found;
  }

  views(): Partial<Snapshot> {
    const loop = this.loop;
    if (loop === null) return {};
    const recorder = this.recorder;
    const fields = fieldsOf(loop);
    const heap = recorder.heapOf(loop);
    const selector = recorder.selectorOf(loop.selector, this.lastReady);
    const ready: NonNullable<Snapshot["ready"]> = [];
    if (this.batch !== null) for (let i = this.batchAt; i < this.batch.length; i++) ready.push({ name: this.callbackName(this.batch[i] as () => void), thisIteration: true });
    for (const callback of (fields["ready"] as Array<() => void> | undefined) ?? []) ready.push({ name: this.callbackName(callback), thisIteration: false });
    const readyNow = ready.length;
    const why = function why(): string {
      if (readyNow > 0) return `${readyNow} callback${readyNow === 1 ? " is" : "s are"} ready`;
      const due = heap.find(function live(each) { return !each.cancelled && each.dueInMs <= 0; });
      return due !== undefined ? `timer ${due.id} (${due.name}) is due` : "woken: a socket event, a callSoon, a new timer, or stop()";
    };
    const futures = new Map<object, FutureView>();
    const tasks: TaskView[] = this.tasks().map((task) => {
      const taskFields = fieldsOf(task);
      const waitingOn = taskFields["waitingOn"];
      if (waitingOn instanceof Future) futures.set(waitingOn, this.futureView(waitingOn));
      const state = this.running === task ? "running" : waitingOn instanceof Future ? "waiting" : "ready";
      return { id: this.futureName(task).replace(/^Task /, ""), coroutine: String(taskFields["label"]), state, waitsOn: waitingOn instanceof Future ? this.futureName(waitingOn) : null, pausedAt: this.running === task ? null : this.pausedAt(task) };
    });
    const queue = this.queue === null ? null : this.queueView(this.queue, futures);
    return { selector, ready, timers: { heap, planned: recorder.planned(this.iteration, heap, why) }, tasks, futures: [...futures.values()], queue };
  }

  private futureView(future: object): FutureView {
    const fields = fieldsOf(future);
    const state = fields["state"] === "pending" ? "pending" : fields["state"] === "cancelled" ? "cancelled" : fields["failed"] === true ? "rejected" : "resolved";
    const callbacks = ((fields["callbacks"] as ReadonlyArray<(...args: never[]) => unknown> | undefined) ?? []).map((callback) => this.callbackName(callback));
    return { id: this.futureName(future), state, callbacks };
  }

  private queueView(queue: object, futures: Map<object, FutureView>): QueueView {
    const fields = fieldsOf(queue);
    const getters = fifoItems(fields["getters"]).filter(function pending(getter) { return getter instanceof Future && !getter.done(); });
    for (const getter of getters) futures.set(getter as object, this.futureView(getter as object));
    const join = fields["joinFuture"];
    if (join instanceof Future) futures.set(join, this.futureView(join));
    const joinWaiters = join instanceof Future ? ((fieldsOf(join)["callbacks"] as unknown[] | undefined)?.length ?? 0) : 0;
    return { items: fifoItems(fields["items"]).map(jobName), parkedGetters: getters.length, unfinished: Number(fields["unfinished"] ?? 0), joinWaiters };
  }

  close(): void {
    this.unsubscribe();
  }
}

/** The items of a BlockFifo (src/crawl/block-fifo.ts), oldest first. */
function fifoItems(fifo: unknown): unknown[] {
  if (typeof fifo !== "object" || fifo === null) return [];
  const fields = fieldsOf(fifo);
  const blocks = (fields["blocks"] as unknown[][] | undefined) ?? [];
  const items = blocks.flat().slice(Number(fields["head"] ?? 0));
  return items.slice(0, Number(fields["count"] ?? 0));
}

function jobName(job: unknown): string {
  const fields = fieldsOf(job as object);
  return fields["kind"] === "wait" ? "a wait" : String(fields["url"]);
}

/** A stage 3 worker, from the job it takes to the job done. */
interface Worker {
  number: number;
  url: string;
  state: string;
  waitsOn: string | null;
  pausedAt: SourceLine | null;
}

/**
 * Stage 3: a step at each worker event on `coroutine-crawler:crawl`: a job
 * taken, an attempt awaited (`fetch-start`: the worker awaits the client) and
 * resumed (`fetch-end`), a pause awaited and resumed, a job done. The
 * workers are numbered as `crawl --trace` numbers them (the lowest number
 * free when a job is taken); the idle ones are the getters parked in the
 * queue. Promise jobs and `nextTick`s: see {@link PromiseJobs}.
 */
class AsyncAwaitObserver implements StageObserver {
  private queue: AsyncQueue<Job> | null = null;
  private readonly workers = new Map<string, Worker>();
  private readonly free: number[] = [];
  private used = 0;
  private readonly jobs = new PromiseJobs();
  private unsubscribe: () => void = noop;

  constructor(private readonly recorder: Recorder) {}

  install(patches: Patches): void {
    const observer = this;
    patches.wrap(AsyncQueue.prototype, "putNowait", function wrapPutNowait(original) {
      return function putNowait(this: AsyncQueue<Job>, ...args: never[]) {
        observer.queue ??= this;
        return original.apply(this, args);
      };
    });
    this.unsubscribe = subscribe("coroutine-crawler:crawl", function onCrawl(message) { observer.onCrawl(message as CrawlMessage); });
    this.jobs.enable();
  }

  private onCrawl(message: CrawlMessage): void {
    const { recorder } = this;
    const core = recorder.core;
    // The core publishes crawl-start as it takes its id: before begin() returns, it reads 0.
    if (core === null || (message.crawl !== core.id && !(message.type === "crawl-start" && core.id === 0))) return;
    const stack = captureStack();
    const here = stack.find(function inStage(line) { return line.file.startsWith("src/asyncawait/") || line.file.startsWith("learn/"); }) ?? null;
    switch (message.type) {
      case "crawl-start":
        return recorder.step("worker-event", "The crawl begins: the core queues the roots; workers start as jobs come", stack, null);
      case "crawl-end":
        return recorder.step("worker-event", "The crawl ends: every worker has returned", stack, null);
      case "take": {
        const worker = this.take(message.url);
        worker.state = "running";
        worker.pausedAt = here;
        return recorder.step("worker-event", `Worker ${worker.number} takes ${message.url}`, stack, here);
      }
      case "fetch-start": {
        const worker = this.workerOf(message.url);
        worker.state = "awaiting";
        worker.waitsOn = `client.attempt(${message.url})`;
        worker.pausedAt = here;
        return recorder.step("await", `Worker ${worker.number} awaits the client: attempt ${message.attempt} at ${message.url}`, stack, here);
      }
      case "fetch-end": {
        const worker = this.workerOf(message.url);
        worker.state = "running";
        worker.waitsOn = null;
        worker.pausedAt = here;
        return recorder.step("await", `Worker ${worker.number} resumes: ${message.url} gave ${message.status ?? message.error ?? "nothing"}`, stack, here);
      }
      case "await": {
        const worker = this.workerOf(message.url);
        worker.state = "awaiting";
        worker.waitsOn = message.what;
        worker.pausedAt = here;
        return recorder.step("await", `Worker ${worker.number} awaits ${message.what} before ${message.url} again`, stack, here);
      }
      case "resume": {
        const worker = this.workerOf(message.url);
        worker.state = "running";
        worker.waitsOn = null;
        worker.pausedAt = here;
        return recorder.step("await", `Worker ${worker.number} resumes after its pause: ${message.url}`, stack, here);
      }
      case "done": {
        const worker = this.workerOf(message.url);
        this.workers.delete(message.url);
        this.free.push(worker.number);
        recorder.taskDone(`worker ${worker.number}`);
        return recorder.step("worker-event", `Worker ${worker.number} is done with ${message.url}: it takes the next job`, stack, here);
      }
      default:
        return;
    }
  }

  private take(url: string): Worker {
    const number = this.free.sort(function lowest(a, b) { return b - a; }).pop() ?? ++this.used;
    const worker: Worker = { number, url, state: "running", waitsOn: null, pausedAt: null };
    this.workers.set(url, worker);
    return worker;
  }

  private workerOf(url: string): Worker {
    return this.workers.get(url) ?? this.take(url);
  }

  views(): Partial<Snapshot> {
    const recorder = this.recorder;
    const tasks: TaskView[] = [...this.workers.values()].sort(function byNumber(a, b) { return a.number - b.number; }).map(function workerView(worker) {
      return { id: `worker ${worker.number}`, coroutine: "work", state: worker.state, waitsOn: worker.waitsOn, pausedAt: worker.pausedAt };
    });
    let queue: QueueView | null = null;
    if (this.queue !== null) {
      const fields = fieldsOf(this.queue);
      const getters = (fields["getters"] as unknown[] | undefined)?.length ?? 0;
      for (let i = 1; i <= getters; i++) tasks.push({ id: `idle ${i}`, coroutine: "work", state: "awaiting", waitsOn: "q.get()", pausedAt: null });
      queue = { items: fifoItems(fields["items"]).map(jobName), parkedGetters: getters, unfinished: Number(fields["unfinishedTasks"] ?? 0), joinWaiters: fields["finished"] === null || fields["finished"] === undefined ? 0 : 1 };
    }
    const now = recorder.clockNow();
    const numbers = recorder.timerNumbers;
    const heap: TimerEntry[] = recorder
      .virtualTimers()
      .sort(function byDue(a, b) { return a.callAt - b.callAt || a.id - b.id; })
      .map(function timerEntry(timer) {
        return { id: numbers.of(timer), dueInMs: round(timer.callAt - now), seq: numbers.of(timer), cancelled: false, name: (timer.func as { name?: string }).name || "anonymous" };
      });
    return { tasks, queue, timers: { heap, planned: [] }, microtasks: this.jobs.queued(), nextTicks: this.jobs.ticks() };
  }

  close(): void {
    this.unsubscribe();
    this.jobs.disable();
  }
}

/**
 * Stage 3's promise jobs and `nextTick`s, as far as V8's promise hooks
 * (`node:v8` `promiseHooks`) and `node:async_hooks` show them. A promise
 * job is queued when a promise settles and a promise chained to it (by
 * `then`, or the throwaway promise V8 makes for an `await` while promise
 * hooks are on) is waiting for it; it has run at the chained promise's
 * `before`. Shown: the jobs queued now whose promise was made in this
 * package's stage and library files (not undici's, Node's or the bottle's),
 * named by the function that made it (for an `await`, the async function
 * that awaits), oldest first. Not shown: jobs of promises made in packages
 * or in Node, and microtasks without a promise (`queueMicrotask`). A
 * `nextTick` is queued from its `TickObject`'s init to its `before`; every
 * tick is shown, named by this package's function that queued it, else "Node".
 */
class PromiseJobs {
  private stopPromiseHooks: (() => void) | null = null;
  private tickHook: AsyncHook | null = null;
  /** Chained promises of ours not yet run, by the promise they wait for. */
  private readonly children = new Map<Promise<unknown>, Array<Promise<unknown>>>();
  private readonly names = new WeakMap<Promise<unknown>, string>();
  private readonly settled = new WeakSet<Promise<unknown>>();
  private readonly queue = new Map<Promise<unknown>, string>();
  private readonly tickNames = new Map<number, string>();

  enable(): void {
    const jobs = this;
    this.stopPromiseHooks = <() => void>promiseHooks.createHook({
      init(promise, parent) {
        if (parent === undefined) return;
        const name = madeBy();
        if (name === null) return;
        jobs.names.set(promise, name);
        if (jobs.settled.has(parent)) return void jobs.queue.set(promise, name);
        const siblings = jobs.children.get(parent);
        if (siblings === undefined) jobs.children.set(parent, [promise]);
        else siblings.push(promise);
      },
      settled(promise) {
        jobs.settled.add(promise);
        jobs.queue.delete(promise);
        for (const child of jobs.children.get(promise) ?? []) {
          const name = jobs.names.get(child);
          if (name !== undefined && !jobs.settled.has(child)) jobs.queue.set(child, name);
        }
        jobs.children.delete(promise);
      },
      before(promise) {
        jobs.queue.delete(promise);
      },
    });
    this.tickHook = createHook({
      init(id, type) {
        if (type === "TickObject") jobs.tickNames.set(id, madeBy() ?? "Node");
      },
      before(id) {
        jobs.tickNames.delete(id);
      },
    }).enable();
  }

  /** The promise jobs queued now, oldest first. */
  queued(): string[] {
    return [...this.queue.values()];
  }

  /** The `nextTick` callbacks queued now, oldest first. */
  ticks(): string[] {
    return [...this.tickNames.values()];
  }

  disable(): void {
    this.stopPromiseHooks?.();
    this.stopPromiseHooks = null;
    this.tickHook?.disable();
    this.tickHook = null;
  }
}

/** The function of this package's stages or library that runs here (not the bottle's, the sites' or a package's), with its file and line; else null. */
function madeBy(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 12;
  const stack = new Error("made by").stack ?? "";
  Error.stackTraceLimit = limit;
  const line = parseStack(stack).find(function ours(each) {
    return (each.file.startsWith("src/") && !each.file.startsWith("src/bottle/") && !each.file.startsWith("src/site/")) || each.file.startsWith("learn/");
  });
  return line === undefined ? null : `${line.fn} (${line.file}:${line.line})`;
}
