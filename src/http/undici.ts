/**
 * What stage 3 adds to undici so that it keeps the contract stages 1 and 2
 * keep with the shared parser: connections that apply the shared limits to
 * their raw bytes and let a request close its own socket, pooled per origin
 * ({@link ConnectionPools}), undici's headers in the shared
 * {@link HttpResponse} shape, and undici's errors under the contract's
 * names. Only undici 7's documented API is used: its index's exports, the
 * `connect` option, `dispatch`, its events and handler methods. Nothing here
 * waits; stage 3's `HttpClient` builds on it.
 *
 * @module
 */
import type { Socket } from "node:net";
import type * as Undici from "undici";
import { Client, buildConnector, util, type Dispatcher } from "undici";
import { CancelledError, errorName, FetchFailure } from "../kernel/errors.js";
import type { Network } from "../kernel/socket.js";
import { FIRST_ONLY_HEADERS, headerSeparator, type HttpResponse, type SkipBody } from "./parser.js";
import { requestTarget } from "./proxy.js";
import { ResponseLimits } from "./response-limits.js";

/**
 * undici's public classes and functions as stage 3 uses them, from the
 * package's index: `Client` (one keep-alive connection), `buildConnector`
 * (Node's sockets with undici's TLS options), and `util.headerNameToString`.
 *
 * @remarks undici 7 has no `exports` map and documents no entry point but
 * its index, which also loads its fetch, WebSocket, EventSource, cache and
 * mock parts: 110 files where `Client` alone needs 19, some 0.1 s of CPU
 * at the start of a stage-3 process (docs/benchmarks.md, "Issue 39").
 * Requiring the files that define these instead pinned the crawler to one
 * patch release of undici's file layout; the index is what any undici 7
 * promises to keep.
 */
export { buildConnector, Client };

/** What a Connection keeps in view: its socket, and the bodies the request it answers leaves unread. */
interface Opened {
  socket: Socket | null;
  skipBody: SkipBody | null;
}

/**
 * An undici connector that opens its sockets through `network` (the crawl
 * option, see kernel/socket.ts {@link Network}) instead of Node's
 * `net.connect`/`tls.connect`: what undici's own `buildConnector` does, on
 * another network. It hands undici the socket once it says `connect` (or
 * `secureConnect` for `https:`), or the error it fails with first.
 *
 * @remarks undici's connector also sets TCP keep-alive probes and Nagle off;
 * the same calls are made here, and a simulated socket takes them as no-ops.
 */
export function networkConnector(network: Network): Undici.buildConnector.connector {
  return function connectThroughNetwork(options, callback) {
    const secure = options.protocol === "https:";
    const host = options.hostname.startsWith("[") ? options.hostname.slice(1, -1) : options.hostname;
    const port = options.port === "" || options.port === undefined ? (secure ? 443 : 80) : Number(options.port);
    const servername = secure ? (options.servername ?? null) : null;
    let answer: Undici.buildConnector.Callback | null = callback;
    const socket = network.connect({ host, port, secure, servername });
    socket.setNoDelay(true).setKeepAlive(true, 60_000);
    socket.once(secure ? "secureConnect" : "connect", function connected(this: Socket) {
      const reply = answer;
      answer = null;
      reply?.(null, this);
    });
    socket.on("error", function failed(error: Error) {
      const reply = answer;
      answer = null;
      reply?.(error, null);
    });
    return socket; // as undici's connector does, so the idle clock can be set on it
  };
}

/**
 * What stage 3 dispatches for one `GET url`: undici's dispatch options
 * (`origin`, `path`, `method`, `headers`), the `headers` shared by every
 * request of the crawl; and, for the {@link Connection} it is dispatched on,
 * the bodies it leaves unread (`skipBody`: its handler closes the
 * connection after such a head, so the connection's {@link ResponseLimits}
 * applies no body limit past it, as the shared parser does in stages 1 and
 * 2). The connection says in `opened` what it has open: {@link socketOf}.
 *
 * @remarks A class rather than an object literal, for memory alone. V8
 * decides for each object literal in the code whether to allocate its
 * objects straight in the old generation, where only a full collection
 * frees them (allocation-site pretenuring). It chose so for the literal this
 * class replaces: 99 % of S4's requests had their options in the old
 * generation when their response ended, and each kept its new `origin` and
 * `path` strings alive until the next full collection too. Objects made by
 * `new` get no such treatment: 0 % of these were old at that point. On
 * 100,000 pages, 320 → 260 bytes a page moved to the old generation; with
 * the fix in `ResponseCollector.settle` beside it, S4's peak RSS went from
 * 1.61 to 1.13 × the reference crawler's (docs/benchmarks.md, "Memory per
 * page (S4)").
 */
