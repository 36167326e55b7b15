import fc from "fast-check";
import { Parser } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { parseLinks } from "../../src/crawl/links.js";
import { parseUrl } from "../../src/crawl/urls.js";
import { attribute, fragment, htmlish, pageUrl, tagFragment, tree } from "../helpers/html-arbitraries.js";

/** What every result of parseLinks must be: absolute http(s) URLs, no fragment, no duplicates. */
function expectWellFormedLinks(links: string[]): void {
  expect(new Set(links).size).toBe(links.length);
  for (const link of links) {
    const url = new URL(link);
    expect(["http:", "https:"]).toContain(url.protocol);
    expect(link).not.toContain("#");
    expect(url.href).toBe(link);
    expect(url.username + url.password).toBe("");
  }
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

/**
 * The oracle: parseLinks as it was with htmlparser2's Parser, before it moved to the
 * Tokenizer (the Parser's element stack makes deep nesting quadratic). Kept only here.
 */
function parseLinksWithParser(html: string, pageUrl: string): string[] {
  const hrefs: string[] = [];
  let baseHref: string | null = null;

  function onopentag(name: string, attributes: Record<string, string>): void {
    const href = attributes["href"];
    if (href === undefined) return;
    if (name === "a" || name === "area") hrefs.push(href);
    else if (name === "base" && baseHref === null) baseHref = href;
  }

  new Parser({ onopentag }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }).end(html);
  return resolveLinks(hrefs, baseUrl(baseHref, pageUrl));
}

function baseUrl(baseHref: string | null, pageUrl: string): string | undefined {
  if (baseHref !== null && URL.canParse(baseHref, pageUrl)) {
    const base = new URL(baseHref, pageUrl);
    if (base.protocol === "http:" || base.protocol === "https:") return base.href;
  }
  return URL.canParse(pageUrl) ? pageUrl : undefined;
}

function resolveLinks(hrefs: readonly string[], base: string | undefined): string[] {
  const links = new Set<string>();
  for (const href of hrefs) {
    const url = parseUrl(href, base);
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
    url.username = ""; // Added since: a link's user:pass@ is dropped (issue 17), as the crawler never sends it.
    url.password = "";
    const absolute = url.href;
    const hash = absolute.indexOf("#");
    links.add(hash === -1 ? absolute : absolute.slice(0, hash));
  }
  return [...links];
}

describe("parseLinks (compared with htmlparser2's Parser)", () => {
  // No svg or math in these fragments: mis-nested, they are where the two differ.
  it("finds the same links as the Parser in HTML-ish text", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fragment, tagFragment), { maxLength: 40 }), pageUrl, (parts, url) => {
        const html = parts.join("");
        expect(parseLinks(html, url)).toEqual(parseLinksWithParser(html, url));
      }),
      { numRuns: 1000 },
    );
  });

  it("finds the same links as the Parser in well-nested markup with svg and math", () => {
    fc.assert(
      fc.property(tree, (html) => {
        expect(parseLinks(html, "http://example.com/dir/page")).toEqual(
          parseLinksWithParser(html, "http://example.com/dir/page"),
        );
      }),
      { numRuns: 1000 },
    );
  });
});

/** Hrefs that look like paths, made of the characters where joining strings and `URL` could part ways. */
const pathlikeHref = fc.tuple(
  fc.constantFrom("", "", "/", "//", "http://example.com", "http://example.com/", "https://example.com:443/", "HTTP://example.com/", "http://u@example.com/", ".", "./", "../", "?", "#", "mailto:", "a:"),
  fc.string({
    unit: fc.constantFrom("a", "Z", "0", "_", "-", "/", "/", ".", "..", "?", "#", ":", "%", "%2e", "%2E", "@", "\\", " ", "\t", "\n", "'", '"', "~", "^", "`", "{", "|", "[", "é", "\u0000", "&", "=", "+", "!", "*", "(", "$"),
    maxLength: 12,
  }),
).map(([start, rest]) => start + rest);

/** Base URLs: a page, a directory, a port, credentials (from a `<base>`), IPv6, no path, a query. */
const someBase = fc.constantFrom(
  "http://example.com/dir/page",
  "http://example.com/dir/",
  "http://example.com",
  "https://example.com:8443/a/b?q=1",
  "http://example.com:80/a",
  "http://u:p@example.com/x/y",
  "http://[::1]:8080/a/",
  "http://example.com/a:b/c",
);

describe("parseLinks (the simple paths it joins as strings)", () => {
  it("resolves path-like hrefs as WHATWG URL does, against a page or a <base>", () => {
    fc.assert(
      fc.property(fc.array(pathlikeHref, { maxLength: 8 }), someBase, fc.boolean(), (hrefs, base, asBaseTag) => {
        const anchors = hrefs.map((value) => `<a href="${attribute(value)}">x</a>`).join("");
        const html = asBaseTag ? `<base href="${attribute(base)}">${anchors}` : anchors;
        const pageUrl = asBaseTag ? "http://other.example/p" : base;
        expect(parseLinks(html, pageUrl)).toEqual(parseLinksWithParser(html, pageUrl));
      }),
      { numRuns: 3000 },
    );
  });
});
