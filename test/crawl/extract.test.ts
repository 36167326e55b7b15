import { parseDocument } from "htmlparser2";
import { describe, expect, it } from "vitest";
import { composeHooks, extractHook, linksInHook, parseExtractSpec } from "../../src/crawl/extract.js";
import { parseLinks } from "../../src/crawl/links.js";
import type { OnPage, PageContext, PageResult } from "../../src/crawl/page-hook.js";

const URL_ = "http://shop.example/products/lamp.html";

const PRODUCT = `<!doctype html>
<html><head><title>Lamp | Shop</title></head>
<body>
  <nav id="top"><a href="/">Home</a> <a href="/products/">Products</a></nav>
  <main>
    <h1 class="name">
      Brass   desk
      lamp
    </h1>
    <p class="price" data-currency="EUR">49.90</p>
    <ul><li class="tag">brass</li><li class="tag">desk</li><li class="tag"> light </li></ul>
    <a name="reviews"></a>
    <a class="related" href="/products/shade.html#x">Shade</a>
    <a class="related" href="bulb.html">Bulb</a>
    <img src="/img/lamp.jpg" alt="a lamp">
  </main>
  <footer><a href="/legal">Legal</a><a href="http://other.example/">Partner</a></footer>
</body></html>`;

/** A page as the crawl hands it to a hook: parsed by htmlparser2 into a domhandler tree on demand, as the core does. */
function page(html: string, overrides: Partial<Omit<PageContext, "document">> = {}): PageContext & { parses: number } {
  const url = overrides.url ?? URL_;
  let parses = 0;
  const context = {
    url,
    finalUrl: url,
    status: 200,
    headers: { "content-type": "text/html; charset=utf-8" },
    contentType: "text/html",
    depth: 0,
    bytes: Buffer.from(html),
    text: html,
    links: parseLinks(html, url),
    ...overrides,
    get parses() {
      return parses;
    },
    document() {
      parses += 1;
      return parseDocument(html);
    },
  };
  return context;
}

/** Calls a hook that is known to answer at once. */
function run(hook: OnPage, context: PageContext): PageResult {
  const result = hook(context);
  if (result !== null && typeof result === "object" && "then" in result) throw new Error("expected a synchronous result");
  return result as PageResult;
}

describe("parseExtractSpec", () => {
  it("reads NAME=SELECTOR, @attr and [] from the end, and splits at the first =", () => {
    expect(parseExtractSpec("title=h1")).toMatchObject({ name: "title", selector: "h1", attribute: null, all: false });
    expect(parseExtractSpec("next=a[rel=next]@HREF")).toMatchObject({ name: "next", selector: "a[rel=next]", attribute: "href", all: false });
    expect(parseExtractSpec("tags=.tag[]")).toMatchObject({ name: "tags", selector: ".tag", attribute: null, all: true });
    expect(parseExtractSpec("images = img @ src []")).toMatchObject({ name: "images", selector: "img", attribute: "src", all: true });
    expect(parseExtractSpec('mail=a[href$="@x.org"]')).toMatchObject({ selector: 'a[href$="@x.org"]', attribute: null });
  });

  it("refuses a spec with no =, a bad name or an empty selector, naming the spec", () => {
    expect(() => parseExtractSpec("h1")).toThrow(/"h1" is not NAME=SELECTOR/);
    expect(() => parseExtractSpec("=h1")).toThrow(/"=h1": the NAME/);
    expect(() => parseExtractSpec("my title=h1")).toThrow(/the NAME/);
    expect(() => parseExtractSpec("title=")).toThrow(/"title=": the SELECTOR is empty/);
    expect(() => parseExtractSpec("title=@href")).toThrow(/the SELECTOR is empty/);
  });

  it("refuses a selector css-select cannot compile, naming it and the reason", () => {
    expect(() => parseExtractSpec("title=h1[")).toThrow(TypeError);
    expect(() => parseExtractSpec("title=h1[")).toThrow(/"title=h1\[": bad CSS selector "h1\["/);
    expect(() => parseExtractSpec("x=a:nope")).toThrow(/Unknown pseudo-class :nope/);
  });
});

describe("extractHook", () => {
  const specs = ["name=h1", "price=.price", "currency=.price@data-currency", "tags=.tag[]", "related=a.related@href[]", "first=a@href", "missing=.none", "nothing=.none[]"];
  const hook = extractHook(specs.map(parseExtractSpec));

  it("gives one item with each field: text collapsed, attributes as written, arrays for []", () => {
    expect(run(hook, page(PRODUCT))).toEqual([
      {
        name: "Brass desk lamp",
        price: "49.90",
        currency: "EUR",
        tags: ["brass", "desk", "light"],
        related: ["/products/shade.html#x", "bulb.html"],
        first: "/", // The first a that has an href: the nav's, before the <a name>.
        missing: null,
        nothing: [],
      },
    ]);
  });

  it("gives no item for a page where no selector matched", () => {
    expect(run(hook, page("<html><body><p>About us</p></body></html>"))).toBeUndefined();
  });

  it("gives no item for an error page or a page that is not HTML, and parses neither", () => {
    const notFound = page(PRODUCT, { status: 404 });
    const json = page('{"h1": 1}', { contentType: "application/json" });
    expect(run(hook, notFound)).toBeUndefined();
    expect(run(hook, json)).toBeUndefined();
    expect(notFound.parses + json.parses).toBe(0);
  });

  it("takes the first match that has the attribute, and null when none has it", () => {
    const html = '<a name="x">x</a><a href="/y">y</a><img alt="no src">';
    expect(run(extractHook([parseExtractSpec("link=a@href"), parseExtractSpec("image=img@src")]), page(html))).toEqual([{ link: "/y", image: null }]);
  });

  it("refuses two specs of one name", () => {
    expect(() => extractHook([parseExtractSpec("a=h1"), parseExtractSpec("a=h2")])).toThrow(/"a" is given twice/);
  });
});

