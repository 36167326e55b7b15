/**
 * The one store interface (`CrawlStore`), held by every store: in memory
 * (`MemoryStore`), in a local directory (`StateStore`), a turn late
 * (`DeferredStore`, the yardstick of a store that works in the
 * background), and in Redis (`RedisFrontier`, against a real
 * redis-server). The crawl core relies on exactly these, whichever it is given.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/crawl/options.js";
import { errorRecord } from "../../src/crawl/records.js";
import { StateStore } from "../../src/crawl/state.js";
import { MemoryStore, type CrawlStore } from "../../src/crawl/store.js";
import type { QueueItem, Visit } from "../../src/crawl/visit.js";
import { RedisFrontier } from "../../src/distributed/index.js";
import { DeferredStore } from "../helpers/deferred-store.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { finished, taken } from "../helpers/store-steps.js";
import { within } from "../helpers/within.js";

const item = (path: string): QueueItem => ({ url: `http://a.test${path}`, maxRedirect: 10 });
const visited = (url: QueueItem, next: QueueItem[] = []): Visit => ({ record: { ...errorRecord(url.url, "NetworkError"), numNewUrls: next.length }, next });

/** The next URL the store hands out, within 5 s. */
function next(store: CrawlStore): Promise<QueueItem> {
  return within(5_000, taken(store), "a URL from the store");
}

/** The store, opened as the crawl core opens it: with `maxTasks` 2, for the roots http://a.test/. */
function opened(store: CrawlStore): CrawlStore {
  store.open?.(resolveOptions({ maxTasks: 2, robots: false }), function stopCrawl() {}, [item("/").url]);
  return store;
}

function storeContract(name: string, make: () => Promise<CrawlStore>): void {
  describe(name, () => {
    it("queues a URL once however often it is added, and hands URLs out first in, first out", async () => {
      const store = opened(await make());
      store.add([item("/"), item("/a"), item("/")]);
      store.add([item("/a")]);
      expect((await next(store)).url).toBe(item("/").url);
      expect((await next(store)).url).toBe(item("/a").url);
      store.stop();
      expect(store.take()).toBeUndefined();
    });

    it("stores a record and queues only the URLs not seen, in one step, and reports the record stored", async () => {
      const store = opened(await make());
      store.add([item("/"), item("/seen")]);
      const root = await next(store);
      const stored = await within(5_000, finished(store, root, visited(root, [item("/seen"), item("/new")])), "the record stored");
      expect(stored?.url).toBe(root.url);
      // A store that names seen URLs trusts visit(), which left them out; one that names none checks each link itself.
      if (store.seenUrls.size === 0) expect(stored?.numNewUrls).toBe(1);
      expect((await next(store)).url).toBe(item("/seen").url);
      expect((await next(store)).url).toBe(item("/new").url);
      store.stop();
    });

    it("hands a URL put back out again, and expects no more URLs once every URL is recorded", async () => {
      const store = opened(await make());
      store.add([item("/"), item("/b")]);
      const first = await next(store);
      store.putBack(first); // Its host's turn came: back to be handed out again.
      const second = await next(store);
      const third = await next(store);
      expect([second.url, third.url].sort()).toEqual([item("/").url, item("/b").url]);
      await finished(store, second, visited(second));
      await finished(store, third, visited(third));
      await within(5_000, Promise.resolve(store.whenDone?.()), "whenDone() after the last record");
      expect(store.pending()).toBe(false);
      expect(store.summary(2)).toMatchObject({ todo: 0 });
    });

    it("after stop(), hands out nothing, and reports the URLs without a record to do", async () => {
      const store = opened(await make());
      store.add([item("/"), item("/a"), item("/b")]);
      const first = await next(store);
      const second = await next(store);
      store.stop();
      expect(store.take()).toBeUndefined();
      expect(store.pending()).toBe(false);
      await finished(store, first, visited(first));
      store.release(second);
      await within(5_000, Promise.resolve(store.whenDone?.()), "whenDone() after the stop");
      const summary = store.summary(1);
      expect(summary.todo).toBe(2);
      expect([...summary.seen].sort()).toEqual([item("/").url, item("/a").url, item("/b").url]);
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

storeContract("MemoryStore", async () => new MemoryStore());
storeContract("StateStore", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cc-store-contract-"));
  dirs.push(dir);
  return new StateStore(join(dir, "state"));
});
storeContract("DeferredStore", async () => new DeferredStore());

describeWithRedis("RedisFrontier as a CrawlStore", () => {
  let redis: RedisServer;
  let crawls = 0;
  const open: RedisFrontier[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    for (const frontier of open.splice(0)) await frontier.close();
  });
  afterAll(async () => {
    await redis?.remove();
  });
  storeContract("RedisFrontier", async () => {
    const frontier = await RedisFrontier.open({ url: redis.url, name: `contract-${++crawls}` });
    open.push(frontier);
    return frontier;
  });
});
