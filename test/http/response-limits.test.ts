import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { FetchFailure } from "../../src/kernel/errors.js";
import { MAX_HEADER_BYTES } from "../../src/http/parser.js";
import { ResponseLimits } from "../../src/http/response-limits.js";

function bytes(text: string): Buffer {
  return Buffer.from(text, "latin1");
}

/** The kind of the limit `chunks` break, read one after another, or null. */
function brokenBy(chunks: readonly string[], maxBodyBytes = 100): string | null {
  const limits = new ResponseLimits(maxBodyBytes);
  for (const chunk of chunks) {
    const broken = limits.read(bytes(chunk));
    if (broken !== null) {
      expect(broken).toBeInstanceOf(FetchFailure);
      return broken.kind;
    }
  }
  return null;
}

const OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
const CHUNKED = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

describe("ResponseLimits", () => {
  it("finds nothing in responses within the limits", () => {
    expect(brokenBy([OK, `${CHUNKED}2\r\nhi\r\n0\r\n\r\n`, "HTTP/1.0 200 OK\r\n\r\n", "close-delimited"])).toBeNull();
  });

  it("finds BodyTooLarge at a chunk's size line, before its data", () => {
    expect(brokenBy([CHUNKED, "65\r\n"])).toBe("BodyTooLarge");
    expect(brokenBy([`${CHUNKED}ffffffffffffffff\r\n`])).toBe("BodyTooLarge");
  });

  it("finds BodyTooLarge at a Content-Length over the limit", () => {
    expect(brokenBy(["HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n"])).toBe("BodyTooLarge");
  });

  it("finds BadResponse for a head or chunk-size line over MAX_HEADER_BYTES", () => {
    expect(brokenBy([`HTTP/1.1 200 ${"O".repeat(MAX_HEADER_BYTES)}`])).toBe("BadResponse");
    expect(brokenBy([CHUNKED, `2;${"x".repeat(MAX_HEADER_BYTES)}`])).toBe("BadResponse");
  });

  it("reads each response of a kept-alive connection from its start", () => {
    expect(brokenBy([OK, OK, `${CHUNKED}64\r\n`, "x".repeat(100), "\r\n1\r\n"])).toBe("BodyTooLarge");
  });

  it("stops reading at a fault of form, which is llhttp's to judge", () => {
    expect(brokenBy(["HTTP/2.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "ffff\r\n"])).toBeNull();
    expect(brokenBy([`${CHUNKED}zz\r\n`, "ffff\r\n"])).toBeNull();
  });
});
