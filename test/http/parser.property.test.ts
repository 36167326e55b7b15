import { Buffer } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FetchFailure } from "../../src/kernel/errors.js";
import type { HttpResponse } from "../../src/http/parser.js";
import { parseResponse, ResponseParser } from "../../src/http/parser.js";

const OPTIONS = { maxBodyBytes: 4096 };
const RUNS = { numRuns: 200 };

/** What parsing gave: the response, or the failure's kind. */
type Outcome = { response: HttpResponse } | { failure: string };

/** Feeds `wire` cut at `cuts` (sorted offsets), then ends, as a socket would deliver it. */
function parseInPieces(wire: Uint8Array, cuts: readonly number[]): Outcome {
  const parser = new ResponseParser(OPTIONS);
  try {
    let start = 0;
    for (const cut of [...cuts, wire.length]) {
      parser.feed(wire.subarray(start, cut));
      start = cut;
    }
    parser.end();
    return { response: parser.response() };
  } catch (error) {
    if (error instanceof FetchFailure) return { failure: error.kind };
    throw error;
  }
}

function cutsOf(length: number): fc.Arbitrary<number[]> {
  return fc.uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 12 }).map(function sorted(cuts) {
    return cuts.sort((a, b) => a - b);
  });
}

const headerName = fc.stringMatching(/^X-[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,20}[\x21-\x7e])?$/);
const bodyBytes = fc.uint8Array({ maxLength: 600 });

type Framing = "content-length" | "chunked" | "close";

/** One valid response: its wire bytes and what parsing must give. */
interface ValidResponse {
  wire: Buffer;
  status: number;
  body: Buffer;
}

function chunked(body: Buffer, sizes: readonly number[]): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  let index = 0;
  while (offset < body.length) {
    const size = Math.min(sizes[index % sizes.length] ?? 1, body.length - offset);
    index++;
    const extension = index % 3 === 0 ? ";ext=1" : "";
    parts.push(Buffer.from(`${size.toString(16)}${extension}\r\n`), body.subarray(offset, offset + size), Buffer.from("\r\n"));
    offset += size;
  }
  parts.push(Buffer.from("0\r\nX-Trailer: t\r\n\r\n"));
  return Buffer.concat(parts);
}

const validResponse: fc.Arbitrary<ValidResponse> = fc
  .record({
    version: fc.constantFrom("1.0", "1.1"),
    status: fc.constantFrom(200, 201, 301, 404, 500, 999),
    reason: fc.constantFrom("", " OK", " Not Found", " "),
    headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
    framing: fc.constantFrom<Framing>("content-length", "chunked", "close"),
    body: bodyBytes,
    chunkSizes: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
    interim: fc.boolean(),
  })
  .map(function toWire(spec): ValidResponse {
    const body = Buffer.from(spec.body);
    let head = spec.interim ? "HTTP/1.1 100 Continue\r\n\r\n" : "";
    head += `HTTP/${spec.version} ${spec.status}${spec.reason}\r\n`;
    for (const [name, value] of spec.headers) head += `${name}: ${value}\r\n`;
    if (spec.framing === "content-length") head += `Content-Length: ${body.length}\r\n`;
    if (spec.framing === "chunked") head += "Transfer-Encoding: chunked\r\n";
    head += "\r\n";
    const payload = spec.framing === "chunked" ? chunked(body, spec.chunkSizes) : body;
    return { wire: Buffer.concat([Buffer.from(head, "latin1"), payload]), status: spec.status, body };
  });

/** Byte strings that look a little like HTTP, so the fuzz reaches past the status line. */
const httpish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.0 404\r\n",
        "HTTP/1.1 100 Continue\r\n",
        "HTTP/1.1 204 No Content\r\n",
        "Content-Length: 3\r\n",
        "Content-Length: -1\r\n",
        "Transfer-Encoding: chunked\r\n",
        "X-A: b\r\n",
        " folded\r\n",
        "\r\n",
        "\n",
        "\r",
        "3\r\nabc\r\n",
        "0\r\n\r\n",
        "zz\r\n",
        ":",
      ),
      fc.string({ maxLength: 8 }),
    ),
    { maxLength: 12 },
  )
  .map(function join(parts) {
    return Buffer.from(parts.join(""), "latin1");
  });

describe("ResponseParser (properties)", () => {
  it("gives the same response for any split of a valid response as for one chunk", () => {
    fc.assert(
      fc.property(
        validResponse.chain(function withCuts(response) {
          return fc.tuple(fc.constant(response), cutsOf(response.wire.length));
        }),
        function sameForAnySplit([expected, cuts]) {
          const whole = parseResponse(expected.wire, OPTIONS);
          expect(whole.status).toBe(expected.status);
          expect(Buffer.from(whole.body).equals(expected.body)).toBe(true);
          expect(parseInPieces(expected.wire, cuts)).toEqual({ response: whole });
        },
      ),
      RUNS,
    );
  });

  it("either returns a response or throws FetchFailure for arbitrary bytes in any split", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 200 }), httpish).chain(function withCuts(wire) {
          return fc.tuple(fc.constant(wire), cutsOf(wire.length));
        }),
        function neverAnythingElse([wire, cuts]) {
          // parseInPieces rethrows anything that is not a FetchFailure, which fails the property.
          const outcome = parseInPieces(wire, cuts);
          expect(parseInPieces(wire, [])).toEqual(outcome);
        },
      ),
      RUNS,
    );
  });
});
