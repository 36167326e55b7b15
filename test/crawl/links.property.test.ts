import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseLinks } from "../../src/crawl/links.js";

/** What every result of parseLinks must be: absolute http(s) URLs, no fragment, no duplicates. */
function expectWellFormedLinks(links: string[]): void {
  expect(new Set(links).size).toBe(links.length);
  for (const link of links) {
    const url = new URL(link);
    expect(["http:", "https:"]).toContain(url.protocol);
    expect(link).not.toContain("#");
    expect(url.href).toBe(link);
  }
}

/** An href as pages write them: absolute, relative, odd schemes, junk. */
const href = fc.oneof(
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
  fc.constantFrom("", "#", "#top", "/", "..", "./a", "?q=1", "//other.example/x", " /spaced ", "\n/nl\t"),
  fc.constantFrom("javascript:void(0)", "mailto:a@b.c", "data:,x", "ftp://f.example/", "http://[::1", "http://"),
  fc.string({ maxLength: 20 }),
);

/** Pieces of HTML, well-formed or not, that a page might contain. */
const fragment = fc.oneof(
  href.map((value) => `<a href="${value}">`),
  href.map((value) => `<A HREF='${value}'>`),
  href.map((value) => `<area href=${value}>`),
  href.map((value) => `<base href="${value}">`),
  href.map((value) => `<script>"<a href='${value}'>"</script>`),
  href.map((value) => `<style>/* <a href="${value}"> */</style>`),
  fc.constantFrom("</a>", "<p>", "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#", "<", ">", '"', "'", "=", "<a", " href"),
  fc.string({ maxLength: 10 }),
);

const htmlish = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(""));
const pageUrl = fc.oneof(fc.webUrl(), fc.constantFrom("http://example.com/dir/page", "not a url", ""));

/** Escapes a value for a double-quoted attribute, as a page generator would. */
function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

describe("parseLinks (properties)", () => {
  it("never throws on arbitrary text and returns well-formed links", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), pageUrl, (text, url) => {
        expectWellFormedLinks(parseLinks(text, url));
      }),
      { numRuns: 300 },
    );
  });

  it("never throws on HTML-ish text and returns well-formed links", () => {
    fc.assert(
      fc.property(htmlish, pageUrl, (html, url) => {
        expectWellFormedLinks(parseLinks(html, url));
      }),
      { numRuns: 500 },
    );
  });

  it("finds exactly the hrefs of well-formed anchors, defragmented, once each, in order", () => {
    const absoluteHref = fc.webUrl({ withFragments: true, withQueryParameters: true });
    fc.assert(
      fc.property(fc.array(absoluteHref, { maxLength: 15 }), (hrefs) => {
        const html = hrefs.map((value, i) => `<p>${i} <a href="${attribute(value)}">link</a></p>`).join("\n");
        const expected = [...new Set(hrefs.map((value) => withoutFragment(value)))];
        expect(parseLinks(html, "http://example.com/")).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });
});

function withoutFragment(value: string): string {
  const url = new URL(value);
  url.hash = "";
  return url.href;
}
