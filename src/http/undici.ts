/**
 * What stage 3 adds to undici so that it keeps the contract stages 1 and 2
 * keep with the shared parser: connections that apply the shared limits to
 * their raw bytes and let a request close its own socket, undici's headers in
 * the shared {@link HttpResponse} shape, and undici's errors under the
 * contract's names. Nothing here waits; stage 3's `HttpClient` builds on it.
 *
 * @module
 */
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import type * as Undici from "undici";
import type { Dispatcher } from "undici";
import { CancelledError, errorName, FetchFailure } from "../kernel/errors.js";
import type { Network } from "../kernel/socket.js";
import { FIRST_ONLY_HEADERS, headerSeparator, type HttpResponse, type SkipBody } from "./parser.js";
import { requestTarget } from "./proxy.js";
import { ResponseLimits } from "./response-limits.js";

/**
 * undici's connection classes, each required from the file that defines it
 * rather than from the package's index, which also loads undici's fetch,
 * WebSocket, cache and mock parts (some 110 files) and, through them, Node's
 * own bundled copy of undici: about 90 ms of CPU at the start of every
 * stage-3 process for nothing it uses (docs/benchmarks.md, start-up). undici
 * 7 has no `exports` map, so these paths are as open as its index; a test
 * checks that each is the very class or function the index exports.
 */
const requireUndici = createRequire(import.meta.url);
export const Agent: typeof Undici.Agent = requireUndici("undici/lib/dispatcher/agent.js");
export type Agent = Undici.Agent;
export const Client: typeof Undici.Client = requireUndici("undici/lib/dispatcher/client.js");
export const buildConnector: typeof Undici.buildConnector = requireUndici("undici/lib/core/connect.js");

/**
 * What {@link ConnectionPool} builds on: undici's `PoolBase` (its queue of
 * waiting requests, close and destroy, the pool's events), which leaves to
 * a subclass the choice of a client (`kGetDispatcher`), and the symbols of
 * the pool's own fields it reads. undici's `Pool` is such a subclass.
 *
 * @remarks These are undici's internals, not its documented API: package.json
 * therefore takes undici 7.30 patch releases only (`~7.30.2`), and
 * test/http/undici-parts.test.ts checks that `Pool` still extends this
 * `PoolBase` and still finds its client through `kGetDispatcher`.
 */
export const poolBase: {
  PoolBase: new () => Dispatcher;
  kClients: symbol;
  kNeedDrain: symbol;
  kAddClient: symbol;
  kGetDispatcher: symbol;
} = requireUndici("undici/lib/dispatcher/pool-base.js");
const { kClients, kNeedDrain, kAddClient, kGetDispatcher } = poolBase;

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
 * The `factory` for an undici `Agent` whose pools are made of
 * {@link Connection}s: each origin gets a {@link ConnectionPool} of up to
 * `connections` Connections, each opening its socket with `connect`
 * (`buildConnector(...)`, where the connect timeout and TLS options go).
 */
export function watchedPools(
  connect: Undici.buildConnector.connector,
  maxBodyBytes: number,
  connections: number,
): (origin: string | URL, options: object) => Dispatcher {
  return function poolFor(origin, options) {
    const url = new URL(origin);
    return new ConnectionPool(connections, function connectionFor(pool: ConnectionPool): Connection {
      return new Connection(pool, url, options, connect, maxBodyBytes);
    });
  };
}

/** Free connections a pool keeps open, as node:http's `Agent` keeps `maxFreeSockets` (256): the rest are closed as they go free. */
const MAX_FREE = 256;

/** What a connection's socket is closed with when it goes free past {@link MAX_FREE}. */
const IDLE_CLOSED = new CancelledError("closed: more free connections than the pool keeps");

/**
 * undici's `Pool` with a list of its free connections, so that a request
 * finds one at once: undici's looks through every connection of the pool
 * for a free one, and at C10K, with 10,000 busy, that search was a fifth of
 * the crawl's CPU (docs/benchmarks.md, "Stage 3 at C10K").
 *
 * A connection goes on the list when it is made and each time it drains
 * (undici's `'drain'`: it can take a request again); it comes off when it is
 * found busy, closed or destroyed. Past {@link MAX_FREE} free ones, a
 * connection that drains has its socket closed instead, and waits on a second
 * list to connect again: an open connection holds some 6 KB of heap (its
 * socket, llhttp's parser, undici's closures), and at the end of a C10K
 * crawl thousands stood idle until `close()` (docs/benchmarks.md, "Stage 3
 * at C10K"). The rest is undici's `PoolBase`: requests
 * wait in its queue when every connection is busy and the pool is full, and
 * a connection that drains takes the first of them.
 */
