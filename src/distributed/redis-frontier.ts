/**
 * The joinable queue and the seen set in Redis, shared by crawler processes
 * on any number of machines: stage 3's crawler, unchanged, run with a
 * {@link RedisFrontier} in place of its in-memory one.
 *
 * What changes when the workers live in different processes:
 * - **The unfinished count** is the queue's length plus the URLs leased, both in Redis;
 *   `join()` resolves when both are zero, which the last `finish` announces on a channel.
 * - **A worker may die.** A URL taken is leased, not handed over: the lease has a
 *   deadline, which this process moves on while it lives; a lease past its deadline is
 *   put back in the queue by the next process that takes URLs. So a page may be fetched
 *   twice (at least once), but it is recorded once: records are keyed by URL, and the
 *   first one stays.
 * - **Every step that reads and writes is one Lua script** (src/distributed/scripts.ts),
 *   which Redis runs alone: the seen check and the queueing cannot interleave with
 *   another process's, as in one process they cannot interleave with another worker's.
 *
 * This file holds the store: the crawl's keys, the script calls, the leases
 * this process holds, and what a Redis failure does. The loop that serves the
 * workers waiting in `take()` is src/distributed/take-pump.ts.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { createClient } from "redis";
import type { FetchStatistic } from "../crawl/records.js";
import type { QueueItem, Visit } from "../crawl/visit.js";
import type { Frontier, FrontierSummary } from "../crawl/frontier.js";
import { ADD, FINISH, RELEASE, RENEW, STATUS, TAKE } from "./scripts.js";
import { TakePump } from "./take-pump.js";

/** The frontier's Redis stopped answering, or could not be reached: the crawl stops; what was written stays. */
export class FrontierError extends Error {
  override readonly name = "FrontierError";
}

/** How to reach a crawl's frontier. */
export interface RedisFrontierOptions {
  /** Where Redis listens: `redis://HOST:PORT/DB` (`rediss://` for TLS; a password as `redis://:PASSWORD@HOST`). */
  url: string;
  /** The crawl's name: several crawls share one Redis under different names, and a crawl resumes by its name. */
  name: string;
  /** How long a URL stays leased to a process that stopped renewing it, in ms, before others may take it. Default 30,000. */
  leaseMs?: number;
  /** How long to wait for Redis to accept the connection, in ms. Default 5,000. */
  connectTimeoutMs?: number;
}

/** One crawler process as `status()` sees it. */
export interface FrontierWorker {
  /** The process's name: `HOST:PID:RANDOM`. */
  owner: string;
  /** Milliseconds since it last took URLs or renewed its leases. */
  idleMs: number;
  /** URLs it holds leased now. */
  leased: number;
}

/** A crawl's state in Redis, read in one step. */
export interface FrontierStatus {
  /** URLs waiting in the queue. */
  queued: number;
  /** URLs taken by a process and not finished. */
  leased: number;
  /** URLs with a record. */
  records: number;
  /** URLs ever queued. */
  seen: number;
  /** Every process that took URLs in this crawl, most recently alive first. */
  workers: FrontierWorker[];
}

type Client = ReturnType<typeof createClient>;

/** Every frontier's seen set, as `visit()` reads it: empty, since `finish()` checks each URL in Redis. */
const NONE_KNOWN: ReadonlySet<string> = new Set<string>();

/**
 * A {@link Frontier} kept in Redis and shared by every process that opens it
 * with the same URL and name. Open it with {@link RedisFrontier.open}, crawl
 * with it (`crawl(roots, options, frontier)` from `coroutine-crawler/asyncawait`),
 * then {@link RedisFrontier.close} it.
 *
 * In this process, workers waiting in `take()` are served by one loop, a
 * `TakePump` (take-pump.ts), that asks Redis for as many URLs as there are waiting
 * workers, and waits for the crawl's channel (`queued`, `done`) when there
 * are none; a slow timer makes it look again, which is also when expired
 * leases are put back. The pump leases through this object, which holds
 * every lease and makes every Redis call.
 *
 * @remarks `maxPages` counts the records this process makes, and its pages
 * being fetched. Politeness
 * (`maxPerHost`, `delayMs`, `robots`) is kept per process: N processes may
 * send N times `maxPerHost` requests to one host.
 */
