/**
 * The request every stage sends: its headers, and its bytes for the
 * raw-socket stages.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { requestTarget, type Proxies } from "./proxy.js";

/**
 * Header names a crawl's `headers` option may not set (lowercased): the ones
 * that frame the connection or the message, which the stages and undici write
 * themselves (`Host`, `Connection`, `Content-Length`, `Transfer-Encoding`, and
 * the hop-by-hop `Keep-Alive`, `Upgrade`, `TE`, `Trailer`, `Proxy-Connection`,
 * `Expect`, several of which undici refuses outright), and `Accept-Encoding`:
 * bodies are decoded by the crawler, which knows gzip, deflate and brotli only.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
  "expect",
  "accept-encoding",
]);

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header value the crawler sends: printable ASCII (and tabs), so every stage sends the same bytes. */
const PRINTABLE = /^[\t\x20-\x7e]*$/;

/**
 * The request headers every stage sends, in this order: `User-Agent`,
 * `Accept`, `Accept-Encoding`, then the crawl's own `headers`. One of those
 * with the name of a default (`Accept`, in any case) takes the default's
 * place instead. Stages 1 and 2 write them with {@link formatGetRequest};
 * stage 3 hands them to its HTTP client.
 *
 * @param extra - The crawl's `headers` option, checked by `resolveOptions`.
 */
export function requestHeaders(userAgent: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const defaults: Record<string, string> = {
    "User-Agent": userAgent,
    Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Encoding": "gzip, deflate, br, identity",
  };
  const replacing = new Map(Object.keys(extra).map((name) => [name.toLowerCase(), name]));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaults)) {
    const replacement = replacing.get(name.toLowerCase());
    if (replacement === undefined) headers[name] = value;
    else headers[replacement] = extra[replacement];
  }
  for (const [name, value] of Object.entries(extra)) headers[name] = value;
  return headers;
}

/**
 * What a crawl's request is written from (stage 1's Fetcher and stage 2's
 * `request()` pass their request options as they are): the `userAgent` and
 * `headers`, whether the crawl keeps its `connections` (then the request
 * asks for keep-alive), and its `proxy`.
 */
export interface GetRequestOptions {
  readonly userAgent: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly connections?: object | null;
  /** The crawl's proxies: an `http:` URL one of them carries is asked for in absolute-form, with its `Proxy-Authorization`. */
  readonly proxy?: Proxies | null;
}

/**
 * The bytes of a `GET` request for `url`: request line, `Host`, the
 * {@link requestHeaders}, and `Connection: close`, so the server ends the
 * response by closing the socket and each fetch uses one connection; or,
 * with `keepAlive` (given crawl options: when the crawl keeps connections),
 * `Connection: keep-alive` (as stage 3's undici sends), for a crawler that
 * keeps its connections for the next request to the origin (see
 * `IdleConnections`). Given crawl options whose `proxy` carries an `http:`
 * URL, the request line names it in absolute-form (`GET http://host/path
 * HTTP/1.1`, RFC 9112 §3.2.2) and `Proxy-Authorization` follows the headers
 * when the proxy's URL has credentials: the socket is the proxy's
 * (http/proxy-network.ts). An `https:` URL's request goes inside a `CONNECT`
 * tunnel, written as without a proxy.
 *
 * @remarks The chapter writes `'GET {} HTTP/1.0\r\nHost: xkcd.com\r\n\r\n'`.
 * HTTP/1.1 with `Connection: close` behaves the same but lets servers send
 * chunked bodies, which the parser handles.
 * @see Chapter, "Programming With Callbacks" (`Fetcher.connected`)
 * @param url - The URL to request.
 * @param options - The crawl's request options: `userAgent`, `headers` (see {@link requestHeaders}), `connections` (kept: ask for keep-alive) and `proxy`.
 * @throws TypeError when a header name is not a token, or a value (the
 * `userAgent` too) holds a character HTTP headers cannot carry (as node:http
 * does): nothing can be smuggled into the request.
 * @example
 * ```ts
 * formatGetRequest(new URL("http://xkcd.com/353/"), "demo").toString("latin1");
 * // "GET /353/ HTTP/1.1\r\nHost: xkcd.com\r\nUser-Agent: demo\r\n…Connection: close\r\n\r\n"
 * ```
 */
export function formatGetRequest(url: URL, options: GetRequestOptions): Buffer;
/**
 * The same request from its parts, without a proxy.
 *
 * @param url - The URL to request.
 * @param userAgent - The `User-Agent` header.
 * @param extra - The crawl's `headers` option (see {@link requestHeaders}).
 * @param keepAlive - Ask the server to keep the connection open after its response.
 */
export function formatGetRequest(url: URL, userAgent: string, extra?: Readonly<Record<string, string>>, keepAlive?: boolean): Buffer;
export function formatGetRequest(url: URL, given: string | GetRequestOptions, extra: Readonly<Record<string, string>> = {}, keepAlive = false): Buffer {
  const options: GetRequestOptions = typeof given === "string" ? { userAgent: given, headers: extra, connections: keepAlive ? {} : null } : given;
  const proxy = url.protocol === "http:" ? (options.proxy?.serverForUrl(url) ?? null) : null; // https: inside a tunnel, as if direct
  let head = `GET ${requestTarget(url, proxy !== null)} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(requestHeaders(options.userAgent, options.headers))) {
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) {
      throw new TypeError(`Invalid character in the ${name} header: ${JSON.stringify(value)}`);
    }
    head += `${name}: ${value}\r\n`;
  }
  if (proxy?.authorization != null) head += `Proxy-Authorization: ${proxy.authorization}\r\n`;
  head += options.connections != null ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return Buffer.from(head, "latin1");
}

/** Whether `name` can name a header: an RFC 9110 token (`X-Api-Key`, not `X Api` or `X:`). */
export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

/** Whether `value` is a header value the crawler sends: printable ASCII and tabs, so no CR, LF or NUL. */
export function isHeaderValue(value: string): boolean {
  return PRINTABLE.test(value);
}
