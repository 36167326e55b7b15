/**
 * The fixture web site: a real `node:http` server on 127.0.0.1 that tests,
 * examples, benchmarks and `crawl --demo` point the crawlers at.
 *
 * @module
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { faultHandler, type Fault, type RouteHandler } from "./faults.js";
import { linksHtml, NOT_FOUND_BODY, NOT_FOUND_TYPE, sitemapXml } from "./html.js";

/** Options for {@link FixtureSite.start}. */
export interface FixtureSiteOptions {
  /** Wait this long before answering any request (a route's own delay wins). Default 0. */
  delayMs?: number;
  /** The port to listen on. Default 0: an ephemeral port the system picks. */
  port?: number;
  /**
   * Listen on no port: the site is this origin (`http://site.test`) on a
   * simulated network, which hands it each connection with
   * {@link FixtureSite.accept} (src/bottle/). Default: none, listen on 127.0.0.1.
   */
  origin?: string;
}

/** How a page's body is compressed on the wire: `Content-Encoding`. `deflate-raw` is sent as `deflate` without the zlib wrapper. */
export type ContentEncoding = "gzip" | "x-gzip" | "deflate" | "deflate-raw" | "br";

/** Extra settings for {@link FixtureSite.addPage}. */
export interface PageOptions {
  /** The status code. Default 200. */
  status?: number;
  /** Compress the body and say so in `Content-Encoding`. */
  contentEncoding?: ContentEncoding;
  /** More response headers. */
  headers?: Readonly<Record<string, string>>;
}

/** What {@link FixtureSite.addPage} serves: a list of links (made into an HTML page), or the body itself. */
export type PageContent = readonly string[] | string | Uint8Array;

/** Settings for {@link FixtureSite.addRetryAfter}. */
export interface RetryAfterOptions {
  /** The refusal's status: 429 Too Many Requests or 503 Service Unavailable. */
  status: 429 | 503;
  /** The `Retry-After` header, sent as given: seconds (`"1"`) or an HTTP date. */
  retryAfter: string;
  /** How many requests are refused before the page is served, from 0 up. */
  times: number;
  /** What every later request gets: a page, as {@link FixtureSite.addPage} serves `content`. */
  then: PageContent;
}

/** Settings for {@link FixtureSite.addSitemap}. */
export interface SitemapOptions {
  /** A sitemap index: its URLs are sitemaps (`<sitemapindex>`), not pages (`<urlset>`). Default false. */
  index?: boolean;
  /** Serve the file gzipped, as a `.xml.gz` is served: `application/gzip`, with no `Content-Encoding`. Default false. */
  gzip?: boolean;
}

/** One request as the site received it: see {@link FixtureSite.requests}. */
export interface ReceivedRequest {
  /** The request-target, path and query, as routed: `/a?b=1`. */
  readonly path: string;
  /** `performance.now()` when the request arrived, before any delay. */
  readonly at: number;
}

/**
 * A loopback web site with scripted routes and counters, for crawling.
 *
 * Routes are keyed by path and query (`/a?b=1`), as the request line has
 * them: paths given to `add…` are normalised the way a URL is (`/日本` is
 * stored as `/%E6%97%A5%E6%9C%AC`), so they match what a crawler requests. A
 * path without a route gets a 404. The counters let a test see, from the
 * server's side, what a crawler did: how many requests came for a path, how
 * many were in flight at once (the chapter's "concurrency achieved"), whether
 * every connection was closed; {@link FixtureSite.requests} lists every
 * request with its arrival time. A site is one origin (one port), so its
 * counters are per host when a test runs several sites.
 *
 * @remarks The server allows any number of connections, a 16,384-deep listen
 * backlog and no request timeout (a `silent` route must stay silent), so a
 * crawler with 10,000 workers and slow routes can use it.
 * @see The chapter's tests (500lines `crawler/test`), which start a similar server per test.
 * @example
 * const site = await FixtureSite.start();
 * site.addPage("/", ["/a", "/b"]).addPage("/a", []).addRedirect("/b", "/a");
 * const result = await crawl(site.url);
 * await site.close();
 */