export class RedisFrontier implements Frontier {
  readonly seenUrls = NONE_KNOWN;
  /** This process's name in the crawl, on every lease it holds. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  private readonly keys: ReturnType<typeof keysOf>;
  private readonly leaseMs: number;
  /** Script name → its SHA1, once loaded. */
  private readonly sha = new Map<string, string>();
  /** URLs this process holds leased, and the item to hand back for each. */
  private readonly held = new Map<string, QueueItem>();
  /** Serves `take()`, and holds the items put back here; shut down with this frontier. */
  private readonly pump: TakePump;
  /** Script calls in flight that `close()` waits for (lease hand-backs). */
  private readonly pending = new Set<Promise<unknown>>();
  /** Set by `close()`: the connections closing then are no failure. */
  private closing = false;
  private stopped = false;
  private failure: FrontierError | null = null;
  private joined: { promise: Promise<void>; resolve(): void; reject(reason: unknown): void } | null = null;
  private timers: NodeJS.Timeout[] = [];

  private constructor(
    private readonly client: Client,
    private readonly subscriber: Client,
    private readonly options: Required<RedisFrontierOptions>,
  ) {
    this.keys = keysOf(options.name);
    this.leaseMs = options.leaseMs;
    const frontier = this;
    this.pump = new TakePump({
      lease(count) { return frontier.lease(count); },
      unwanted(items) { frontier.letGo(items); },
      failed(error) { frontier.fail(error); },
    });
  }

  /**
   * Connects to Redis (two connections: commands, and the crawl's channel)
   * and loads the scripts. Nothing is written until the crawl adds or takes.
   *
   * @throws TypeError for a bad option, naming it; FrontierError when Redis cannot be reached.
   */
  static async open(options: RedisFrontierOptions): Promise<RedisFrontier> {
    const resolved = resolveFrontierOptions(options);
    const socket = { connectTimeout: resolved.connectTimeoutMs, reconnectStrategy: false as const };
    // No reconnecting and no offline queue: a command fails at once when Redis is gone, and the crawl stops cleanly.
    const client: Client = createClient({ url: resolved.url, socket, disableOfflineQueue: true });
    const subscriber: Client = client.duplicate();
    const frontier = new RedisFrontier(client, subscriber, resolved);
    client.on("error", (error: unknown) => frontier.fail(error));
    subscriber.on("error", (error: unknown) => frontier.fail(error));
    try {
      await client.connect();
      await subscriber.connect();
      for (const [name, script] of Object.entries({ ADD, TAKE, FINISH, RELEASE, RENEW, STATUS })) {
        frontier.sha.set(name, String(await client.sendCommand(["SCRIPT", "LOAD", script])));
      }
      await subscriber.subscribe(frontier.keys.channel, (message) => frontier.heard(message));
    } catch (error) {
      await frontier.close();
      throw new FrontierError(`cannot use Redis at ${redact(resolved.url)}: ${reason(error)}`, { cause: error });
    }
    return frontier;
  }

  async add(items: readonly QueueItem[]): Promise<number> {
    if (items.length === 0) return 0;
    const reply = await this.run("ADD", [this.keys.seen, this.keys.queue], [this.keys.channel, ...pairs(items)]);
    return Number(reply);
  }

  take(): Promise<QueueItem> {
    return this.pump.take();
  }

  putBack(item: QueueItem): void {
    if (this.pump.isShutdown()) {
      this.release(item); // Stopped: not ours to fetch any more.
      return;
    }
    this.held.set(item.url, item); // A Retry-After's item carries its attempts: hand that one back if we stop.
    this.pump.putBack(item);
  }

