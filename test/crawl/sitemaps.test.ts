import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { HttpResponse } from "../../src/http/parser.js";
import {
  parseSitemap,
  SITEMAP_MAX_LOCS,
  SITEMAP_MAX_NESTING,
  sitemapBytes,
  sitemapFileAllowed,
  sitemapSeeds,
  visitSitemap,
  type SitemapContext,
} from "../../src/crawl/sitemaps.js";
import { UrlPolicy } from "../../src/crawl/urls.js";
import type { QueueItem } from "../../src/crawl/visit.js";
import { sitemapXml } from "../../src/site/html.js";

const ROOT = "http://example.com/";
const SITEMAP = `${ROOT}sitemap.xml`;

function context(options: { seen?: readonly string[]; maxBodyBytes?: number; filesLeft?: number; noParent?: boolean; root?: string } = {}): SitemapContext {
  return {
    policy: new UrlPolicy([options.root ?? ROOT], { strict: true, exclude: null, noParent: options.noParent ?? false }),
    seenUrls: new Set(options.seen ?? []),
    maxRedirect: 10,
    maxBodyBytes: options.maxBodyBytes ?? 100_000,
    sitemapFilesLeft: options.filesLeft ?? 1_000,
  };
}

function xml(body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/xml" }, status = 200): HttpResponse {
  return { status, headers, body: typeof body === "string" ? Buffer.from(body) : body };
}

const item: QueueItem = { url: SITEMAP, maxRedirect: 10, sitemap: 0 };

describe("parseSitemap", () => {
  it("reads the <loc> of each <url> of a urlset, in document order, and ignores the other elements", () => {
    const text = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url><loc> http://example.com/a </loc><lastmod>2026-01-01</lastmod>
          <image:image><image:loc>http://example.com/a.png</image:loc></image:image></url>
        <url><loc>http://example.com/b?x=1&amp;y=2</loc></url>
        <url><loc><![CDATA[http://example.com/c]]></loc></url>
      </urlset>`;
    expect(parseSitemap(text)).toEqual({ kind: "urlset", locs: ["http://example.com/a", "http://example.com/b?x=1&y=2", "http://example.com/c"] });
  });

  it("reads the sitemaps of a sitemapindex", () => {
    expect(parseSitemap(sitemapXml(["http://example.com/1.xml", "http://example.com/2.xml.gz"], "sitemapindex"))).toEqual({
      kind: "sitemapindex",
      locs: ["http://example.com/1.xml", "http://example.com/2.xml.gz"],
    });
  });

  it("reads a sitemap whatever its namespace: none, an old one, or a prefix, in any case", () => {
    const expected = { kind: "urlset", locs: ["http://example.com/a"] };
    expect(parseSitemap("<urlset><url><loc>http://example.com/a</loc></url></urlset>")).toEqual(expected);
    expect(parseSitemap('<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://example.com/a</loc></url></urlset>')).toEqual(expected);
    expect(parseSitemap('<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>http://example.com/a</sm:loc></sm:url></sm:urlset>')).toEqual(expected);
    expect(parseSitemap("<URLSET><URL><LOC>http://example.com/a</LOC></URL></URLSET>")).toEqual(expected);
  });

  it("keeps the <loc>s read before malformed XML cuts the file short", () => {
    const text = '<urlset><url><loc>http://example.com/a</loc></url><url><loc>http://example.com/b</loc></url><url><loc>http://exa';
    expect(parseSitemap(text).locs).toEqual(["http://example.com/a", "http://example.com/b"]);
    expect(parseSitemap("<urlset><url><loc>http://example.com/a</loc><url></urlset>").locs).toEqual(["http://example.com/a"]);
  });

  it("takes a <loc> only as the child of a <url> (or <sitemap>), and an empty one not at all", () => {
    const text = "<urlset><loc>http://example.com/stray</loc><url><loc>  </loc><x><loc>http://example.com/deep</loc></x></url></urlset>";
    expect(parseSitemap(text).locs).toEqual([]);
    expect(parseSitemap("<sitemapindex><url><loc>http://example.com/a</loc></url></sitemapindex>").locs).toEqual([]);
  });

  it("reads a text sitemap: each line that is an absolute http(s) URL, trimmed", () => {
    const text = "\uFEFFhttp://example.com/a\r\n  https://example.com/b  \n\n/relative\nmailto:x@example.com\nnot a url\rhttp://example.com/c";
    expect(parseSitemap(text)).toEqual({ kind: "urlset", locs: ["http://example.com/a", "https://example.com/b", "http://example.com/c"] });
    expect(parseSitemap("")).toEqual({ kind: "urlset", locs: [] });
  });

  it("throws BadResponse for XML that is not a sitemap: an HTML page, a comment alone", () => {
    for (const [text, why] of [
      ["<!doctype html><html><body><a href='/a'>a</a></body></html>", "its root element is <html>"],
      ["  <!-- nothing here -->\n", "it has no root element"],
    ] as const) {
      expect(() => parseSitemap(text)).toThrow(expect.objectContaining({ kind: "BadResponse", message: `Not a sitemap: ${why}` }));
    }
  });

  it("throws BadResponse for elements nested deeper than a sitemap's, without reading on", () => {
    expect(() => parseSitemap(`<urlset>${"<url>".repeat(200_000)}`)).toThrow(expect.objectContaining({ kind: "BadResponse", message: "Not a sitemap: its elements nest more than 32 deep" }));
  });

  it(`keeps the first ${SITEMAP_MAX_LOCS} <loc>s of a file, the protocol's limit`, () => {
    const urls = Array.from({ length: SITEMAP_MAX_LOCS + 5 }, (_, i) => `http://example.com/${i}`);
    const { locs } = parseSitemap(sitemapXml(urls));
    expect(locs).toHaveLength(SITEMAP_MAX_LOCS);
    expect(locs.at(-1)).toBe(`http://example.com/${SITEMAP_MAX_LOCS - 1}`);
  });
});

describe("sitemapBytes", () => {
  const text = sitemapXml([`${ROOT}a`]);

  it("gunzips a .xml.gz file by its magic bytes, whatever its Content-Type", () => {
    expect(Buffer.from(sitemapBytes(xml(gzipSync(text), { "content-type": "application/octet-stream" }), 100_000)).toString()).toBe(text);
  });

  it("undoes a Content-Encoding, and a gzipped file under it too", () => {
    expect(Buffer.from(sitemapBytes(xml(gzipSync(text), { "content-encoding": "gzip" }), 100_000)).toString()).toBe(text);
    expect(Buffer.from(sitemapBytes(xml(gzipSync(gzipSync(text)), { "content-encoding": "gzip" }), 100_000)).toString()).toBe(text);
  });

  it("refuses a gzip bomb at maxBodyBytes of output, as BodyTooLarge", () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20)); // 50 MiB of spaces in about 50 KB.
    expect(bomb.length).toBeLessThan(100_000);
    expect(() => sitemapBytes(xml(bomb), 1_000_000)).toThrow(expect.objectContaining({ kind: "BodyTooLarge" }));
  });

  it("refuses a body longer than maxBodyBytes, gzipped or not", () => {
    expect(() => sitemapBytes(xml(text), 10)).toThrow(expect.objectContaining({ kind: "BodyTooLarge" }));
    expect(() => sitemapBytes(xml(gzipSync(text)), text.length - 1)).toThrow(expect.objectContaining({ kind: "BodyTooLarge" }));
  });

  it("refuses gzip data that is cut short, as BadResponse", () => {
    const cut = gzipSync(text).subarray(0, 20);
    expect(() => sitemapBytes(xml(cut), 100_000)).toThrow(expect.objectContaining({ kind: "BadResponse" }));
  });
});