describe("linksInHook", () => {
  it("follows only the links inside the matching elements, resolved and without fragments, in document order", () => {
    expect(run(linksInHook(["main"]), page(PRODUCT))).toEqual({
      links: ["http://shop.example/products/shade.html", "http://shop.example/products/bulb.html"],
    });
    expect(run(linksInHook(["footer", "#top"]), page(PRODUCT))).toEqual({
      links: ["http://shop.example/", "http://shop.example/products/", "http://shop.example/legal", "http://other.example/"],
    });
  });

  it("gives the same links as the crawl's own parser when the region is the whole page", () => {
    const context = page(PRODUCT);
    expect(run(linksInHook(["html"]), context)).toEqual({ links: context.links });
  });

  it("resolves against the page's first <base href>, and takes a matching a itself", () => {
    const html = '<head><base href="http://cdn.example/x/"><base href="/ignored/"></head><a class="go" href="y">y</a><a href="z">z</a>';
    expect(run(linksInHook([".go"]), page(html))).toEqual({ links: ["http://cdn.example/x/y"] });
  });

  it("reads a region inside another once, and follows nothing when no element matches", () => {
    const html = '<div class="a"><div class="a"><a href="/1">1</a></div><a href="/2">2</a></div>';
    expect(run(linksInHook([".a"]), page(html))).toEqual({ links: ["http://shop.example/1", "http://shop.example/2"] });
    expect(run(linksInHook(["aside"]), page(html))).toEqual({ links: [] });
  });

  it("takes the linkAttributes too, on any element, as the crawl's parser does", () => {
    const html = '<ul id="list"><li data-href="/p/1">1</li><li><a href="/p/2" data-href="/p/3">2</a></li></ul><li data-href="/out">';
    const context = page(html);
    expect(run(linksInHook(["#list"], ["data-href"]), context)).toEqual({ links: ["http://shop.example/p/1", "http://shop.example/p/2", "http://shop.example/p/3"] });
    expect(run(linksInHook(["ul", "li"], ["data-href"]), context)).toEqual({ links: parseLinks(html, URL_, ["data-href"]) });
  });

  it("leaves the links of a page that is not a 200 in HTML as they are", () => {
    expect(run(linksInHook(["main"]), page(PRODUCT, { status: 404 }))).toBeUndefined();
    expect(run(linksInHook(["main"]), page("<urlset/>", { contentType: "application/xml" }))).toBeUndefined();
  });

  it("refuses a bad selector, naming it", () => {
    expect(() => linksInHook(["nav", "main >>"])).toThrow(/bad CSS selector "main >>"/);
  });
});

describe("composeHooks", () => {
  const items: OnPage = () => [{ a: 1 }];
  const more: OnPage = () => ({ items: [{ b: 2 }] });
  const nothing: OnPage = () => undefined;

  it("concatenates the items in hook order, and keeps the last links given", () => {
    const links1: OnPage = () => ({ links: ["/one"] });
    const links2: OnPage = () => ({ items: [{ c: 3 }], links: ["/two"] });
    expect(run(composeHooks(items, nothing, more), page(PRODUCT))).toEqual([{ a: 1 }, { b: 2 }]);
    expect(run(composeHooks(links1, items, links2), page(PRODUCT))).toEqual({ items: [{ a: 1 }, { c: 3 }], links: ["/two"] });
  });

  it("answers at once when every hook does, and with a promise when one is async", async () => {
    const later: OnPage = async () => [{ later: true }];
    const result = composeHooks(items, later, more)(page(PRODUCT));
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toEqual([{ a: 1 }, { later: true }, { b: 2 }]);
  });

  it("fails as a whole when one hook throws or rejects", async () => {
    const throws: OnPage = () => {
      throw new Error("boom");
    };
    const rejects: OnPage = async () => {
      throw new Error("later boom");
    };
    expect(() => composeHooks(items, throws)(page(PRODUCT))).toThrow("boom");
    await expect(composeHooks(items, rejects)(page(PRODUCT))).rejects.toThrow("later boom");
  });

  it("combines --extract and --links-in on one page: the item and the links", () => {
    const context = page(PRODUCT);
    const hook = composeHooks(extractHook([parseExtractSpec("name=h1")]), linksInHook(["nav"]));
    expect(run(hook, context)).toEqual({ items: [{ name: "Brass desk lamp" }], links: ["http://shop.example/", "http://shop.example/products/"] });
  });
});