export class GetRequest implements Dispatcher.DispatchOptions {
  readonly method = "GET";
  readonly origin: string;
  readonly path: string;
  /** What the connection this request was dispatched on has open; null until then, or on another Agent. */
  opened: Opened | null = null;

  constructor(
    url: URL,
    readonly headers: Readonly<Record<string, string>>,
    readonly skipBody: SkipBody | null,
    /** Sent to a forward proxy: the path is the whole URL (absolute-form), which undici writes as given. */
    proxied = false,
  ) {
    this.origin = url.origin;
    this.path = requestTarget(url, proxied);
  }
}

/**
 * The undici handler a {@link ConnectionPools} is given with each request:
 * one that says whether it has settled already (given up, timed out or
 * abandoned while it waited for a connection), so that a waiting request
 * that settled is not sent.
 */
export interface PooledHandler extends Dispatcher.DispatchHandler {
  readonly settled: boolean;
}

/** How the connections of a {@link ConnectionPools} are made. */
export interface PoolOptions {
  /** Connections per origin at most: the crawl's `maxTasks`, so no worker waits for one. */
  readonly connections: number;
  /** Opens each socket: `buildConnector(...)` (where the TLS options go) or {@link networkConnector}, undici's `connect(options, callback)`. */
  readonly connect: Undici.buildConnector.connector;
  /** The body limit each connection's {@link ResponseLimits} applies to its raw bytes. */
  readonly maxBodyBytes: number;
  /** The rest of each undici `Client`'s options (`maxHeaderSize`, `headersTimeout`, `bodyTimeout`). */
  readonly client: Readonly<Client.Options>;
}

/** Free connections a pool keeps open, as node:http's `Agent` keeps `maxFreeSockets` (256): the rest are closed as they go free. */
const MAX_FREE = 256;

/** What a connection's socket is closed with when it goes free past {@link MAX_FREE}. */
const IDLE_CLOSED = new CancelledError("closed: more free connections than the pool keeps");

/** What the connections of a pool forgotten for want of use are destroyed with: they have no socket and no request. */
const RETIRED = new CancelledError("closed: no connection to the origin is open");

/**
 * Stage 3's connections, a pool of them for each origin: what undici's
 * `Agent` of `Pool`s is, built on undici's public `Client` alone (one
 * keep-alive connection, pipelining 1) and its documented `dispatch` and
 * `'drain'`, `'connect'` and `'disconnect'` events.
 *
 * Each origin's pool ({@link OriginPool}) makes up to `connections`
 * {@link Connection}s, and keeps a list of the free ones, so that a request
 * finds one at once: undici's `Pool` looks through every connection for a
 * free one, and at C10K, with 10,000 busy, that search was a fifth of the
 * crawl's CPU (docs/benchmarks.md, "Stage 3 at C10K"). A request that finds
 * none free while the pool is full waits in the pool's queue; a connection
 * that drains takes the first of them that has not settled meanwhile. The
 * crawl core decides how many requests a host gets at once, and a crawl has
 * at most `maxTasks` in flight: the pool never opens more connections than
 * that. A pool whose connections have no socket open, none busy and no
 * request waiting is forgotten, as undici's `Agent` forgets its pools, so
 * that a crawl across many hosts does not keep every host's.
 *
 * @remarks The last round's pool extended undici's internal `PoolBase` and
 * read four of its symbols, which tied the crawler to one patch release of
 * undici (issue 39); everything here is undici 7's documented API.
 */
export class ConnectionPools {
  private readonly pools = new Map<string, OriginPool>();
  /** What {@link destroy} was given: later requests fail with it. */
  private destroyedBy: Error | null = null;

  constructor(private readonly options: PoolOptions) {}

  /** Sends `request` on a free connection to its origin, or queues it until one is free; after {@link destroy}, fails it. */
  dispatch(request: GetRequest, handler: PooledHandler): void {
    if (this.destroyedBy !== null) {
      handler.onError?.(this.destroyedBy);
      return;
    }
    let pool = this.pools.get(request.origin);
    if (pool === undefined) {
      pool = new OriginPool(this, request.origin, this.options);
      this.pools.set(request.origin, pool);
    }
    pool.dispatch(request, handler);
  }