describe("visitSitemap", () => {
  it("queues a urlset's allowed, unseen pages at depth 0 with the sitemap as referrer, and counts them in its record", () => {
    const body = sitemapXml([`${ROOT}a`, `${ROOT}seen`, "http://other.example/x", "mailto:x@example.com", `${ROOT}a#top`, `${ROOT}b`]);
    const v = visitSitemap(item, xml(body), context({ seen: [`${ROOT}seen`] }));
    expect(v.next).toEqual([
      { url: `${ROOT}a`, maxRedirect: 10, referrer: SITEMAP, depth: 0 },
      { url: `${ROOT}b`, maxRedirect: 10, referrer: SITEMAP, depth: 0 },
    ]);
    expect(v.record).toEqual({
      url: SITEMAP, nextUrl: null, status: 200, error: null, size: body.length, contentType: "application/xml", encoding: "utf-8",
      numUrls: 3, numNewUrls: 2, referrer: null, detail: null, // /a and /a#top: one URL
      depth: 0, tries: 1, fetchedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it("applies the whole URL policy to pages: noParent leaves out those outside the root's directory", () => {
    const v = visitSitemap(item, xml(sitemapXml([`${ROOT}docs/a`, `${ROOT}blog/b`])), context({ root: `${ROOT}docs/`, noParent: true }));
    expect(v.next.map((each) => each.url)).toEqual([`${ROOT}docs/a`]);
  });

  it("queues an index's sitemaps one level deeper, on an allowed host only", () => {
    const body = sitemapXml([`${ROOT}1.xml`, `${ROOT}2.xml.gz`, "http://other.example/3.xml"], "sitemapindex");
    const v = visitSitemap({ ...item, sitemap: 1 }, xml(body), context());
    expect(v.next).toEqual([
      { url: `${ROOT}1.xml`, maxRedirect: 10, referrer: SITEMAP, depth: 0, sitemap: 2 },
      { url: `${ROOT}2.xml.gz`, maxRedirect: 10, referrer: SITEMAP, depth: 0, sitemap: 2 },
    ]);
    expect(v.record.numUrls).toBe(2);
  });

  it(`reads an index nested ${SITEMAP_MAX_NESTING} deep but queues none of its sitemaps`, () => {
    const v = visitSitemap({ ...item, sitemap: SITEMAP_MAX_NESTING }, xml(sitemapXml([`${ROOT}1.xml`], "sitemapindex")), context());
    expect(v.next).toEqual([]);
    expect(v.record).toMatchObject({ status: 200, numUrls: 1, numNewUrls: 0 });
  });

  it("queues no more sitemaps than the crawl has room for", () => {
    const v = visitSitemap(item, xml(sitemapXml([`${ROOT}1.xml`, `${ROOT}2.xml`, `${ROOT}3.xml`], "sitemapindex")), context({ filesLeft: 2 }));
    expect(v.next.map((each) => each.url)).toEqual([`${ROOT}1.xml`, `${ROOT}2.xml`]);
  });

  it("records a gzip bomb as BodyTooLarge, with why in its detail, and queues nothing", () => {
    const v = visitSitemap(item, xml(gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20))), context({ maxBodyBytes: 1_000_000 }));
    expect(v.next).toEqual([]);
    expect(v.record).toMatchObject({ url: SITEMAP, status: null, error: "BodyTooLarge", detail: "The decoded body is longer than maxBodyBytes (1000000)" });
  });

  it("records an HTML page served as a sitemap as BadResponse, with why", () => {
    const v = visitSitemap(item, xml("<html><body>Not here</body></html>", { "content-type": "text/html" }), context());
    expect(v.record).toMatchObject({ status: null, error: "BadResponse", detail: "Not a sitemap: its root element is <html>" });
  });

  it("records a missing sitemap as its 404, not as an error", () => {
    const v = visitSitemap(item, xml("Not found", { "content-type": "text/plain" }, 404), context());
    expect(v.record).toMatchObject({ url: SITEMAP, status: 404, error: null, numUrls: 0 });
    expect(v.next).toEqual([]);
  });

  it("follows a redirect to a sitemap on an allowed host, as a sitemap of the same level", () => {
    const moved = xml("", { location: "/new-sitemap.xml" }, 301);
    expect(visitSitemap({ ...item, sitemap: 1 }, moved, context()).next).toEqual([{ url: `${ROOT}new-sitemap.xml`, maxRedirect: 9, referrer: SITEMAP, depth: 0, sitemap: 1 }]);
    expect(visitSitemap(item, xml("", { location: "http://other.example/s.xml" }, 301), context()).next).toEqual([]);
  });

  it("records a network failure with its name", () => {
    expect(visitSitemap(item, "ConnectionRefused", context()).record).toMatchObject({ status: null, error: "ConnectionRefused" });
  });
});

describe("sitemapSeeds and sitemapFileAllowed", () => {
  it("resolves each URL, keeps those on an allowed host once, and marks them level 0", () => {
    const seeds = sitemapSeeds(["/sitemap.xml", "http://example.com/sitemap.xml", "http://other.example/s.xml", "ftp://example.com/s.xml", "/s2.xml"], ROOT, `${ROOT}robots.txt`, context());
    expect(seeds).toEqual([
      { url: SITEMAP, maxRedirect: 10, referrer: `${ROOT}robots.txt`, depth: 0, sitemap: 0 },
      { url: `${ROOT}s2.xml`, maxRedirect: 10, referrer: `${ROOT}robots.txt`, depth: 0, sitemap: 0 },
    ]);
  });

  it("leaves out a sitemap already seen, and stops at the crawl's room", () => {
    expect(sitemapSeeds(["/a.xml", "/b.xml", "/c.xml"], ROOT, null, context({ seen: [`${ROOT}a.xml`], filesLeft: 1 })).map((s) => s.url)).toEqual([`${ROOT}b.xml`]);
  });

  it("allows a sitemap outside noParent's directory: only its host is checked", () => {
    const { policy } = context({ root: `${ROOT}docs/`, noParent: true });
    expect(sitemapFileAllowed(SITEMAP, policy)).toBe(true);
    expect(sitemapFileAllowed("http://other.example/sitemap.xml", policy)).toBe(false);
    expect(sitemapFileAllowed("not a url", policy)).toBe(false);
  });
});
