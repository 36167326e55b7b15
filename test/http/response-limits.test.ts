import { Buffer } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FetchFailure } from "../../src/kernel/errors.js";
import { HeadTooLarge } from "../../src/http/llhttp-rules.js";
import { MAX_HEADER_BYTES, ResponseParser, type SkipBody } from "../../src/http/parser.js";
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

/** What the limits said of each chunk, read in turn with `read`: null, or the failure's kind and message. */
function verdicts(read: (chunk: Buffer) => FetchFailure | null, chunks: readonly Buffer[]): Array<string | null> {
  return chunks.map((chunk) => {
    const broken = read(chunk);
    return broken === null ? null : `${broken.kind}: ${broken.message}`;
  });
}

/** The limits as read by the shared parser alone, a new one for each response: what `ResponseLimits` must match. */
function parserOnly(maxBodyBytes: number, skipBody: SkipBody | null): (chunk: Buffer) => FetchFailure | null {
  let parser: ResponseParser | null = null;
  let reading = true;
  return function read(chunk) {
    if (!reading) return null;
    if (parser === null || parser.done) parser = new ResponseParser({ maxBodyBytes, keepBody: false, skipBody });
    try {
      parser.feed(chunk);
      return null;
    } catch (error) {
      reading = false;
      return error instanceof HeadTooLarge || (error instanceof FetchFailure && error.kind === "BodyTooLarge") ? error : null;
    }
  };
}

const MAX_BODY = 50;
const statusLine = fc.constantFrom(
  "HTTP/1.1 200 OK", "HTTP/1.0 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 999", "HTTP/1.1 200 ", "HTTP/1.1 204 No Content",
  "HTTP/1.1 304 Not Modified", "HTTP/1.1 100 Continue", "HTTP/1.1 101 Switching", "HTTP/1.1 099 x", "HTTP/2.0 200 OK",
  "HTTP/1.1 200 O\x01K", "HTTP/1.1 200 O\rK", "http/1.1 200 OK", "HTTP/1.1 2000 OK", "\r\nHTTP/1.1 200 OK",
);
const headerLine = fc.oneof(
  fc.constantFrom(
    "Content-Type: text/html", "Date: x", "X: ", "X:\t\ta\t", "X-Content-Length: 999", "Content-Lengthy: 999", "content-length:0",
    "Transfer-Encoding: chunked", "transfer-encoding: gzip, chunked", "Transfer-Encoding: gzip", " folded", "\tfolded",
    "Bad Name: x", "X: a\x01b", "X: a\x7fb", ": empty name", "X: a\rb", "X: a\nb", "Content-Length: 1,2", "Content-Length: +5",
    "Content-Length: 99999999999999999999", "Content-Length: 1234567890123456", "Content-Length:\t7 \t", "CONTENT-LENGTH: 3",
  ),
  fc.integer({ min: 0, max: MAX_BODY + 2 }).map((length) => `Content-Length: ${length}`),
);
/** One response on the wire: a head of those lines, then a body of 0 to 60 bytes (or a chunked one). */
const response = fc
  .record({ status: statusLine, headers: fc.array(headerLine, { maxLength: 5 }), body: fc.string({ maxLength: 60 }), chunked: fc.boolean() })
  .map(({ status, headers, body, chunked }) => {
    const head = `${status}\r\n${headers.map((line) => `${line}\r\n`).join("")}\r\n`;
    return head + (chunked ? `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : body);
  });

describe("ResponseLimits without a parser", () => {
  it("leaves interim, 204 and 304 heads to the parser, which reads past them", () => {
    const tooLarge = "HTTP/1.1 200 OK\r\nContent-Length: 51\r\n\r\n";
    for (const chunks of [
      ["HTTP/1.1 100 Continue\r\nContent-Length: 0\r\n\r\n", tooLarge],
      ["HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", tooLarge],
      ["HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", tooLarge],
    ]) {
      const limits = new ResponseLimits(MAX_BODY);
      expect(verdicts((chunk) => limits.read(chunk), chunks.map(bytes))).toEqual(verdicts(parserOnly(MAX_BODY, null), chunks.map(bytes)));
    }
  });

  it("says what the shared parser says of each chunk, on plain heads and others, cut anywhere", () => {
    fc.assert(
      fc.property(
        fc.array(response, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        (responses, cutsAt, skipping) => {
          const wire = bytes(responses.join(""));
          const cuts = [...new Set(cutsAt.map((cut) => cut % (wire.length + 1)))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let start = 0;
          for (const cut of [...cuts, wire.length]) {
            chunks.push(wire.subarray(start, cut));
            start = cut;
          }
          const skipBody: SkipBody | null = skipping ? (status) => status === 404 : null;
          const limits = new ResponseLimits(MAX_BODY, { skipBody });
          // With skipBody, the handler closes the connection after a skipped head: nothing after it is compared.
          const upTo = skipping ? 1 : chunks.length;
          expect(verdicts((chunk) => limits.read(chunk), chunks.slice(0, upTo))).toEqual(verdicts(parserOnly(MAX_BODY, skipBody), chunks.slice(0, upTo)));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
