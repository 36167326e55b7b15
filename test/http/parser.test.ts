import { Buffer } from "node:buffer";
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { FetchFailure, InvalidStateError } from "../../src/kernel/errors.js";
import type { HttpResponse } from "../../src/http/parser.js";
import { FIRST_ONLY_HEADERS, MAX_HEADER_BYTES, parseResponse, ResponseParser } from "../../src/http/parser.js";
import { formatGetRequest, requestHeaders } from "../../src/http/request.js";
import { failureOf } from "./failure-of.js";

const LIMIT = { maxBodyBytes: 1024 };

function bytes(text: string): Buffer {
  return Buffer.from(text, "latin1");
}

function parse(text: string, options = LIMIT) {
  return parseResponse(bytes(text), options);
}


function bodyText(text: string): string {
  return Buffer.from(parse(text).body).toString("latin1");
}

describe("requestHeaders", () => {
  it("names the user agent and asks for gzip, deflate or identity", () => {
    expect(requestHeaders("bot/1")).toEqual({
      "User-Agent": "bot/1",
      Accept: expect.stringContaining("text/html"),
      "Accept-Encoding": "gzip, deflate, br, identity",
    });
  });
});

describe("formatGetRequest", () => {
  it("writes the request line, Host, the shared headers and Connection: close", () => {
    const request = formatGetRequest(new URL("http://Example.com:8080/a/b?q=1#frag"), "bot/1").toString("latin1");
    const lines = request.split("\r\n");
    expect(lines[0]).toBe("GET /a/b?q=1 HTTP/1.1");
    expect(lines[1]).toBe("Host: example.com:8080");
    expect(lines.slice(2, 5)).toEqual([
      "User-Agent: bot/1",
      `Accept: ${requestHeaders("bot/1")["Accept"]}`,
      "Accept-Encoding: gzip, deflate, br, identity",
    ]);
    expect(lines.slice(5)).toEqual(["Connection: close", "", ""]);
  });

  it("sends / for a URL without a path and leaves the default port out of Host", () => {
    const request = formatGetRequest(new URL("http://example.com"), "bot").toString("latin1");
    expect(request.startsWith("GET / HTTP/1.1\r\nHost: example.com\r\n")).toBe(true);
  });

  it("keeps IPv6 hosts in brackets", () => {
    const request = formatGetRequest(new URL("http://[::1]:81/x"), "bot").toString("latin1");
    expect(request).toContain("\r\nHost: [::1]:81\r\n");
  });

  it("throws TypeError for a user agent with a character a header cannot carry", () => {
    expect(() => formatGetRequest(new URL("http://example.com/"), "bot\r\nX-Evil: 1")).toThrow(TypeError);
    expect(() => formatGetRequest(new URL("http://example.com/"), "robot 中")).toThrow(TypeError);
  });
});

