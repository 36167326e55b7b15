/**
 * The request every stage sends: its headers, and its bytes for the
 * raw-socket stages.
 *
 * @module
 */
import { Buffer } from "node:buffer";

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
 * The bytes of a `GET` request for `url`: request line, `Host`, the
 * {@link requestHeaders}, and `Connection: close`, so the server ends the
 * response by closing the socket and each fetch uses one connection; or,
 * with `keepAlive`, `Connection: keep-alive` (as stage 3's undici sends), for
 * a crawler that keeps its connections for the next request to the origin
 * (see `IdleConnections`).
 *
 * @remarks The chapter writes `'GET {} HTTP/1.0\r\nHost: xkcd.com\r\n\r\n'`.
 * HTTP/1.1 with `Connection: close` behaves the same but lets servers send
 * chunked bodies, which the parser handles.
 * @see Chapter, "Programming With Callbacks" (`Fetcher.connected`)
 * @param extra - The crawl's `headers` option (see {@link requestHeaders}).
 * @param keepAlive - Ask the server to keep the connection open after its response.
 * @throws TypeError when a header name is not a token, or a value (the
 * `userAgent` too) holds a character HTTP headers cannot carry (as node:http
 * does): nothing can be smuggled into the request.
 * @example
 * ```ts
 * formatGetRequest(new URL("http://xkcd.com/353/"), "demo").toString("latin1");
 * // "GET /353/ HTTP/1.1\r\nHost: xkcd.com\r\nUser-Agent: demo\r\n…Connection: close\r\n\r\n"
 * ```
 */
export function formatGetRequest(url: URL, userAgent: string, extra: Readonly<Record<string, string>> = {}, keepAlive = false): Buffer {
  let head = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(requestHeaders(userAgent, extra))) {
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) {
      throw new TypeError(`Invalid character in the ${name} header: ${JSON.stringify(value)}`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
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
