import { describe, expect, it } from "vitest";
import { parseLinks } from "../../src/crawl/links.js";

const PAGE = "http://example.com/dir/page";

describe("parseLinks", () => {
  it("resolves a and area hrefs against the page URL, in document order", () => {
    const html = '<a href="b">b</a><map><area href="/c" alt=""></map><a href="http://other.org/d">d</a>';
    expect(parseLinks(html, PAGE)).toEqual([
      "http://example.com/dir/b",
      "http://example.com/c",
      "http://other.org/d",
    ]);
  });

  it("ignores other tags that carry an href", () => {
    const html = '<link rel="stylesheet" href="/style.css"><img src="/i.png"><div href="/div"></div><a name="top">';
    expect(parseLinks(html, PAGE)).toEqual([]);
  });

  it("keeps each link once, at its first occurrence", () => {
    const html = '<a href="/a">1</a><a href="/b">2</a><a href="/a#x">3</a><a href="http://example.com/a">4</a>';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/a", "http://example.com/b"]);
  });

  it("drops user:pass@, so a link with and one without credentials are one link", () => {
    const html = '<a href="http://user:secret@example.com/a">1</a><a href="/a">2</a><a href="//someone@other.org/b">3</a>';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/a", "http://other.org/b"]);
  });

  it("drops the fragment", () => {
    expect(parseLinks('<a href="/x?q=1#section">', PAGE)).toEqual(["http://example.com/x?q=1"]);
  });

  it("resolves a fragment-only or empty href to the page itself", () => {
    expect(parseLinks('<a href="#top"></a><a href=""></a>', PAGE)).toEqual([PAGE]);
  });

  it("keeps only http and https links", () => {
    const html = [
      '<a href="mailto:me@example.com">',
      '<a href="javascript:void(0)">',
      '<a href="ftp://example.com/f">',
      '<a href="data:text/html,hi">',
      '<a href="tel:+1234">',
      '<a href="https://example.com/s">',
    ].join("");
    expect(parseLinks(html, PAGE)).toEqual(["https://example.com/s"]);
  });

  it("resolves a scheme-relative href with the page's scheme", () => {
    expect(parseLinks('<a href="//cdn.example.net/x">', "https://example.com/")).toEqual(["https://cdn.example.net/x"]);
  });

  it("reads upper-case tags and attributes and unquoted values", () => {
    const html = "<A HREF=/upper>u</A><a href=/unquoted?x=1>q</a><a href='/single'>s</a>";
    expect(parseLinks(html, PAGE)).toEqual([
      "http://example.com/upper",
      "http://example.com/unquoted?x=1",
      "http://example.com/single",
    ]);
  });

  it("decodes entities in attribute values", () => {
    const html = '<a href="/q?a=1&amp;b=2">1</a><a href="/&#x7E;user">2</a><a href="/caf&eacute;">3</a>';
    expect(parseLinks(html, PAGE)).toEqual([
      "http://example.com/q?a=1&b=2",
      "http://example.com/~user",
      "http://example.com/caf%C3%A9",
    ]);
  });

  it("trims surrounding whitespace and removes tabs and newlines inside", () => {
    const html = '<a href="  /spaced  ">1</a><a href="\n/split\n/path\t">2</a>';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/spaced", "http://example.com/split/path"]);
  });

  it("takes the first value of a repeated attribute, as browsers do", () => {
    expect(parseLinks('<a href="/first" href="/second">', PAGE)).toEqual(["http://example.com/first"]);
  });

  it("reads nothing inside script or style", () => {
    const html = [
      "<script>document.write('<a href=\"/from-script\">x</a>');</script>",
      '<style>a[href="/from-style"] { color: red }</style>',
      '<a href="/real">real</a>',
    ].join("");
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/real"]);
  });

  it("reads nothing inside comments, textarea or title", () => {
    const html = '<!-- <a href="/c"> --><textarea><a href="/t"></textarea><title><a href="/ti"></title><a href="/ok">';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/ok"]);
  });

  it("resolves every link against the first base href, even links before it", () => {
    const html = '<a href="before">1</a><base href="/other/"><base href="/ignored/"><a href="after">2</a>';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/other/before", "http://example.com/other/after"]);
  });

  it("resolves a relative base href against the page URL", () => {
    expect(parseLinks('<base href="sub/"><a href="x">', PAGE)).toEqual(["http://example.com/dir/sub/x"]);
  });

  it("lets a base on another host move the links there", () => {
    expect(parseLinks('<base href="https://cdn.example.org/a/"><a href="b">', PAGE)).toEqual([
      "https://cdn.example.org/a/b",
    ]);
  });

  it("uses the page URL when the first base href is invalid or not http(s)", () => {
    expect(parseLinks('<base href="http://[bad/"><a href="x">', PAGE)).toEqual(["http://example.com/dir/x"]);
    expect(parseLinks('<base href="javascript:0"><a href="x">', PAGE)).toEqual(["http://example.com/dir/x"]);
  });

  it("ignores a base without href", () => {
    expect(parseLinks('<base target="_blank"><base href="/b/"><a href="x">', PAGE)).toEqual(["http://example.com/b/x"]);
  });

  it("skips hrefs that do not parse", () => {
    expect(parseLinks('<a href="http://[::1">bad</a><a href="http://exa mple.com/">bad</a><a href="/ok">', PAGE)).toEqual([
      "http://example.com/ok",
    ]);
  });

  it("keeps only absolute hrefs when the page URL itself does not parse", () => {
    expect(parseLinks('<a href="relative"></a><a href="http://a.example/x">', "not a url")).toEqual([
      "http://a.example/x",
    ]);
  });

  it("reads malformed markup as a browser does", () => {
    // `<a href="/two"` becomes a second (ignored) href of the first tag; `< a` is text.
    const html = '<p><a href="/one"<a href="/two">< a href="/three"><a href="/four" <b>';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/one", "http://example.com/four"]);
  });

  it("reads style, script and title inside svg or math as markup, as browsers do", () => {
    const html = [
      '<svg><style><a href="/svg-style"></style><script><a href="/svg-script"></script></svg>',
      '<math><title><a href="/math-title"></title></math>',
      '<style><a href="/html-style"></style>',
    ].join("");
    expect(parseLinks(html, PAGE)).toEqual([
      "http://example.com/svg-style",
      "http://example.com/svg-script",
      "http://example.com/math-title",
    ]);
  });

  it("reads style as text again inside an svg foreignObject and after a self-closed svg", () => {
    const html = [
      '<svg><foreignObject><style><a href="/island"></style></foreignObject><style><a href="/svg"></style></svg>',
      '<svg/><style><a href="/after"></style>',
    ].join("");
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/svg"]);
  });

  it("returns nothing for an empty page", () => {
    expect(parseLinks("", PAGE)).toEqual([]);
  });

  it("reads links from application/xml-ish markup", () => {
    const xml = '<?xml version="1.0"?><root><a href="/x1"/><a href="/x2"></a></root>';
    expect(parseLinks(xml, PAGE)).toEqual(["http://example.com/x1", "http://example.com/x2"]);
  });

  it("reads every link of a large page", () => {
    const html = Array.from({ length: 2000 }, (_, i) => `<li><a href="/p/${i}">${i}</a></li>`).join("\n");
    const links = parseLinks(html, PAGE);
    expect(links).toHaveLength(2000);
    expect(links[1999]).toBe("http://example.com/p/1999");
  });
});

