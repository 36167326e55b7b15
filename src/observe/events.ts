/**
 * Trace events: what a crawl reports about its own waiting, when
 * `CrawlOptions.trace` is given. Each stage speaks its own vocabulary
 * (stage 1 selects and dispatches, stage 2 steps Tasks, stage 3's workers take
 * and await); the fetch events are common to all three, so one timeline can
 * draw any stage.
 *
 * The stages publish plain-data messages (`channels.ts`); `traceCrawl`
 * (`trace.ts`) turns one crawl's messages into these events. Every event has
 * `t`, milliseconds since the crawl started, read from the monotonic clock
 * (`performance.now()`) as each message is published, and `stage`.
 *
 * @module
 */

import type { QueueCounters, StageName } from "./channels.js";

export type { KnownStage, QueueCounters, StageName } from "./channels.js";

/** Fields every trace event has. */
export interface TraceBase {
  /** Milliseconds since the crawl started (monotonic clock). */
  t: number;
  /** The stage that emitted the event. */
  stage: StageName;
}

/**
 * An attempt at a URL starts, in slot `slot`: in stages 1 and 2 a number the
 * URL holds from this event to its `fetch-end` (a retry gets the same one
 * back), in stage 3 the number of the worker that took the URL. The
 * subscriber numbers them from 0, using no more numbers than URLs were held
 * at once.
 */
export interface FetchStartEvent extends TraceBase, QueueCounters {
  type: "fetch-start";
  url: string;
  slot: number;
  attempt: number;
}

/**
 * The attempt's connection is ready. Stage 3: the request's headers are
 * about to be written to a socket (undici's `undici:client:sendHeaders`),
 * new or kept alive: undici says nothing per request about connecting, so
 * `connect` and `send` come together.
 */
export interface ConnectEvent extends TraceBase {
  type: "connect";
  url: string;
  slot: number;
}

/** The request's bytes were handed to the socket. */
export interface SendEvent extends TraceBase {
  type: "send";
  url: string;
  slot: number;
}

/**
 * The first byte of the response arrived. Stage 3: undici has parsed the
 * response's head (`undici:request:headers`); it publishes nothing at the
 * first byte itself.
 */
export interface FirstByteEvent extends TraceBase {
  type: "first-byte";
  url: string;
  slot: number;
}

/**
 * A chunk of the response was read: stages 1 and 2 count every byte read
 * (head included); stage 3 counts body bytes, one event per chunk undici
 * parsed (`undici:request:bodyChunkReceived`).
 */
export interface ReadEvent extends TraceBase {
  type: "read";
  url: string;
  slot: number;
  bytes: number;
}

/** The attempt ended: a response (`status`) or an error name. */
export interface FetchEndEvent extends TraceBase, QueueCounters {
  type: "fetch-end";
  url: string;
  slot: number;
  attempt: number;
  status: number | null;
  error: string | null;
  /** Why, in Node's words (`CODE: message`), when `error` is `TlsError`; else null or absent. */
  detail?: string | null;
}

/** Stage 1: the selector reported `ready` keys. */
export interface SelectEvent extends TraceBase {
  type: "select";
  ready: number;
}

/**
 * Stage 1: the loop calls a registered callback. `socket` is the socket's
 * file number (`fileno`); `url` is the URL it fetches, null if no attempt
 * names it.
 */
export interface DispatchEvent extends TraceBase {
  type: "dispatch";
  callback: string;
  url: string | null;
  socket: number;
}

/** Stage 1 (and stage 2's loop): a timer callback runs. */
export interface TimerEvent extends TraceBase {
  type: "timer";
  callback: string;
}

/** Stage 2: a Task resumed its coroutine, which yielded `yielded` (null when it finished). */
export interface StepEvent extends TraceBase {
  type: "step";
  task: number;
  coroutine: string;
  yielded: string | null;
}

/** Stage 2: a Future got its result or exception. */
export interface ResolveEvent extends TraceBase {
  type: "resolve";
  future: number;
  label: string;
}

/** Stage 2: a Task was cancelled. */
export interface CancelEvent extends TraceBase {
  type: "cancel";
  task: number;
}

/**
 * Stage 3: worker `worker` took `url` from the queue. Workers are numbered
 * from 0 by the subscriber: a number is held from `take` to `done`.
 */
export interface TakeEvent extends TraceBase {
  type: "take";
  worker: number;
  url: string;
}

/** Stage 3: worker `worker` suspends at an `await` on `what`. */
export interface AwaitEvent extends TraceBase {
  type: "await";
  worker: number;
  url: string;
  what: string;
}

/** Stage 3: worker `worker` resumes after its `await`. */
export interface ResumeEvent extends TraceBase {
  type: "resume";
  worker: number;
  url: string;
}

/** Stage 3: worker `worker` finished `url` (called `taskDone()`). */
export interface DoneEvent extends TraceBase {
  type: "done";
  worker: number;
  url: string;
}

/** Any trace event: discriminate on `type`. */
export type TraceEvent =
  | FetchStartEvent
  | ConnectEvent
  | SendEvent
  | FirstByteEvent
  | ReadEvent
  | FetchEndEvent
  | SelectEvent
  | DispatchEvent
  | TimerEvent
  | StepEvent
  | ResolveEvent
  | CancelEvent
  | TakeEvent
  | AwaitEvent
  | ResumeEvent
  | DoneEvent;

/**
 * Wraps the caller's trace function so that one that throws is ignored:
 * tracing is for watching, and a broken watcher must not break a callback,
 * a Task step or a fetch (a channel subscriber that throws would surface as
 * an uncaught exception). `traceCrawl` hands every event to the wrapper,
 * never to `CrawlOptions.trace` itself.
 *
 * @remarks The same rule as for `onRecord`: the caller's code fails, the
 * crawl goes on.
 */
export function traceSafely(trace: (event: TraceEvent) => void): (event: TraceEvent) => void {
  return function traceIgnoringErrors(event: TraceEvent): void {
    try {
      trace(event);
    } catch {
      // The caller's trace function failed; the crawl goes on.
    }
  };
}
