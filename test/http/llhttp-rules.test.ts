import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import {
  checkHeaderLine,
  checkTrailerLine,
  chunkSizeOf,
  contentLengthOf,
  headBytesAfter,
  lineText,
  MAX_HEADER_BYTES,
  statusOf,
} from "../../src/http/llhttp-rules.js";
import { MAX_HEADER_BYTES as PARSER_MAX_HEADER_BYTES } from "../../src/http/parser.js";
import { failureOf } from "./failure-of.js";

function bytes(text: string): Buffer {
  return Buffer.from(text, "latin1");
}

describe("llhttp rules", () => {
  it("is the limit the parser exports", () => {
    expect(PARSER_MAX_HEADER_BYTES).toBe(MAX_HEADER_BYTES);
  });

  it("counts a section up to MAX_HEADER_BYTES, and each ended line's LF once", () => {
    expect(headBytesAfter(10, 5, false)).toBe(15);
    expect(headBytesAfter(10, 5, true)).toBe(16);
    expect(headBytesAfter(MAX_HEADER_BYTES - 5, 5, true)).toBe(MAX_HEADER_BYTES + 1);
    expect(failureOf(() => headBytesAfter(MAX_HEADER_BYTES - 5, 6, false))).toBe("BadResponse");
  });

  it("gives a line's text without its CR, and null for an empty line before a status line", () => {
    expect(lineText(bytes("X-A: \xe9\r"), false)).toBe("X-A: \xe9");
    expect(lineText(bytes("\r"), false)).toBe("");
    expect(lineText(bytes("\r"), true)).toBeNull();
    expect(lineText(bytes(""), true)).toBeNull();
    expect(failureOf(() => lineText(bytes(""), false))).toBe("BadResponse");
    expect(failureOf(() => lineText(bytes("a\rb\r"), false))).toBe("BadResponse");
    expect(failureOf(() => lineText(bytes("HTTP/1.1 200 OK"), true))).toBe("BadResponse");
  });

  it("reads the status of an HTTP/1.0 or HTTP/1.1 status line", () => {
    expect(statusOf("HTTP/1.1 404 Not Found")).toBe(404);
    expect(statusOf("HTTP/1.0 200")).toBe(200);
    expect(failureOf(() => statusOf("HTTP/1.1 099 Odd"))).toBe("BadResponse");
  });

  it("checks a header line's name and value, and lets a folded trailer line through", () => {
    expect(() => checkHeaderLine("X-A:\tb c")).not.toThrow();
    expect(failureOf(() => checkHeaderLine("X A: b"))).toBe("BadResponse");
    expect(failureOf(() => checkHeaderLine("X-A: b\x7f"))).toBe("BadResponse");
    expect(() => checkTrailerLine(" folded")).not.toThrow();
    expect(failureOf(() => checkTrailerLine("Bad Trailer: 1"))).toBe("BadResponse");
  });

  it("gives the Content-Length, or null without one", () => {
    expect(contentLengthOf([["x-a", "1"]], undefined)).toBeNull();
    expect(contentLengthOf([["content-length", "007"]], undefined)).toBe(7);
    expect(failureOf(() => contentLengthOf([["content-length", "2"], ["content-length", "2"]], undefined))).toBe("BadResponse");
    expect(failureOf(() => contentLengthOf([["content-length", "2"]], "chunked"))).toBe("BadResponse");
  });

  it("gives a chunk's size, ignoring an extension", () => {
    expect(chunkSizeOf("1F;name=value")).toBe(31);
    expect(chunkSizeOf("ffffffffffffffff")).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    expect(failureOf(() => chunkSizeOf("10000000000000000"))).toBe("BadResponse");
    expect(failureOf(() => chunkSizeOf("2 "))).toBe("BadResponse");
  });
});
