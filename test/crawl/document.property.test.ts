/**
 * The links a page hook's document gives the crawl (`documentLinks`, a walk
 * of the parsed tree) are the links `parseLinks` reads with the tokenizer
 * alone: with a hook that asks for the document, the crawl follows the same
 * links as without one, from one parse.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { documentLinks, parseDocument } from "../../src/crawl/document.js";
import { parseLinks } from "../../src/crawl/links.js";
import { attribute, fragment, href, pageUrl, tagFragment, tree } from "../helpers/html-arbitraries.js";

function treeLinks(html: string, url: string): string[] {
  return documentLinks(parseDocument(html), url);
}

describe("documentLinks (compared with parseLinks)", () => {
  it("finds the same links in HTML-ish text, <base>, scripts, styles and broken tags included", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fragment, tagFragment), { maxLength: 40 }), pageUrl, (parts, url) => {
        const html = parts.join("");
        expect(treeLinks(html, url)).toEqual(parseLinks(html, url));
      }),
      { numRuns: 1000 },
    );
  });

  it("finds the same links in well-nested markup with svg and math", () => {
    fc.assert(
      fc.property(tree, (html) => {
        expect(treeLinks(html, "http://example.com/dir/page")).toEqual(parseLinks(html, "http://example.com/dir/page"));
      }),
      { numRuns: 1000 },
    );
  });

  it("finds the same links in more attributes (linkAttributes), in attribute order, a repeated one read once", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom("a", "div", "base", "area", "img"), href, href, fc.boolean()), { maxLength: 12 }), (tags) => {
        const html = tags.map(([tag, one, two, swap]) => (swap ? `<${tag} data-href="${attribute(one)}" href="${attribute(two)}" data-href="/again">x` : `<${tag} href="${attribute(one)}" src="${attribute(two)}">x`)).join("");
        const attributes = ["data-href", "src", "href"];
        expect(documentLinks(parseDocument(html), "http://example.com/a/b", attributes)).toEqual(parseLinks(html, "http://example.com/a/b", attributes));
      }),
      { numRuns: 300 },
    );
  });

  it("finds the same links behind a <base>, each once, in document order", () => {
    fc.assert(
      fc.property(fc.array(href, { maxLength: 10 }), href, (hrefs, base) => {
        const anchors = hrefs.map((value, i) => `<p>${i}<a href="${attribute(value)}">x</a><area href="${attribute(value)}">`).join("");
        const html = `${anchors}<base href="${attribute(base)}">${anchors}<base href="/elsewhere/">${anchors}`;
        expect(treeLinks(html, "http://example.com/a/b")).toEqual(parseLinks(html, "http://example.com/a/b"));
      }),
      { numRuns: 300 },
    );
  });
});

describe("documentLinks", () => {
  it("walks a tree deeper than the call stack allows", () => {
    const html = `${"<div>".repeat(20_000)}<a href="/deep">x</a>`;
    expect(treeLinks(html, "http://example.com/")).toEqual(["http://example.com/deep"]);
  });

  it("reads <style> inside <svg> as markup and outside as text, as parseLinks does", () => {
    const html = '<style><a href="/no"></style><svg><style><a href="/yes"></a></style></svg>';
    expect(treeLinks(html, "http://example.com/")).toEqual(["http://example.com/yes"]);
    expect(parseLinks(html, "http://example.com/")).toEqual(["http://example.com/yes"]);
  });
});
