/**
 * `traceCrawl`: turns one crawl's channel messages into the `trace` option's
 * {@link TraceEvent}s.
 *
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";
import { performance } from "node:perf_hooks";
import type { CrawlMessage, LoopMessage, StageName } from "./channels.js";
import { traceSafely } from "./events.js";
import type { DispatchEvent, TraceEvent } from "./events.js";
import { UndiciRequests } from "./undici-requests.js";
import type { AttemptStep } from "./undici-requests.js";

/**
 * Subscribes `trace` to the messages of crawl `crawl` (and of the loop it
 * announces in its `crawl-start`) and hands it each as a {@link TraceEvent}.
 * A stage-3 crawl's `connect`, `send`, `first-byte` and `read` come from
 * undici's own channels ({@link UndiciRequests}), subscribed while it is traced.
 * A `trace` that throws is ignored: watching must not break the crawl.
 *
 * What the messages leave out is worked out here:
 * - `t`: this subscriber's clock (`performance.now()`) since the `crawl-start`;
 *   `publish` calls it synchronously, so that is when the stage published.
 * - `slot` (stages 1 and 2): taken by a URL's `fetch-start`, given back at its
 *   `fetch-end`. A retry takes back the slot its URL just left, if still free;
 *   a new URL takes the slot given back last, else the next new number (the
 *   stage-1 Crawler's rule for its Fetchers). So a stage-2 worker that ends
 *   one URL and starts the next without a `yield*` keeps its slot, and no more
 *   slots are ever used than fetches are in flight at once.
 * - `worker` (stage 3): taken by `take`, given back at `done`, by the same
 *   rule; that URL's fetch events carry it as their `slot`.
 * - a stage-3 attempt's `await` (what: `client.get`) and `resume`: each
 *   attempt is one `await` of the client, between the `fetch-start` the core
 *   publishes just before it and the `fetch-end` it publishes just after, in
 *   the same stretch of the worker; so they follow the one and precede the
 *   other here, and the crawler publishes only its pauses' (`sleep`).
 * - a `dispatch`'s `url`: the URL of the socket's `connect` (stage 1 names
 *   sockets by file number). A socket is dispatched once before it connects,
 *   to the callback that finds out whether it did; that dispatch waits for
 *   the callback's `connect` or `fetch-end`, which names the URL, and is
 *   handed on just before it (with `url: null` if anything else comes first).
 *
 * @returns the function that unsubscribes (from undici's channels too).
 */
export function traceCrawl(crawl: number, trace: (event: TraceEvent) => void): () => void {
  const tracer = new CrawlTracer(crawl, traceSafely(trace));
  diagnostics_channel.subscribe("coroutine-crawler:crawl", tracer.onCrawlMessage);
  diagnostics_channel.subscribe("coroutine-crawler:loop", tracer.onLoopMessage);
  return function stopTracing(): void {
    diagnostics_channel.unsubscribe("coroutine-crawler:crawl", tracer.onCrawlMessage);
    diagnostics_channel.unsubscribe("coroutine-crawler:loop", tracer.onLoopMessage);
    tracer.stop();
  };
}

/**
 * Small numbers handed out and given back: slots or workers. A number asked
 * for goes first to `preferred` if it is free, then to the one given back
 * last, then to a new one.
 */
class Numbers {
  private readonly free: number[] = [];
  private used = 0;

  take(preferred: number | undefined): number {
    const index = preferred === undefined ? -1 : this.free.lastIndexOf(preferred);
    if (index >= 0) return this.free.splice(index, 1)[0];
    return this.free.pop() ?? this.used++;
  }

  giveBack(n: number): void {
    this.free.push(n);
  }
}

/** One crawl's subscriber: keeps its messages, and adds what the trace events need. */
class CrawlTracer {
  private start = performance.now();
  private stage: StageName = "callbacks";
  private loop: number | null = null;
  private readonly numbers = new Numbers();
  /** The slot (stages 1, 2: while an attempt is open) or worker (stage 3: from take to done) each URL holds. */
  private readonly slotOf = new Map<string, number>();
  /** The slot each URL last gave back, for its retry: only the last URL to leave each slot. */
  private readonly leftBy = new Map<number, string>();
  /** Stage 1: the URL of each connected socket, by file number, and the file number of each URL's socket. */
  private readonly urlOfFd = new Map<number, string>();
  private readonly fdOfUrl = new Map<string, number>();
  /** A dispatch for a socket that has not connected yet, until its callback names the URL. */
  private unnamed: { event: DispatchEvent; fd: number } | null = null;
  /** Stage 3: undici's channels, while the crawl is traced. */
  private undici: UndiciRequests | null = null;

  constructor(
    private readonly crawl: number,
    private readonly trace: (event: TraceEvent) => void,
  ) {}

