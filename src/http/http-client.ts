/**
 * The HTTP client of the async/await stage: a pool of keep-alive
 * connections (undici) behind one `await client.get(url, signal)`.
 *
 * @module
 */
import { constants as bufferConstants } from "node:buffer";
import { Socket } from "node:net";
import type { buildConnector as BuildConnector } from "undici";
import { CancelledError, FetchFailure } from "../kernel/errors.js";
import { MAX_HEADER_BYTES, type HttpResponse, type SkipBody } from "./parser.js";
import { requestHeaders } from "./request.js";
import type { Network } from "../kernel/socket.js";
import type { Proxies } from "./proxy.js";
import { ProxyNetwork } from "./proxy-network.js";
import { buildConnector, codeOf, ConnectionPools, failureFor, GetRequest, networkConnector, type PooledHandler, responseHeaders, socketOf } from "./undici.js";

/** How an {@link HttpClient} connects, waits and reads. */
export interface HttpClientOptions {
  /** Connections kept per host: the crawl's `maxTasks`, so no worker waits for a socket. */
  connections: number;
  /** Time allowed for one `get()`: waiting for a connection, connecting, and the whole response. */
  timeoutMs: number;
  /**
   * Time a `get()` may wait for its connection to open, or for the next
   * bytes of the response: each socket's own idle clock, as in stages 1 and 2.
   */
  idleTimeoutMs: number;
  /** A body longer than this fails with `BodyTooLarge`, as soon as that is known. */
  maxBodyBytes: number;
  /** The `User-Agent` header, sent with the rest of {@link requestHeaders}. */
  userAgent: string;
  /** The crawl's `headers`, sent after the default ones (see {@link requestHeaders}). Default: none. */
  headers?: Readonly<Record<string, string>>;
  /**
   * Which responses to leave unread (a crawl's `skipNonHtml` passes
   * `skippableBody`, bodies no link is read from): such a response is
   * resolved as soon as its head has come, `bodySkipped` and with an empty
   * body, and its connection is closed unread. Default null: every body is
   * read; one `get()` can say otherwise.
   */
  skipBody?: SkipBody | null;
  /** PEM certificates `https:` trusts instead of Node's default CAs; null: the defaults. */
  ca: string | Buffer | null;
  /** False: take any certificate, unchecked. */
  rejectUnauthorized: boolean;
  /** The network to connect through (the crawl option `network`); null or absent: the machine's own. */
  network?: Network | null;
  /**
   * The crawl's proxies; null or absent: none. The connector then opens each
   * socket through them (a {@link ProxyNetwork}: an `https:` origin's through
   * a `CONNECT` tunnel), and an `http:` request to a proxy names its URL in
   * absolute-form, with the proxy's `Proxy-Authorization`.
   */
  proxy?: Proxies | null;
}

/**
 * Fetches URLs over a pool of keep-alive connections: what aiohttp's
 * `ClientSession` is to the chapter's crawler.
 *
 * `get(url, signal)` dispatches one `GET` on its `ConnectionPools` (src/http/undici.ts)
 * (http/undici.ts), undici `Client`s that keep up to `connections` sockets
 * per host open between requests. A small handler
 * object (`ResponseCollector`, below) collects the response as undici parses
 * it: it fails the request as soon as the body passes `maxBodyBytes`, gives up
 * when `timeoutMs` runs out (each socket gives up by itself when no byte
 * comes for `idleTimeoutMs`), and turns every failure into a
 * {@link FetchFailure} whose `kind` is the name stages 1 and 2 give the same
 * fault. Each connection also reads its raw bytes for the shared parser's
 * limits, which llhttp does not report on (a body announced too large by
 * `Content-Length` or a chunk's size, a head over 64 KiB): `Connection` in
 * http/undici.ts. Redirects are never followed: a
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
 * event loop turn once (a `Client` of pipelining 1 says `'drain'` only after
 * a `setImmediate`), so a close already on its way is seen first.
 * llhttp inside undici is a little more lenient than the shared parser in one
 * place (it takes an `HTTP/2.0` status line) and stricter in another (it
 * refuses an unsolicited `100 Continue`); the tests pin both.
 * @see Chapter, "Coordinating Coroutines" (`aiohttp.ClientSession`)
 */
