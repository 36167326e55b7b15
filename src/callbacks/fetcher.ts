/**
 * The stage 1 Fetcher: one URL's fetch as a chain of callbacks.
 *
 * @module
 */
import type { Socket } from "node:net";
import { cutShort, errorDetail, errorName, FetchFailure, type AttemptError } from "../kernel/errors.js";
import type { ResolvedCrawlOptions } from "../crawl/options.js";
import { parserOptions } from "../crawl/page.js";
import { originOf } from "../crawl/urls.js";
import { ResponseParser, type HttpResponse } from "../http/parser.js";
import type { IdleConnections } from "../http/idle-connections.js";
import { formatGetRequest } from "../http/request.js";
import { EVENT_READ, EVENT_WRITE } from "../kernel/selector.js";
import { connect, fileno, recv, send } from "../kernel/socket.js";
import type { TimerHandle } from "../kernel/timers.js";
import { crawlChannel } from "../observe/channels.js";
import type { EventLoop, IoCallback } from "./event-loop.js";

/**
 * The options a Fetcher needs, as `resolveOptions` fills them in: `timeoutMs`
 * bounds one attempt; the socket itself keeps `idleTimeoutMs` and checks
 * certificates with `ca` and `rejectUnauthorized`; `headers` go with
 * `userAgent` into the request, and `skipNonHtml` tells the parser which
 * bodies to leave unread (both may be left out: no more headers, every body
 * read). With `connections`, the Fetcher takes a kept connection to the URL's
 * origin when one waits there, and keeps its own for the next request when
 * the response allows; without, it connects for each attempt and closes after
 * it, as the chapter's does.
 */
export type FetcherOptions = Pick<ResolvedCrawlOptions, "timeoutMs" | "idleTimeoutMs" | "maxBodyBytes" | "userAgent" | "ca" | "rejectUnauthorized"> &
  Partial<Pick<ResolvedCrawlOptions, "headers" | "skipNonHtml">> & { connections?: IdleConnections | null };

/** How an attempt ended: the complete response, or the name of its error. */
export type FetchOutcome = HttpResponse | AttemptError;

