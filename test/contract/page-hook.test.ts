/**
 * The `onPage` hook (docs/behaviour.md, "Page hook"), held to the same
 * behaviour in every registered stage: the items it returns, the links it
 * names in place of the page's, an `ExtractError` when it throws or rejects,
 * a promise waited for in the stage's own style, counting against
 * `maxTasks`, and no call for a redirect or an error.
 */
import type { ServerResponse } from "node:http";
import { selectAll, selectOne } from "css-select";
import { textContent } from "domutils";
import { describe, expect, it } from "vitest";
import type { CrawlItem, PageContext, PageResult } from "../../src/crawl/page-hook.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { FixtureSite } from "../../src/site/fixture-site.js";
import { sitesOfEachTest } from "./sites.js";
import { withFourth } from "./stages.js";

/** A page with a title, a price and links. */
function productPage(title: string, price: string, links: readonly string[]): string {
  const anchors = links.map((href) => `<a href="${href}">${href}</a>`).join("\n");
  return `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><span class="price">${price}</span>\n${anchors}</body></html>`;
}

/** A promise fulfilled with `value` once Node's timers have run once: the hook is pending across loop turns. */
function later<T>(value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), 1));
}

function recordOf(records: readonly FetchStatistic[], url: string): FetchStatistic | undefined {
  return records.find((record) => record.url === url);
}

