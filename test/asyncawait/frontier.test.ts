/**
 * The Frontier's promises, held by both frontiers: the in-memory one (a
 * JoinableQueue and a Set) and the Redis one (against a real redis-server).
 * Stage 3's crawler relies on exactly these, whichever it is given.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MemoryFrontier, type Frontier } from "../../src/asyncawait/frontier.js";
import { QueueShutDown } from "../../src/asyncawait/joinable-queue.js";
import { errorRecord } from "../../src/crawl/records.js";
import type { QueueItem } from "../../src/crawl/visit.js";
import { RedisFrontier } from "../../src/distributed/index.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { within } from "../helpers/within.js";

const item = (path: string): QueueItem => ({ url: `http://a.test${path}`, maxRedirect: 10 });
const finished = (taken: QueueItem, next: QueueItem[] = []) => ({ record: { ...errorRecord(taken.url, "NetworkError"), numNewUrls: next.length }, next });

/** Whether a promise has settled by the time the loop has gone round a few times (Redis answers on loopback). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  return done;
}

function frontierContract(name: string, make: () => Promise<Frontier>): void {
  describe(name, () => {
    it("queues a URL once however often it is added, and hands URLs out first in, first out", async () => {
      const frontier = await make();
      expect(await frontier.add([item("/"), item("/a"), item("/")])).toBe(2);
      expect(await frontier.add([item("/a")])).toBe(0);
      expect((await frontier.take()).url).toBe(item("/").url);
      expect((await frontier.take()).url).toBe(item("/a").url);
      frontier.shutdown(true);
    });

    it("stores a record and queues only the URLs not seen, in one step, and says how many were new", async () => {
      const frontier = await make();
      await frontier.add([item("/"), item("/seen")]);
      const root = await frontier.take();
      const stored = await frontier.finish(root, finished(root, [item("/seen"), item("/new")]));
      expect(stored?.url).toBe(root.url);
      // The in-memory frontier trusts visit(), which read the same seen set; the Redis one checks on the server.
      if (frontier instanceof RedisFrontier) expect(stored?.numNewUrls).toBe(1);
      expect((await frontier.take()).url).toBe(item("/seen").url);
      expect((await frontier.take()).url).toBe(item("/new").url);
      frontier.shutdown(true);
    });

    it("resolves join() only when every URL taken is finished, counting the URLs put back", async () => {
      const frontier = await make();
      await frontier.add([item("/"), item("/b")]);
      const joined = frontier.join();
      const first = await frontier.take();
      frontier.putBack(first); // Its host's turn came: back in line, still unfinished.
      // In memory it waits at the end of the queue; a shared frontier serves it first, here, where it stays leased.
      const second = await frontier.take();
      await frontier.finish(second, finished(second));
      expect(await settled(joined)).toBe(false);
      const third = await frontier.take();
      expect([second.url, third.url].sort()).toEqual([item("/").url, item("/b").url]);
      await frontier.finish(third, finished(third));
      await within(5_000, joined, "join() after the last finish");
      frontier.shutdown();
    });

    it("rejects a waiting take() with QueueShutDown when shut down, and every later one", async () => {
      const frontier = await make();
      const waiting = frontier.take().then(
        () => null,
        (error: unknown) => error,
      );
      frontier.shutdown();
      expect(await within(5_000, waiting, "the waiting take()")).toBeInstanceOf(QueueShutDown);
      await expect(frontier.take()).rejects.toBeInstanceOf(QueueShutDown);
      expect(frontier.isShutdown()).toBe(true);
    });

    it("after shutdown(true), resolves join() once the URLs taken here are finished or released, leaving the rest to do", async () => {
      const frontier = await make();
      await frontier.add([item("/"), item("/a"), item("/b")]);
      const first = await frontier.take();
      const second = await frontier.take();
      frontier.shutdown(true);
      const joined = frontier.join();
      await frontier.finish(first, finished(first));
      expect(await settled(joined)).toBe(false);
      frontier.release(second);
      await within(5_000, joined, "join() after the stop");
      const summary = await frontier.summary(true);
      expect(summary.todo).toBe(2);
      expect([...summary.seen].sort()).toEqual([item("/").url, item("/a").url, item("/b").url]);
    });

    it("counts what it holds: queued, and unfinished", async () => {
      const frontier = await make();
      await frontier.add([item("/"), item("/a")]);
      const taken = await frontier.take();
      const { unfinished } = frontier.counters();
      // In memory both URLs are unfinished (one queued); in Redis only the one this process took.
      expect(unfinished).toBe(frontier instanceof MemoryFrontier ? 2 : 1);
      await frontier.finish(taken, finished(taken));
      frontier.shutdown(true);
    });
  });
}

frontierContract("MemoryFrontier", async () => new MemoryFrontier());

describeWithRedis("RedisFrontier as a Frontier", () => {
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
  frontierContract("RedisFrontier", async () => {
    const frontier = await RedisFrontier.open({ url: redis.url, name: `contract-${++crawls}` });
    open.push(frontier);
    return frontier;
  });
});