/**
 * Fetches one URL with callbacks: `fetch()` starts connecting and registers
 * `connected`; `connected` sends the request and registers `readResponse`;
 * `readResponse` takes at most 4096 bytes per call and feeds them to the
 * shared HTTP parser, until the response is complete (with `skipNonHtml`, a
 * body no link is read from is complete at the end of its head). Then the
 * Fetcher closes its socket (or, given the crawl's kept connections, keeps it
 * for the next request to the origin when the response allows) and hands the
 * outcome to `onFetched`.
 *
 * Between two callbacks the fetch is not running anywhere: all it knows lives
 * on `this` (URL, socket, parser, tries, timer). That is the state a callback
 * chain must carry by hand. Each callback catches its own failures and turns
 * them into an error name, because an exception thrown in a callback reaches
 * the event loop, not `fetch()`, whose frame is long gone: stack ripping.
 * The repetition of `try`/`catch` in every callback is the price, kept in
 * view on purpose.
 *
 * A timer set with `callLater` bounds the attempt; the socket fails itself
 * with `ETIMEDOUT` when no byte moves for `idleTimeoutMs`. Calling `fetch()`
 * again starts a new attempt with a new socket: the Crawler does so for
 * each attempt the crawl core asks for, after the pause it asks for, set with
 * `later()` on the Fetcher's own timer. Each step is published on
 * `crawlChannel`, with the id of the crawl the Fetcher works for.
 *
 * @remarks The chapter's Fetcher reads until the server closes and then
 * parses links and starts new Fetchers itself; this one stops as soon as the
 * parser has a whole response and leaves the links to the Crawler. The
 * chapter's sends `Connection: close` and opens a connection per URL; a
 * Crawler's Fetchers share kept connections (`IdleConnections`), since a
 * closed socket costs a handshake and, in Node, memory until a full garbage
 * collection (docs/benchmarks.md, "Memory per page").
 * @see Chapter, "Programming With Callbacks"
 * @example
 * ```ts
 * const loop = new EventLoop();
 * const fetcher = new Fetcher("http://127.0.0.1:8080/353/", loop, options, function fetched(_f, outcome) {
 *   console.log(typeof outcome === "string" ? outcome : outcome.status);
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
  /** The parser of the current attempt's response (the chapter's `self.response`). */
  parser: ResponseParser;
  /** The current attempt's timeout. */
  timer: TimerHandle | null = null;
  /** Bytes received in the current attempt. */
  received = 0;

  /**
   * Why the last failed attempt failed, in Node's words, when its error was a
   * `TlsError` (see `errorDetail`); else null. Never stale: a `TlsError` is
   * not retried, so no later attempt follows one.
   */
  detail: string | null = null;

  constructor(
    /** The URL to fetch (absolute, no fragment). */
    readonly url: string,
    private readonly loop: EventLoop,
    private readonly options: FetcherOptions,
    /** Called with each attempt's outcome. */
    readonly onFetched: (fetcher: Fetcher, outcome: FetchOutcome) => void,
    /** The id of the crawl it works for, in its messages (0: none). */
    readonly crawl = 0,
  ) {
    this.parser = new ResponseParser(parserOptions(options));
  }

  /**
   * Starts an attempt: connects a non-blocking socket (or takes a kept
   * connection to the URL's origin) and registers `connected` for when it is
   * writable (a kept one is at once).
   */
  fetch(): void {
    this.tries += 1;
    this.received = 0;
    this.parser = new ResponseParser(parserOptions(this.options));
    this.timer = this.loop.callLater(this.options.timeoutMs, this.timedOut);
    try {
      this.socket = this.open(new URL(this.url));
      this.loop.selector.register(this.socket, EVENT_WRITE, this.connected);
    } catch (error) {
      this.failed(error);
    }
  }

  /**
   * The socket is writable: the connection is up (or failed). Sends the
   * request, then waits to read. A kept connection the server has closed
   * meanwhile (`spentSinceTaken`) is given up for another, before the request goes out.
   */
  readonly connected: IoCallback = (key) => {
    try {
      this.loop.selector.unregister(key.socket);
      if (this.options.connections?.spentSinceTaken(key.socket)) {
        // Its FIN came with the response that kept it, and Node has read it only since `fetch()` took it: open another.
        this.socket = this.open(new URL(this.url));
        this.loop.selector.register(this.socket, EVENT_WRITE, this.connected);
        return;
      }
      this.sendRequest(key.socket); // Throws if the connect failed.
      this.loop.selector.register(key.socket, EVENT_READ, this.readResponse);
    } catch (error) {
      this.failed(error);
    }
  };

  /** The socket is readable: takes one chunk (at most 4096 bytes) and feeds the parser. */
  readonly readResponse: IoCallback = (key) => {
    try {
      const chunk = this.receive(key.socket);
      if (chunk.length > 0) this.parser.feed(chunk);
      else this.parser.end(); // The server closed: a close-delimited body ends, anything else was cut short.
      if (!this.parser.done) return; // Not yet: the loop calls readResponse again when more bytes arrive.
    } catch (error) {
      this.failed(error);
      return;
    }
    this.close(this.parser.reusable);
    this.onFetched(this, this.parser.response());
  };

  /**
   * The attempt's socket: a connection the crawl kept open to `url`'s origin,
   * if one waits there, or a new non-blocking one. The chapter's Fetcher
   * always connects anew.
   */
  protected open(url: URL): Socket {
    return this.options.connections?.take(url.origin) ?? connect(url, this.options);
  }

  /**
   * Sends the GET request on `socket` (asking to keep the connection when the
   * crawl keeps connections), and publishes `connect` and `send`. Throws the
   * connection's error when the connect failed.
   */
  protected sendRequest(socket: Socket): void {
    send(socket, formatGetRequest(new URL(this.url), this.options)); // Absolute-form through a proxy: see formatGetRequest.
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "connect", crawl: this.crawl, url: this.url, fd: fileno(socket) });
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "send", crawl: this.crawl, url: this.url });
  }

  /**
   * One `recv` of at most 4096 bytes (empty: the server closed), counted in
   * `received` and published as `read` (and `first-byte` for the first bytes).
   */
  protected receive(socket: Socket): Buffer {
    const chunk = recv(socket, 4096);
    if (this.received === 0 && chunk.length > 0 && crawlChannel.hasSubscribers) crawlChannel.publish({ type: "first-byte", crawl: this.crawl, url: this.url });
    if (crawlChannel.hasSubscribers) crawlChannel.publish({ type: "read", crawl: this.crawl, url: this.url, bytes: chunk.length });
    this.received += chunk.length;
    return chunk;
  }

  /**
   * Calls `then` with this Fetcher after `delayMs`: the pause before the next
   * attempt. It is the Fetcher's timer, so `close()` cancels it.
   */
  later(delayMs: number, then: (fetcher: Fetcher) => void): void {
    const fetcher = this;
    this.timer = this.loop.callLater(delayMs, function pauseOver() { then(fetcher); });
  }

  /** The attempt's time is up. */
  readonly timedOut = (): void => {
    this.failed(new FetchFailure("Timeout", `No complete response within ${this.options.timeoutMs} ms`));
  };

  /** Calls off the fetch, as a timer is cancelled: closes the attempt in flight, or the pause, with no outcome. */
  cancel(): void {
    this.close();
  }

  /**
   * Ends the current attempt: unregisters the socket and cancels the timer.
   * The socket is closed, or with `keep` (its response, complete, left it
   * reusable) given to the crawl's kept connections, if it has them, with the
   * response's `Keep-Alive` header: the server's hint of how long it waits.
   */
  close(keep = false): void {
    if (this.socket !== null) {
      if (this.loop.selector.getKey(this.socket) !== undefined) this.loop.selector.unregister(this.socket);
      if (keep && this.options.connections != null) {
        const hint = this.parser.response().headers["keep-alive"];
        this.options.connections.keep(originOf(this.url), this.socket, hint);
      } else this.socket.destroy();
      this.socket = null;
    }
    this.timer?.cancel();
    this.timer = null;
  }

  /**
   * The attempt failed: closes it and hands the error's name to `onFetched`
   * (a response cut short after its first byte is `BadResponse`). Every
   * callback of the chain (`connected`, `readResponse`, `timedOut`) and
   * `fetch()` itself end here: each catches its own errors, because an
   * exception thrown in a callback would reach the loop, not `fetch()`. A
   * bug on the way out (closing, naming the error) still ends the attempt,
   * as a `NetworkError`: nothing that goes wrong with one URL stops the crawl.
   *
   * @remarks The chapter's callback Fetcher leaves errors out; asyncio's
   * transports catch what their callbacks raise and report it to their
   * protocol's `connection_lost(exc)` (`_fatal_error`). Protected so that
   * the reference shows it.
   * @see docs/guide-callbacks.md, "3. One fetch as a chain of callbacks"
   */
  protected failed(error: unknown): void {
    let outcome: AttemptError = "NetworkError";
    try {
      this.close();
      this.detail = errorDetail(error);
      outcome = errorName(cutShort(error, this.received));
    } catch {
      this.close(); // The bug struck while closing: close what is left, once more.
    }
    this.onFetched(this, outcome);
  }
}