export class FixtureSite {
  /** The site's root URL without the trailing slash: `http://127.0.0.1:PORT`. */
  readonly url: string;
  private readonly routes = new Map<string, RouteHandler>();
  private readonly delays = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly requestCounts = new Map<string, number>();
  private readonly requestLog: ReceivedRequest[] = [];
  private readonly closedWaiters = new Set<() => void>();
  private peakConnectionCount = 0;
  private connectionTotal = 0;
  private inFlight = 0;
  private peakInFlight = 0;
  private requestTotal = 0;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly server: Server,
    /** The port the site listens on (or, with `origin`, the origin's port). */
    readonly port: number,
    private readonly delayMs: number,
    origin: string | null = null,
  ) {
    this.url = origin ?? `http://127.0.0.1:${port}`;
  }

  /** Starts a site with no routes on 127.0.0.1, or at `origin` on no port (every path is a 404 until added). */
  static async start(options: FixtureSiteOptions = {}): Promise<FixtureSite> {
    const delayMs = options.delayMs ?? 0;
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`Expected delayMs >= 0, got ${delayMs}`);
    const server = createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 5_000 });
    let site: FixtureSite;
    if (options.origin === undefined) {
      await new Promise<void>(function listen(resolve, reject) {
        server.once("error", reject);
        server.listen(options.port ?? 0, "127.0.0.1", 16_384, function listening() {
          server.off("error", reject);
          resolve();
        });
      });
      site = new FixtureSite(server, (server.address() as AddressInfo).port, delayMs); // listening on TCP: an AddressInfo
    } else {
      const origin = new URL(options.origin); // listening nowhere: connections come through accept()
      site = new FixtureSite(server, origin.port === "" ? (origin.protocol === "https:" ? 443 : 80) : Number(origin.port), delayMs, origin.origin);
    }
    server.on("connection", function connection(socket: Socket) {
      site.onConnection(socket);
    });
    server.on("request", function request(message: IncomingMessage, response: ServerResponse) {
      site.onRequest(message, response);
    });
    return site;
  }

  /**
   * Serves a connection the site did not accept itself: `socket` is handed
   * to the site's `http.Server` as if it had just been accepted (the
   * server's `connection` event). How a simulated network reaches a site
   * started with `origin` (src/bottle/network.ts).
   */
  accept(socket: Duplex): void {
    this.server.emit("connection", socket);
  }

  /** The absolute URL of `path` on this site. */
  urlFor(path: string): string {
    return new URL(path, this.url).href;
  }

  /**
   * Serves a page at `path`: an HTML page of `<a href>`s when `content` is a
   * list of links, else `content` itself (a string is sent as UTF-8).
   */
  addPage(path: string, content: PageContent, contentType = "text/html; charset=utf-8", options: PageOptions = {}): this {
    return this.addHandler(path, pageHandler(content, contentType, options));
  }

  /** Serves `text` as `/robots.txt`, `text/plain`. */
  addRobots(text: string): this {
    return this.addPage("/robots.txt", text, "text/plain; charset=utf-8");
  }

  /**
   * Serves a sitemap at `path` listing `paths` (each made absolute on this
   * site, unless already absolute): pages, or sitemaps with `index`; as
   * `application/xml`, or gzipped as `application/gzip` with `gzip`.
   *
   * @example
   * site.addSitemap("/sitemap.xml", ["/only-in-sitemap"]).addPage("/only-in-sitemap", []);
   */
  addSitemap(path: string, paths: readonly string[], options: SitemapOptions = {}): this {
    const xml = sitemapXml(paths.map((each) => this.urlFor(each)), options.index === true ? "sitemapindex" : "urlset");
    if (options.gzip === true) return this.addPage(path, gzipSync(xml), "application/gzip");
    return this.addPage(path, xml, "application/xml; charset=utf-8");
  }

  /**
   * Refuses the first `times` requests for `path` with `status` and a
   * `Retry-After` header, then serves the page `then` to every later one: a
   * host that asks the crawler to come back later.
   *
   * @throws RangeError when `times` is not an integer from 0 up.
   * @example
   * site.addRetryAfter("/busy", { status: 503, retryAfter: "1", times: 2, then: ["/a"] });
   * // GET /busy → 503 (Retry-After: 1), 503, then 200 with a link to /a
   */
  addRetryAfter(path: string, options: RetryAfterOptions): this {
    const { status, retryAfter, times } = options;
    if (!Number.isSafeInteger(times) || times < 0) {
      throw new RangeError(`Expected \`times\` to be an integer from 0 and up, got ${times}`);
    }
    const refusal = Buffer.from(`${STATUS_CODES[status] ?? "Come back later"}\n`);
    const headers = { "Retry-After": retryAfter, "Content-Type": "text/plain; charset=utf-8", "Content-Length": String(refusal.length) };
    const servePage = pageHandler(options.then, "text/html; charset=utf-8", {});
    let refused = 0;
    return this.addHandler(path, function refuseThenServe(request, response) {
      if (refused >= times) {
        servePage(request, response);
        return;
      }
      refused += 1;
      response.writeHead(status, headers).end(refusal);
    });
  }

  /** Answers `path` with a redirect to `to` (sent as given in `Location`, so it may be relative). */
  addRedirect(path: string, to: string, code = 302): this {
    return this.addHandler(path, function redirect(_request, response) {
      response.writeHead(code, { Location: to, "Content-Length": "0" }).end();
    });
  }

  /** Serves `path` with a fault: dropped, silent, dripped, raw or huge (see {@link Fault}). */
  addFault(path: string, fault: Fault): this {
    return this.addHandler(path, faultHandler(fault));
  }

  /** Serves `path` with any handler; a handler that throws gets a 500 (or a dropped connection once headers were sent). */
  addHandler(path: string, handler: RouteHandler): this {
    this.routes.set(routeKey(path), handler);
    return this;
  }

  /** Waits `delayMs` before answering requests for `path` (0 removes the delay; this overrides the site's delay). */
  setDelay(path: string, delayMs: number): this {
    this.delays.set(routeKey(path), delayMs);
    return this;
  }

  /** Connections open right now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  /** Connections opened since the start or the last {@link resetCounters}. */
  get connectionsOpened(): number {
    return this.connectionTotal;
  }

  /** The most connections open at once since the start or the last {@link resetCounters}. */
  get peakConnections(): number {
    return this.peakConnectionCount;
  }

  /** Requests received and not yet answered (or abandoned) right now. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** The most requests in flight at once: the concurrency the crawler achieved. */
  get peakRequestsInFlight(): number {
    return this.peakInFlight;
  }

  /** Requests received, any path. */
  get totalRequests(): number {
    return this.requestTotal;
  }

  /**
   * Every request received, in order of arrival, since the start or the last
   * {@link resetCounters}: a copy, so it does not change under the caller.
   */
  requests(): ReadonlyArray<ReceivedRequest> {
    return [...this.requestLog];
  }

  /** Requests received for `path` (normalised like a route). */
  requestsFor(path: string): number {
    return this.requestCounts.get(routeKey(path)) ?? 0;
  }

  /** Zeroes the request counts and empties the request log; the peaks restart from what is open or in flight now. */
  resetCounters(): void {
    this.requestCounts.clear();
    this.requestLog.length = 0;
    this.requestTotal = 0;
    this.connectionTotal = 0;
    this.peakConnectionCount = this.sockets.size;
    this.peakInFlight = this.inFlight;
  }

  /**
   * Resolves once no connection to the site is open: the check that a crawl
   * closed every socket it opened. The server sees a client's close a moment
   * after the client makes it, hence the wait.
   *
   * @throws Error naming the count still open, if some stay open for `timeoutMs`.
   */
  connectionsClosed(timeoutMs = 2_000): Promise<void> {
    if (this.sockets.size === 0) return Promise.resolve();
    const sockets = this.sockets;
    const waiters = this.closedWaiters;
    return new Promise<void>(function waitForClose(resolve, reject) {
      const timer = setTimeout(function giveUp() {
        waiters.delete(settle);
        reject(new Error(`${sockets.size} connection(s) to the fixture site still open after ${timeoutMs} ms`));
      }, timeoutMs);
      function settle(): void {
        clearTimeout(timer);
        resolve();
      }
      waiters.add(settle);
    });
  }

  /** Closes every connection (silent ones too), cancels pending delays and stops the server. Safe to call twice. */
  close(): Promise<void> {
    if (this.closing === null) {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
      const server = this.server;
      const serverClosed = new Promise<void>(function closeServer(resolve) {
        server.close(function closed() {
          resolve();
        });
      });
      for (const socket of this.sockets) socket.destroy();
      // Destroyed sockets report 'close' a tick later; wait for every one.
      this.closing = Promise.all([serverClosed, this.connectionsClosed()]).then(function bothDone() {});
    }
    return this.closing;
  }

  private onConnection(socket: Socket): void {
    const sockets = this.sockets;
    sockets.add(socket);
    this.connectionTotal += 1;
    this.peakConnectionCount = Math.max(this.peakConnectionCount, sockets.size);
    socket.once("close", () => {
      sockets.delete(socket);
      if (sockets.size === 0) {
        for (const settle of this.closedWaiters) settle();
        this.closedWaiters.clear();
      }
    });
  }

  private onRequest(request: IncomingMessage, response: ServerResponse): void {
    const key = request.url ?? "/";
    this.requestLog.push({ path: key, at: performance.now() });
    this.requestTotal += 1;
    this.requestCounts.set(key, (this.requestCounts.get(key) ?? 0) + 1);
    this.inFlight += 1;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    // 'close' comes once: after the response is sent, or when the connection dies first.
    response.once("close", () => {
      this.inFlight -= 1;
    });
    const delayMs = this.delays.get(key) ?? this.delayMs;
    if (delayMs <= 0) {
      this.answer(key, request, response);
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!response.destroyed) this.answer(key, request, response);
    }, delayMs);
    this.timers.add(timer);
  }

  private answer(key: string, request: IncomingMessage, response: ServerResponse): void {
    const handler = this.routes.get(key) ?? notFound;
    try {
      handler(request, response);
    } catch (error) {
      if (response.headersSent) response.destroy();
      else response.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" }).end(`${String(error)}\n`);
    }
  }
}

