/**
 * The HTTP client of the async/await stage: a pool of keep-alive
 * connections (undici) behind one `await client.get(url, signal)`.
 *
 * @module
 */
import { Agent, type Dispatcher } from "undici";
import { CancelledError, errorName, FetchFailure } from "../kernel/errors.js";
import { FIRST_ONLY_HEADERS, MAX_HEADER_BYTES, type HttpResponse } from "../http/parser.js";
import { requestHeaders } from "../http/request.js";

/** How an {@link HttpClient} connects, waits and reads. */
export interface HttpClientOptions {
  /** Connections kept per host: the crawl's `maxTasks`, so no worker waits for a socket. */
  connections: number;
  /** Time allowed for one `get()`: waiting for a connection, connecting, and the whole response. */
  timeoutMs: number;
  /** A body longer than this fails with `BodyTooLarge` while it streams in. */
  maxBodyBytes: number;
  /** The `User-Agent` header, sent with the rest of {@link requestHeaders}. */
  userAgent: string;
}

/**
 * Fetches URLs over a pool of keep-alive connections: what aiohttp's
 * `ClientSession` is to the chapter's crawler.
 *
 * `get(url, signal)` dispatches one `GET` on undici's `Agent`, which keeps up
 * to `connections` sockets per host open between requests. A small handler
 * object (`ResponseCollector`, below) collects the response as undici parses
 * it: it fails the request as soon as the body passes `maxBodyBytes` (before
 * reading it, when `Content-Length` says so), gives up when `timeoutMs` runs
 * out, and turns every failure into a {@link FetchFailure} whose `kind` is the
 * name stages 1 and 2 give the same fault. Redirects are never followed: a
 * 3xx is returned like any other response. Nothing here is for watching:
 * undici publishes each request's steps on its own diagnostics channels
 * (`undici:client:sendHeaders`, `undici:request:headers`, …), and the trace
 * reads them there.
 *
 * @remarks aiohttp follows redirects and decodes gzip itself; here, like the
 * raw-socket stages, the crawler sees the 3xx and the still-encoded body,
 * which the shared `readPage` decodes. undici was measured against node:http
 * with a keep-alive `Agent` on a local 2,000-page site with 100 workers and
 * was faster (about 4,600 against 3,700 pages/s, one cold crawl each).
 * A keep-alive socket the server closes between requests is not retried
 * behind the crawler's back, since a retry would make one attempt two
 * requests; the race is avoided instead: undici drops idle sockets before the
 * server's `Keep-Alive: timeout` runs out, and before reusing one it lets the
 * event loop turn once, so a close already on its way is seen first.
 * llhttp inside undici is a little more lenient than the shared parser in one
 * place (it takes an `HTTP/2.0` status line) and stricter in another (it
 * refuses an unsolicited `100 Continue`); the tests pin both.
 * @see Chapter, "Coordinating Coroutines" (`aiohttp.ClientSession`)
 */
export class HttpClient {
  private readonly agent: Agent;
  private readonly headers: Record<string, string>;
  /** What `close()` returned the first time: closing twice waits for the same end. */
  private closing: Promise<void> | null = null;

  constructor(private readonly options: HttpClientOptions) {
    this.headers = requestHeaders(options.userAgent);
    this.agent = new Agent({
      connections: options.connections,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Our own timer covers the whole attempt; undici's timeouts must not fire first.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: options.timeoutMs },
    });
  }

  /**
   * Sends `GET url` and resolves with the whole response.
   *
   * @throws FetchFailure named as in docs/behaviour.md: `ConnectionRefused`,
   * `ConnectionReset` (closed before any response byte), `HostNotFound`,
   * `Timeout`, `BadResponse` (malformed, or cut short after it started),
   * `BodyTooLarge`, `TlsError`, `NetworkError`.
   * @throws `signal.reason` when `signal` aborts first; the request is abandoned
   * and its connection closed.
   */
  get(url: string, signal?: AbortSignal): Promise<HttpResponse> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const target = new URL(url);
    const { agent, headers, options } = this;
    return new Promise<HttpResponse>(function sendRequest(resolve, reject) {
      const collector = new ResponseCollector(resolve, reject, options, signal ?? null);
      agent.dispatch({ origin: target.origin, path: target.pathname + target.search, method: "GET", headers }, collector);
    });
  }

  /**
   * Closes every connection in the pool at once, abandoning the requests
   * still in flight: each rejects with a {@link FetchFailure}. A second call
   * waits for the same end.
   */
  close(): Promise<void> {
    this.closing ??= this.agent.destroy(new CancelledError("the HTTP client was closed"));
    return this.closing;
  }
}

/**
 * The undici handler for one request: undici calls its methods as the
 * response arrives, and it settles the promise `get()` returned exactly once.
 *
 * @remarks A handler of our own rather than undici's `request()`: it stops a
 * body at `maxBodyBytes` as it streams in, and it sees the first response
 * byte (`onResponseStarted`), the only way to tell "closed before any
 * response byte" (`ConnectionReset`) from "cut short after it began"
 * (`BadResponse`), the line stages 1 and 2 draw too.
 */
