/**
 * The request every stage sends: its headers, and its bytes for the
 * raw-socket stages.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/**
 * The request headers every stage sends, in this order. Stages 1 and 2 write
 * them with {@link formatGetRequest}; stage 3 hands them to its HTTP client.
 */
export function requestHeaders(userAgent: string): Record<string, string> {
  return {
    "User-Agent": userAgent,
    Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "Accept-Encoding": "gzip, deflate, identity",
  };
}

/**
 * The bytes of a `GET` request for `url`: request line, `Host`, the
 * {@link requestHeaders}, and `Connection: close`, so the server ends the
 * response by closing the socket and each fetch uses one connection.
 *
 * @remarks The chapter writes `'GET {} HTTP/1.0\r\nHost: xkcd.com\r\n\r\n'`.
 * HTTP/1.1 with `Connection: close` behaves the same but lets servers send
 * chunked bodies, which the parser handles.
 * @see Chapter, "Programming With Callbacks" (`Fetcher.connected`)
 * @throws TypeError when `userAgent` holds a character HTTP headers cannot carry (as node:http does).
 * @example
 * ```ts
 * formatGetRequest(new URL("http://xkcd.com/353/"), "demo").toString("latin1");
 * // "GET /353/ HTTP/1.1\r\nHost: xkcd.com\r\nUser-Agent: demo\r\n…Connection: close\r\n\r\n"
 * ```
 */
export function formatGetRequest(url: URL, userAgent: string): Buffer {
  if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(userAgent)) {
    throw new TypeError(`Invalid character in the User-Agent header: ${JSON.stringify(userAgent)}`);
  }
  let head = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(requestHeaders(userAgent))) {
    head += `${name}: ${value}\r\n`;
  }
  head += "Connection: close\r\n\r\n";
  return Buffer.from(head, "latin1");
}
