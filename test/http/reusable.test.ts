/**
 * `ResponseParser.reusable`: whether a connection may carry the next request
 * once its response is complete (RFC 9112 §9.3), which decides whether stages
 * 1 and 2 keep it.
 */
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { ResponseParser } from "../../src/http/parser.js";

function parsed(text: string, skipBody?: () => boolean): ResponseParser {
  const parser = new ResponseParser({ maxBodyBytes: 1024, skipBody });
  parser.feed(Buffer.from(text, "latin1"));
  return parser;
}

describe("ResponseParser.reusable", () => {
  it.each([
    ["a Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"],
    ["a chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"],
    ["a 204 with no body", "HTTP/1.1 204 No Content\r\n\r\n"],
    ["a 304 whose Content-Length describes another body", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n"],
    ["Connection: keep-alive", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"],
    ["HTTP/1.0 with Connection: keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"],
    ["a final response after a 100 Continue", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"],
  ])("leaves the connection reusable after %s", (_what, text) => {
    const parser = parsed(text);
    expect(parser.done).toBe(true);
    expect(parser.reusable).toBe(true);
  });

  it.each([
    ["Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"],
    ["close among other connection options", "HTTP/1.1 200 OK\r\nConnection: TE, Close\r\nContent-Length: 0\r\n\r\n"],
    ["HTTP/1.0 without keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"],
    ["bytes after the response", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 200 OK\r\n"],
  ])("does not leave it reusable after a response with %s", (_what, text) => {
    const parser = parsed(text);
    expect(parser.done).toBe(true);
    expect(parser.reusable).toBe(false);
  });

  it("does not leave it reusable after a body that ended with the connection", () => {
    const parser = parsed("HTTP/1.1 200 OK\r\n\r\nuntil the end");
    expect(parser.reusable).toBe(false);
    parser.end();
    expect(parser.done).toBe(true);
    expect(parser.reusable).toBe(false);
  });

  it("does not leave it reusable after a body left unread, or before the response is complete", () => {
    const skipped = parsed("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 9\r\n\r\n", () => true);
    expect([skipped.done, skipped.reusable]).toEqual([true, false]);
    const partial = parsed("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhi");
    expect([partial.done, partial.reusable]).toEqual([false, false]);
  });

  it("does not leave it reusable when bytes arrive in a later chunk after the response", () => {
    const parser = parsed("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    expect(parser.reusable).toBe(true);
    parser.feed(Buffer.from("x"));
    expect(parser.reusable).toBe(false);
  });
});