describe("parseLinks on hostile pages", () => {
  // htmlparser2's Parser, whose open-element stack grows newest-first (by unshift), takes
  // 5 to 11 s for 200,000 tags and four times that for these 400,000 (1.2 MB): the 5 s limit
  // fails a quadratic reader; a linear one needs milliseconds.
  it("finds the link after 400,000 nested unclosed <b> tags", { timeout: 5_000 }, () => {
    const html = `${"<b>".repeat(400_000)}<a href="/end">end</a>`;
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/end"]);
  });

  it("finds the link after 100,000 unclosed svg and mi tags and 100,000 end tags that close nothing", { timeout: 5_000 }, () => {
    const html = `${"<svg><mi>".repeat(50_000)}${"</math></foreignobject>".repeat(50_000)}<a href="/end">end</a>`;
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/end"]);
  });
});

describe("parseLinks with more link attributes (linkAttributes, --link-attr)", () => {
  it("takes the named attributes on any element as links, in document order with the hrefs", () => {
    const html = '<div data-href="/one"></div><a href="/two" data-href="/three">t</a><span data-href="four"></span>';
    expect(parseLinks(html, PAGE, ["data-href"])).toEqual([
      "http://example.com/one",
      "http://example.com/two",
      "http://example.com/three",
      "http://example.com/dir/four",
    ]);
  });

  it("reads attribute names in any case and keeps the first of a repeated one", () => {
    const html = '<li DATA-URL="/first" data-url="/second"></li>';
    expect(parseLinks(html, PAGE, ["data-url"])).toEqual(["http://example.com/first"]);
  });

  it("resolves them against the base, drops what is not http(s), and decodes entities", () => {
    const html = '<base href="http://cdn.example.com/x/"><img src="a.png?x=1&amp;y=2"><img src="javascript:void(0)">';
    expect(parseLinks(html, PAGE, ["src"])).toEqual(["http://cdn.example.com/x/a.png?x=1&y=2"]);
  });

  it("takes no more links than before when none are named, and none from a tag cut off by the end", () => {
    const html = '<div data-href="/one"></div><a href="/two">t</a><div data-href="/cut"';
    expect(parseLinks(html, PAGE)).toEqual(["http://example.com/two"]);
    expect(parseLinks(html, PAGE, ["data-href"])).toEqual(["http://example.com/one", "http://example.com/two"]);
  });

  it("does not take a base's href as a link when href is named", () => {
    const html = '<base href="/b/"><link href="style.css"><a href="x">x</a>';
    expect(parseLinks(html, PAGE, ["href"])).toEqual(["http://example.com/b/style.css", "http://example.com/b/x"]);
  });

  it("takes none from inside a script, as for hrefs", () => {
    expect(parseLinks('<script>"<div data-href=/no>"</script><p data-href="/yes">', PAGE, ["data-href"])).toEqual(["http://example.com/yes"]);
  });
});