  async finish(item: QueueItem, visit: Visit): Promise<FetchStatistic | null> {
    if (this.failure !== null) return null;
    const keys = [this.keys.seen, this.keys.queue, this.keys.leases, this.keys.owners, this.keys.items, this.keys.records];
    let reply: unknown;
    try {
      reply = await this.run("FINISH", keys, [this.keys.channel, this.owner, item.url, JSON.stringify(visit.record), ...pairs(visit.next)]);
    } catch {
      return null; // Not stored: the lease expires, and the URL is fetched again by whoever resumes.
    } finally {
      this.held.delete(item.url);
      this.settled();
    }
    const [stored, added] = reply as [number, number];
    if (stored === 0) return null; // Recorded already, by a process that took it after our lease expired.
    const { record } = visit;
    return record.nextUrl !== null || record.numNewUrls === added ? record : { ...record, numNewUrls: added }; // As FINISH stored it.
  }

  release(item: QueueItem): void {
    const held = this.held.get(item.url) ?? item;
    this.held.delete(item.url);
    this.handBack([held]);
    this.settled();
  }

  join(): Promise<void> {
    if (this.joined === null) {
      let resolve = (): void => {};
      let reject = (_reason: unknown): void => {};
      const promise = new Promise<void>((done, failed) => {
        resolve = done;
        reject = failed;
      });
      this.joined = { promise, resolve, reject };
      if (this.failure !== null) reject(this.failure);
      this.startTimers();
      void this.checkDone();
    }
    return this.joined.promise;
  }

  shutdown(immediate = false): void {
    const dropped = this.pump.shutdown(immediate);
    if (!immediate) return;
    this.stopped = true;
    this.letGo(dropped);
    this.settled();
  }

  isShutdown(): boolean {
    return this.pump.isShutdown();
  }

  counters(): { queued: number; unfinished: number } {
    return { queued: this.pump.size(), unfinished: this.held.size };
  }

  /** @throws FrontierError (a rejection) when Redis stops answering while it is read. */
  async summary(keepRecords: boolean): Promise<FrontierSummary> {
    try {
      return await this.read(keepRecords);
    } catch (error) {
      throw this.failure ?? new FrontierError(`Redis at ${redact(this.options.url)} stopped answering: ${reason(error)}`, { cause: error });
    }
  }

  /** Reads every seen URL and record, a thousand at a time. */
  private async read(keepRecords: boolean): Promise<FrontierSummary> {
    const seen: string[] = [];
    for await (const members of this.client.sScanIterator(this.keys.seen, { COUNT: 1000 })) seen.push(...members);
    let recorded = 0;
    const records: FetchStatistic[] = [];
    for await (const entries of this.client.hScanIterator(this.keys.records, { COUNT: 1000 })) {
      recorded += entries.length;
      if (keepRecords) for (const { value } of entries) records.push(JSON.parse(value) as FetchStatistic);
    }
    return { seen, todo: seen.length - recorded, records: keepRecords ? records : null, recorded };
  }

  /**
   * The crawl's state in Redis now: queue, leases, records, and the processes that took part.
   *
   * @throws FrontierError (a rejection) when Redis does not answer.
   */
  async status(): Promise<FrontierStatus> {
    const { queue, leases, owners, records, seen, workers } = this.keys;
    let reply: Array<number | string>;
    try {
      reply = (await this.run("STATUS", [queue, leases, owners, records, seen, workers], [])) as Array<number | string>;
    } catch (error) {
      throw this.failure ?? new FrontierError(`Redis at ${redact(this.options.url)} stopped answering: ${reason(error)}`, { cause: error });
    }
    const [queued, leased, recordCount, seenCount, now] = reply.slice(0, 5).map(Number) as [number, number, number, number, number];
    const list: FrontierWorker[] = [];
    for (let i = 5; i + 2 < reply.length; i += 3) {
      list.push({ owner: String(reply[i]), idleMs: Math.max(0, now - Number(reply[i + 1])), leased: Number(reply[i + 2]) });
    }
    list.sort((a, b) => a.idleMs - b.idleMs);
    return { queued, leased, records: recordCount, seen: seenCount, workers: list };
  }

