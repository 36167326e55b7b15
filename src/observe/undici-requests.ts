/**
 * `UndiciRequests`: stage 3's `connect`, `send`, `first-byte` and `read`,
 * read off undici's own diagnostics channels.
 *
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";

/** One step of a stage-3 attempt, as undici reported it. */
export type AttemptStep = { type: "connect" | "send" | "first-byte"; url: string } | { type: "read"; url: string; bytes: number };

/** One of our crawl's attempts, as far as undici's messages concern it. */
interface Attempt {
  url: string;
  /** `origin + path`, as undici's Request names it. */
  key: string;
  /** False once its `fetch-end` came: undici's later messages about it are dropped. */
  open: boolean;
  sent: boolean;
  started: boolean;
}

/**
 * Watches undici's channels for one traced stage-3 crawl and hands each step
 * of that crawl's requests to `step`. Subscribed only while such a crawl is
 * traced: undici checks `hasSubscribers` before building a message.
 *
 * undici's messages name its own `Request` object, not our crawl, so each
 * `Request` is matched to an attempt when undici makes it
 * (`undici:request:create`) and remembered in a WeakMap. The match: stage 3
 * publishes `fetch-start` and, in the same synchronous stretch, dispatches the
 * request, whose constructor publishes `undici:request:create`; the Request's
 * `origin + path` must be that URL's. A request undici makes later (queued in
 * its pool until a connection is free) is matched by its URL to the oldest
 * attempt of this crawl still waiting for one. A Request made right after
 * another crawl's `fetch-start` for the same URL is that crawl's, not ours.
 *
 * What the steps mean, from undici's channels:
 * - `connect` and `send`: `undici:client:sendHeaders`, right before the
 *   request's bytes are written to a socket. undici publishes no per-request
 *   "got a connection" (`undici:client:connected` names a socket, not a
 *   request, and a kept-alive socket never connects again), so both come at
 *   once, as they did when stage 3 reported them itself.
 * - `first-byte`: `undici:request:headers`, when undici has parsed the
 *   response's head. undici publishes nothing at the first byte itself, so this
 *   is later by the head's parsing; the head normally comes in one packet.
 * - `read`: `undici:request:bodyChunkReceived`, one per body chunk (body bytes
 *   only, as before), including a chunk the client then refuses as too large.
 */
export class UndiciRequests {
  private readonly attempts = new WeakMap<object, Attempt>();
  /** This crawl's attempts undici has made no Request for yet, by key, oldest first. */
  private readonly waiting = new Map<string, Attempt[]>();
  /** Each open attempt, by URL. */
  private readonly open = new Map<string, Attempt>();
  /** The last `fetch-start` of any crawl, until a Request is made: whose request comes next. */
  private lastStart: { crawl: number; key: string } | null = null;

  constructor(
    private readonly crawl: number,
    private readonly step: (step: AttemptStep) => void,
  ) {
    diagnostics_channel.subscribe("undici:request:create", this.onCreate);
    diagnostics_channel.subscribe("undici:client:sendHeaders", this.onSendHeaders);
    diagnostics_channel.subscribe("undici:request:headers", this.onHeaders);
    diagnostics_channel.subscribe("undici:request:bodyChunkReceived", this.onBodyChunk);
  }

  /** Unsubscribes from undici's channels. */
  stop(): void {
    diagnostics_channel.unsubscribe("undici:request:create", this.onCreate);
    diagnostics_channel.unsubscribe("undici:client:sendHeaders", this.onSendHeaders);
    diagnostics_channel.unsubscribe("undici:request:headers", this.onHeaders);
    diagnostics_channel.unsubscribe("undici:request:bodyChunkReceived", this.onBodyChunk);
  }

  /** Any crawl's `fetch-start` (ours or not): the next Request made for that URL is that crawl's. */
  fetchStarting(crawl: number, url: string): void {
    this.lastStart = { crawl, key: keyOf(url) };
  }

  /** Our crawl's attempt at `url` started. */
  attemptStarted(url: string): void {
    const attempt: Attempt = { url, key: keyOf(url), open: true, sent: false, started: false };
    this.open.set(url, attempt);
    const queue = this.waiting.get(attempt.key);
    if (queue === undefined) this.waiting.set(attempt.key, [attempt]);
    else queue.push(attempt);
  }

  /** Our crawl's attempt at `url` ended: whatever undici still says about its request is dropped. */
  attemptEnded(url: string): void {
    const attempt = this.open.get(url);
    if (attempt === undefined) return;
    attempt.open = false;
    this.open.delete(url);
    this.unwait(attempt);
  }

  private readonly onCreate = (message: unknown): void => {
    const request = requestOf(message);
    const key = request === null ? null : requestKey(request);
    if (request === null || key === null) return;
    const last = this.lastStart;
    this.lastStart = null;
    if (last !== null && last.key === key && last.crawl !== this.crawl) return; // dispatched by that crawl, just now
    const attempt = this.waiting.get(key)?.[0];
    if (attempt === undefined) return;
    this.unwait(attempt);
    this.attempts.set(request, attempt);
  };

  private readonly onSendHeaders = (message: unknown): void => {
    const attempt = this.attemptOf(message);
    if (attempt === null || attempt.sent) return;
    attempt.sent = true;
    this.step({ type: "connect", url: attempt.url });
    this.step({ type: "send", url: attempt.url });
  };

  private readonly onHeaders = (message: unknown): void => {
    const attempt = this.attemptOf(message);
    if (attempt === null || attempt.started) return;
    attempt.started = true;
    this.step({ type: "first-byte", url: attempt.url });
  };

  private readonly onBodyChunk = (message: unknown): void => {
    const attempt = this.attemptOf(message);
    const chunk = typeof message === "object" && message !== null && "chunk" in message ? message.chunk : null;
    if (attempt === null || !(chunk instanceof Uint8Array)) return;
    this.step({ type: "read", url: attempt.url, bytes: chunk.length });
  };

  /** The open attempt of ours that a message's `request` belongs to, or null. */
  private attemptOf(message: unknown): Attempt | null {
    const request = requestOf(message);
    const attempt = request === null ? undefined : this.attempts.get(request);
    return attempt?.open ? attempt : null;
  }

  private unwait(attempt: Attempt): void {
    const queue = this.waiting.get(attempt.key);
    if (queue === undefined) return;
    const index = queue.indexOf(attempt);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.waiting.delete(attempt.key);
  }
}

/** A URL as undici's Request names it: `origin + path` (path with the query). */
function keyOf(url: string): string {
  const target = new URL(url);
  return target.origin + target.pathname + target.search;
}

/** The `request` object of an undici message, or null. */
function requestOf(message: unknown): object | null {
  if (typeof message !== "object" || message === null || !("request" in message)) return null;
  const { request } = message;
  return typeof request === "object" && request !== null ? request : null;
}

/** An undici Request's `origin + path`, or null if it has none. */
function requestKey(request: object): string | null {
  if (!("origin" in request) || !("path" in request)) return null;
  const { origin, path } = request;
  return typeof origin === "string" && typeof path === "string" ? origin + path : null;
}