export class HttpClient {
  private readonly pools: ConnectionPools;
  private readonly headers: Record<string, string>;
  /** {@link headers} and the `http:` proxy's `Proxy-Authorization`, for a request in absolute-form (the same object without credentials). */
  private readonly proxiedHeaders: Record<string, string>;
  private readonly options: HttpClientOptions;
  /** What `close()` returned the first time: closing twice waits for the same end. */
  private closing: Promise<void> | null = null;

  constructor(options: HttpClientOptions) {
    // A longer body could not be joined into one Buffer.
    this.options = { ...options, maxBodyBytes: Math.min(options.maxBodyBytes, bufferConstants.MAX_LENGTH) };
    this.headers = requestHeaders(options.userAgent, options.headers);
    const authorization = options.proxy?.http?.authorization ?? null;
    this.proxiedHeaders = authorization === null ? this.headers : { ...this.headers, "Proxy-Authorization": authorization };
    // Connections that apply the shared parser's limits to their bytes, and that a request can close.
    this.pools = new ConnectionPools({
      connections: options.connections,
      connect: idleClockConnector(options),
      maxBodyBytes: this.options.maxBodyBytes,
      // Our own timer covers the whole attempt, and each socket's idle clock the waits within it.
      client: { maxHeaderSize: MAX_HEADER_BYTES, headersTimeout: 0, bodyTimeout: 0 },
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
   * @param reading - `skipBody` for this request alone, where it differs
   * from the client's: a `robots.txt` is read whole, whatever the crawl skips;
   * `headers` in place of the client's own (a crawl's cookies for this URL).
   */
  get(url: string, signal?: AbortSignal, reading: { skipBody?: SkipBody | null; headers?: Readonly<Record<string, string>> } = {}): Promise<HttpResponse> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const target = new URL(url);
    const { pools } = this;
    const options = reading.skipBody === undefined ? this.options : { ...this.options, skipBody: reading.skipBody };
    const proxied = target.protocol === "http:" && options.proxy != null && options.proxy.serverForUrl(target) !== null; // absolute-form to the proxy
    const headers = reading.headers === undefined ? (proxied ? this.proxiedHeaders : this.headers) : this.withProxyAuthorization(requestHeaders(this.options.userAgent, reading.headers), proxied);
    return new Promise<HttpResponse>(function sendRequest(resolve, reject) {
      const request = new GetRequest(target, headers, options.skipBody ?? null, proxied);
      pools.dispatch(request, new ResponseCollector(request, resolve, reject, options, signal ?? null));
    });
  }

  /** `headers` with the `http:` proxy's `Proxy-Authorization` when the request goes to it in absolute-form and it has credentials. */
  private withProxyAuthorization(headers: Record<string, string>, proxied: boolean): Record<string, string> {
    const authorization = proxied ? (this.options.proxy?.http?.authorization ?? null) : null;
    return authorization === null ? headers : { ...headers, "Proxy-Authorization": authorization };
  }

  /**
   * Closes every connection in the pool at once, abandoning the requests
   * still in flight: each rejects with a {@link FetchFailure}. A second call
   * waits for the same end.
   */
  close(): Promise<void> {
    this.closing ??= this.pools.destroy(new CancelledError("the HTTP client was closed"));
    return this.closing;
  }
}

/**
 * undici's connector, checking TLS certificates with `ca` and
 * `rejectUnauthorized`, that gives each socket it opens the idle clock
 * kernel/socket.ts gives stages 1 and 2's: when no byte moves for
 * `idleTimeoutMs`, connecting included, the socket is closed with a
 * `Timeout` failure, which undici fails the request on it with. With the
 * crawl's `network`, the sockets come from it ({@link networkConnector});
 * with its `proxy`, from a {@link ProxyNetwork} over it.
 *
 * @remarks Not undici's `headersTimeout` and `bodyTimeout`: they tick on its
 * one-second clock (fast timers), up to a second late, and the first counts
 * a whole head as one wait, so a head dripped in slowly would fail here and
 * not in stages 1 and 2. Nor its connect timeout (`timeout: 0`): the idle
 * clock, set as soon as the socket is made, already bounds connecting, and
 * undici's would keep a timer, a `WeakRef` and closures for each socket as
 * long as it lives: thousands of them at C10K.
 */
function idleClockConnector({ idleTimeoutMs, ca, rejectUnauthorized, network: own = null, proxy = null }: HttpClientOptions): BuildConnector.connector {
  const network = proxy !== null ? new ProxyNetwork(proxy, own, { ca, rejectUnauthorized }) : own; // through the crawl's proxies, if any
  const connect = network !== null ? networkConnector(network) : buildConnector({ timeout: 0, rejectUnauthorized, ...(ca === null ? {} : { ca }) });
  return function connectWithIdleClock(where, connected) {
    const socket: unknown = connect(where, connected); // undici's connector returns the socket it opens (typed void)
    // A plain listener, not setTimeout()'s callback, which Node wraps in a once() wrapper per socket: the timeout closes the socket anyway.
    if (socket instanceof Socket) socket.on("timeout", idledOut).setTimeout(idleTimeoutMs);
  };
}

/** No byte came on this socket for its idle timeout: it closes with a `Timeout` failure. */
function idledOut(this: Socket): void {
  this.destroy(new FetchFailure("Timeout", `No byte sent or received for ${this.timeout ?? 0} ms`));
}

/**
 * The undici handler for one request: undici calls its methods as the
 * response arrives, and it settles the promise `get()` returned exactly once.
 * With `skipBody`, a head that says the body holds no links settles it at
 * once, and the request is aborted unread.
 *
 * @remarks A handler of our own rather than undici's `request()`: it stops a
 * body at `maxBodyBytes` as it streams in, and it sees the first response
 * byte (`onResponseStarted`), the only way to tell "closed before any
 * response byte" (`ConnectionReset`) from "cut short after it began"
 * (`BadResponse`), the line stages 1 and 2 draw too. It is written to the
 * methods undici's HTTP/1 client calls (`onConnect`, `onHeaders`, `onData`,
 * `onComplete`, `onError`), not to undici 7's newer `onRequestStart`…
 * `onResponseEnd`: a handler of those is wrapped, per request, in an adapter
 * and a controller that parse the head into an object of undici's own
 * (docs/benchmarks.md, "Issue 29, third round").
 */
class ResponseCollector implements PooledHandler {
  /** undici's abort for this request, handed over when the request is written to a socket; null before. */
  private abortRequest: ((error: Error) => void) | null = null;
  private started = false;
  /** Whether the promise `get()` returned has settled: a request that waited for a connection is then not sent. */
  settled = false;
  private status = 0;
  /** The head's fields once they came; before, one empty object shared by every collector, never handed out. */
  private headers: Record<string, string> = NO_HEADERS;
  /**
   * The body as it came: views of the socket's read buffers, in an array made
   * when the first of them comes and dropped once the request settles; null
   * before and after (see {@link settle}).
   */
  private chunks: Uint8Array[] | null = null;
  private received = 0;
  private readonly timer: NodeJS.Timeout;
  /** The signal's abort listener, removed once the request settles; null without a signal. */
  private readonly abandon: ((this: AbortSignal) => void) | null = null;

