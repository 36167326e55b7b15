/**
 * Trace events of the callback stage: each Fetcher's steps as fetch events,
 * and the loop's selects, dispatches and timers.
 *
 * @module
 */
import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { traceSafely } from "../observe/events.js";
import type { TraceEvent } from "../observe/events.js";
import type { EventLoop } from "./event-loop.js";
import type { Fetcher, FetcherStep } from "./fetcher.js";

/**
 * Turns what the Fetchers and the loop do into {@link TraceEvent}s for
 * `options.trace`. The Crawler makes one only when tracing, so an untraced
 * crawl pays nothing.
 *
 * A Fetcher reports bare steps ({@link FetcherStep}); the tracer adds the
 * time, the Fetcher's URL and slot, and, to `fetch-start` and `fetch-end`,
 * the queue's counters. It reads the Crawler's map of running Fetchers for
 * slots, counters and the URL behind a socket, and never changes it. Times
 * are milliseconds since the tracer was made, on the monotonic clock, for
 * the loop's events too. A trace function that throws is ignored: watching
 * must not break the crawl.
 *
 * @remarks Stage 1 has no queue: `queued` counts the URLs waiting for a free
 * slot, `unfinished` adds the Fetchers running, and `inFlight` is the
 * Fetchers running.
 */
export class CrawlTracer {
  private readonly start = performance.now();
  /** `options.trace`, wrapped by {@link traceSafely}. */
  private readonly trace: (event: TraceEvent) => void;

  constructor(
    trace: (event: TraceEvent) => void,
    /** The Crawler's running Fetchers and their slots. */
    private readonly running: ReadonlyMap<Fetcher, { readonly slot: number }>,
    /** How many URLs wait for a free slot right now. */
    private readonly waiting: () => number,
  ) {
    this.trace = traceSafely(trace);
  }

  /** Has `loop` report its selects, dispatches and timers too, timed from the same start. */
  watch(loop: EventLoop): void {
    loop.setTrace(this.trace, this.start, this.urlOfSocket);
  }

  /** A Fetcher's `onStep`: turns `step` into a trace event with the time, its slot and the counters. */
  readonly fetcherStep = (fetcher: Fetcher, step: FetcherStep): void => {
    const base = {
      t: performance.now() - this.start,
      stage: "callbacks" as const,
      url: fetcher.url,
      slot: this.running.get(fetcher)?.slot ?? -1,
    };
    const queued = this.waiting();
    const counters = { queued, unfinished: queued + this.running.size, inFlight: this.running.size };
    switch (step.type) {
      case "fetch-start":
        this.trace({ ...base, ...counters, type: step.type, attempt: fetcher.tries });
        break;
      case "fetch-end":
        this.trace({ ...base, ...counters, type: step.type, attempt: fetcher.tries, status: step.status, error: step.error });
        break;
      case "read":
        this.trace({ ...base, type: step.type, bytes: step.bytes });
        break;
      default:
        this.trace({ ...base, type: step.type });
    }
  };

  /** The URL of the running Fetcher that owns `socket`, for the loop's dispatch events. */
  private readonly urlOfSocket = (socket: Socket): string | null => {
    for (const fetcher of this.running.keys()) {
      if (fetcher.socket === socket) return fetcher.url;
    }
    return null;
  };
}
