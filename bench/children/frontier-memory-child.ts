/**
 * What one URL costs a frontier, alone in its process: `node --expose-gc
 * frontier-memory-child.js '<json>'` with a {@link FrontierMemoryRequest};
 * prints one {@link FrontierMemoryReport} as a JSON line.
 *
 * Both stores get the same URLs, through `add()` in batches of
 * 1,000: `http://127.0.0.1:40000/p/N` (31 characters or so, as on the
 * benchmark's sites), each item `{ url, maxRedirect, referrer, depth }` as
 * `visit()` makes it, its referrer the URL of an earlier item (in memory,
 * the same string, as in a crawl).
 * - **memory**: `MemoryStore`, the crawl's default store (a `Set` and a
 *   `BlockFifo`), the heap after a full collection: before,
 *   with every URL seen and queued, and again once every item has been
 *   taken (seen only). Queued = the difference of the last two.
 * - **redis**: `RedisFrontier` on a Redis of its own (flushed first):
 *   `used_memory` of `INFO memory` before and after (seen and queued, with
 *   the server's own overhead), and `MEMORY USAGE … SAMPLES 0` (exact) of the
 *   seen set and of the queue list.
 *
 * @module
 */
import { createClient } from "@redis/client";
import { MemoryStore } from "../../src/crawl/store.js";
import type { QueueItem } from "../../src/crawl/visit.js";
import { RedisFrontier } from "../../src/distributed/index.js";

/** What the parent asks for. */
export interface FrontierMemoryRequest {
  frontier: "memory" | "redis";
  /** URLs to add. */
  urls: number;
  /** The Redis to use for `redis` (flushed first); null for `memory`. */
  redisUrl: string | null;
}

/** What the child prints: bytes per URL. */
export interface FrontierMemoryReport {
  frontier: "memory" | "redis";
  urls: number;
  /** A URL seen and queued: the heap after a collection (memory), or `used_memory` (redis), per URL. */
  seenAndQueued: number;
  /** A URL seen, once taken: heap after a collection (memory); `MEMORY USAGE` of the seen set (redis). */
  seen: number;
  /** A queued item on top of its seen URL (memory); `MEMORY USAGE` of the queue list (redis). */
  queued: number;
}

const BATCH = 1_000;
const ORIGIN = "http://127.0.0.1:40000";

/** Adds `count` items to `frontier` in batches; each URL's string is made here, its referrer an earlier URL's. */
async function addUrls(frontier: MemoryStore | RedisFrontier, count: number): Promise<void> {
  const made: string[] = []; // dropped on return: then only the frontier holds the URLs
  for (let start = 0; start < count; start += BATCH) {
    const batch: QueueItem[] = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) {
      const url = new URL(`/p/${i + 1}`, ORIGIN).href; // flat, as a resolved link is (a template literal would make a cons string)
      made.push(url);
      batch.push({ url, maxRedirect: 10, referrer: made[Math.floor(i / 10)] ?? null, depth: 3 });
    }
    await frontier.add(batch); // In memory, added when add() returns; in Redis, once the promise resolves.
  }
}

function heapAfterGc(): number {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error("run with --expose-gc");
  gc();
  gc(); // A second pass frees what the first one's finalisers let go.
  return process.memoryUsage().heapUsed;
}

async function measureMemoryStore(urls: number): Promise<FrontierMemoryReport> {
  const before = heapAfterGc();
  const frontier = new MemoryStore();
  await addUrls(frontier, urls);
  const both = heapAfterGc();
  for (let i = 0; i < urls; i++) frontier.take();
  const seenOnly = heapAfterGc();
  if (frontier.seenUrls.size !== urls) throw new Error(`${frontier.seenUrls.size} URLs seen, expected ${urls}`);
  return { frontier: "memory", urls, seenAndQueued: (both - before) / urls, seen: (seenOnly - before) / urls, queued: (both - seenOnly) / urls };
}

/** `name:value` lines of an INFO reply, as numbers where they are. */
function infoField(info: string, name: string): number {
  const match = new RegExp(`^${name}:(\\d+)`, "m").exec(info);
  if (match?.[1] === undefined) throw new Error(`INFO has no ${name}`);
  return Number(match[1]);
}

async function measureRedisFrontier(urls: number, redisUrl: string): Promise<FrontierMemoryReport> {
  const client = createClient({ url: redisUrl });
  await client.connect();
  await client.sendCommand(["FLUSHALL"]);
  const name = "memory";
  const frontier = await RedisFrontier.open({ url: redisUrl, name });
  try {
    const before = infoField(String(await client.sendCommand(["INFO", "memory"])), "used_memory");
    await addUrls(frontier, urls);
    const after = infoField(String(await client.sendCommand(["INFO", "memory"])), "used_memory");
    const key = (suffix: string): string => `coroutine-crawler:{${name}}:${suffix}`;
    const seen = Number(await client.sendCommand(["MEMORY", "USAGE", key("seen"), "SAMPLES", "0"]));
    let queue = 0; // One queue per origin (…:q:ORIGIN), and the origins' schedule.
    for await (const keys of client.scanIterator({ MATCH: key("q:*"), COUNT: 1000 })) {
      for (const queueKey of keys) queue += Number(await client.sendCommand(["MEMORY", "USAGE", queueKey, "SAMPLES", "0"]));
    }
    queue += Number(await client.sendCommand(["MEMORY", "USAGE", key("hosts"), "SAMPLES", "0"]));
    const counted = Number(await client.sendCommand(["SCARD", key("seen")]));
    if (counted !== urls) throw new Error(`${counted} URLs seen, expected ${urls}`);
    return { frontier: "redis", urls, seenAndQueued: (after - before) / urls, seen: seen / urls, queued: queue / urls };
  } finally {
    await frontier.close();
    await client.sendCommand(["FLUSHALL"]);
    await client.close();
  }
}

const request = JSON.parse(process.argv[2] ?? "{}") as FrontierMemoryRequest; // written by bench/redis-crawl-process.ts
const report =
  request.frontier === "memory" ? await measureMemoryStore(request.urls) : await measureRedisFrontier(request.urls, request.redisUrl ?? "");
process.stdout.write(`${JSON.stringify(report)}\n`);
