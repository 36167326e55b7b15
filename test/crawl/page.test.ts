import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { FetchFailure } from "../../src/kernel/errors.js";
import type { HttpResponse } from "../../src/http/parser.js";
import { isRedirect, parserOptions, readPage, skippableBody } from "../../src/crawl/page.js";

const URL_ = "http://example.com/dir/page";
const MAX = 10_000;

function response(status: number, headers: Record<string, string>, body: string | Uint8Array = ""): HttpResponse {
  return { status, headers, body: typeof body === "string" ? Buffer.from(body) : body };
}

const HTML = '<a href="/a">a</a> <a href="b#x">b</a> <a href="/a">again</a> <a href="mailto:x@y">m</a>';

describe("isRedirect", () => {
  it("is true for 300, 301, 302, 303, 307 and 308 only", () => {
    const redirects = [];
    for (let status = 100; status < 600; status++) if (isRedirect(status)) redirects.push(status);
    expect(redirects).toEqual([300, 301, 302, 303, 307, 308]);
  });
});

describe("readPage", () => {
  describe("refuses bad input", () => {
    it("throws FetchFailure BadResponse for a body that does not decode", () => {
      const bad = response(200, { "content-type": "text/html", "content-encoding": "gzip" }, "not gzip");
      expect(() => readPage(URL_, bad, MAX)).toThrow(FetchFailure);
      expect(() => readPage(URL_, bad, MAX)).toThrow(expect.objectContaining({ kind: "BadResponse" }));
    });

    it("throws FetchFailure BodyTooLarge for a body that inflates past the limit", () => {
      const big = response(200, { "content-encoding": "gzip" }, gzipSync(Buffer.alloc(MAX + 1)));
      expect(() => readPage(URL_, big, MAX)).toThrow(expect.objectContaining({ kind: "BodyTooLarge" }));
    });
  });

  describe("reads redirects", () => {
    it.each([300, 301, 302, 303, 307, 308])("reads %i with Location as a redirect, resolved and defragmented", (status) => {
      const page = readPage(URL_, response(status, { location: "../other?q=1#frag" }, "moved"), MAX);
      expect(page).toEqual({
        status,
        nextUrl: "http://example.com/other?q=1",
        contentType: null,
        encoding: null,
        size: 0,
        links: [],
      });
    });

    it("does not decode a redirect's body, even a corrupt one", () => {
      const page = readPage(URL_, response(301, { location: "/x", "content-encoding": "gzip" }, "junk"), MAX);
      expect(page.nextUrl).toBe("http://example.com/x");
    });

    it("drops user:pass@ from the Location", () => {
      const page = readPage(URL_, response(301, { location: "http://user:secret@example.com/next#x" }), MAX);
      expect(page.nextUrl).toBe("http://example.com/next");
    });

    it("keeps an absolute Location on another host or scheme", () => {
      expect(readPage(URL_, response(302, { location: "https://other.org/" }), MAX).nextUrl).toBe("https://other.org/");
    });

    it("reads a redirect status without a usable Location as an ordinary page", () => {
      const unusable: Array<Record<string, string>> = [{}, { location: "" }, { location: "http://[bad" }];
      for (const headers of unusable) {
        const page = readPage(URL_, response(301, { ...headers, "content-type": "text/html" }, HTML), MAX);
        expect(page.nextUrl).toBeNull();
        expect(page.size).toBe(HTML.length);
        expect(page.links).toEqual([]);
      }
    });

    it("reads other 3xx statuses with Location as ordinary pages", () => {
      for (const status of [304, 305, 306]) {
        expect(readPage(URL_, response(status, { location: "/x" }), MAX).nextUrl).toBeNull();
      }
    });
  });

  describe("reads pages", () => {
    it("reads links from a 200 text/html page: absolute, defragmented, unique, in document order", () => {
      const page = readPage(URL_, response(200, { "content-type": "text/html; charset=UTF-8" }, HTML), MAX);
      expect(page).toEqual({
        status: 200,
        nextUrl: null,
        contentType: "text/html",
        encoding: "utf-8",
        size: Buffer.byteLength(HTML),
        links: ["http://example.com/a", "http://example.com/dir/b"],
      });
    });

    it("reads links from application/xml", () => {
      expect(readPage(URL_, response(200, { "content-type": "application/xml" }, HTML), MAX).links).toHaveLength(2);
    });

    it("reads no links from other media types, other statuses, or without Content-Type", () => {
      expect(readPage(URL_, response(200, { "content-type": "text/plain" }, HTML), MAX).links).toEqual([]);
      expect(readPage(URL_, response(200, {}, HTML), MAX).links).toEqual([]);
      expect(readPage(URL_, response(404, { "content-type": "text/html" }, HTML), MAX).links).toEqual([]);
      expect(readPage(URL_, response(203, { "content-type": "text/html" }, HTML), MAX).links).toEqual([]);
    });

    it("reports utf-8 when no charset is named, and the size after gzip is undone", () => {
      const page = readPage(URL_, response(200, { "content-type": "text/html", "content-encoding": "gzip" }, gzipSync(HTML)), MAX);
      expect(page.encoding).toBe("utf-8");
      expect(page.size).toBe(HTML.length);
      expect(page.links).toEqual(["http://example.com/a", "http://example.com/dir/b"]);
    });

    it("decodes the text with the charset from <meta> before reading links", () => {
      // "café" in windows-1252 is 63 61 66 e9; as UTF-8 the é byte would become U+FFFD.
      const body = Buffer.concat([
        Buffer.from('<meta charset="windows-1252"><a href="/caf'),
        Buffer.from([0xe9]),
        Buffer.from('">x</a>'),
      ]);
      const page = readPage(URL_, response(200, { "content-type": "text/html" }, body), MAX);
      expect(page.encoding).toBe("windows-1252");
      expect(page.links).toEqual(["http://example.com/caf%C3%A9"]);
    });

    it("reports an unknown charset label as named, and decodes as UTF-8", () => {
      const page = readPage(
        URL_,
        response(200, { "content-type": "text/html; charset=x-unknown" }, '<a href="/caf\u00e9">x</a>'),
        MAX,
      );
      expect(page.encoding).toBe("x-unknown");
      expect(page.links).toEqual(["http://example.com/caf%C3%A9"]);
    });

    it("reports a charset a <meta> or an XML declaration names by its WHATWG name", () => {
      const latin1 = Buffer.concat([Buffer.from('<META CHARSET=latin1><a href="/caf'), Buffer.from([0xe9]), Buffer.from('">x</a>')]);
      const meta = readPage(URL_, response(200, { "content-type": "text/html" }, latin1), MAX);
      expect(meta.encoding).toBe("windows-1252");
      expect(meta.links).toEqual(["http://example.com/caf%C3%A9"]);
      const declared = Buffer.concat([
        Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a href="/caf'),
        Buffer.from([0xe9]),
        Buffer.from('">x</a>'),
      ]);
      const xml = readPage(URL_, response(200, { "content-type": "application/xml" }, declared), MAX);
      expect(xml.encoding).toBe("windows-1252");
      expect(xml.links).toEqual(["http://example.com/caf%C3%A9"]);
    });

    it("decodes by a byte order mark, and still reports the charset the header names", () => {
      const body = Buffer.from('\ufeff<a href="/caf\u00e9">x</a>');
      const page = readPage(URL_, response(200, { "content-type": "text/html; charset=windows-1252" }, body), MAX);
      expect(page.encoding).toBe("windows-1252");
      expect(page.links).toEqual(["http://example.com/caf%C3%A9"]);
    });

    it("reads an error page's size and type, without links", () => {
      const page = readPage(URL_, response(500, { "content-type": "text/html" }, "oops"), MAX);
      expect(page).toEqual({ status: 500, nextUrl: null, contentType: "text/html", encoding: "utf-8", size: 4, links: [] });
    });
  });

  describe("reads a response whose body was left unread", () => {
    function skipped(headers: Record<string, string>): HttpResponse {
      return { status: 200, headers, body: Buffer.alloc(0), bodySkipped: true };
    }

    it("records its type, its charset and the Content-Length as its size", () => {
      const page = readPage(URL_, skipped({ "content-type": "Application/PDF", "content-length": "52428800" }), MAX);
      expect(page).toEqual({ status: 200, nextUrl: null, contentType: "application/pdf", encoding: "utf-8", size: 52_428_800, links: [] });
      expect(readPage(URL_, skipped({ "content-type": "text/plain; charset=latin1", "content-length": "7" }), MAX).encoding).toBe("latin1");
    });

    it("records size 0 without a Content-Length, and the encoded length for an encoded body", () => {
      expect(readPage(URL_, skipped({ "content-type": "image/png", "transfer-encoding": "chunked" }), MAX).size).toBe(0);
      expect(readPage(URL_, skipped({ "content-type": "text/csv", "content-encoding": "br", "content-length": "120" }), MAX).size).toBe(120);
    });

    it("records its announced size even over maxBodyBytes, which is for bodies read", () => {
      expect(readPage(URL_, skipped({ "content-type": "video/mp4", "content-length": String(MAX * 10) }), MAX).size).toBe(MAX * 10);
    });
  });
});

