/**
 * Trace events of the generator stage: the fetch events of each worker,
 * and the steps of each request.
 *
 * @module
 */
import type { FetchError } from "../crawl/records.js";
import { traceSafely } from "../observe/events.js";
import type { TraceEvent } from "../observe/events.js";
import type { EventLoop } from "./event-loop.js";
import type { JoinableQueue } from "./joinable-queue.js";
import type { RequestStep } from "./request.js";

/**
 * Turns what the workers do into {@link TraceEvent}s for the loop's trace.
 * The Tasks, Futures and timers report their own events to the loop; this
 * adds the crawl's fetch events and each request's steps, with the worker's
 * slot and, for `fetch-start` and `fetch-end`, the queue's counters.
 *
 * The trace belongs to the loop, not to the crawl: events go to whatever
 * trace the loop has, `options.trace` while the crawl is {@link attach}ed,
 * and each method does nothing when the loop has none. Times are the loop's
 * {@link EventLoop.traceTime}.
 *
 * @remarks In stages 1 and 3 the tracer holds `options.trace` itself; here
 * the loop holds it, because the Tasks and Futures report to the loop.
 */
export class CrawlTracer {
  /** The loop's own trace and its start, kept while the crawl's replaces them. */
  private saved: { trace: ((event: TraceEvent) => void) | null; start: number } | null = null;

  constructor(
    private readonly loop: EventLoop,
    /** The crawl's queue, for the counters. */
    private readonly queue: Pick<JoinableQueue<unknown>, "qsize" | "unfinishedTasks">,
    /** How many workers are inside `fetch()` right now. */
    private readonly inFlight: () => number,
  ) {}

  /**
   * Sends the loop's events to `trace` (wrapped by {@link traceSafely}) until
   * {@link detach}; with `null`, the loop keeps its own trace, if any.
   */
  attach(trace: ((event: TraceEvent) => void) | null): void {
    if (trace === null) return;
    this.saved = { trace: this.loop.trace, start: performance.now() - this.loop.traceTime() };
    this.loop.setTrace(traceSafely(trace));
  }

  /** Gives the loop back the trace it had before {@link attach}, with its start. */
  detach(): void {
    if (this.saved === null) return;
    this.loop.setTrace(this.saved.trace, this.saved.start);
    this.saved = null;
  }

  /** Attempt `attempt` at `url` starts in worker `slot`. */
  fetchStart(url: string, slot: number, attempt: number): void {
    this.emitFetch({ type: "fetch-start", url, slot, attempt });
  }

  /** The attempt ended with a response (`status`) or an error name. */
  fetchEnd(url: string, slot: number, attempt: number, status: number | null, error: FetchError | null): void {
    this.emitFetch({ type: "fetch-end", url, slot, attempt, status, error });
  }

  /** The `onStep` of one URL's requests, each step an event with the URL and slot; null when the loop is not traced. */
  requestSteps(url: string, slot: number): ((step: RequestStep) => void) | null {
    const loop = this.loop;
    if (loop.trace === null) return null;
    return function traceStep(step: RequestStep): void {
      loop.trace?.({ ...step, url, slot, t: loop.traceTime(), stage: "generators" });
    };
  }

  /** Reports a fetch event with the time and the queue's counters, when the loop is traced. */
  private emitFetch(
    event:
      | { type: "fetch-start"; url: string; slot: number; attempt: number }
      | { type: "fetch-end"; url: string; slot: number; attempt: number; status: number | null; error: string | null },
  ): void {
    const trace = this.loop.trace;
    if (trace === null) return;
    const counters = { queued: this.queue.qsize(), unfinished: this.queue.unfinishedTasks, inFlight: this.inFlight() };
    trace({ ...event, ...counters, t: this.loop.traceTime(), stage: "generators" });
  }
}
