/**
 * The page the `onPage` hook sees (src/crawl/page-context.ts) and the visit
 * it makes (`visitHooked`, src/crawl/visit.ts): its fields, and one parse a
 * page. The parses are counted by wrapping the two htmlparser2 classes the
 * crawl loads (src/crawl/htmlparser2-parts.ts): a mock, since no real part
 * tells how many times it was constructed; the classes wrapped are the real ones.
 */
import { gzipSync } from "node:zlib";
import { selectOne } from "css-select";
import { textContent } from "domutils";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { HttpResponse } from "../../src/http/parser.js";
import type { PageContext, PageResult } from "../../src/crawl/page-hook.js";
import { UrlPolicy } from "../../src/crawl/urls.js";
import { visit, visitHooked, type PendingVisit, type QueueItem, type Visit, type VisitContext } from "../../src/crawl/visit.js";

const parses = vi.hoisted(() => ({ tokenizer: 0, parser: 0 }));

vi.mock("../../src/crawl/htmlparser2-parts.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/crawl/htmlparser2-parts.js")>();
  class CountedTokenizer extends original.Tokenizer {
    constructor(...args: ConstructorParameters<typeof original.Tokenizer>) {
      super(...args);
      parses.tokenizer += 1;
    }
  }
  const Parser = original.xmlParser();
  class CountedParser extends Parser {
    constructor(...args: ConstructorParameters<typeof Parser>) {
      super(...args);
      parses.parser += 1;
    }
  }
  return { ...original, Tokenizer: CountedTokenizer, xmlParser: () => CountedParser };
});

const ROOT = "http://example.com/dir/";
const PAGE = '<html><head><title>T</title><base href="/base/"></head><body><h1>Caf\u00e9</h1><a href="a">a</a> <a href="http://example.com/b#x">b</a> <a href="http://other.example/">o</a></body></html>';
const LINKS = ["http://example.com/base/a", "http://example.com/b", "http://other.example/"];

function context(): VisitContext {
  return { policy: new UrlPolicy([ROOT], { strict: true, exclude: null, maxDepth: Infinity }), seenUrls: new Set([ROOT]), maxRedirect: 10, maxBodyBytes: 100_000 };
}

function html(body: string, contentType = "text/html; charset=utf-8", status = 200): HttpResponse {
  return { status, headers: { "content-type": contentType, "x-shop": "1" }, body: Buffer.from(body) };
}

const item: QueueItem = { url: ROOT, maxRedirect: 10, depth: 2, referrer: "http://example.com/" };

/** The visit of a hook that returned at once. */
function hooked(response: HttpResponse, hook: (page: PageContext) => PageResult): Visit {
  const v = visitHooked(item, response, context(), hook);
  if ("hook" in v) throw new Error("expected the hook to return at once");
  return v;
}

beforeEach(() => {
  parses.tokenizer = 0;
  parses.parser = 0;
});

describe("the page a hook sees", () => {
  it("has the URL, status, headers, type, depth, decoded bytes, text and links", () => {
    const seen: PageContext[] = [];
    const response: HttpResponse = { status: 200, headers: { "content-type": "text/html; charset=utf-8", "content-encoding": "gzip" }, body: gzipSync(Buffer.from(PAGE)) };
    hooked(response, (page) => {
      seen.push(page);
    });
    const page = seen[0] as PageContext;
    expect([page.url, page.finalUrl, page.status, page.contentType, page.depth]).toEqual([ROOT, ROOT, 200, "text/html", 2]);
    expect(page.headers["content-encoding"]).toBe("gzip");
    expect(Buffer.from(page.bytes).toString()).toBe(PAGE);
    expect(page.text).toBe(PAGE);
    expect(page.links).toEqual(LINKS);
  });

  it("decodes the text in the charset the page names", () => {
    let text = "";
    hooked({ status: 200, headers: { "content-type": "text/html; charset=windows-1252" }, body: Buffer.from([0x43, 0x61, 0x66, 0xe9]) }, (page) => {
      text = page.text;
    });
    expect(text).toBe("Caf\u00e9");
  });

  it("gives a document that css-select and domutils query", () => {
    let heading = "";
    hooked(html(PAGE), (page) => {
      const h1 = selectOne("h1", page.document());
      heading = h1 === null ? "" : textContent(h1);
    });
    expect(heading).toBe("Caf\u00e9");
  });

  it("has no links for a page the crawl reads no links from, and a text and document still", () => {
    let links: readonly string[] = ["?"];
    let title = "";
    hooked(html(PAGE, "text/html", 404), (page) => {
      links = page.links;
      title = textContent(page.document());
    });
    expect(links).toEqual([]);
    expect(title).toContain("T");
  });
});