  /**
   * Lets go of Redis: waits for the leases being handed back, stops the
   * timers, and closes both connections. Call it once the crawl is over.
   */
  async close(): Promise<void> {
    this.pump.close();
    this.closing = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await Promise.allSettled([...this.pending]);
    for (const connection of [this.subscriber, this.client]) {
      if (connection.isOpen) await connection.close().catch(() => connection.destroy());
    }
  }

  /**
   * Leases up to `count` URLs to this process (the pump's `TakeSource.lease`):
   * TAKE first puts back the leases that expired, then moves URLs from the
   * queue to this process's leases. When it finds none queued and none
   * leased anywhere, the crawl may be over: check.
   */
  private async lease(count: number): Promise<QueueItem[]> {
    const { queue, leases, owners, items, records, workers } = this.keys;
    const reply = (await this.run("TAKE", [queue, leases, owners, items, records, workers], [this.keys.channel, this.owner, String(this.leaseMs), String(count)])) as Array<number | string>;
    const taken = reply.slice(2).map((json) => JSON.parse(String(json)) as QueueItem);
    for (const next of taken) this.held.set(next.url, next);
    if (taken.length === 0 && reply[0] === 0 && reply[1] === 0) void this.checkDone();
    return taken;
  }

  /** A message on the crawl's channel: URLs were queued (look again), or the crawl may be done (check). */
  private heard(message: string): void {
    if (message === "done") void this.checkDone();
    this.pump.wake();
  }

  /**
   * Resolves `join()` when the crawl is over: nothing queued and nothing
   * leased in Redis or, once this process stopped, nothing held here.
   */
  private async checkDone(): Promise<void> {
    if (this.joined === null || this.failure !== null) return;
    if (this.stopped) {
      if (this.held.size === 0) this.joined.resolve();
      return;
    }
    try {
      const [queued, leased] = (await this.client.sendCommand(["EVAL", "return {redis.call('LLEN', KEYS[1]), redis.call('ZCARD', KEYS[2])}", "2", this.keys.queue, this.keys.leases])) as [number, number];
      if (queued === 0 && leased === 0) this.joined.resolve();
    } catch (error) {
      this.fail(error);
    }
  }

  /** A URL held here was finished or released: after a stop, the last one ends `join()`. */
  private settled(): void {
    if (this.stopped) void this.checkDone();
  }

  /** URLs held here that this process will not fetch: no longer held, and handed back. */
  private letGo(items: readonly QueueItem[]): void {
    for (const item of items) this.held.delete(item.url);
    this.handBack(items);
  }

  /** Hands leased URLs back to the queue, for another process or a later run. */
  private handBack(items: readonly QueueItem[]): void {
    if (items.length === 0 || this.failure !== null) return;
    const { queue, leases, owners, items: itemsKey } = this.keys;
    const call = this.run("RELEASE", [queue, leases, owners, itemsKey], [this.keys.channel, this.owner, ...items.map((item) => JSON.stringify(item))]).catch((error: unknown) => this.fail(error));
    this.pending.add(call);
    void call.finally(() => this.pending.delete(call));
  }

  /**
   * The timers of a crawl under way: one renews the leases this process
   * holds (every third of a lease); one makes the pump look again, which
   * puts back the leases that expired elsewhere, and checks whether the crawl is done.
   */
  private startTimers(): void {
    if (this.timers.length > 0) return;
    const renew = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    const look = setInterval(() => {
      this.pump.wake();
      void this.checkDone();
    }, Math.min(5000, Math.max(100, Math.floor(this.leaseMs / 4))));
    renew.unref();
    look.unref();
    this.timers.push(renew, look);
  }

