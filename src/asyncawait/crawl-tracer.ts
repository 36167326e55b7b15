/**
 * Trace events of the async/await stage: where each worker takes a URL,
 * suspends, resumes and finishes, and the steps of each fetch.
 *
 * @module
 */
import type { FetchError } from "../crawl/records.js";
import { traceSafely } from "../observe/events.js";
import type { QueueCounters, TraceEvent } from "../observe/events.js";
import type { HttpObserver } from "./http-client.js";

/**
 * Turns what the workers do into {@link TraceEvent}s for `options.trace`.
 * The crawler holds one only when tracing, so an untraced crawl pays nothing.
 *
 * Times are milliseconds since the tracer was made, on the monotonic clock.
 * A trace function that throws is ignored: watching must not break the crawl.
 *
 * @remarks Stage 3's own events (`take`, `await`, `resume`, `done`) show the
 * suspension points that stage 2 shows as Task steps; the fetch events are
 * the ones every stage emits.
 */
export class CrawlTracer {
  private readonly start = performance.now();
  /** `options.trace`, wrapped by {@link traceSafely}. */
  private readonly trace: (event: TraceEvent) => void;

  constructor(
    trace: (event: TraceEvent) => void,
    /** The queue's counters right now. */
    private readonly counters: () => QueueCounters,
  ) {
    this.trace = traceSafely(trace);
  }

  /** Worker `worker` took `url` from the queue. */
  take(worker: number, url: string): void {
    this.emit({ t: this.now(), stage: "asyncawait", type: "take", worker, url });
  }

  /** Worker `worker` suspends at an `await` on `what`. */
  awaiting(worker: number, url: string, what: string): void {
    this.emit({ t: this.now(), stage: "asyncawait", type: "await", worker, url, what });
  }

  /** Worker `worker` resumed after its `await`. */
  resumed(worker: number, url: string): void {
    this.emit({ t: this.now(), stage: "asyncawait", type: "resume", worker, url });
  }

  /** Worker `worker` called `taskDone()` for `url`. */
  done(worker: number, url: string): void {
    this.emit({ t: this.now(), stage: "asyncawait", type: "done", worker, url });
  }

  /** Attempt `attempt` at `url` starts in worker `worker`. */
  fetchStart(worker: number, url: string, attempt: number): void {
    const event = { t: this.now(), stage: "asyncawait", type: "fetch-start", url, slot: worker, attempt } as const;
    this.emit({ ...event, ...this.counters() });
  }

  /** The attempt ended with a response (`status`) or an error name. */
  fetchEnd(worker: number, url: string, attempt: number, status: number | null, error: FetchError | null): void {
    const event = { t: this.now(), stage: "asyncawait", type: "fetch-end", url, slot: worker, attempt, status, error } as const;
    this.emit({ ...event, ...this.counters() });
  }

  /** Hooks for the HTTP client that report one attempt's connect, send, first byte and reads. */
  observer(worker: number, url: string): HttpObserver {
    return new AttemptObserver(this, worker, url);
  }

  /** Milliseconds since the tracer was made. */
  now(): number {
    return performance.now() - this.start;
  }

  /** Hands `event` to the trace function. */
  emit(event: TraceEvent): void {
    this.trace(event);
  }
}

/** The client-side steps of one attempt, as trace events. */
class AttemptObserver implements HttpObserver {
  constructor(
    private readonly tracer: CrawlTracer,
    private readonly slot: number,
    private readonly url: string,
  ) {}

  sent(): void {
    const { tracer, slot, url } = this;
    tracer.emit({ t: tracer.now(), stage: "asyncawait", type: "connect", url, slot });
    tracer.emit({ t: tracer.now(), stage: "asyncawait", type: "send", url, slot });
  }

  firstByte(): void {
    const { tracer, slot, url } = this;
    tracer.emit({ t: tracer.now(), stage: "asyncawait", type: "first-byte", url, slot });
  }

  read(bytes: number): void {
    const { tracer, slot, url } = this;
    tracer.emit({ t: tracer.now(), stage: "asyncawait", type: "read", url, slot, bytes });
  }
}