  /** Destroys every connection, failing the requests on them and those waiting with `error`. */
  async destroy(error: Error): Promise<void> {
    this.destroyedBy ??= error;
    const destroying: Promise<void>[] = [];
    for (const pool of this.pools.values()) destroying.push(pool.destroy(error));
    this.pools.clear();
    await Promise.all(destroying);
  }

  /** Forgets `pool`, which has no socket open, no request and none waiting, and destroys its connections. */
  retire(pool: OriginPool): void {
    if (this.pools.get(pool.origin) !== pool) return; // Destroyed, or retired already.
    this.pools.delete(pool.origin);
    void pool.destroy(RETIRED);
  }
}

/** A request waiting in an {@link OriginPool} for a connection. */
interface Waiting {
  readonly request: GetRequest;
  readonly handler: PooledHandler;
  /** How many requests of the pool had found no free connection before this one: its place in line. */
  readonly number: number;
}

/**
 * One origin's connections: the free ones on a list, the last freed used
 * first; the ones whose socket was closed as they went free past
 * {@link MAX_FREE} on a second list, each to connect again for its next
 * request (an open connection holds some 6 KB of heap: its socket, llhttp's
 * parser, undici's closures, and at the end of a C10K crawl thousands stood
 * idle until `close()`, docs/benchmarks.md, "Stage 3 at C10K"); new ones
 * while the pool has room; else the request waits.
 *
 * A connection is busy from the `dispatch` that returned false (undici's
 * "busy until `'drain'`") to its `'drain'`; a `dispatch` that returns true,
 * or that failed its request at once (undici then calls the handler's
 * `onError` and emits no `'drain'`), leaves it free.
 */
class OriginPool {
  /** Every connection made, for {@link destroy}. */
  private readonly connections: Connection[] = [];
  private readonly free: Connection[] = [];
  private readonly closed: Connection[] = [];
  private readonly waiting: Waiting[] = [];
  private busy = 0;
  /** Requests that found no free connection so far; each waiting one keeps its number. */
  private parked = 0;
  /** Waiting requests numbered below this have waited through a whole check phase: {@link fill} opens connections for them. */
  private ripe = 0;
  /** Whether a {@link fill} is queued. */
  private filling = false;
  /** Connections with a socket connected: undici's `'connect'` less its `'disconnect'`. */
  private connected = 0;

  constructor(
    private readonly pools: ConnectionPools,
    readonly origin: string,
    private readonly options: PoolOptions,
  ) {}

  /** Sends `request` on a free connection, or has it wait for one that drains or for {@link fill}. */
  dispatch(request: GetRequest, handler: PooledHandler): void {
    const connection = this.free.pop() ?? this.closed.pop();
    if (connection !== undefined) {
      this.send(connection, request, handler);
      return;
    }
    this.waiting.push({ request, handler, number: this.parked });
    this.parked += 1;
    if (this.filling) return;
    this.filling = true;
    this.ripe = this.parked - 1; // Not this request yet, nor any after it.
    setImmediate(fillPool, this);
  }

  /**
   * Opens a connection for each ripe waiting request while the pool has
   * room; then the ones that came since are ripe, and it runs again in the
   * next turn's check phase, until none waits or the pool is full (drains
   * serve the rest).
   *
   * @remarks Why a request waits a whole check phase rather than connecting
   * at once: undici gives a keep-alive connection back (its `'drain'`) in
   * the check phase after its response ended (a `setImmediate`, to see first
   * whether the server closes it after all), while the worker that read the
   * response asks for its next page at once. At C10K thousands of responses
   * end within a few turns of the event loop, and each request they led to
   * opened a connection of its own while the one just used waited for its
   * drain: 8,900 connects for 10,000 pages, where stage 1 makes 6,700
   * (docs/benchmarks.md, "Issue 39: stage 3's requests wait a turn for a
   * connection"). A request that came in a turn's poll phase is ripe once
   * that turn's check phase, and every drain in it, is over.
   */
  fill(): void {
    for (let next = this.waiting[0]; next !== undefined && next.number < this.ripe; next = this.waiting[0]) {
      if (!next.handler.settled) {
        const connection = this.newConnection();
        if (connection === null) {
          this.filling = false; // Full: the rest wait for drains.
          return;
        }
        this.waiting.shift();
        this.send(connection, next.request, next.handler);
      } else this.waiting.shift(); // Given up while it waited: nothing to send.
    }
    this.ripe = this.parked;
    this.filling = this.waiting.length > 0;
    if (this.filling) setImmediate(fillPool, this);
    else this.retireIfIdle();
  }