  /** Moves on the deadline of every lease this process holds. */
  private async renew(): Promise<void> {
    if (this.failure !== null || this.held.size === 0) return;
    try {
      await this.run("RENEW", [this.keys.leases, this.keys.owners, this.keys.workers], [this.owner, String(this.leaseMs), ...this.held.keys()]);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Runs one of the scripts by its SHA1. */
  private run(name: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return this.client.sendCommand(["EVALSHA", this.sha.get(name) ?? "", String(keys.length), ...keys, ...args]);
  }

  /**
   * Redis failed: the crawl stops. Waiting workers end, `join()` rejects with
   * a {@link FrontierError}, and nothing more is written. Records written
   * stay; the URLs leased here are taken again once their leases expire.
   */
  private fail(error: unknown): void {
    if (this.failure !== null || this.closing) return;
    this.failure = new FrontierError(`Redis at ${redact(this.options.url)} stopped answering: ${reason(error)}; records written are kept, and running the crawl again resumes it`, { cause: error });
    for (const timer of this.timers) clearInterval(timer);
    this.pump.shutdown();
    this.joined?.reject(this.failure);
  }
}

/** The names of a crawl's keys and channel. */
function keysOf(name: string) {
  const prefix = `coroutine-crawler:{${name}}:`;
  return {
    seen: `${prefix}seen`,
    queue: `${prefix}queue`,
    leases: `${prefix}leases`,
    owners: `${prefix}owners`,
    items: `${prefix}items`,
    records: `${prefix}records`,
    workers: `${prefix}workers`,
    channel: `${prefix}events`,
  };
}

/** (url, item JSON) pairs, as ADD and FINISH take them. */
function pairs(items: readonly QueueItem[]): string[] {
  return items.flatMap((item) => [item.url, JSON.stringify(item)]);
}

/**
 * Checks a frontier's options and fills in the defaults.
 *
 * @throws TypeError naming the option: a URL that is not `redis://` or
 * `rediss://` with a host (and a database number, if any), an empty name or
 * one with a brace, a lease or timeout that is not a positive number of ms.
 */
export function resolveFrontierOptions(options: RedisFrontierOptions): Required<RedisFrontierOptions> {
  const { url, name, leaseMs = 30_000, connectTimeoutMs = 5_000 } = options;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`url: ${JSON.stringify(url)} is not a URL; expected redis://HOST:PORT/DB`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new TypeError(`url: ${JSON.stringify(url)} is not a redis:// or rediss:// URL`);
  if (parsed.hostname === "") throw new TypeError(`url: ${JSON.stringify(url)} has no host; expected redis://HOST:PORT/DB`);
  if (!/^(\/\d*)?$/.test(parsed.pathname)) throw new TypeError(`url: ${JSON.stringify(url)}: the path must be a database number, as in redis://HOST:PORT/0`);
  if (typeof name !== "string" || name === "" || /[{}\s]/.test(name)) throw new TypeError(`name: ${JSON.stringify(name)} must be a non-empty name without braces or spaces`);
  if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs < 100 || leaseMs > MAX_TIMER_MS) {
    throw new TypeError(`leaseMs: ${String(leaseMs)} must be a number of milliseconds from 100 to ${MAX_TIMER_MS}`);
  }
  if (typeof connectTimeoutMs !== "number" || !Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0) throw new TypeError(`connectTimeoutMs: ${String(connectTimeoutMs)} must be a positive number of milliseconds`);
  return { url, name, leaseMs, connectTimeoutMs };
}

/** The longest delay Node's timers take (2^31 - 1 ms); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.href;
  } catch {
    return url;
  }
}

/** An error's message, or its code when it has none (Node's AggregateError for a refused connection). */
function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return error.message !== "" ? error.message : typeof code === "string" ? code : error.name;
  }
  return String(error);
}