describe("skippableBody", () => {
  it("is true for a 200 whose media type links are not read from, or that has none", () => {
    for (const type of ["application/pdf", "image/png", "text/plain; charset=utf-8", "application/xhtml+xml", "text/xml"]) {
      expect(skippableBody(200, { "content-type": type }), type).toBe(true);
    }
    expect(skippableBody(200, {})).toBe(true);
  });

  it("is false for text/html and application/xml, in any case and with parameters", () => {
    expect(skippableBody(200, { "content-type": "text/html" })).toBe(false);
    expect(skippableBody(200, { "content-type": "TEXT/HTML; charset=utf-8" })).toBe(false);
    expect(skippableBody(200, { "content-type": "application/xml" })).toBe(false);
  });

  it("is false for every other status: redirects, errors, 203", () => {
    for (const status of [203, 206, 301, 404, 500]) expect(skippableBody(status, { "content-type": "image/png" }), String(status)).toBe(false);
  });
});

describe("parserOptions", () => {
  it("tells the parser to skip the skippable bodies only with skipNonHtml", () => {
    expect(parserOptions({ maxBodyBytes: 5, skipNonHtml: true })).toEqual({ maxBodyBytes: 5, skipBody: skippableBody });
    expect(parserOptions({ maxBodyBytes: 5, skipNonHtml: false })).toEqual({ maxBodyBytes: 5, skipBody: null });
    expect(parserOptions({ maxBodyBytes: 5 })).toEqual({ maxBodyBytes: 5, skipBody: null });
  });
});