describe("parseResponse", () => {
  describe("refuses bad input", () => {
    it("reports ConnectionReset when the peer closes before any byte", () => {
      expect(failureOf(() => parse(""))).toBe("ConnectionReset");
    });

    it.each([
      ["garbage", "garbage\r\n\r\n"],
      ["a lowercase protocol name", "http/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["HTTP/2.0", "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["HTTP/1.2", "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["HTTP/0.9", "HTTP/0.9 200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["a two-digit status", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n"],
      ["a four-digit status", "HTTP/1.1 1000 OK\r\nContent-Length: 0\r\n\r\n"],
      ["a status under 100", "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"],
      ["two spaces before the status", "HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["a status glued to the reason", "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n"],
      ["bare LF line ends", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"],
      ["a bare LF after a header", "HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 2\r\n\r\nhi"],
      ["a bare CR inside a value", "HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 2\r\n\r\nhi"],
      ["a space inside a header name", "HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nhi"],
      ["a space before the colon", "HTTP/1.1 200 OK\r\nX-A : x\r\nContent-Length: 2\r\n\r\nhi"],
      ["an empty header name", "HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 2\r\n\r\nhi"],
      ["a header line without colon", "HTTP/1.1 200 OK\r\nX-A\r\nContent-Length: 2\r\n\r\nhi"],
      ["a non-ASCII header name", "HTTP/1.1 200 OK\r\nX-\xe9: x\r\nContent-Length: 2\r\n\r\nhi"],
      ["a NUL in a value", "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 2\r\n\r\nhi"],
      ["DEL in a value", "HTTP/1.1 200 OK\r\nX-A: a\x7fb\r\nContent-Length: 2\r\n\r\nhi"],
      ["a folded line right after the status line", "HTTP/1.1 200 OK\r\n X-A: one\r\nContent-Length: 2\r\n\r\nhi"],
      ["a negative Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nhi"],
      ["a Content-Length with a plus sign", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nhi"],
      ["an empty Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nhi"],
      ["a Content-Length with inner space", "HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\nhi"],
      ["a Content-Length list", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nhi"],
      ["a Content-Length over 64 bits", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nhi"],
      ["two different Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi"],
      ["two equal Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi"],
      ["Content-Length and Transfer-Encoding", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"],
      ["a non-hex chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n"],
      ["an empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhi\r\n0\r\n\r\n"],
      ["a space after the chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nhi\r\n0\r\n\r\n"],
      ["a space before the chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n 2\r\nhi\r\n0\r\n\r\n"],
      ["a chunk size over 64 bits", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\nhi\r\n0\r\n\r\n"],
      ["chunk data without its CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhiXX0\r\n\r\n"],
      ["a bad trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nBad Trailer: 1\r\n\r\n"],
    ])("reports BadResponse for %s", (_name, text) => {
      expect(failureOf(() => parse(text))).toBe("BadResponse");
    });

    it.each([
      ["the head of a Content-Length response", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nhi"],
      ["the head of a close-delimited response", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\nhi"],
      ["a head without header lines", "HTTP/1.1 200 OK\r\n\nhi"],
      ["the head of a chunked response", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\n2\r\nhi\r\n0\r\n\r\n"],
      ["the head of a 204", "HTTP/1.1 204 No Content\r\n\n"],
      ["the head of a 1xx interim response", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"],
      ["a chunk's data", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\n0\r\n\r\n"],
      ["the last chunk, without trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\n"],
      ["the trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nT: 1\r\n\n"],
    ])("rejects a bare LF that ends %s, as llhttp does", (_where, text) => {
      expect(failureOf(() => parse(text))).toBe("BadResponse");
    });

    it("rejects a bare LF that ends the header section when it arrives in a feed of its own", () => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"));
      expect(failureOf(() => parser.feed(bytes("\n")))).toBe("BadResponse");
    });

    it.each([
      ["the status line", "HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\nhi"],
      ["the last header line", "HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nhi"],
      ["an empty header value", "HTTP/1.1 200 OK\r\nX-A:\nContent-Length: 2\r\n\r\nhi"],
      ["a folded line", "HTTP/1.1 200 OK\r\nX-A: one\r\n two\nContent-Length: 2\r\n\r\nhi"],
      ["a chunk size line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nhi\r\n0\r\n\r\n"],
      ["a chunk size line with an extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a=b\nhi\r\n0\r\n\r\n"],
      ["the last chunk's size line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\n\r\n"],
      ["a trailer line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nT: 1\n\r\n"],
    ])("rejects a bare LF that ends %s, as llhttp does", (_where, text) => {
      expect(failureOf(() => parse(text))).toBe("BadResponse");
    });

    it.each([
      ["in the status line", "HTTP/1.1 20"],
      ["in the headers", "HTTP/1.1 200 OK\r\nContent-Le"],
      ["after the headers but before the empty line", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"],
      ["after only an empty line", "\r\n"],
      ["in a Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhi"],
      ["in a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhi"],
      ["before the last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n"],
      ["before the end of the trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n"],
    ])("reports BadResponse for a response cut short %s", (_where, text) => {
      expect(failureOf(() => parse(text))).toBe("BadResponse");
    });

    it("reports BadResponse for a head over MAX_HEADER_BYTES, before the head ends", () => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes("HTTP/1.1 200 OK\r\n"));
      const filler = bytes(`X-Filler: ${"a".repeat(1000)}\r\n`);
      let fed = 0;
      const kind = failureOf(() => {
        while (fed < 2 * MAX_HEADER_BYTES) {
          parser.feed(filler);
          fed += filler.length;
        }
      });
      expect(kind).toBe("BadResponse");
      expect(fed).toBeLessThanOrEqual(MAX_HEADER_BYTES);
    });

    it("reports BadResponse for one header line longer than MAX_HEADER_BYTES without LF", () => {
      expect(failureOf(() => parse(`HTTP/1.1 200 OK\r\nX-A: ${"a".repeat(MAX_HEADER_BYTES)}`))).toBe("BadResponse");
    });

    it("accepts a head just under MAX_HEADER_BYTES", () => {
      const start = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: ";
      const text = `${start}${"a".repeat(MAX_HEADER_BYTES - start.length - 4)}\r\n\r\n`;
      expect(text.length).toBe(MAX_HEADER_BYTES);
      expect(parse(text).headers["x-a"]).toHaveLength(MAX_HEADER_BYTES - start.length - 4);
    });

    it("reports BadResponse for trailers over MAX_HEADER_BYTES", () => {
      const trailer = `X-T: ${"t".repeat(1000)}\r\n`.repeat(70);
      const text = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${trailer}\r\n`;
      expect(failureOf(() => parse(text))).toBe("BadResponse");
    });
  });

  describe("limits the body", () => {
    it("reports BodyTooLarge for a Content-Length over the limit before any body byte", () => {
      const parser = new ResponseParser({ maxBodyBytes: 10 });
      expect(failureOf(() => parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n")))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for a Content-Length of 2^64 - 1", () => {
      expect(failureOf(() => parse("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n"))).toBe(
        "BodyTooLarge",
      );
    });

    it("accepts a body exactly at the limit", () => {
      const response = parse(`HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n${"x".repeat(10)}`, { maxBodyBytes: 10 });
      expect(response.body).toHaveLength(10);
    });

    it("reports BodyTooLarge when a chunk size takes the body over the limit, before its data", () => {
      const parser = new ResponseParser({ maxBodyBytes: 10 });
      parser.feed(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n"));
      expect(failureOf(() => parser.feed(bytes("5\r\n")))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for a huge chunk size", () => {
      const text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nhi";
      expect(failureOf(() => parse(text))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for a body longer than a Buffer can be, whatever maxBodyBytes allows", () => {
      // buffer.constants.MAX_LENGTH is 2^32 on Node 20: no Buffer, hence no body, can be longer.
      const raised = { maxBodyBytes: 2 ** 40 };
      const declared = "HTTP/1.1 200 OK\r\nContent-Length: 5000000000\r\n\r\n";
      expect(failureOf(() => new ResponseParser(raised).feed(bytes(declared)))).toBe("BodyTooLarge");
      const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n12a05f200\r\n";
      expect(failureOf(() => new ResponseParser(raised).feed(bytes(chunked)))).toBe("BodyTooLarge");
    });

    it("counts the body without keeping it when keepBody is false", () => {
      const parser = new ResponseParser({ maxBodyBytes: 10, keepBody: false });
      parser.feed(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n0\r\n\r\n"));
      expect(parser.response().body).toHaveLength(0);
      const counting = new ResponseParser({ maxBodyBytes: 10, keepBody: false });
      counting.feed(bytes("HTTP/1.0 200 OK\r\n\r\n0123456789"));
      expect(failureOf(() => counting.feed(bytes("!")))).toBe("BodyTooLarge");
    });

    it("reports BodyTooLarge for a close-delimited body as soon as it passes the limit", () => {
      const parser = new ResponseParser({ maxBodyBytes: 10 });
      parser.feed(bytes("HTTP/1.0 200 OK\r\n\r\n0123456789"));
      expect(failureOf(() => parser.feed(bytes("!")))).toBe("BodyTooLarge");
    });
  });

  describe("reads bodies", () => {
    it("reads a Content-Length body and ignores bytes after it", () => {
      const response = parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi and more");
      expect(response.status).toBe(200);
      expect(Buffer.from(response.body).toString()).toBe("hi");
    });

    it("accepts leading zeros and surrounding spaces in Content-Length", () => {
      expect(bodyText("HTTP/1.1 200 OK\r\nContent-Length:  02 \r\n\r\nhi")).toBe("hi");
    });

    it("reads an empty body for Content-Length: 0 without waiting for the close", () => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
      expect(parser.done).toBe(true);
      expect(parser.response().body).toHaveLength(0);
    });

    it("reads an HTTP/1.0 body until the connection closes", () => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes("HTTP/1.0 200 OK\r\n\r\nclose-"));
      parser.feed(bytes("delimited"));
      expect(parser.done).toBe(false);
      parser.end();
      expect(parser.done).toBe(true);
      expect(Buffer.from(parser.response().body).toString()).toBe("close-delimited");
    });

    it("reads an HTTP/1.1 body without framing until the connection closes", () => {
      expect(bodyText("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close")).toBe("until close");
    });

    it("reads a chunked body, ignoring chunk extensions and dropping trailers", () => {
      const text =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "2;name=value\r\nhi\r\nA\r\n0123456789\r\nb\r\n, and more.\r\n0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n";
      const response = parse(text);
      expect(Buffer.from(response.body).toString()).toBe("hi0123456789, and more.");
      expect(response.headers).toEqual({ "transfer-encoding": "chunked" });
    });

    it("ends a chunked body at the empty line after the last chunk, without waiting for the close", () => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"));
      expect(parser.done).toBe(true);
    });

    it("reads chunked only when chunked is the last transfer coding", () => {
      expect(bodyText("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")).toBe("hi");
      expect(bodyText("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n2\r\nhi\r\n")).toBe("2\r\nhi\r\n");
      expect(bodyText("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nclose")).toBe("close");
    });

    it.each([204, 304])("reads no body for status %i, whatever Content-Length says", (status) => {
      const parser = new ResponseParser(LIMIT);
      parser.feed(bytes(`HTTP/1.1 ${status} X\r\nContent-Length: 2\r\n\r\nhi`));
      expect(parser.done).toBe(true);
      expect(parser.response().body).toHaveLength(0);
    });

    it("skips 1xx interim responses", () => {
      const text =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" +
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
      const response = parse(text);
      expect(response.status).toBe(200);
      expect(response.headers).toEqual({ "content-length": "2" });
    });

    it("reports BadResponse for a 101 Switching Protocols to a request that asked for no upgrade, as undici does", () => {
      // RFC 9110 §15.2.2: a server switches only to a protocol the request's Upgrade named.
      const upgrade = "Upgrade: websocket\r\nConnection: Upgrade\r\n";
      expect(failureOf(() => parse(`HTTP/1.1 101 Switching Protocols\r\n${upgrade}\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n`))).toBe(
        "BadResponse",
      );
      expect(failureOf(() => parse("HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))).toBe(
        "BadResponse",
      );
    });

    it("skips empty lines before the status line, as llhttp does", () => {
      expect(parse("\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status).toBe(200);
    });

    it("skips empty lines ending in a bare LF before the status line, also after a 1xx, as llhttp does", () => {
      expect(parse("\n\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status).toBe(200);
      expect(parse("HTTP/1.1 103 Early Hints\r\n\r\n\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status).toBe(200);
    });
  });

  describe("reads the status line and headers", () => {
    it("accepts a status line without a reason, or with an empty one", () => {
      expect(parse("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n").status).toBe(200);
      expect(parse("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n").status).toBe(404);
    });

    it("accepts any status from 100 to 999", () => {
      expect(parse("HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n").status).toBe(999);
    });

    it("lowercases names and trims spaces and tabs around values, but not NBSP", () => {
      const response = parse("HTTP/1.1 200 OK\r\nX-Mixed-Case:  \tone two \t\r\nX-Nbsp: \xa0x\xa0\r\nX-Empty:\r\n\r\n");
      expect(response.headers).toEqual({ "x-mixed-case": "one two", "x-nbsp": "\xa0x\xa0", "x-empty": "" });
    });

    it("reads bytes 0x80-0xFF in values as Latin-1, as node:http does", () => {
      expect(parse("HTTP/1.1 200 OK\r\nX-A: caf\xe9\r\n\r\n").headers["x-a"]).toBe("café");
    });

    it("unfolds folded header lines into the previous value", () => {
      const response = parse("HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\n\t three \r\nContent-Length: 0\r\n\r\n");
      expect(response.headers["x-a"]).toBe("one two three");
    });

    it("joins repeated headers with a comma, cookie with a semicolon, set-cookie with a line break", () => {
      const response = parse(
        "HTTP/1.1 200 OK\r\nVary: a\r\nVary: b\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nCookie: c=3\r\nCookie: d=4\r\n\r\n",
      );
      expect(response.headers).toEqual({ vary: "a, b", "set-cookie": "a=1\nb=2", cookie: "c=3; d=4" });
    });

    it("keeps each Set-Cookie whole when its Expires holds a comma", () => {
      const response = parse("HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n");
      expect(response.headers["set-cookie"]?.split("\n")).toEqual(["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"]);
    });

    it("keeps only the first of the fields node:http keeps first-only", () => {
      const response = parse(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Type: text/plain\r\n" +
          "Location: /a\r\nLocation: /b\r\nServer: one\r\nServer: two\r\n\r\n",
      );
      expect(response.headers).toEqual({ "content-type": "text/html", location: "/a", server: "one" });
      expect(FIRST_ONLY_HEADERS.has("content-encoding")).toBe(false);
    });

    it("treats header names like constructor and __proto__ as plain names", () => {
      const response = parse("HTTP/1.1 200 OK\r\nConstructor: a\r\n__proto__: b\r\n\r\n");
      expect(Object.keys(response.headers)).toEqual(["constructor", "__proto__"]);
      // biome-ignore lint/suspicious/noProto: reads the header named "__proto__", kept as an own property, not the prototype accessor.
      expect(response.headers["__proto__"]).toBe("b");
    });
  });
});

describe("ResponseParser", () => {
  it("parses a response fed one byte at a time", () => {
    const text = "HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1;x\r\nd\r\n0\r\nT: 1\r\n\r\n";
    const parser = new ResponseParser(LIMIT);
    for (const byte of bytes(text)) {
      expect(parser.done).toBe(false);
      parser.feed(Uint8Array.of(byte));
    }
    expect(parser.done).toBe(true);
    expect(parser.response().headers).toEqual({ "x-a": "one two", "transfer-encoding": "chunked" });
    expect(Buffer.from(parser.response().body).toString()).toBe("abcd");
  });

  it("ignores bytes fed after the response is done, and end() after it", () => {
    const parser = new ResponseParser(LIMIT);
    parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"));
    parser.feed(bytes("garbage"));
    parser.end();
    expect(Buffer.from(parser.response().body).toString()).toBe("hi");
  });

  it("ignores empty chunks: end() after only empty feeds is still ConnectionReset", () => {
    const parser = new ResponseParser(LIMIT);
    parser.feed(new Uint8Array(0));
    expect(failureOf(() => parser.end())).toBe("ConnectionReset");
  });

  it("throws the same failure again after it failed", () => {
    const parser = new ResponseParser(LIMIT);
    let first: unknown;
    try {
      parser.feed(bytes("garbage\r\n"));
    } catch (error) {
      first = error;
    }
    expect(first).toBeInstanceOf(FetchFailure);
    expect(() => parser.feed(bytes("HTTP/1.1 200 OK\r\n"))).toThrow(first as Error);
    expect(() => parser.end()).toThrow(first as Error);
  });

  it("throws InvalidStateError when response() is called before it is done", () => {
    const parser = new ResponseParser(LIMIT);
    parser.feed(bytes("HTTP/1.1 200 OK\r\n"));
    expect(() => parser.response()).toThrow(InvalidStateError);
  });

  it("copies the body, so the fed buffers may be reused once it is done", () => {
    const chunk = bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
    const parser = new ResponseParser(LIMIT);
    parser.feed(chunk);
    chunk.fill(0);
    expect(Buffer.from(parser.response().body).toString()).toBe("hi");
  });

  it("parses a body of a megabyte fed in socket-sized chunks", () => {
    const size = 1024 * 1024;
    const wire = Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`), Buffer.alloc(size, 0x61)]);
    const parser = new ResponseParser({ maxBodyBytes: size });
    let feeds = 0;
    for (let offset = 0; offset < wire.length; offset += 4096) {
      parser.feed(wire.subarray(offset, offset + 4096));
      feeds++;
    }
    expect(feeds).toBe(Math.ceil(wire.length / 4096));
    expect(parser.done).toBe(true);
    expect(parser.response().body).toHaveLength(size);
  });
});

describe("ResponseParser against node:http", () => {
  /** Answers every request with a chunked body and repeated headers, and remembers the request headers. */
  function startServer(seen: http.IncomingHttpHeaders[]): http.Server {
    return http.createServer(function respond(request, reply) {
      seen.push(request.headers);
      reply.setHeader("Content-Type", "text/html; charset=utf-8");
      reply.setHeader("Vary", ["Accept", "Accept-Encoding"]);
      reply.setHeader("Set-Cookie", ["a=1", "b=2"]);
      reply.write("<p>chunked ");
      reply.end("body</p>");
    });
  }

  /** One GET over a raw socket, written by formatGetRequest and read by ResponseParser. */
  async function rawGet(url: URL): Promise<HttpResponse> {
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, "connect");
    socket.end(formatGetRequest(url, "raw/1"));
    const parser = new ResponseParser(LIMIT);
    for await (const chunk of socket) parser.feed(chunk);
    parser.end();
    return parser.response();
  }

  /** The same GET with node:http's client. */
  function nodeGet(url: URL): Promise<http.IncomingMessage> {
    return new Promise(function get(resolve, reject) {
      http.get(url, { agent: false }, resolve).on("error", reject);
    });
  }

  it("reads what node:http's server sends as node:http's client does", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = startServer(seen);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo; // listening on TCP, so an AddressInfo
      const url = new URL(`http://127.0.0.1:${port}/page?x=1`);
      const raw = await rawGet(url);

      const message = await nodeGet(url);
      const chunks: Buffer[] = [];
      for await (const chunk of message) chunks.push(chunk);

      const { date: _rawDate, ...rawHeaders } = raw.headers;
      const { date: _nodeDate, connection: _connection, ...nodeHeaders } = message.headers;
      expect(rawHeaders).toMatchObject({ ...nodeHeaders, "set-cookie": (nodeHeaders["set-cookie"] ?? []).join("\n"), connection: "close" });
      expect(rawHeaders["set-cookie"]).toBe("a=1\nb=2");
      expect(raw.status).toBe(message.statusCode);
      expect(Buffer.from(raw.body)).toEqual(Buffer.concat(chunks));
      expect(raw.headers["transfer-encoding"]).toBe("chunked");
      expect(seen[0]).toMatchObject({ host: `127.0.0.1:${port}`, "user-agent": "raw/1", connection: "close" });
      expect(seen[0]?.["accept-encoding"]).toBe("gzip, deflate, br, identity");
    } finally {
      server.close();
    }
  });
});