  /** `connection` can take a request again (its `'drain'`): the first waiting request not settled, else the free list. */
  drained(connection: Connection): void {
    this.busy -= 1;
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      if (next.handler.settled) continue; // Given up while it waited: nothing to send.
      this.send(connection, next.request, next.handler);
      return;
    }
    if (this.free.length < MAX_FREE) this.free.push(connection);
    else {
      connection.closeSocket();
      this.closed.push(connection);
    }
    this.retireIfIdle();
  }

  /** A connection's socket connected (+1) or closed (-1). */
  connectedChanged(change: 1 | -1): void {
    this.connected += change;
    if (change < 0) this.retireIfIdle();
  }

  /** Destroys every connection with `error`, and fails the requests waiting with it. */
  async destroy(error: Error): Promise<void> {
    for (const { handler } of this.waiting.splice(0)) if (!handler.settled) handler.onError?.(error);
    const destroying: Promise<void>[] = [];
    for (const connection of this.connections) destroying.push(connection.destroy(error));
    await Promise.all(destroying);
  }

  /** Sends `request` on `connection`, which tells the request's limits and abort what it has open. */
  private send(connection: Connection, request: GetRequest, handler: PooledHandler): void {
    request.opened = connection.opened;
    connection.opened.skipBody = request.skipBody; // With pipelining 1, the next response answers this request.
    this.busy += 1;
    if (!connection.dispatch(request, handler) && !handler.settled) return; // Busy until its 'drain'.
    this.busy -= 1; // Not busy after all: undici refused the request at once, or can take another.
    this.free.push(connection);
  }

  private newConnection(): Connection | null {
    if (this.connections.length >= this.options.connections) return null;
    const connection = new Connection(this, this.origin, this.options);
    this.connections.push(connection);
    return connection;
  }

  private retireIfIdle(): void {
    if (this.connected === 0 && this.busy === 0 && this.waiting.length === 0) this.pools.retire(this);
  }
}

/**
 * The socket a request dispatched on a {@link ConnectionPools} was written
 * to, once it was; null before. undici's handler API gives a request no
 * handle on its socket.
 */
export function socketOf(request: GetRequest): Socket | null {
  return request.opened?.socket ?? null;
}

/**
 * One keep-alive connection of a pool: an undici `Client`, whose socket we
 * open through its documented `connect` option so as to keep it in view.
 *
 * Two things need that socket. A {@link ResponseLimits} reads every byte it
 * brings, for the limits llhttp cannot tell the handler about, and closes it
 * with the limit broken: undici then fails the request on it with that
 * failure. And a request that fails on the client's side (timed out, too
 * large, abandoned) must close its socket itself ({@link socketOf}): undici's
 * own abort closes it with an "informational" error, after which the Client
 * puts the aborted request back in its queue and connects again for it, a
 * connection that carries no request (nodejs/undici#5845, in undici 7.30.2
 * too). With pipelining 1, the request on a Connection's socket is the one
 * its pool sent it last.
 */
class Connection extends Client {
  /** What this connection has open, which the request sent on it reads. */
  readonly opened: Opened;

  constructor(
    /** The pool this connection is one of. */
    readonly pool: OriginPool,
    origin: string,
    { connect, maxBodyBytes, client }: PoolOptions,
  ) {
    const opened: Opened = { socket: null, skipBody: null };
    super(origin, {
      ...client,
      connect: function connectAndWatch(where: Undici.buildConnector.Options, connected: Undici.buildConnector.Callback): void {
        connect(where, function socketOpened(...result: Parameters<Undici.buildConnector.Callback>): void {
          const socket = result[1] ?? null; // undici's connector leaves it out on failure
          if (socket !== null) watchLimits(socket, new ResponseLimits(maxBodyBytes, opened));
          opened.socket = socket;
          connected(...result);
        });
      },
    });
    this.opened = opened;
    this.on("drain", connectionDrained).on("connect", connectionOpened).on("disconnect", connectionClosed);
  }

  /** Closes this connection's socket, idle, and leaves the connection to connect again for its next request; false if it has none. */
  closeSocket(): boolean {
    const { socket } = this.opened;
    if (socket === null || socket.destroyed) return false;
    this.opened.socket = null; // Not kept alive by us until the next connect.
    socket.destroy(IDLE_CLOSED); // With an error: undici then makes none of its own for the close.
    return true;
  }
}

