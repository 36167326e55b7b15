/**
 * The stage 1 Fetcher: one URL's fetch as a chain of callbacks.
 *
 * @module
 */
import type { Socket } from "node:net";
import { errorName, FetchFailure, isRetryable } from "../kernel/errors.js";
import type { FetchError } from "../crawl/records.js";
import { ResponseParser } from "../http/parser.js";
import { formatGetRequest } from "../http/request.js";
import type { HttpResponse } from "../http/parser.js";
import { EVENT_READ, EVENT_WRITE } from "../kernel/selector.js";
import { connect, recv, send } from "../kernel/socket.js";
import type { SelectorKey } from "../kernel/selector.js";
import type { EventLoop, ExceptionSource, IoCallback } from "./event-loop.js";
import type { TimerHandle } from "../kernel/timers.js";

/** The options a Fetcher needs, as `resolveOptions` fills them in. */
export interface FetcherOptions {
  /** Attempts before a network error is final. */
  maxTries: number;
  /** Time for one attempt: connect and the whole response. */
  timeoutMs: number;
  /** The longest body the parser accepts. */
  maxBodyBytes: number;
  /** Sent as `User-Agent`. */
  userAgent: string;
}

/**
 * One step of an attempt, reported to the crawl's trace when tracing is on:
 * the Crawler adds the time, the slot and the queue's counters.
 */
export type FetcherStep =
  | { type: "fetch-start" }
  | { type: "connect" }
  | { type: "send" }
  | { type: "first-byte" }
  | { type: "read"; bytes: number }
  | { type: "fetch-end"; status: number | null; error: FetchError | null };

/** How a fetch ended: a complete response, or the name of the last attempt's error. */
export type FetchOutcome = { response: HttpResponse; error: null } | { response: null; error: FetchError };

/**
 * Fetches one URL with callbacks: `fetch()` starts connecting and registers
 * `connected`; `connected` sends the request and registers `readResponse`;
 * `readResponse` takes at most 4096 bytes per call and feeds them to the
 * shared HTTP parser, until the response is complete. Then the Fetcher
 * closes its socket and hands the outcome to `onFetched`.
 *
 * Between two callbacks the fetch is not running anywhere: all it knows lives
 * on `this` (URL, socket, parser, tries, timer). That is the state a callback
 * chain must carry by hand. Each callback catches its own failures and turns
 * them into an error name, because an exception thrown in a callback reaches
 * the event loop, not `fetch()`, whose frame is long gone: stack ripping.
 * The repetition of `try`/`catch` in every callback is the price, kept in
 * view on purpose.
 *
 * A timer set with `callLater` bounds each attempt; a network error (or the
 * timeout) starts a new attempt with a new socket, up to `maxTries`.
 *
 * @remarks The chapter's Fetcher reads until the server closes and then
 * parses links and starts new Fetchers itself; this one stops as soon as the
 * parser has a whole response and leaves the links to the Crawler.
 * @see Chapter, "Programming With Callbacks"
 * @example
 * ```ts
 * const loop = new EventLoop();
 * const fetcher = new Fetcher("http://127.0.0.1:8080/353/", loop, options, function fetched(_f, outcome) {
 *   console.log(outcome.response?.status ?? outcome.error);
 *   loop.stop();
 * });
 * fetcher.fetch();
 * loop.runForever();
 * ```
 */
export class Fetcher {
  /** Attempts started so far. */
  tries = 0;
  /** The socket of the current attempt, or null between attempts and once done. */
  socket: Socket | null = null;
  /** The parser of the current attempt's response. */
  parser: ResponseParser | null = null;
  /** The current attempt's timeout. */
  timer: TimerHandle | null = null;
  /** Bytes received in the current attempt. */
  received = 0;
  /** Set by {@link cancel}: every callback still to come returns at once. */
  cancelled = false;

  constructor(
    /** The URL to fetch (absolute, no fragment). */
    readonly url: string,
    private readonly loop: EventLoop,
    private readonly options: FetcherOptions,
    private readonly onFetched: (fetcher: Fetcher, outcome: FetchOutcome) => void,
    /** Gets each step when the crawl is traced; null (the default) when it is not. */
    private readonly onStep: ((fetcher: Fetcher, step: FetcherStep) => void) | null = null,
  ) {}