class ResponseCollector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private started = false;
  private settled = false;
  private status = 0;
  private headers: Record<string, string> = {};
  private readonly chunks: Uint8Array[] = [];
  private received = 0;
  private readonly timer: NodeJS.Timeout;
  /** The signal's abort listener, removed once the request settles. */
  private readonly abandon: (this: AbortSignal) => void;

  constructor(
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (reason: unknown) => void,
    private readonly options: HttpClientOptions,
    /** The signal that abandons this request. */
    private readonly signal: AbortSignal | null,
  ) {
    const collector = this;
    this.timer = setTimeout(function attemptTimedOut() {
      collector.fail(new FetchFailure("Timeout", `No complete response within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    this.abandon = function requestAborted(this: AbortSignal): void {
      collector.fail(this.reason);
    };
    signal?.addEventListener("abort", this.abandon, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Given up while waiting for a connection: undici only now hands us the means to abort.
    if (this.settled) controller.abort(new CancelledError("the request was abandoned"));
  }

  /** The first response byte came: a failure from now on is `BadResponse`, no longer `ConnectionReset`. */
  onResponseStarted(): void {
    this.started = true;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.started = true;
    this.status = statusCode;
    this.headers = joinHeaders(headers);
    const declared = this.headers["content-length"];
    if (hasBody(statusCode) && declared !== undefined && Number(declared) > this.options.maxBodyBytes) {
      this.fail(this.tooLarge(`Content-Length ${declared}`));
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.received += chunk.length;
    if (this.received > this.options.maxBodyBytes) {
      this.fail(this.tooLarge(`more than ${this.received - chunk.length} bytes`));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settle()) {
      const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.received);
      this.resolve({ status: this.status, headers: this.headers, body: body ?? new Uint8Array(0) });
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const bodyless = this.status === 204 || this.status === 304; // status is 0 until the headers came
    if (bodyless && this.received === 0 && codeOf(error) === "UND_ERR_RES_CONTENT_LENGTH_MISMATCH") {
      // undici holds a 204 or 304 to its Content-Length, though neither has a
      // body (RFC 9110 §8.6): it is complete, as the shared parser says.
      this.onResponseEnd();
      return;
    }
    if (this.settle()) this.reject(failureFor(error, this.started));
  }

  /** Settles with `reason` and aborts the request, which closes its connection. */
  fail(reason: unknown): void {
    if (!this.settle()) return;
    this.reject(reason);
    if (this.controller !== null) {
      this.controller.abort(reason instanceof Error ? reason : new CancelledError("the request was abandoned"));
    }
  }

  /** Marks the request settled and drops its timer and abort listener; false if it already was. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.abandon);
    return true;
  }

  private tooLarge(what: string): FetchFailure {
    return new FetchFailure("BodyTooLarge", `The body is longer than maxBodyBytes (${this.options.maxBodyBytes}): ${what}`);
  }
}

/** undici error codes and the contract's name for each. */
const undiciCodes: Readonly<Record<string, "BadResponse" | "Timeout" | "BodyTooLarge">> = {
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: "BadResponse",
  UND_ERR_HEADERS_OVERFLOW: "BadResponse",
  UND_ERR_CONNECT_TIMEOUT: "Timeout",
  UND_ERR_HEADERS_TIMEOUT: "Timeout",
  UND_ERR_BODY_TIMEOUT: "Timeout",
  UND_ERR_RES_EXCEEDED_MAX_SIZE: "BodyTooLarge",
};

/**
 * The {@link FetchFailure} for an error undici reported. llhttp's parse errors
 * (`HPE_…`) and any failure after the first response byte are `BadResponse`;
 * a closed socket before it is `ConnectionReset`; the rest is named by the
 * shared `errorName` (`ECONNREFUSED` → `ConnectionRefused`, …).
 */
function failureFor(error: Error, started: boolean): FetchFailure {
  if (error instanceof FetchFailure) return error;
  const code = codeOf(error);
  const name = code !== null ? codeName(code, started) : null;
  return new FetchFailure(name ?? (started ? "BadResponse" : errorName(error)), error.message, { cause: error });
}

/** A Node or undici error's string `code`, or null. */
function codeOf(error: Error): string | null {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : null;
}

/**
 * Whether a response with this status has a body: 1xx, 204 and 304 never do,
 * whatever their Content-Length says (RFC 9112 §6.3). The shared parser ends
 * them at their headers too.
 */
function hasBody(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

function codeName(code: string, started: boolean): FetchFailure["kind"] | null {
  if (code.startsWith("HPE_")) return "BadResponse";
  const known = undiciCodes[code];
  if (known !== undefined) return known;
  if (started) return "BadResponse";
  if (code === "UND_ERR_SOCKET") return "ConnectionReset"; // "other side closed" before a byte came
  return null;
}

/**
 * undici's parsed headers in the shared {@link HttpResponse} shape: a field
 * sent more than once is joined with `", "` (`cookie` with `"; "`), except the
 * ones node:http keeps only the first of, so every stage sees the same object.
 */
function joinHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === "string") joined[name] = value;
    else if (FIRST_ONLY_HEADERS.has(name)) joined[name] = value[0] ?? "";
    else joined[name] = value.join(name === "cookie" ? "; " : ", ");
  }
  return joined;
}
