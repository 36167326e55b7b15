/**
 * `ResponseParser`'s `skipBody`: a response complete at the end of its head,
 * for the crawl's `skipNonHtml` in stages 1 and 2.
 */
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { ResponseParser, type SkipBody } from "../../src/http/parser.js";
import { failureOf } from "./failure-of.js";

function bytes(text: string): Buffer {
  return Buffer.from(text, "latin1");
}

const notHtml: SkipBody = function notHtml(status, headers) {
  return status === 200 && headers["content-type"] !== "text/html";
};

describe("ResponseParser with skipBody", () => {
  it("completes a response at the end of its head when skipBody says so, with an empty body", () => {
    const parser = new ResponseParser({ maxBodyBytes: 100, skipBody: notHtml });
    parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 50\r\n\r\n"));
    expect(parser.done).toBe(true);
    expect(parser.response()).toEqual({ status: 200, headers: { "content-type": "image/png", "content-length": "50" }, body: Buffer.alloc(0), bodySkipped: true });
  });

  it("ignores the body bytes that came with the head, and any after", () => {
    const parser = new ResponseParser({ maxBodyBytes: 100, skipBody: notHtml });
    parser.feed(bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"));
    parser.feed(bytes("not even a chunk"));
    parser.end();
    expect(parser.response()).toMatchObject({ status: 200, body: Buffer.alloc(0), bodySkipped: true });
  });

  it("reads the body as always when skipBody says no, and then sets no bodySkipped", () => {
    const parser = new ResponseParser({ maxBodyBytes: 100, skipBody: notHtml });
    parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi"));
    expect(parser.response()).toEqual({ status: 200, headers: { "content-type": "text/html", "content-length": "2" }, body: bytes("hi") });
  });

  it("is asked after the interim responses, about the final head only", () => {
    const asked: number[] = [];
    const parser = new ResponseParser({
      maxBodyBytes: 100,
      skipBody(status) {
        asked.push(status);
        return true;
      },
    });
    parser.feed(bytes("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"));
    expect(asked).toEqual([200]);
    expect(parser.response().bodySkipped).toBe(true);
  });

  it("skips a body announced longer than maxBodyBytes, which is never read", () => {
    const parser = new ResponseParser({ maxBodyBytes: 10, skipBody: notHtml });
    parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 5000000000\r\n\r\n"));
    expect(parser.response().bodySkipped).toBe(true);
  });

  it("still refuses such a Content-Length in a body it reads", () => {
    const parser = new ResponseParser({ maxBodyBytes: 10, skipBody: notHtml });
    expect(failureOf(() => parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n")))).toBe("BodyTooLarge");
  });

  it("skips a chunked body whatever its chunks announce, in the same bytes as the head or later", () => {
    const parser = new ResponseParser({ maxBodyBytes: 10, skipBody: notHtml });
    parser.feed(bytes("HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nTransfer-Encoding: chunked\r\n\r\nffffff\r\n"));
    parser.feed(bytes("ffffff\r\n"));
    expect(parser.response().bodySkipped).toBe(true);
  });

  it("still refuses a malformed head", () => {
    const parser = new ResponseParser({ maxBodyBytes: 100, skipBody: notHtml });
    expect(failureOf(() => parser.feed(bytes("HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n")))).toBe("BadResponse");
  });

  it("is not asked about a 204 or 304, which have no body", () => {
    const parser = new ResponseParser({ maxBodyBytes: 100, skipBody: () => true });
    parser.feed(bytes("HTTP/1.1 304 Not Modified\r\n\r\n"));
    expect(parser.response()).not.toHaveProperty("bodySkipped");
  });
});