  readonly onCrawlMessage = (message: unknown): void => {
    const m = ours<CrawlMessage>(message);
    if (m.type === "fetch-start") this.undici?.fetchStarting(m.crawl, m.url); // any crawl's: see UndiciRequests
    if (m.crawl !== this.crawl) return;
    this.nameDispatch(m);
    const t = this.now();
    const { stage } = this;
    switch (m.type) {
      case "crawl-start":
        this.start = performance.now();
        this.stage = m.stage;
        this.loop = m.loop;
        if (m.stage === "asyncawait" && this.undici === null) this.undici = new UndiciRequests(this.crawl, this.undiciStep);
        return;
      case "crawl-end":
        return;
      case "fetch-start": {
        const slot = stage === "asyncawait" ? this.workerOf(m.url) : this.takeSlot(m.url);
        const { url, attempt, queued, unfinished, inFlight } = m;
        this.undici?.attemptStarted(url);
        this.emit({ t, stage, type: "fetch-start", url, slot, attempt, queued, unfinished, inFlight });
        if (stage === "asyncawait") this.emit({ t, stage, type: "await", worker: slot, url, what: "client.get" });
        return;
      }
      case "fetch-end": {
        const slot = this.slotOf.get(m.url);
        if (slot === undefined) return;
        const { url, attempt, status, error, queued, unfinished, inFlight } = m;
        const detail = m.detail ?? null;
        this.undici?.attemptEnded(url);
        if (stage !== "asyncawait") this.giveSlotBack(url, slot);
        if (stage === "asyncawait") this.emit({ t, stage, type: "resume", worker: slot, url });
        this.emit({ t, stage, type: "fetch-end", url, slot, attempt, status, error, detail, queued, unfinished, inFlight });
        return;
      }
      case "connect":
        if (m.fd !== null) {
          this.urlOfFd.set(m.fd, m.url);
          this.fdOfUrl.set(m.url, m.fd);
        }
        this.attemptStep({ type: "connect", url: m.url });
        return;
      case "send":
      case "first-byte":
        this.attemptStep({ type: m.type, url: m.url });
        return;
      case "read":
        this.attemptStep({ type: "read", url: m.url, bytes: m.bytes });
        return;
      case "take":
        this.emit({ t, stage, type: "take", worker: this.workerOf(m.url), url: m.url });
        return;
      case "await":
        this.emit({ t, stage, type: "await", worker: this.workerOf(m.url), url: m.url, what: m.what });
        return;
      case "resume":
        this.emit({ t, stage, type: "resume", worker: this.workerOf(m.url), url: m.url });
        return;
      case "done": {
        const worker = this.workerOf(m.url);
        this.slotOf.delete(m.url);
        this.numbers.giveBack(worker);
        this.emit({ t, stage, type: "done", worker, url: m.url });
        return;
      }
    }
  };

  readonly onLoopMessage = (message: unknown): void => {
    const m = ours<LoopMessage>(message);
    if (m.loop !== this.loop) return;
    this.nameDispatch(null);
    const t = this.now();
    const { stage } = this;
    switch (m.type) {
      case "select":
        this.emit({ t, stage, type: "select", ready: m.ready });
        return;
      case "dispatch": {
        const event: DispatchEvent = { t, stage, type: "dispatch", callback: m.callback, url: this.urlOfFd.get(m.fd) ?? null, socket: m.fd };
        if (event.url === null) this.unnamed = { event, fd: m.fd };
        else this.emit(event);
        return;
      }
      case "timer":
        this.emit({ t, stage, type: "timer", callback: m.callback });
        return;
      case "step":
        this.emit({ t, stage, type: "step", task: m.task, coroutine: m.coroutine, yielded: m.yielded });
        return;
      case "resolve":
        this.emit({ t, stage, type: "resolve", future: m.future, label: m.label });
        return;
      case "cancel":
        this.emit({ t, stage, type: "cancel", task: m.task });
        return;
    }
  };

  /** Ends the subscriber's own subscriptions (undici's). */
  stop(): void {
    this.nameDispatch(null);
    this.undici?.stop();
    this.undici = null;
  }

  /** A step of an attempt (stages 1, 2 publish them; stage 3's come from undici), with its URL's slot. */
  private attemptStep(step: AttemptStep): void {
    const slot = this.slotOf.get(step.url);
    if (slot === undefined) return; // No attempt of this URL is open.
    const t = this.now();
    const { stage } = this;
    if (step.type === "read") this.emit({ t, stage, type: "read", url: step.url, slot, bytes: step.bytes });
    else this.emit({ t, stage, type: step.type, url: step.url, slot });
  }

  private readonly undiciStep = (step: AttemptStep): void => {
    this.nameDispatch(null);
    this.attemptStep(step);
  };

  /**
   * Hands on the dispatch that waits for its URL: named by `message` if it is
   * the `connect` of that socket or an attempt's `fetch-end` (the callback
   * found the connection failed), else with `url: null`.
   */
  private nameDispatch(message: CrawlMessage | null): void {
    const unnamed = this.unnamed;
    if (unnamed === null) return;
    this.unnamed = null;
    let url: string | null = null;
    if (message?.type === "connect" && message.fd === unnamed.fd) url = message.url;
    else if (message?.type === "fetch-end") url = message.url;
    this.emit({ ...unnamed.event, url });
  }

  /** Stages 1, 2: the slot for a URL's new attempt: the one it left, if free, else as {@link Numbers} says. */
  private takeSlot(url: string): number {
    let left: number | undefined;
    for (const [slot, leaver] of this.leftBy) if (leaver === url) left = slot;
    const slot = this.numbers.take(left);
    this.leftBy.delete(slot);
    this.slotOf.set(url, slot);
    return slot;
  }

  private giveSlotBack(url: string, slot: number): void {
    this.slotOf.delete(url);
    this.leftBy.set(slot, url);
    this.numbers.giveBack(slot);
    const fd = this.fdOfUrl.get(url);
    if (fd === undefined) return;
    this.fdOfUrl.delete(url);
    this.urlOfFd.delete(fd);
  }

  /** Stage 3: the worker that holds `url`, taken now if none does (a `take` always comes first). */
  private workerOf(url: string): number {
    let worker = this.slotOf.get(url);
    if (worker === undefined) {
      worker = this.numbers.take(undefined);
      this.slotOf.set(url, worker);
    }
    return worker;
  }

  private now(): number {
    return performance.now() - this.start;
  }

  private emit(event: TraceEvent): void {
    this.trace(event);
  }
}

/**
 * The one cast: a message on our channels is one of ours, since only the
 * stages (through `channels.ts`) publish on `coroutine-crawler:*`.
 */
function ours<T extends CrawlMessage | LoopMessage>(message: unknown): T {
  return message as T;
}
