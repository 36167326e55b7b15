/**
 * The crawl core and stage 3 on a store that works in the background, a
 * turn late (`DeferredStore`, test/helpers/deferred-store.ts): the core
 * hands out waits while the store may still bring URLs, counts records once
 * stored, and ends when the store says so. The Redis one is checked in
 * test/distributed and by the `crawl --frontier` command's tests.
 */
import { describe, expect, it } from "vitest";
import { crawl } from "../../src/asyncawait/index.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { DeferredStore } from "../helpers/deferred-store.js";

function startSynthetic(pages: number, linksPerPage: number): Promise<SyntheticSite> {
  return SyntheticSite.start({ pages, linksPerPage, seed: 11, redirects: 5, notFound: 3, delayMs: 0 });
}

/** A turn of the event loop: the store's answers asked for before it have come. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe("DeferredStore", () => {
  it("queues a URL a turn after add(), hands it out a turn after take() asked, and keeps at most maxTasks URLs out", async () => {
    const store = new DeferredStore();
    store.open(resolveOptions({ maxTasks: 2 }));
    store.add(["/a", "/b", "/c"].map((path) => ({ url: `http://a.test${path}`, maxRedirect: 10 })));
    expect(store.take()).toBeUndefined(); // The URLs are on their way.
    await turn();
    expect(store.take()).toBeUndefined(); // Asked for; the answer comes a turn later.
    await turn();
    expect(store.take()?.url).toBe("http://a.test/a");
    expect(store.take()?.url).toBe("http://a.test/b");
    await turn();
    expect(store.take()).toBeUndefined(); // Two out: maxTasks.
    expect(store.pending()).toBe(true);
  });
});

describe("A crawl on a store that works in the background", () => {
  it("crawls to the same records, in the same order, as the in-memory store (maxTasks 1)", async () => {
    const site = await startSynthetic(40, 3);
    try {
      const plain = await crawl(site.url, { maxTasks: 1 });
      const store = new DeferredStore();
      const deferred = await crawl(site.url, { maxTasks: 1 }, store);
      expect(store.turns).toBeGreaterThan(plain.records.length); // Every record and every URL came late.
      expect(deferred.records.map((record) => record.url)).toEqual(plain.records.map((record) => record.url));
      expect(deferred.records.map((record) => record.numNewUrls)).toEqual(plain.records.map((record) => record.numNewUrls));
      expect(deferred.todo).toBe(0);
      expect(new Set(deferred.seen)).toEqual(new Set(plain.seen));
    } finally {
      await site.close();
    }
  });

  it("stops at maxPages and leaves the rest to do", async () => {
    const site = await startSynthetic(40, 3);
    try {
      const result = await crawl(site.url, { maxTasks: 3, maxPages: 5 }, new DeferredStore());
      expect(result.records).toHaveLength(5);
      expect(result.todo).toBe(result.seen.length - 5);
    } finally {
      await site.close();
    }
  });
});