/** {@link OriginPool.fill}, queued with the pool as its argument: no closure per turn. */
function fillPool(pool: OriginPool): void {
  pool.fill();
}

/** Each connection's `'drain'` listener: one function for all, which undici calls on the connection. */
function connectionDrained(this: Connection): void {
  this.pool.drained(this);
}

/** Each connection's `'connect'` listener: its socket is connected. */
function connectionOpened(this: Connection): void {
  this.pool.connectedChanged(1);
}

/** Each connection's `'disconnect'` listener: its socket closed. */
function connectionClosed(this: Connection): void {
  this.pool.connectedChanged(-1);
}

/** Reads each chunk of `socket` as undici reads it, and closes the socket with the limit a chunk breaks. */
function watchLimits(socket: Socket, limits: ResponseLimits): void {
  // Paused first, as a 'data' listener alone would set the socket flowing; undici reads
  // it with read(), which emits each chunk it returns as 'data', before undici parses it.
  socket.pause().on("data", function readLimits(chunk: Buffer) {
    const broken = limits.read(chunk);
    if (broken !== null) socket.destroy(broken);
  });
}

/**
 * undici's `headerNameToString` (public as `util.headerNameToString`): a
 * header name as its HTTP/1 parser hands it over (a Buffer), lowercased,
 * through its table of known names first. It is the function undici's own
 * `parseHeaders` names every field with, so {@link responseHeaders} names
 * them as undici did when stage 3 took its parsed headers.
 */
export const headerNameToString: (name: Buffer) => string = util.headerNameToString;

/**
 * A response head as undici's HTTP/1 parser hands it to a handler (name,
 * value, name, value…, each a Buffer) in the shared {@link HttpResponse}
 * shape: names lowercased as undici names them, values read as Latin-1; a
 * field sent more than once is joined as the shared parser joins it
 * (`headerSeparator`: `", "`, `cookie` with `"; "`, `set-cookie` with `"\n"`),
 * except the ones node:http keeps only the first of, so every stage sees the
 * same object.
 *
 * @remarks Built from the raw fields in one pass: undici's own parsed object
 * (`parseHeaders`, made for a handler of its newer API) would be an object
 * of strings and arrays to copy again into this one.
 */
export function responseHeaders(raw: readonly Buffer[]): HttpResponse["headers"] {
  const headers: Record<string, string> = {};
  for (let i = 1; i < raw.length; i += 2) {
    const name = headerNameToString(raw[i - 1]);
    const value = raw[i].toString("latin1");
    const previous = headers[name];
    // A name like `constructor` reads Object.prototype's: only an own property is a field already seen.
    if (previous === undefined || !Object.hasOwn(headers, name)) {
      if (name === "__proto__") Object.defineProperty(headers, name, { value, enumerable: true, configurable: true, writable: true });
      else headers[name] = value;
    } else if (!FIRST_ONLY_HEADERS.has(name)) headers[name] = `${previous}${headerSeparator(name)}${value}`;
  }
  return headers;
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
 * The {@link FetchFailure} for an error undici reported. A `FetchFailure`
 * (one a {@link ResponseLimits} closed the socket with) stays as it is;
 * llhttp's parse errors (`HPE_…`) and any failure after the first response
 * byte are `BadResponse`; a closed socket before it is `ConnectionReset`; the
 * rest is named by the shared `errorName` (`ECONNREFUSED` →
 * `ConnectionRefused`, …).
 *
 * @param started - whether a byte of the response had come
 */
export function failureFor(error: Error, started: boolean): FetchFailure {
  if (error instanceof FetchFailure) return error;
  const code = codeOf(error);
  const name = code !== null ? codeName(code, started) : null;
  return new FetchFailure(name ?? (started ? "BadResponse" : errorName(error)), error.message, { cause: error });
}

/** A Node or undici error's string `code`, or null. */
export function codeOf(error: Error): string | null {
  return "code" in error && typeof error.code === "string" ? error.code : null;
}

function codeName(code: string, started: boolean): FetchFailure["kind"] | null {
  if (code.startsWith("HPE_")) return "BadResponse";
  const known = undiciCodes[code];
  if (known !== undefined) return known;
  if (started) return "BadResponse";
  if (code === "UND_ERR_SOCKET") return "ConnectionReset"; // "other side closed" before a byte came
  return null;
}
