/**
 * FrontierStore: an asynchronous Frontier under the crawl core, whose store
 * answers at once. Checked with the in-memory frontier, whose promises settle
 * a turn later like a server's would (the Redis one is checked in
 * test/distributed and by the `crawl --frontier` command's tests).
 */
import { describe, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import { MemoryFrontier } from "../../src/asyncawait/frontier.js";
import { FrontierStore } from "../../src/crawl/frontier.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";

function startSynthetic(pages: number, linksPerPage: number): Promise<SyntheticSite> {
  return SyntheticSite.start({ pages, linksPerPage, seed: 11, redirects: 5, notFound: 3, delayMs: 0 });
}

describe("FrontierStore", () => {
  it("hands out nothing until the frontier's take() has answered, then keeps at most maxTasks URLs taken", async () => {
    const frontier = new MemoryFrontier();
    const store = new FrontierStore(frontier);
    store.open(resolveOptions({ maxTasks: 2 }), () => {});
    store.add(["/a", "/b", "/c"].map((path) => ({ url: `http://a.test${path}`, maxRedirect: 10 })));
    expect(store.take()).toBeUndefined(); // Asked for; the answer comes a promise job later.
    await Promise.resolve();
    expect(store.take()?.url).toBe("http://a.test/a");
    expect(store.take()?.url).toBe("http://a.test/b");
    await Promise.resolve();
    expect(store.take()).toBeUndefined(); // Two held: maxTasks (a shared frontier leases each to this process).
    expect(store.pending()).toBe(true);
  });

  it("crawls to the same records, in the same order, as the in-memory store (maxTasks 1)", async () => {
    const site = await startSynthetic(40, 3);
    try {
      const plain = await crawl(site.url, { maxTasks: 1 });
      const shared = await crawl(site.url, { maxTasks: 1 }, new MemoryFrontier());
      expect(shared.records.map((record) => record.url)).toEqual(plain.records.map((record) => record.url));
      expect(shared.records.map((record) => record.numNewUrls)).toEqual(plain.records.map((record) => record.numNewUrls));
      expect(shared.todo).toBe(0);
      expect(new Set(shared.seen)).toEqual(new Set(plain.seen));
    } finally {
      await site.close();
    }
  });

  it("stops at maxPages and leaves the rest to do", async () => {
    const site = await startSynthetic(40, 3);
    try {
      const result = await crawl(site.url, { maxTasks: 3, maxPages: 5 }, new MemoryFrontier());
      expect(result.records).toHaveLength(5);
      expect(result.todo).toBe(result.seen.length - 5);
    } finally {
      await site.close();
    }
  });
});
