/**
 * Steps of a store (`CrawlStore`) a test awaits: a store answers at once,
 * and one that works in the background (`RedisFrontier`, `DeferredStore`)
 * has its answers a little later.
 *
 * @module
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { CrawlStore } from "../../src/crawl/store.js";
import type { QueueItem, Visit } from "../../src/crawl/visit.js";

/** The next URL the store hands out, asking again every 2 ms until it has one (bound it with `within`). */
export async function taken(store: CrawlStore): Promise<QueueItem> {
  for (;;) {
    const item = store.take();
    if (item !== undefined) return item;
    await sleep(2);
  }
}

/** `finish(item, visit)`, resolving with the record as the store reports it stored, or null. */
export function finished(store: CrawlStore, item: QueueItem, visit: Visit): Promise<FetchStatistic | null> {
  return new Promise(function finishing(resolve) {
    store.finish(item, visit, resolve);
  });
}

/** Waits for the store's `whenDone()`, if it has one; resolves with the error `summary()` throws, or null. */
export async function ending(store: CrawlStore): Promise<unknown> {
  await store.whenDone?.();
  try {
    store.summary(0);
    return null;
  } catch (error) {
    return error;
  }
}