describe("one parse a page", () => {
  it("reads links with the tokenizer alone without a hook, as always", () => {
    expect(visit(item, html(PAGE), context()).next.map((next) => next.url)).toEqual(LINKS.slice(0, 2));
    expect(parses).toEqual({ tokenizer: 1, parser: 0 });
  });

  it("reads links with the tokenizer alone when the hook asks for no document", () => {
    const v = hooked(html(PAGE), (page) => [{ size: page.text.length, links: page.links.length }]);
    expect(v.next.map((next) => next.url)).toEqual(LINKS.slice(0, 2));
    expect(parses).toEqual({ tokenizer: 1, parser: 0 });
  });

  it("takes the crawl's links from the document the hook asked for: one parse, no tokenizer run", () => {
    const v = hooked(html(PAGE), (page) => {
      page.document();
      page.document();
      return [{ links: page.links.length }];
    });
    expect(v.next.map((next) => next.url)).toEqual(LINKS.slice(0, 2));
    expect(v.record).toMatchObject({ numUrls: 2, numNewUrls: 2, items: 1 });
    expect(parses).toEqual({ tokenizer: 0, parser: 1 });
  });

  it("parses nothing for a body no link is read from when the hook asks for nothing", () => {
    hooked(html("\u0089PNG", "image/png"), () => undefined);
    expect(parses).toEqual({ tokenizer: 0, parser: 0 });
  });

  it("parses nothing when the hook names the links to follow", () => {
    const v = hooked(html(PAGE), () => ({ links: ["/x"] }));
    expect(v.next.map((next) => next.url)).toEqual(["http://example.com/x"]);
    expect(parses).toEqual({ tokenizer: 0, parser: 0 });
  });
});

describe("visitHooked", () => {
  it("does not call the hook for a redirect or an error", () => {
    const hook = vi.fn();
    visitHooked(item, { status: 301, headers: { location: "/moved" }, body: Buffer.alloc(0) }, context(), hook);
    visitHooked(item, "ConnectionRefused", context(), hook);
    visitHooked(item, { status: 200, headers: { "content-type": "text/html", "content-encoding": "gzip" }, body: Buffer.from("not gzip") }, context(), hook);
    expect(hook).not.toHaveBeenCalled();
  });

  it("gives an ExtractError record for an answer that is not items", () => {
    for (const answer of ["title", 42, [1], [null], { items: "x" }, { links: [1] }]) {
      const v = hooked(html(PAGE), () => answer as PageResult);
      expect(v.record).toMatchObject({ error: "ExtractError", status: null, numUrls: 0, tries: 1 });
      expect(v.record.detail).toMatch(/^onPage returned/);
      expect(v.next).toEqual([]);
    }
  });

  it("waits for a promise, and makes the visit from how it settled", async () => {
    const v = visitHooked(item, html(PAGE), context(), async () => [{ a: 1 }]) as PendingVisit;
    expect(v).toHaveProperty("hook");
    const settled = await v.hook.settled();
    const done = v.settle(settled);
    expect(done.items).toEqual([{ url: ROOT, item: { a: 1 } }]);
    expect(done.record.items).toBe(1);
    const failed = visitHooked(item, html(PAGE), context(), () => Promise.reject("plain words")) as PendingVisit;
    expect(failed.settle(await failed.hook.settled()).record).toMatchObject({ error: "ExtractError", detail: "plain words" });
  });
});
