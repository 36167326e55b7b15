import fc from "fast-check";
import { Parser } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { parseLinks } from "../../src/crawl/links.js";
import { parseUrl } from "../../src/crawl/urls.js";

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

/** An href as pages write them: absolute, relative, odd schemes, junk. */
const href = fc.oneof(
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
  fc.constantFrom("", "#", "#top", "/", "..", "./a", "?q=1", "//other.example/x", " /spaced ", "\n/nl\t"),
  fc.constantFrom("javascript:void(0)", "mailto:a@b.c", "data:,x", "ftp://f.example/", "http://[::1", "http://"),
  fc.constantFrom("http://u:p@h.example/x", "//user@h.example/y", "https://:pw@h.example/"),
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

/** More of what start tags can look like: odd spacing, repeats, bare and self-closed attributes, entities. */
const tagFragment = fc.oneof(
  href.map((value) => `<a\nhref = "${value}" href="/second">`),
  href.map((value) => `<a title="x" HrEf="${value}"/>`),
  href.map((value) => `<area shape=rect href=${value} />`),
  href.map((value) => `<a href="${attribute(value)}&amp;x=1&#38;y&lt;">`),
  fc.constantFrom("<a href>", "<base href>", "<a href=>", "<a href=/x&amp", "<a b='>' href=/q>", "<a/href=/s>"),
  fc.constantFrom("<title>", "</title>", "<textarea>", "</textarea>", "<xmp>", "</xmp>", "<iframe>", "</iframe>"),
  fc.constantFrom("<noembed>", "</noembed>", "<noframes>", "<plaintext>", "</script>", "</style>", "<script/>"),
  fc.constantFrom("<p>", "</p>", "<div>", "</div>", "<form>", "</form>", "<li>", "<table><td>", "<br/>", "</br>"),
);

/**
 * Elements that close what they open, with svg and math among them: where htmlparser2's
 * Parser reads `<style>`, `<script>` and `<title>` as markup. (Mis-nested svg is where the
 * two differ: see ForeignContent in links.ts.) No `<p>` or nested `<a>`: the Parser closes
 * those implicitly, so `</p>` may end an svg there; no self-closed island: `<title/>` stays open.
 */
const { tree } = fc.letrec<{ tree: string; node: string }>((tie) => ({
  tree: fc.array(tie("node"), { maxLength: 5 }).map((nodes) => nodes.join("")),
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      href.map((value) => `<a href="${attribute(value)}">link</a>`),
      href.map((value) => `<area href="${attribute(value)}">`),
      href.map((value) => `<base href="${attribute(value)}">`),
      href.map((value) => `<a href="${attribute(value)}"/>`),
      fc
        .tuple(fc.constantFrom("style", "script", "title", "textarea", "xmp", "iframe", "noembed"), href)
        .map(([name, value]) => `<${name}><a href="${attribute(value)}"></${name}>`),
      fc.constantFrom("<svg/>", "<math/>", "<path/>", "<b/>", "<br>", "text", "<!-- <a href=/c> -->"),
      fc.constantFrom("<![CDATA[<a href=/cdata>]]>", "<plaintext>"),
    ),
    fc
      .tuple(
        fc.constantFrom("svg", "math", "foreignObject", "mi", "mtext", "annotation-xml", "desc", "title", "g", "b", "div"),
        fc.boolean(),
        tie("tree"),
      )
      .map(([name, upper, content]) => {
        const tag = upper ? name.toUpperCase() : name;
        return `<${tag}>${content}</${tag}>`;
      }),
  ),
}));

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