function notFound(_request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(404, { "Content-Type": NOT_FOUND_TYPE, "Content-Length": String(Buffer.byteLength(NOT_FOUND_BODY)) });
  response.end(NOT_FOUND_BODY);
}

/** The handler that serves `content` as {@link FixtureSite.addPage} describes. */
function pageHandler(content: PageContent, contentType: string, options: PageOptions): RouteHandler {
  const text = isLinkList(content) ? linksHtml(content) : content;
  const body = encodeBody(typeof text === "string" ? Buffer.from(text) : text, options.contentEncoding);
  const headers: Record<string, string> = {
    "Content-Type": contentType,
    "Content-Length": String(body.length),
    ...options.headers,
  };
  if (options.contentEncoding !== undefined) {
    headers["Content-Encoding"] = options.contentEncoding === "deflate-raw" ? "deflate" : options.contentEncoding;
  }
  const status = options.status ?? 200;
  return function servePage(_request, response) {
    response.writeHead(status, headers).end(body);
  };
}

function isLinkList(content: PageContent): content is readonly string[] {
  return Array.isArray(content);
}

function encodeBody(body: Uint8Array, encoding: ContentEncoding | undefined): Uint8Array {
  switch (encoding) {
    case undefined:
      return body;
    case "gzip":
    case "x-gzip":
      return gzipSync(body);
    case "deflate":
      return deflateSync(body);
    case "deflate-raw":
      return deflateRawSync(body);
    case "br":
      return brotliCompressSync(body);
  }
}

/** The request-target a crawler sends for `path`: path and query, percent-encoded as a URL has them. */
function routeKey(path: string): string {
  const url = new URL(path, "http://127.0.0.1");
  return url.pathname + url.search;
}