  constructor(
    /** What `get()` dispatched: {@link socketOf} finds the request's socket by it. */
    private readonly request: GetRequest,
    private readonly resolve: (response: HttpResponse) => void,
    private readonly reject: (reason: unknown) => void,
    private readonly options: HttpClientOptions,
    /** The signal that abandons this request. */
    private readonly signal: AbortSignal | null,
  ) {
    this.timer = setTimeout(attemptTimedOut, options.timeoutMs, this); // The collector as the timer's argument: no closure per request.
    if (signal === null) return; // The crawler passes none: no listener to make.
    const collector = this;
    this.abandon = function requestAborted(this: AbortSignal): void {
      collector.fail(this.reason);
    };
    signal.addEventListener("abort", this.abandon, { once: true });
  }

  onConnect(abort: (error: Error) => void): void {
    this.abortRequest = abort;
    // Given up while waiting for a connection: undici only now hands us the means to abort.
    if (this.settled) abort(new CancelledError("the request was abandoned"));
  }

  /** The first response byte came: a failure from now on is `BadResponse`, no longer `ConnectionReset`. */
  onResponseStarted(): void {
    this.started = true;
  }

  /** The head came: `rawHeaders` holds its fields as undici read them (name, value, …). Returns true, as `onData` does: keep reading (false would pause the socket). */
  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.started = true;
    this.status = statusCode;
    this.headers = responseHeaders(rawHeaders);
    if (this.options.skipBody == null || !this.options.skipBody(statusCode, this.headers) || !this.settle()) return true;
    // The head says no link is in the body: done, and the connection is closed before its bytes are read.
    this.resolve({ status: statusCode, headers: this.headers, body: new Uint8Array(0), bodySkipped: true });
    this.abort(new CancelledError("the body is not read (skipBody)"));
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    this.received += chunk.length;
    if (this.received > this.options.maxBodyBytes) {
      this.fail(this.tooLarge(`more than ${this.received - chunk.length} bytes`));
      return true;
    }
    this.chunks ??= []; // Made now rather than with the collector: see settle().
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    const chunks = this.chunks ?? []; // null: no byte of body came
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.received);
    this.settle();
    this.resolve({ status: this.status, headers: this.headers, body: body ?? new Uint8Array(0) });
  }

  onError(error: Error): void {
    const bodyless = this.status === 204 || this.status === 304; // status is 0 until the headers came
    if (bodyless && this.received === 0 && codeOf(error) === "UND_ERR_RES_CONTENT_LENGTH_MISMATCH") {
      // undici holds a 204 or 304 to its Content-Length, though neither has a
      // body (RFC 9110 §8.6): it is complete, as the shared parser says.
      this.onComplete();
      return;
    }
    if (this.settle()) this.reject(failureFor(error, this.started));
  }

  /** The attempt's time ran out before its response was whole. */
  timedOut(): void {
    this.fail(new FetchFailure("Timeout", `No complete response within ${this.options.timeoutMs} ms`));
  }

  /** Settles with `reason` and aborts the request, closing its socket with the reason. */
  fail(reason: unknown): void {
    if (!this.settle()) return;
    this.reject(reason);
    this.abort(reason instanceof Error ? reason : new CancelledError("the request was abandoned"));
  }

  /** Aborts the request, settled already, closing its socket with `error`. */
  private abort(error: Error): void {
    if (this.abortRequest === null) return; // not sent yet: onConnect aborts it
    // Closed by us first: after undici's abort alone, its Client would connect again for this request.
    socketOf(this.request)?.destroy(error);
    this.abortRequest(error);
  }

  /**
   * Marks the request settled and drops its timer, its abort listener and the
   * body's chunks; false if it already was.
   *
   * @remarks Dropping `chunks` here, and making it only when the first
   * chunk comes, are for memory alone. V8 decides for each array literal in
   * the code whether to allocate its arrays straight in the old generation
   * (see {@link GetRequest}), and it did so for a `chunks = []` made with
   * each collector, when the request was sent: 98 % of the requests of a
   * 100,000-page crawl. Such an array stays there, dead, until a full
   * collection. Left full, it kept every socket read buffer of its response
   * alive that long (on S4's 100,000 pages, 710 → 320 bytes a page moved to
   * the old generation, 30 → 4 MB of external memory at the peak); emptied,
   * it was still some 35 bytes a page of old garbage by itself. An array
   * made when the body starts lives only while the body comes in, and V8
   * allocates it young (docs/benchmarks.md, "Memory per page (S4)" and "A
   * million pages, records not kept (S5)").
   */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.chunks = null;
    clearTimeout(this.timer);
    if (this.abandon !== null) this.signal?.removeEventListener("abort", this.abandon);
    return true;
  }

  private tooLarge(what: string): FetchFailure {
    return new FetchFailure("BodyTooLarge", `The body is longer than ${this.options.maxBodyBytes} bytes (maxBodyBytes, or the longest Buffer): ${what}`);
  }
}

/** What a {@link ResponseCollector} holds until its head comes: none made per request. */
const NO_HEADERS: Record<string, string> = {};

/** The timer of each {@link ResponseCollector}: its attempt took longer than `timeoutMs`. */
function attemptTimedOut(collector: ResponseCollector): void {
  collector.timedOut();
}