class ConnectionPool extends poolBase.PoolBase {
  /** Connections that were free when they went on, the last one freed last. */
  private readonly free: Connection[] = [];
  /** Connections whose socket was closed as they went free past {@link MAX_FREE}: each connects again for its next request. */
  private readonly closed: Connection[] = [];

  constructor(
    private readonly connections: number,
    private readonly connectionFor: (pool: ConnectionPool) => Connection,
  ) {
    super();
  }

  /** The connection for the next request: the last freed that is still free, or a new one while the pool has room; else none. */
  [kGetDispatcher](): Dispatcher | undefined {
    const { free } = this;
    while (free.length > 0) {
      const connection = free[free.length - 1];
      if (Reflect.get(connection, kNeedDrain) !== true && !connection.closed && !connection.destroyed) return connection;
      free.pop();
    }
    const { closed } = this;
    while (closed.length > 0) {
      const connection = closed.pop();
      if (connection !== undefined && Reflect.get(connection, kNeedDrain) !== true && !connection.closed && !connection.destroyed) return connection;
    }
    const clients: unknown = Reflect.get(this, kClients);
    if (!Array.isArray(clients) || clients.length >= this.connections) return undefined;
    const connection = this.connectionFor(this);
    Reflect.apply(Reflect.get(this, kAddClient), this, [connection]); // Before our 'drain' listener: the pool's runs first.
    connection.on("drain", connectionDrained);
    free.push(connection);
    return connection;
  }

  /** `connection` can take a request again: on the free list, or closed past {@link MAX_FREE}. */
  drained(connection: Connection): void {
    if (Reflect.get(connection, kNeedDrain) === true) return; // Busy again: the pool's queue had its turn first.
    if (this.free.length < MAX_FREE) this.free.push(connection);
    else if (connection.closeSocket()) this.closed.push(connection);
  }
}

/** Each connection's `'drain'` listener: one function for all, which undici calls on the connection. */
function connectionDrained(this: Connection): void {
  this.pool.drained(this);
}

/**
 * The socket a request dispatched on a {@link watchedPools} Agent was
 * written to, once it was; null before, or on another Agent. undici's handler
 * API gives a request no handle on its socket.
 */
export function socketOf(request: GetRequest): Socket | null {
  return request.opened?.socket ?? null;
}

/**
 * One keep-alive connection of a pool: an undici `Client`, made by us so as
 * to keep its socket in view.
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
 * dispatched to it and started last.
 */
class Connection extends Client {
  private readonly opened: Opened;

  constructor(
    /** The pool this connection is one of. */
    readonly pool: ConnectionPool,
    origin: URL,
    options: object,
    connect: Undici.buildConnector.connector,
    maxBodyBytes: number,
  ) {
    const opened: Opened = { socket: null, skipBody: null };
    super(origin, {
      ...options,
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
  }

  /** Closes this connection's socket, idle, and leaves the connection to connect again for its next request; false if it has none. */
  closeSocket(): boolean {
    const { socket } = this.opened;
    if (socket === null || socket.destroyed) return false;
    this.opened.socket = null; // Not kept alive by us until the next connect.
    socket.destroy(IDLE_CLOSED); // With an error: undici then makes none of its own for the close.
    return true;
  }

  /** Tells `options`' request that it is on this connection (the Pool hands it our options, not our handler). */
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const request = options instanceof GetRequest ? options : null;
    if (request !== null) request.opened = this.opened;
    this.opened.skipBody = request?.skipBody ?? null; // With pipelining 1, the next response answers this request.
    return super.dispatch(options, handler);
  }
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
 * undici's `headerNameToString`: a header name as its HTTP/1 parser hands it
 * over (a Buffer), lowercased, through its table of known names first. It
 * is the function undici's own `parseHeaders` names every field with, so
 * {@link responseHeaders} names them as undici did when stage 3 took its
 * parsed headers; a test checks it is still there.
 */
export const headerNameToString: (name: Buffer) => string = requireUndici("undici/lib/core/util.js").headerNameToString;

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