  /** Starts an attempt: connects a non-blocking socket and registers `connected` for when it is writable. */
  fetch(): void {
    if (this.cancelled) return;
    this.tries += 1;
    this.received = 0;
    this.onStep?.(this, { type: "fetch-start" });
    this.parser = new ResponseParser({ maxBodyBytes: this.options.maxBodyBytes });
    this.timer = this.loop.callLater(this.options.timeoutMs, this.timedOut);
    try {
      this.socket = connect(new URL(this.url));
      this.loop.selector.register(this.socket, EVENT_WRITE, this.connected);
    } catch (error) {
      this.failed(error);
    }
  }

  /** The socket is writable: the connection is up (or failed). Sends the request, then waits to read. */
  readonly connected: IoCallback = (key: SelectorKey<IoCallback>): void => {
    if (this.cancelled) return;
    try {
      this.loop.selector.unregister(key.socket);
      // A failed connection is "ready" too, as in Python; the trace reports only a live one.
      if (key.socket.errored === null) this.onStep?.(this, { type: "connect" });
      if (this.cancelled) return; // Cancelled from the trace: the socket is already destroyed.
      send(key.socket, formatGetRequest(new URL(this.url), this.options.userAgent));
      this.onStep?.(this, { type: "send" });
      if (this.cancelled) return;
      this.loop.selector.register(key.socket, EVENT_READ, this.readResponse);
    } catch (error) {
      this.failed(error);
    }
  };

  /** The socket is readable: takes one chunk (at most 4096 bytes) and feeds the parser. */
  readonly readResponse: IoCallback = (key: SelectorKey<IoCallback>): void => {
    if (this.cancelled) return;
    let response: HttpResponse;
    try {
      const parser = this.parserOrFail();
      const chunk = recv(key.socket, 4096);
      if (this.onStep !== null) this.traceChunk(chunk.length);
      if (this.cancelled) return;
      this.received += chunk.length;
      if (chunk.length > 0) {
        parser.feed(chunk);
      } else {
        parser.end(); // The server closed: a close-delimited body ends, anything else was cut short.
      }
      if (!parser.done) return; // Not yet: the loop calls readResponse again when more bytes arrive.
      response = parser.response();
    } catch (error) {
      this.failed(error);
      return;
    }
    this.close();
    this.onStep?.(this, { type: "fetch-end", status: response.status, error: null });
    this.onFetched(this, { response, error: null });
  };

  /** The attempt's time is up. */
  readonly timedOut = (): void => {
    this.timer = null;
    this.failed(new FetchFailure("Timeout", `No complete response within ${this.options.timeoutMs} ms`));
  };

  /**
   * Stops this fetch for good: no further attempt, no outcome. Safe to call
   * from inside one of the Fetcher's own callbacks (the crawl's trace sees
   * each step and may abort right there): that callback returns at once
   * instead of going on with a destroyed socket. This is how the crawler
   * cancels a fetch in flight.
   */
  cancel(): void {
    this.cancelled = true;
    this.close();
  }

  /**
   * Whether `source`, where the loop says an exception came from, is one of
   * this Fetcher's callbacks: its timer's or its socket's. Matching the
   * callback, not the current `timer` or `socket`, still works after the
   * callback has closed the attempt and cleared them.
   */
  owns(source: ExceptionSource): boolean {
    if ("socket" in source) return source.data === this.connected || source.data === this.readResponse;
    return source.callback === this.timedOut;
  }

  /**
   * Ends the current attempt: unregisters and destroys the socket and cancels
   * the timer.
   */
  close(): void {
    if (this.socket !== null) {
      if (this.loop.selector.getKey(this.socket) !== undefined) this.loop.selector.unregister(this.socket);
      this.socket.destroy();
      this.socket = null;
    }
    this.timer?.cancel();
    this.timer = null;
    this.parser = null;
  }

  /** An attempt failed: retry a network error while tries are left, else hand over the error's name. */
  private failed(error: unknown): void {
    if (this.cancelled) return;
    this.close();
    const name = errorName(error);
    this.onStep?.(this, { type: "fetch-end", status: null, error: name });
    if (isRetryable(name) && this.tries < this.options.maxTries) {
      this.fetch();
      return;
    }
    this.onFetched(this, { response: null, error: name });
  }

  private traceChunk(bytes: number): void {
    if (bytes > 0 && this.received === 0) this.onStep?.(this, { type: "first-byte" });
    this.onStep?.(this, { type: "read", bytes });
  }

  private parserOrFail(): ResponseParser {
    if (this.parser === null) throw new Error(`readResponse called for ${this.url} with no attempt in progress`);
    return this.parser;
  }
}