describe.each(withFourth)("$name crawler: the onPage hook", ({ crawl }) => {
  const sites = sitesOfEachTest();

  async function shop(): Promise<FixtureSite> {
    const site = await sites.startSite();
    site.addPage("/", productPage("Home", "0", ["/a", "/b"]));
    site.addPage("/a", productPage("Apple", "3", ["/b", "/c"]));
    site.addPage("/b", productPage("Banana", "1", ["/"]));
    site.addPage("/c", productPage("Cherry", "7", []));
    return site;
  }

  /** The hook of the README: the title and price of each page, from its document. */
  function titleAndPrice(page: PageContext): PageResult {
    const document = page.document();
    const title = selectOne("h1", document);
    const price = selectOne(".price", document);
    if (title === null || price === null) return [];
    return [{ title: textContent(title), price: Number(textContent(price)), links: selectAll("a", document).length }];
  }

  it("keeps the items the hook returns, with their page's URL, in page order, and counts them on the page's record", async () => {
    const site = await shop();
    const result = await crawl(site.url, { maxTasks: 1, onPage: titleAndPrice });
    expect(result.items).toEqual([
      { url: site.urlFor("/"), item: { title: "Home", price: 0, links: 2 } },
      { url: site.urlFor("/a"), item: { title: "Apple", price: 3, links: 2 } },
      { url: site.urlFor("/b"), item: { title: "Banana", price: 1, links: 1 } },
      { url: site.urlFor("/c"), item: { title: "Cherry", price: 7, links: 0 } },
    ]);
    expect(result.records.map((record) => [record.url, record.items, record.numUrls])).toEqual([
      [site.urlFor("/"), 1, 2],
      [site.urlFor("/a"), 1, 2],
      [site.urlFor("/b"), 1, 1],
      [site.urlFor("/c"), 1, 0],
    ]);
  });

  it("hands each item to onItem once its page's record is stored, right after the record goes to onRecord", async () => {
    const site = await shop();
    const heard: string[] = [];
    const result = await crawl(site.url, {
      maxTasks: 2,
      keepRecords: false,
      onPage: titleAndPrice,
      onItem: (made: CrawlItem) => heard.push(`item ${made.url}`),
      onRecord: (record) => heard.push(`record ${record.url}`),
    });
    for (const path of ["/", "/a", "/b", "/c"]) {
      expect(heard.indexOf(`item ${site.urlFor(path)}`)).toBe(heard.indexOf(`record ${site.urlFor(path)}`) + 1);
    }
    expect(heard).toHaveLength(8);
    expect(result.items).toEqual([]); // keepRecords: false keeps no items either.
  });

  it("gives the page its context: URL, status, headers, type, depth, bytes, text and links", async () => {
    const site = await shop();
    const seen: Array<Omit<PageContext, "document" | "headers" | "bytes"> & { server: string | undefined; bytes: number }> = [];
    await crawl(site.url, {
      maxTasks: 1,
      maxDepth: 1,
      onPage(page) {
        const { url, finalUrl, status, contentType, depth, text, links } = page;
        seen.push({ url, finalUrl, status, contentType, depth, text, links, server: page.headers["content-type"], bytes: page.bytes.length });
      },
    });
    const root = seen[0];
    expect(root).toMatchObject({ url: site.urlFor("/"), finalUrl: site.urlFor("/"), status: 200, contentType: "text/html", depth: 0, server: "text/html; charset=utf-8" });
    expect(root?.text).toBe(productPage("Home", "0", ["/a", "/b"]));
    expect(root?.bytes).toBe(Buffer.byteLength(productPage("Home", "0", ["/a", "/b"])));
    expect(root?.links).toEqual([site.urlFor("/a"), site.urlFor("/b")]);
    expect(seen.map((page) => [page.url, page.depth])).toEqual([
      [site.urlFor("/"), 0],
      [site.urlFor("/a"), 1],
      [site.urlFor("/b"), 1],
    ]);
  });

  it("follows the links the hook names instead of the page's, resolved against the page and still filtered", async () => {
    const site = await shop();
    site.addPage("/d", productPage("Date", "9", []));
    const result = await crawl(site.url, {
      maxTasks: 1,
      onPage(page) {
        if (page.url === site.urlFor("/")) return { items: [], links: ["d", "/c#top", "http://elsewhere.example/x", "mailto:a@b.c", "/d"] };
        return { links: [] };
      },
    });
    expect(site.requests().map((request) => request.path)).toEqual(["/", "/d", "/c"]);
    const root = recordOf(result.records, site.urlFor("/"));
    expect(root).toMatchObject({ numUrls: 2, numNewUrls: 2, items: 0 });
    expect(recordOf(result.records, site.urlFor("/d"))).toMatchObject({ numUrls: 0, items: 0 });
  });

  it("records an ExtractError with the hook's message when it throws, and goes on", async () => {
    const site = await shop();
    const result = await crawl(site.url, {
      maxTasks: 1,
      maxTries: 3,
      onPage(page) {
        if (page.url === site.urlFor("/a")) throw new Error("no price on /a");
        return [{ url: page.url }];
      },
    });
    expect(recordOf(result.records, site.urlFor("/a"))).toMatchObject({ status: null, error: "ExtractError", detail: "no price on /a", numUrls: 0, tries: 1 });
    expect(site.requestsFor("/a")).toBe(1); // Not retried.
    expect(site.requestsFor("/c")).toBe(0); // Its links are not followed.
    expect(result.items.map((made) => made.url)).toEqual([site.urlFor("/"), site.urlFor("/b")]);
  });

  it("records an ExtractError with the reason when the hook's promise rejects, and goes on", async () => {
    const site = await shop();
    const result = await crawl(site.url, {
      maxTasks: 2,
      onPage(page) {
        if (page.url === site.urlFor("/b")) return later(null).then(() => Promise.reject(new RangeError("bad banana")));
        return later([{ url: page.url }]);
      },
    });
    expect(recordOf(result.records, site.urlFor("/b"))).toMatchObject({ status: null, error: "ExtractError", detail: "bad banana" });
    expect(result.records).toHaveLength(4);
    expect(result.items.map((made) => made.url).sort()).toEqual([site.urlFor("/"), site.urlFor("/a"), site.urlFor("/c")].sort());
  });

  it("waits for an async hook: its items and its links count as a hook's that returned at once", async () => {
    const site = await shop();
    const awaited = await crawl(site.url, { maxTasks: 1, onPage: async (page) => later(titleAndPrice(page)) });
    const direct = await crawl(site.url, { maxTasks: 1, onPage: titleAndPrice });
    expect(awaited.items).toEqual(direct.items);
    const shape = (records: readonly FetchStatistic[]) => records.map(({ url, status, numUrls, numNewUrls, items }) => ({ url, status, numUrls, numNewUrls, items }));
    expect(shape(awaited.records)).toEqual(shape(direct.records));
  });

  it("counts a job against maxTasks while its hook is pending: the server never sees more requests than the tasks left", async () => {
    const site = await sites.startSite();
    const pages = Array.from({ length: 8 }, (_, i) => `/p${i}`);
    site.addPage("/", productPage("Home", "0", pages));
    let pending = 0;
    let peakHooks = 0;
    let peakBusy = 0;
    for (const path of pages) {
      site.addHandler(path, function countBusy(_request, response: ServerResponse) {
        peakBusy = Math.max(peakBusy, pending + site.requestsInFlight); // This request is in flight.
        response.writeHead(200, { "Content-Type": "text/html" });
        response.end(productPage(path, "1", []));
      });
    }
    // The hooks settle one at a time, oldest first, a timer apart: the others stay pending meanwhile.
    const waiting: Array<() => void> = [];
    function releaseOne(): void {
      waiting.shift()?.();
      if (waiting.length > 0) setTimeout(releaseOne, 5);
    }
    const result = await crawl(site.url, {
      maxTasks: 3,
      onPage(page) {
        pending += 1;
        peakHooks = Math.max(peakHooks, pending);
        return new Promise((resolve) => {
          waiting.push(() => {
            pending -= 1;
            resolve([{ url: page.url }]);
          });
          if (waiting.length === 1) setTimeout(releaseOne, 5);
        });
      },
    });
    expect(result.items).toHaveLength(9);
    expect(peakHooks).toBe(3);
    expect(peakBusy).toBeLessThanOrEqual(3);
  });

  it("makes no record for a page whose hook is pending when the crawl is aborted: the URL stays to do", async () => {
    const site = await shop();
    const stop = new AbortController();
    const result = await crawl(site.url, {
      maxTasks: 1,
      signal: stop.signal,
      onPage(page) {
        if (page.url === site.urlFor("/")) return [{ root: true }];
        stop.abort(); // While this page's hook is pending.
        return later([{ late: true }]);
      },
    });
    expect(result.records.map((record) => record.url)).toEqual([site.urlFor("/")]);
    expect(result.items).toEqual([{ url: site.urlFor("/"), item: { root: true } }]);
    expect(result.stoppedBy).toBe("signal");
    expect(result.todo).toBe(2);
  });

  it("is not called for a redirect or an error, and is for a 404 page", async () => {
    const site = await shop();
    site.addPage("/", productPage("Home", "0", ["/moved", "/broken", "/missing"]));
    site.addRedirect("/moved", "/a", 301);
    site.addFault("/broken", { kind: "raw", bytes: "not http\r\n\r\n" });
    const called: string[] = [];
    const result = await crawl(site.url, {
      maxTasks: 1,
      maxDepth: 1,
      onPage(page) {
        called.push(`${page.status} ${page.url}`);
      },
    });
    expect(called.sort()).toEqual([`200 ${site.urlFor("/")}`, `200 ${site.urlFor("/a")}`, `404 ${site.urlFor("/missing")}`].sort());
    expect(recordOf(result.records, site.urlFor("/moved"))).not.toHaveProperty("items");
    expect(recordOf(result.records, site.urlFor("/broken"))).toMatchObject({ error: "BadResponse" });
    expect(recordOf(result.records, site.urlFor("/broken"))).not.toHaveProperty("items");
  });

  it("leaves the records of a crawl without a hook as they were: no items field, no items", async () => {
    const site = await shop();
    const result = await crawl(site.url, { maxTasks: 1 });
    expect(result.records).toHaveLength(4);
    for (const record of result.records) expect(record).not.toHaveProperty("items");
    expect(result.items).toEqual([]);
  });
});
