/**
 * The queue and the seen set in Redis, shared by crawler processes on any
 * number of machines: stage 3's crawler, unchanged, run with a
 * {@link RedisFrontier} as the crawl core's store in place of the in-memory one.
 *
 * What changes when the workers live in different processes:
 * - **The unfinished count** is the queue's length plus the URLs leased, both in Redis;
 *   the crawl is over when both are zero, which the last `finish` announces on a channel.
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
 * this process holds, and what a Redis failure does. The loop that leases the
 * URLs `take()` hands out is src/distributed/take-pump.ts.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import type { createClient, createCluster } from "@redis/client";
import type { ResolvedCrawlOptions } from "../crawl/options.js";
import type { FetchStatistic } from "../crawl/records.js";
import { storedRobotsRules, type RobotsRules, type RobotsVerdict } from "../crawl/robots.js";
import type { CrawlStore, StoreSummary } from "../crawl/store.js";
import type { QueueItem, Visit } from "../crawl/visit.js";
import { ScriptBatch } from "./script-batch.js";
import { ADD, BEGIN, DONE, FINISH, HOLD, PREPARE, RELEASE, RENEW, ROBOTS, STARTED, STATUS, TAKE } from "./scripts.js";
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
  /**
   * For a `rediss://` URL: PEM files of the certificate authority to trust
   * (else Node's own list), and of a client certificate and its key, for a
   * Redis that asks for one (`tls-auth-clients`). Default none.
   */
  tls?: FrontierTlsFiles;
  /**
   * Whether Redis keeps each record (default true). False keeps only that a
   * URL has one, which is what makes each URL recorded once: for a crawl whose
   * processes write their records themselves (`onRecord`, `--jsonl`), at a
   * fraction of the memory. The crawl result then has the records of this
   * process only, as a crawl in memory does.
   */
  records?: boolean;
  /**
   * Whether this process, joining a crawl started with another `maxPerHost`
   * or `delayMs` (the politeness Redis enforces for every process), makes
   * its own the crawl's, for every process, instead of being refused
   * (default false). Every other option, and the roots, must still be the
   * same: they decide which URLs the crawl is made of. See
   * {@link OVERRIDABLE}.
   */
  overridePoliteness?: boolean;
  /**
   * This process's own output of its records (the CLI's `--jsonl` and CSV
   * lines), written before Redis marks a URL recorded (default none): called
   * with each record as it will be stored, once this process still holds the
   * URL's lease and no process has recorded it, it must have written the
   * record where a `kill -9` cannot take it back (a `write(2)` done, as
   * `writeSync` does: the kernel has it; no `fsync`, so not against a power
   * cut) before it returns true. False: the line could not be written; the
   * URL is not marked, and goes back to the queue. So an output holds every
   * record its process made; a process killed between the line and the mark
   * leaves its line, and the URL is fetched and recorded again by another
   * (at least once in the outputs, once in Redis). Without it, `finish`'s
   * callback (the crawl's `onRecord`) comes after the mark, and a process
   * killed in between loses that record from its output.
   */
  journal?: ((record: FetchStatistic) => boolean) | null;
  /**
   * Called with a line of warning when Redis has not answered a command for
   * `warnAfterMs` (then again at each doubling: 2×, 4×, …), and when it
   * answers again after one (default none). The commands are not abandoned:
   * they wait for Redis, the fencing check keeps this process from fetching
   * on leases that may have run out, and the crawl goes on when it answers.
   */
  onWarning?: ((message: string) => void) | null;
  /** How long a command may go unanswered before `onWarning` is called, in ms. Default 5,000. */
  warnAfterMs?: number;
}

/**
 * The options a process may change in a crawl under way, with
 * `overridePoliteness`: how hard the crawl presses each host, kept in Redis
 * for every process. They change when pages are fetched, not which.
 */
export const OVERRIDABLE: readonly string[] = ["maxPerHost", "delayMs"];

/**
 * Every command a crawler process sends to Redis, for an ACL user made for
 * it: those it sends itself (`EVALSHA` and `SCRIPT LOAD` for the scripts,
 * `EVAL` for the counts at the end, `SUBSCRIBE` to the crawl's channel,
 * `HMGET` for the `robots.txt` rules others read, `HEXISTS` after a reconnection (`stillThere`), `SSCAN` and `HSCAN` to read
 * the crawl out, `INFO` to see whether Redis is a Cluster node), and every command its scripts run, which Redis checks
 * against the ACL too (src/distributed/scripts.ts), `GET` and `SET` among them (a call's reply kept for its retry, in
 * ADD, PREPARE, FINISH and TAKE). With the keys and the
 * channel of {@link aclRule}, that is all a crawl needs, from its start to
 * `--status` and `--json` at its end.
 *
 * @remarks `CONFIG GET` is not in it: refused, the frontier only cannot tell
 * whether Redis keeps its data on disk, and its failure messages say both
 * cases. A database other than 0 in the URL needs `SELECT` as well.
 */
export const ACL_COMMANDS: readonly string[] = [
  "evalsha", "script|load", "eval", "subscribe", "hmget", "sscan", "hscan", "info",
  "time", "publish", "llen", "lpush", "rpush", "lpop", "sadd", "scard",
  "hget", "hset", "hdel", "hexists", "hincrby", "hlen", "hvals", "hgetall",
  "zadd", "zrem", "zscore", "zcard", "zrange", "zrangebyscore", "set", "get",
];

/**
 * What a crawler needs besides {@link ACL_COMMANDS} on a Redis Cluster's
 * nodes (whose `SET` also stores the crawl's number of buckets, by its first
 * process): `SPUBLISH` and `SSUBSCRIBE` (each bucket's sharded channel),
 * `CLUSTER SLOTS` (the client reads the topology), and `ROLE` and `WAIT` (a
 * page's links on a replica before its record). Of ACL_COMMANDS, a Cluster
 * does not use `SCRIPT LOAD`, `SUBSCRIBE` and `PUBLISH` ({@link CLUSTER_UNUSED}).
 */
export const CLUSTER_ACL_COMMANDS: readonly string[] = ["spublish", "ssubscribe", "cluster|slots", "role", "wait"];

/** The commands of {@link ACL_COMMANDS} a crawl over a Redis Cluster never sends: left out of its ACL rule. */
export const CLUSTER_UNUSED: readonly string[] = ["script|load", "subscribe", "publish"];

/**
 * The ACL rule of a user that may crawl `name` and do nothing else, as
 * `ACL SETUSER USER on >PASSWORD` takes it: the crawl's keys, its channel,
 * and {@link ACL_COMMANDS}. For a Redis Cluster (`cluster`), given on every
 * node: the keys of the crawl's buckets too (`{NAME:bN}`), their sharded
 * channels, and the commands a crawl sends there ({@link CLUSTER_ACL_COMMANDS}).
 */
export function aclRule(name: string, cluster = false): string {
  if (!cluster) return `resetkeys ~coroutine-crawler:{${name}}:* resetchannels &coroutine-crawler:{${name}}:events -@all ${ACL_COMMANDS.map((command) => `+${command}`).join(" ")}`;
  const commands = [...ACL_COMMANDS.filter((command) => !CLUSTER_UNUSED.includes(command)), ...CLUSTER_ACL_COMMANDS];
  return `resetkeys ~coroutine-crawler:{${name}}:* ~coroutine-crawler:{${name}:b*}:* resetchannels &coroutine-crawler:{${name}:b*}:events -@all ${commands.map((command) => `+${command}`).join(" ")}`;
}

/** The PEM files of a TLS connection to Redis (`RedisFrontierOptions.tls`). */
export interface FrontierTlsFiles {
  /** The certificate authority that signed Redis's certificate. */
  caFile?: string;
  /** This client's certificate, for a Redis that asks for one. */
  certFile?: string;
  /** The client certificate's private key. */
  keyFile?: string;
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
  /** Whether a process started this crawl (its roots and options are recorded); false for a name never crawled, or whose keys are gone. */
  created: boolean;
}

type Client = ReturnType<typeof createClient>;
type Cluster = ReturnType<typeof createCluster>;

/** One bucket's keys: the nine every script gets, its queues' prefix, and its channel with the command that publishes on it (scripts.ts's ARGV[2]). */
interface Bucket {
  fixed: string[];
  seen: string;
  records: string;
  politeness: string;
  meta: string;
  leases: string;
  queuePrefix: string;
  channel: string;
  publish: string;
}

/** Every frontier's seen set, as `visit()` reads it: empty, since `finish()` checks each URL in Redis. */
const NONE_KNOWN: ReadonlySet<string> = new Set<string>();

/**
 * A {@link CrawlStore} kept in Redis and shared by every process that opens it
 * with the same URL and name: a frontier. Open it with {@link RedisFrontier.open}, crawl
 * with it (`crawl(roots, options, frontier)` from `coroutine-crawler/asyncawait`),
 * then {@link RedisFrontier.close} it.
 *
 * The crawl core calls it as it calls every store, synchronously; it
 * answers from what this process holds and does its Redis calls in the
 * background. It keeps at most `maxTasks` URLs leased to this process
 * (being fetched, or ready here to be handed out), stores each record and
 * reports it once Redis has it (`finish`'s callback), and says more may come
 * (`pending()`) until the crawl is over in every process: so the crawl ends
 * when Redis says so. `whenDone()` resolves once the crawl's summary has
 * been read.
 *
 * In this process, the URLs `take()` hands out are leased by one loop, a
 * `TakePump` (take-pump.ts), that asks Redis for as many URLs as this
 * process has free places, and waits for the crawl's channel (`queued`,
 * `done`) when there are none; a slow timer makes it look again, which is
 * also when expired leases are put back. The pump leases through this
 * object, which holds every lease and makes every Redis call.
 *
 * @remarks Politeness is the crawl's, kept in Redis for every process: TAKE
 * leases a URL only when its host has a free slot (`maxPerHost` counted over
 * every process, a slot per lease, so a dead process's slots free when its
 * leases expire) and its next start has come (`delayMs`, `Crawl-delay`,
 * `Retry-After` holds); one process reads each origin's `robots.txt`, whose
 * rules Redis keeps for the others. The crawl core's own host lines stay, on
 * this process's share. `maxPages` counts the records this process makes,
 * and its pages being fetched.
 */
export class RedisFrontier implements CrawlStore {
  readonly seenUrls = NONE_KNOWN;
  /** This process's name in the crawl, on every lease it holds. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  /**
   * The crawl's buckets: one in a single Redis (the keys `coroutine-crawler:{NAME}:…`),
   * {@link CLUSTER_BUCKETS} in a Cluster (`coroutine-crawler:{NAME:bN}:…`, see {@link bucketsOf}).
   */
  private readonly buckets: Bucket[];
  /**
   * The cluster's ready-set, by bucket: when TAKE may find something there
   * (`performance.now()`, ms; 0: now, Infinity: not before a message on its
   * channel). Unused in a single Redis.
   */
  private readonly notBefore: number[];
  /** Messages heard on each bucket's channel: a TAKE that found nothing marks its bucket idle only if none came meanwhile. */
  private readonly heardIn: number[];
  /** Where the next TAKE starts in the ready-set, so each bucket gets its turn. */
  private cursor = 0;
  /** Each bucket's URLs queued and leased, as this process last saw them (TAKE, the end's collect, a `done` message); -1: not seen yet. */
  private readonly left: number[];
  /** Calls given an id so far (`callId`). */
  private calls = 0;
  /** Round trips to Redis (script calls and reads), for the measures of the cluster guide. */
  roundTrips = 0;
  /**
   * Scripts sent whole after Redis answered `NOSCRIPT` (a Cluster's node new
   * to the crawl, a single Redis restarted), commands tried again (a lost
   * connection, `LOADING`, in a Cluster `TRYAGAIN`, `CLUSTERDOWN`…), and in
   * a Cluster, `WAIT`s sent for a page's links on another node
   * (`queueReplicated`) and those that timed out before a replica had the
   * writes.
   */
  readonly clusterEvents = { noscript: 0, retried: 0, waits: 0, waitedOut: 0 };
  /** In a single Redis: how many times the connection was made again after it broke (each empties `knownSeen`). */
  reconnects = 0;
  /** What broke the connection to a single Redis last: what a command failing for good while it is down reports. */
  private connectionError: unknown = null;
  /** In a Cluster: the `WAIT`s of each bucket's node, several pages to one (`replicated`). */
  private readonly waits = new Map<number, ScriptBatch>();
  /** In a Cluster: how many replicas each node's `ROLE` listed, and when it was asked (`performance.now()`), by node connection. */
  private replicaKnown = new WeakMap<object, { replicas: number; at: number }>();
  private readonly leaseMs: number;
  /** Script name → its SHA1, once loaded. */
  private readonly sha = new Map<string, string>();
  /** URLs this process holds leased (ready here or handed out), and the item to hand back for each. */
  private readonly held = new Map<string, QueueItem>();
  /**
   * URLs this process knows Redis has seen: the pages it finished and the
   * links it sent with them, once Redis answered. A link found here is not
   * sent again (on a site whose pages link to the same pages, most links are
   * these). Only a cache: Redis's seen set decides; emptied when it reaches
   * {@link KNOWN_SEEN_MOST} URLs.
   *
   * @remarks A single Redis only, and emptied each time the connection to it
   * is made again (`reconnected`): a Redis that restarted may have lost
   * writes it had acknowledged (with `appendfsync everysec`, up to a second
   * or two of them; without persistence, all), and a link known here may then
   * be unknown there, so it must be sent again. A Cluster's primary that
   * crashes may take writes it had acknowledged with it (its replica lags)
   * with no connection of this process's breaking, and a page fetched again
   * must then send its links again: in a Cluster nothing is kept here, and
   * every link goes to Redis.
   */
  private readonly knownSeen = new Set<string>();
  /**
   * The fencing check's deadlines: for each URL held, when its lease may
   * have run out (`performance.now()`, ms), as far as this process knows:
   * the time it sent the TAKE or the last RENEW Redis answered, plus the lease.
   */
  private readonly deadlines = new Map<string, number>();
  /** URLs `take()` did not hand out since their leases may have run out (the fencing check). */
  fenced = 0;
  /** When each script call in flight was sent (`performance.now()`): the oldest says how long Redis has been silent. */
  private readonly unanswered = new Set<{ at: number }>();
  /** The silence already warned of, in ms (0: none); the next warning comes at twice it. */
  private warnedAt = 0;
  /** Leases URLs for `take()`, and holds those ready here; shut down with this frontier. */
  private readonly pump: TakePump;
  /** Script calls in flight that `close()` waits for (lease hand-backs). */
  private readonly writes = new Set<Promise<unknown>>();
  /** URLs handed out by `take()` and not finished, released or put back. */
  private handedOut = 0;
  /** Set by `close()`: the connections closing then are no failure. */
  private closing = false;
  /** Set by `stop()`: this process takes no more URLs. */
  private stopped = false;
  /** Set when the crawl is over in every process: no URL will come any more. */
  private over = false;
  private failure: FrontierError | null = null;
  /** Settled when the crawl is over (nothing queued or leased anywhere; after `stop()`, nothing held here), or Redis failed. */
  private joined: { promise: Promise<void>; resolve(): void; reject(reason: unknown): void } | null = null;
  /** Resolves once the summary is read or Redis failed; made by the first `take()` or `whenDone()`. */
  private done: Promise<void> | null = null;
  /** The crawl's summary, once read. */
  private summed: StoreSummary | null = null;
  /** Stops the crawl, as its signal would: what this frontier does when Redis fails. */
  private stopCrawl: () => void = () => {};
  /** The core's `onChange` callback: URLs arrived here, or the crawl ended. */
  private changed: () => void = () => {};
  private timers: NodeJS.Timeout[] = [];
  /** The pump's wake-up when the next host's start comes (TAKE says when), and when it is due. */
  private due: { timer: NodeJS.Timeout; at: number } | null = null;
  /** The crawl's options in this process, once `open()` has them; null for a frontier used without the crawl core. */
  private crawl: ResolvedCrawlOptions | null = null;
  /** BEGIN, in flight or done: TAKE waits for it, so a process refused takes nothing. */
  private begun: Promise<unknown> = Promise.resolve();
  /** Whether Redis keeps its data on disk (append-only file or snapshots); null when it would not say (CONFIG refused). */
  private persistent: boolean | null = null;
  /** The `robots.txt` rules this process knows, read here or by another process, by origin. */
  private readonly rules = new Map<string, RobotsRules>();
  /** The pages' FINISH, PREPARE and STARTED calls, several pages to a call (script-batch.ts). */
  private readonly batches: PageBatches;

  private constructor(
    private readonly client: Client | Cluster,
    private readonly subscriber: Client | Cluster,
    private readonly options: Required<RedisFrontierOptions>,
    /** Whether `client` is a Cluster's client, with the crawl spread over `bucketCount` buckets. */
    private readonly clustered = false,
    bucketCount = 1,
  ) {
    this.buckets = bucketsOf(options.name, clustered ? bucketCount : 1);
    this.notBefore = this.buckets.map(() => 0);
    this.heardIn = this.buckets.map(() => 0);
    this.left = this.buckets.map(() => -1);
    this.leaseMs = options.leaseMs;
    this.batches = pageBatches(this.owner, (name, args, bucket) => this.run(name, args, bucket), () => this.callId());
    const frontier = this;
    this.pump = new TakePump({
      wanted() { return (frontier.crawl?.maxTasks ?? 1) - frontier.handedOut; },
      lease(count) { return frontier.lease(count); },
      unwanted(items) { frontier.letGo(items); },
      arrived() { frontier.changed(); },
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
    const { createClient } = await redisClient();
    const base = { connectTimeout: resolved.connectTimeoutMs, ...(await tlsOptions(resolved)) };
    const opened: { frontier: RedisFrontier | null } = { frontier: null };
    // A connection that breaks once the frontier is open is made again, every 50–500 ms, until the frontier fails or closes:
    // not while opening (nothing there: open() fails at once), so a Redis that is not there is said at once.
    function singleReconnect(retries: number): number | false {
      const frontier = opened.frontier;
      return frontier === null || frontier.failure !== null || frontier.closing ? false : Math.min(500, 50 * (retries + 1));
    }
    // No offline queue: a command sent while the connection is down fails at once, and send() sends it again (with back-off, for half a lease).
    const client: Client = createClient({ url: resolved.url, socket: { ...base, reconnectStrategy: singleReconnect }, disableOfflineQueue: true });
    // Listened to before connecting, and never let go of: node-redis's client is a view of its emitter, and a listener
    // removed from the view leaves the view listeners of its own, which the emitter never calls.
    // A broken connection is not the crawl's failure: it is made again, and send() retries; a command that fails for good stops the crawl.
    client.on("error", function connectionLost(error: unknown) { if (opened.frontier !== null) opened.frontier.connectionError = error; });
    client.on("ready", function reconnected() { opened.frontier?.reconnected(); }); // Once open: each is a connection made again.
    if (await clusterEnabled(client, resolved)) return RedisFrontier.openCluster(resolved, base);
    const subscriber: Client = client.duplicate();
    // node-redis subscribes again once it is back; the pump's slow look covers the messages missed meanwhile.
    subscriber.on("error", function channelLost() {});
    const frontier = new RedisFrontier(client, subscriber, resolved);
    try {
      await subscriber.connect();
      for (const [name, script] of Object.entries(SCRIPTS)) {
        frontier.sha.set(name, String(await client.sendCommand(["SCRIPT", "LOAD", script])));
      }
      await subscriber.subscribe(frontier.buckets[0]?.channel ?? "", function heard(message) { frontier.heard(message, 0); });
      frontier.persistent = await persistence(function config(args) { return client.sendCommand(args); });
    } catch (error) {
      await frontier.close();
      throw new FrontierError(`cannot use Redis at ${redact(resolved.url)}: ${explainReply(error, resolved.name) ?? reason(error)}`, { cause: error });
    }
    opened.frontier = frontier;
    return frontier;
  }

  /**
   * `open()` on a Redis Cluster: the cluster client (`createCluster`), which
   * follows `MOVED` and `ASK`, found from the node given; the crawl's number
   * of buckets, stored by its first process (`coroutine-crawler:{NAME}:buckets`);
   * the scripts by their SHA1 (each node loads one on its first `NOSCRIPT`,
   * see `run()`); a sharded subscription to each bucket's channel.
   *
   * @throws FrontierError when the cluster cannot be reached.
   */
  private static async openCluster(resolved: Required<RedisFrontierOptions>, socket: { connectTimeout: number }): Promise<RedisFrontier> {
    const { createCluster } = await redisClient();
    const url = new URL(resolved.url);
    const credentials = {
      ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
      ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
    };
    // A node lost in a failover is reconnected to (the topology read again), and the commands sent meanwhile are retried (run()).
    const cluster: Cluster = createCluster({
      rootNodes: [{ url: resolved.url, socket: { ...socket, reconnectStrategy: false } }],
      defaults: { ...credentials, socket: { ...socket, reconnectStrategy: clusterReconnect } },
      topologyRefreshOnReconnectionAttemptStrategy: 100,
    });
    // A node's connection failing is not the crawl's failure: the cluster reconnects, and run() retries; a command that fails for good stops the crawl.
    cluster.on("error", function nodeFailed() {});
    let frontier: RedisFrontier | null = null;
    try {
      await cluster.connect();
      const countKey = `coroutine-crawler:{${resolved.name}}:buckets`;
      const stored = await cluster.sendCommand(countKey, false, ["SET", countKey, String(CLUSTER_BUCKETS), "NX", "GET"]);
      frontier = new RedisFrontier(cluster, cluster, resolved, true, stored === null ? CLUSTER_BUCKETS : Number(stored));
      const shards = frontier;
      for (const [name, script] of Object.entries(SCRIPTS)) frontier.sha.set(name, createHash("sha1").update(script).digest("hex"));
      const channels = frontier.buckets.map((bucket) => bucket.channel);
      // One SSUBSCRIBE a channel: each is in its bucket's slot, on that slot's node.
      for (const channel of channels) await cluster.sSubscribe(channel, function heard(message) { shards.heard(message, channels.indexOf(channel)); });
      frontier.persistent = await persistence(function anyNode(args) { return cluster.sendCommand(undefined, true, args); }); // One node's, taken for all.
    } catch (error) {
      if (frontier !== null) await frontier.close();
      else cluster.destroy();
      throw new FrontierError(`cannot use Redis at ${redact(resolved.url)}: ${explainReply(error, resolved.name, true) ?? reason(error)}`, { cause: error });
    }
    return frontier;
  }

  /** Whether the crawl is spread over a Redis Cluster's buckets. */
  get cluster(): boolean {
    return this.clustered;
  }

  /**
   * Marks each item whose URL was never seen, in any process, as seen, and
   * queues it, in one script call made now.
   *
   * @returns at once; the promise resolves with how many URLs were new, once
   * Redis has answered (0 when it failed: the crawl then stops). The core
   * does not wait for it; a test may.
   */
  add(items: readonly QueueItem[]): Promise<number> {
    if (items.length === 0) return Promise.resolve(0);
    const calls = [...this.byBucket(items)].map(([bucket, group]) => this.queue(triples(group), bucket));
    return Promise.all(calls).then(total, () => 0); // A failure stopped the crawl (run()).
  }

  /** ADD: queues the (url, origin, item) triples not seen in `bucket`; resolves with how many were new. */
  private queue(found: readonly string[], bucket: number): Promise<number> {
    return this.run("ADD", [...this.callId(), ...found], bucket).then(Number);
  }

  /**
   * A call's id and how long Redis keeps its reply (ADD, PREPARE, FINISH,
   * TAKE: scripts.ts's `replayed`): `run()` sends a call again after a
   * broken connection (a Cluster's node failing over, a single Redis
   * restarting or a network cutting the connection), so each call gets its
   * own (`OWNER:N`), and a call whose reply was lost is answered again as it
   * was the first time, not run again (a FINISH that stored its records says
   * so again, and this process reports them; the URLs a PREPARE or ADD
   * queued are counted again; a TAKE hands out the URLs it leased). Its cost:
   * one `GET` and one `SET … PX` in Redis per call, not per page.
   */
  private callId(): [string, string] {
    return [`${this.owner}:${++this.calls}`, String(this.leaseMs)];
  }

  /**
   * A page's links of another bucket, queued before its record (ADD, in
   * chunks of {@link FINISH_CHUNK}); in a Cluster, then kept from a crash of
   * the node serving that bucket: when the node has a replica, this waits
   * until a replica has them (`replicated`), so that its replica taking over
   * cannot lose links whose page's record is stored in another bucket, on
   * another node. When the node's connection broke meanwhile, the links may
   * have gone with it: they are queued again (ADD queues only what is not
   * seen), on whichever node serves the bucket now, and waited for there.
   *
   * @returns how many URLs the first ADDs queued.
   * @throws the failure that stopped it, after half a lease of trying.
   */
  private async queueReplicated(group: readonly QueueItem[], bucket: number): Promise<number> {
    const giveUpAt = performance.now() + this.leaseMs / 2;
    let first: number | null = null;
    for (;;) {
      let added = 0;
      for (let start = 0; start < group.length; start += FINISH_CHUNK) added += await this.queue(triples(group.slice(start, start + FINISH_CHUNK)), bucket);
      first ??= added;
      if (!this.clustered || (await this.replicated(bucket, giveUpAt))) return first;
    }
  }

  /**
   * Waits until a replica of the node serving `bucket` has every write this
   * process sent it so far (`WAIT 1`), or says there is nothing to wait
   * for (the node has no replica: `ROLE` lists none). The pages waiting on
   * one node share one `WAIT` (a {@link ScriptBatch} per bucket: those that
   * come while one is out go in the next, which covers their writes too).
   * A `WAIT` that times out with a replica connected (it lags) is sent again.
   *
   * @returns true once replicated or nothing to wait for; false when the
   * node's connection broke: what was written there may be lost.
   * @throws the {@link FrontierError} that stops the crawl, as `run()`'s
   * failures do: an error reply (an ACL's), or after half a lease (`giveUpAt`).
   */
  private async replicated(bucket: number, giveUpAt: number): Promise<boolean> {
    for (;;) {
      let acked: number;
      try {
        acked = Number((await this.waitBatch(bucket).call(["1"]))[0]);
      } catch (error) {
        if (this.closing) throw error;
        if (error instanceof Error && (error.message.startsWith(WAIT_ON_REPLICA) || error.message.startsWith("UNBLOCKED"))) {
          this.replicaKnown = new WeakMap(); // The node asked is a replica now (a failover): where the bucket is, and its replicas, are asked again.
          this.clusterEvents.retried += 1;
          return false; // Queued again on the bucket's node now, which may not have had them.
        }
        if (explainReply(error, this.options.name, true) !== null || performance.now() > giveUpAt) {
          this.fail(error);
          throw this.failure ?? error;
        }
        this.clusterEvents.retried += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
        return false;
      }
      if (acked !== 0) return true; // A replica has them (or -1: the node has none).
      this.clusterEvents.waitedOut += 1;
      if (performance.now() > giveUpAt) {
        this.fail(new Error(`no replica of the node serving bucket ${bucket} acknowledged this process's writes (WAIT 1) for ${Math.round(this.leaseMs / 2)} ms`));
        throw this.failure ?? new FrontierError("no replica acknowledged");
      }
    }
  }

  /** The batch of `WAIT`s of one bucket's node (see `replicated`): each call answers, for each part, the replicas that acknowledged, or -1 for a node without one. */
  private waitBatch(bucket: number): ScriptBatch {
    let batch = this.waits.get(bucket);
    if (batch === undefined) {
      const frontier = this;
      batch = new ScriptBatch(async function waitOnce(parts) {
        const acked = await frontier.waitOnNode(bucket);
        return parts.map(() => acked);
      }, [], 1);
      this.waits.set(bucket, batch);
    }
    return batch;
  }

  /** One `WAIT 1` on the node serving `bucket` (on the connection its scripts go through), or -1 without sending it when the node has no replica. */
  private async waitOnNode(bucket: number): Promise<number> {
    const node = (await (this.client as Cluster).getNodeClientForKey(this.buckets[bucket]?.meta ?? "", false)) as unknown as Client;
    const known = this.replicaKnown.get(node);
    let replicas = known !== undefined && performance.now() - known.at < ROLE_MAX_AGE_MS ? known.replicas : -1;
    if (replicas < 0) {
      this.roundTrips += 1;
      const role = (await node.sendCommand(["ROLE"])) as unknown[];
      replicas = role[0] === "master" && Array.isArray(role[2]) ? role[2].length : 0;
      this.replicaKnown.set(node, { replicas, at: performance.now() });
    }
    if (replicas === 0) return -1;
    this.roundTrips += 1;
    this.clusterEvents.waits += 1;
    const acked = Number(await node.sendCommand(["WAIT", "1", String(REPLICA_WAIT_MS)]));
    if (acked === 0) this.replicaKnown.delete(node); // Its replica may be gone: ask ROLE again.
    return acked;
  }

  /** Items grouped by their origin's bucket. */
  private byBucket(items: readonly QueueItem[]): Map<number, QueueItem[]> {
    const groups = new Map<number, QueueItem[]>();
    if (this.buckets.length === 1) return items.length === 0 ? groups : groups.set(0, [...items]); // One Redis: no origin to read.
    for (const item of items) {
      const bucket = this.bucketOf(originOf(item.url));
      const group = groups.get(bucket);
      if (group === undefined) groups.set(bucket, [item]);
      else group.push(item);
    }
    return groups;
  }

  /** An origin's bucket (always 0 in a single Redis). */
  private bucketOf(origin: string): number {
    return bucketIndex(origin, this.buckets.length);
  }

  /**
   * The crawl starts in this process, with these options and roots (as the
   * crawl core resolved them), and `stopCrawl`, which this frontier calls if
   * Redis fails: the first process records what the crawl is, and a process
   * that joins it with other roots or options, which would mix two crawls,
   * is refused (the crawl stops, and `summary()` throws the
   * {@link FrontierError} that names the difference).
   */
  open(options: ResolvedCrawlOptions, stopCrawl: () => void, roots: readonly string[] = []): void {
    this.crawl = options;
    this.stopCrawl = stopCrawl;
    const created = JSON.stringify({ ...crawlIdentity(options, roots), records: this.options.records });
    const robots = options.robots ? "1" : "0";
    const maxPerHost = options.maxPerHost === Infinity ? "0" : String(options.maxPerHost);
    const begin = (replacing: string, bucket = 0): Promise<string> => this.run("BEGIN", [created, maxPerHost, String(options.delayMs), robots, replacing], bucket).then((reply) => (reply as [string, number])[0]);
    this.begun = begin("").then(
      async (stored) => {
        const mine = JSON.parse(created) as Record<string, unknown>;
        let difference = differenceOf(JSON.parse(stored) as Record<string, unknown>, mine);
        const onlyPoliteness = differenceOf(JSON.parse(stored) as Record<string, unknown>, mine, OVERRIDABLE) === null;
        // Only the politeness differs, and this process was told to change it: it becomes the crawl's, unless another process changed it meanwhile.
        if (difference !== null && onlyPoliteness && this.options.overridePoliteness) {
          difference = differenceOf(JSON.parse(await begin(stored)) as Record<string, unknown>, mine);
        }
        if (difference !== null) {
          const override = onlyPoliteness && !this.options.overridePoliteness ? ` (or change its ${OVERRIDABLE.join(" and ")} for every process with --override-politeness)` : "";
          this.refuse(new FrontierError(`crawl ${this.options.name} was started with ${difference}; crawl it with the same ROOTs and options${override}, or give this crawl another --crawl-name`));
          return;
        }
        // A Cluster: bucket 0 decided; every other bucket's meta gets the same settings, so each script reads only its own slot.
        await Promise.all(this.buckets.slice(1).map(async function copy(_bucket, i) {
          const there = await begin("", i + 1);
          if (there !== created) await begin(there, i + 1);
        }));
      },
    ).catch((error: unknown) => this.fail(error));
  }

  /** The core waits for this instead of looking every few ms: called when leased URLs are ready here, and when the crawl is over. */
  onChange(changed: () => void): void {
    this.changed = changed;
  }

  robotsRules(origin: string): RobotsRules | null {
    return this.rules.get(origin) ?? null;
  }

  robotsRead(origin: string, rules: RobotsRules): void {
    this.rules.set(origin, rules);
    const stored: StoredRobots = { verdict: rules.verdict, text: rules.text ?? "", refusal: rules.refusal };
    this.track(this.run("ROBOTS", [origin, JSON.stringify(stored), String(this.delayOf(origin))], this.bucketOf(origin)));
  }

  /** URLs ready here, for the trace's counters. */
  get size(): number {
    return this.pump.size();
  }

  /**
   * A URL leased to this process and ready here, or undefined when none is
   * (yet): the pump then leases as many as this process has free places
   * (`maxTasks` less the URLs handed out). From the first call on, the
   * crawl's end in Redis is watched: `pending()` turns false when it comes.
   */
  take(): QueueItem | undefined {
    this.whenDone(); // After the roots were added: from now on, nothing queued or leased anywhere means the end.
    if (this.stopped) return undefined;
    let item = this.pump.take();
    // The fencing check: a URL whose lease may have run out (Redis has not answered a RENEW since) may be another process's now.
    while (item !== undefined && (this.deadlines.get(item.url) ?? Infinity) <= performance.now()) {
      this.fenced += 1;
      this.forget(item.url); // Its lease runs out in Redis, and the URL is queued again there, for any process.
      item = this.pump.take();
    }
    if (item !== undefined) this.handedOut += 1;
    this.pump.fill(); // After counting it: the pump asks for the places free now.
    return item;
  }

  /**
   * A request to `url` really starts (the stage's fetch begins): when its
   * origin has a delay, Redis moves the origin's next start to one delay
   * after now (STARTED, several starts to a call), so the gap the site sees
   * holds the delay even when the fetch began a while after its lease.
   */
  started(url: string): void {
    const origin = originOf(url);
    if (this.failure !== null || this.delayOf(origin) === 0) return;
    this.track(this.batches.started(origin, this.bucketOf(origin)));
  }

  /**
   * A URL handed out goes back to be handed out again (its host's turn came,
   * or a `Retry-After` put it back, holding its host back `holdMs`, for every
   * process): still leased here, ready for the next `take()`.
   */
  putBack(item: QueueItem, holdMs?: number): void {
    this.handedOut -= 1;
    const origin = originOf(item.url);
    if (holdMs !== undefined) this.track(this.run("HOLD", [origin, String(holdMs), String(this.delayOf(origin))], this.bucketOf(origin)));
    if (this.stopped || this.pump.isShutdown()) {
      this.handBackHeld(item); // Stopped: not ours to fetch any more.
      return;
    }
    this.held.set(item.url, item); // A Retry-After's item carries its attempts: hand that one back if we stop.
    this.pump.putBack(item);
  }

  /**
   * A URL's work is over: its record is stored in Redis, and the URLs its
   * visit found that no process has seen are marked seen and queued, in one
   * step (a page with many links: its links in steps first, see
   * `FINISH_CHUNK`), sent with the other pages that finished meanwhile in
   * one FINISH call (script-batch.ts: the pages of one turn of the event
   * loop, or those that came while the previous call was on its way); then `stored` is called with the record as stored
   * (its `numNewUrls` the URLs that were really new), or null when it was
   * not stored (recorded already by a process that took the URL after this
   * one's lease expired, or Redis failed).
   *
   * @returns at once; the promise resolves with what `stored` is given (the
   * core does not wait for it; a test may).
   */
  finish(item: QueueItem, visit: Visit, stored: (record: FetchStatistic | null) => void = ignore): Promise<FetchStatistic | null> {
    this.handedOut -= 1;
    return this.store(item, visit).then(function report(record) {
      stored(record);
      return record;
    });
  }

  /** Stores the record and queues the new URLs (see `finish`); resolves with the record as stored, or null. */
  private async store(item: QueueItem, visit: Visit): Promise<FetchStatistic | null> {
    if (this.failure !== null) {
      this.forget(item.url);
      return null;
    }
    let reply: unknown;
    try {
      // A page with many links: all but the last chunk are queued first, each in a step short enough not to hold Redis up.
      // Safe: if this process dies before FINISH, the URLs queued stay queued and seen, and the page, fetched again, queues none twice.
      // In a Cluster, the links of other buckets the same way: queued before the record (and on a replica, when their node has one), while this URL's lease keeps the crawl from ending.
      const bucket = this.buckets.length === 1 ? 0 : this.bucketOf(originOf(item.url));
      const found = this.unknown(visit.next);
      const groups = this.byBucket(found);
      const local = groups.get(bucket) ?? [];
      groups.delete(bucket);
      let earlier = groups.size === 0 ? 0 : total(await Promise.all([...groups].map(([other, group]) => this.queueReplicated(group, other))));
      const last = Math.max(0, local.length - FINISH_CHUNK);
      for (let start = 0; start < last; start += FINISH_CHUNK) {
        earlier += await this.queue(triples(local.slice(start, Math.min(start + FINISH_CHUNK, last))), bucket);
      }
      let { record } = visit;
      let links = triples(local.slice(last));
      const journal = this.options.journal;
      if (journal !== null) {
        // This process's output first: its links queued and its lease checked (PREPARE), its line written, then the mark (FINISH).
        const [added, holds] = await this.batches.prepare(item.url, links, bucket);
        this.remember(item, found); // PREPARE queued them: seen, whatever comes next.
        earlier += Number(added);
        links = [];
        if (record.nextUrl === null) record = { ...record, numNewUrls: earlier }; // As FINISH will store it.
        if (Number(holds) === 0) return null; // Its lease expired, or another process recorded it: not this process's record.
        if (!journal(record)) {
          this.handBack([this.held.get(item.url) ?? item]); // Not written: not marked either; it goes back to the queue.
          return null;
        }
      }
      reply = await this.batches.finish(item.url, this.options.records ? record : null, earlier, links, bucket);
      this.remember(item, found); // FINISH queued them, stored or not: seen.
    } catch {
      return null; // Not stored: the lease expires, and the URL is fetched again by whoever resumes.
    } finally {
      this.forget(item.url);
      this.settled();
    }
    const [stored, added] = reply as readonly [number, number];
    if (stored === 0) return null; // Recorded already, by a process that took it after our lease expired.
    const { record } = visit;
    return record.nextUrl !== null || record.numNewUrls === added ? record : { ...record, numNewUrls: added }; // As FINISH stored it.
  }

  /** Of `found`, those not known here to be seen already (see `knownSeen`). */
  private unknown(found: readonly QueueItem[]): QueueItem[] {
    const known = this.knownSeen;
    if (known.size === 0) return [...found]; // None known (always, in a Cluster).
    return found.filter(function notKnown(next) { return !known.has(next.url); });
  }

  /** Notes a finished page's URL and the links sent with it (those not known already) as seen in Redis (see `knownSeen`). */
  private remember(item: QueueItem, found: readonly QueueItem[]): void {
    if (this.clustered) return; // See `knownSeen`'s remarks.
    if (this.knownSeen.size + found.length >= KNOWN_SEEN_MOST) this.knownSeen.clear();
    this.knownSeen.add(item.url);
    for (const next of found) this.knownSeen.add(next.url);
  }

  /** A URL handed out that this process will not fetch (the crawl stopped): handed back to the queue, for another process or a later run. */
  release(item: QueueItem): void {
    this.handedOut -= 1;
    this.handBackHeld(item);
  }

  /** Whether URLs may still come: until the crawl is over in every process, or this process stopped. */
  pending(): boolean {
    return !this.over && !this.stopped;
  }

  /**
   * Resolves once the crawl is over (nothing queued or leased in Redis; or,
   * after `stop()`, once this process's URLs are all finished or released)
   * and its summary read, or Redis failed (then `summary()` throws).
   */
  whenDone(): Promise<void> {
    if (this.done !== null) return this.done;
    const frontier = this;
    this.done = this.join().then(
      function over() {
        frontier.over = true;
        frontier.changed(); // pending() turned false.
        frontier.stop();
        return frontier.read(frontier.crawl?.keepRecords ?? true);
      },
    ).then(
      function read(summary) { frontier.summed = summary; },
      function failed(error: unknown) {
        if (error instanceof FrontierError) frontier.refuse(error); // Says already what it was.
        else frontier.fail(error);
      },
    );
    return this.done;
  }

  /** This process takes no more URLs: those ready here are handed back, and the crawl's end here comes once the URLs handed out are finished or released. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.letGo(this.pump.shutdown());
    this.settled();
  }

  /**
   * What the crawl result reports (see {@link StoreSummary}), read from
   * Redis once `whenDone()` resolved: every process's records and seen URLs,
   * or, with `keepRecords` false (or Redis keeping no records), their counts
   * only.
   *
   * @throws FrontierError when Redis failed, or this process was refused.
   */
  summary(recorded: number): StoreSummary {
    if (this.failure !== null) throw this.failure;
    return this.summed ?? { seen: [], todo: 0, records: null, recorded };
  }

  /** A URL held here, as held (a Retry-After's item carries its attempts), handed back to the queue. */
  private handBackHeld(item: QueueItem): void {
    const held = this.held.get(item.url) ?? item;
    this.forget(item.url);
    this.handBack([held]);
    this.settled();
  }

  /** Settles when the crawl is over (see `whenDone`); starts the timers that renew the leases and look at Redis. */
  private join(): Promise<void> {
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


  /** Whether a `journal` writes each record before Redis marks it (then `finish`'s callback comes after both). */
  get journaled(): boolean {
    return this.options.journal !== null;
  }

  /** Whether Redis keeps each record (the option `records`): only then can {@link RedisFrontier.recordChunks} read them back. */
  get keepsRecords(): boolean {
    return this.options.records;
  }

  /**
   * Every record of the crawl (every process's), as Redis stores it (one JSON
   * text each), read with HSCAN about `count` at a time: a writer takes
   * one chunk at a time, so no process holds all records at the end.
   * Empty when Redis keeps no records (option `records` false).
   *
   * @throws FrontierError (a rejection of the iteration) when Redis stops answering.
   */
  recordChunks(count = STREAM_CHUNK): AsyncGenerator<string[]> {
    const frontier = this;
    const keeps = this.options.records;
    return this.streamed(async function* records() {
      if (!keeps) return;
      for (const bucket of frontier.buckets) yield* frontier.scan("HSCAN", bucket.records, count);
    });
  }

  /**
   * Every URL the crawl has seen, read with SSCAN about `count` at a time
   * (see {@link RedisFrontier.recordChunks}).
   *
   * @throws FrontierError (a rejection of the iteration) when Redis stops answering.
   */
  seenChunks(count = STREAM_CHUNK): AsyncGenerator<string[]> {
    const frontier = this;
    return this.streamed(async function* seen() {
      for (const bucket of frontier.buckets) yield* frontier.scan("SSCAN", bucket.seen, count);
    });
  }

  /** A set's members (SSCAN) or a hash's values (HSCAN), about `count` at a time; chunks may be empty. */
  private async *scan(command: "SSCAN" | "HSCAN", key: string, count: number): AsyncGenerator<string[]> {
    let cursor = "0";
    do {
      const [next, found] = (await this.send(key, [command, key, cursor, "COUNT", String(count)])) as [string, string[]];
      cursor = String(next);
      yield command === "SSCAN" ? found : found.filter((_value, i) => i % 2 === 1);
    } while (cursor !== "0");
  }

  /**
   * One command to the node that serves `key` (any node for none; in a
   * single Redis, to it), counted as a round trip. A command Redis could not
   * answer for now is sent again, with back-off (25 ms doubling to 1 s), for
   * up to half a lease: a lost connection (a single Redis restarting, a
   * network cutting it, a Cluster's node failing over: the client makes it
   * again meanwhile, and a command sent while it is down fails at once),
   * `LOADING` (a Redis reading its append-only file), and in a Cluster
   * `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN` and a script that met a key its
   * slot's migration had moved already ("non local key"). Every script is
   * written to make a repeat harmless (ADD, PREPARE, FINISH and TAKE answer
   * a repeat with their first reply), and reads are reads. The "non local
   * key" of a slot being migrated meets ADD, PREPARE, FINISH and TAKE at
   * their first read (the key of their kept reply, which never exists
   * before the call), before they write anything.
   *
   * @throws the last failure: an error reply, or after half a lease (for a
   * connection still down, what broke it).
   */
  private async send(key: string | undefined, args: readonly string[]): Promise<unknown> {
    this.roundTrips += 1;
    const giveUpAt = performance.now() + this.leaseMs / 2;
    for (let pause = 25; ; pause = Math.min(1000, pause * 2)) {
      try {
        return await (this.clustered ? (this.client as Cluster).sendCommand(key, false, [...args]) : (this.client as Client).sendCommand([...args]));
      } catch (error) {
        if (this.closing || this.failure !== null || !this.passing(error) || performance.now() + pause > giveUpAt) throw this.lostBy(error);
        this.clusterEvents.retried += 1;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** A command's failure as reported: when it failed because a single Redis's connection was down (the client offline or closed), what broke the connection, which says why. */
  private lostBy(error: unknown): unknown {
    const lost = this.connectionError;
    if (lost === null || clientModule === null) return error;
    return error instanceof clientModule.ClientOfflineError || error instanceof clientModule.ClientClosedError ? lost : error;
  }

  /**
   * The connection to a single Redis was made again: what this process knows
   * Redis has seen may be more than it has now (see `knownSeen`), and Redis
   * may have come back with nothing (`stillThere`).
   */
  private reconnected(): void {
    this.reconnects += 1;
    this.knownSeen.clear();
    void this.stillThere();
  }

  /**
   * After a new connection, once the crawl began here: whether the crawl's
   * record (`created`, which BEGIN stores and nothing deletes) is still in
   * Redis. A Redis that came back without it (restarted with nothing on
   * disk, or its keys deleted) has lost the crawl, and its empty queue is
   * not the crawl's end: the crawl stops, saying so.
   */
  private async stillThere(): Promise<void> {
    if (this.crawl === null) return;
    try {
      await this.begun;
      const meta = this.buckets[0]?.meta ?? "";
      if (this.failure !== null || Number(await this.send(meta, ["HEXISTS", meta, "created"])) === 1) return;
      this.fail(new Error("it came back without this crawl's keys (restarted with nothing on disk, or they were deleted)"));
    } catch {
      // Redis away again: the commands waiting for it stop the crawl if it does not come back.
    }
  }

  /** Whether an error is one of Redis's passing states (see `send`), not an answer: no error reply the crawl explains, and no `NOSCRIPT`. */
  private passing(error: unknown): boolean {
    const message = error instanceof Error ? error.message : "";
    if (message.startsWith("NOSCRIPT")) return false;
    return /^(TRYAGAIN|CLUSTERDOWN|MASTERDOWN|LOADING|ERR Script attempted to access a non local key)/.test(message) || explainReply(error, this.options.name, true) === null;
  }

  /** Chunks read from Redis, an error while reading them a {@link FrontierError} that says what it was. */
  private async *streamed(chunks: () => AsyncGenerator<string[]>): AsyncGenerator<string[]> {
    try {
      yield* chunks();
    } catch (error) {
      if (error instanceof FrontierError) throw error;
      throw this.failure ?? this.readFailure(error);
    }
  }

  /** A read that failed, as a {@link FrontierError}: Redis stopped answering, or refused the command (an error reply, explained). */
  private readFailure(error: unknown): FrontierError {
    const reply = explainReply(error, this.options.name, this.clustered);
    const where = `Redis at ${redact(this.options.url)}`;
    return new FrontierError(reply === null ? `${where} stopped answering: ${reason(error)}` : `${where} refused the crawl's command: ${reply}`, { cause: error });
  }

  /**
   * Reads every seen URL and record, a thousand at a time; with
   * `keepRecords` false, only their counts: the URLs stay in Redis, and no
   * process holds a whole crawl in memory at its end.
   *
   * @throws FrontierError (a rejection) when Redis stops answering while it is read.
   */
  private async read(keepRecords: boolean): Promise<StoreSummary> {
    try {
      return await this.readAll(keepRecords);
    } catch (error) {
      throw this.failure ?? this.readFailure(error);
    }
  }

  /** See {@link RedisFrontier.read}. */
  private async readAll(keepRecords: boolean): Promise<StoreSummary> {
    if (!keepRecords || !this.options.records) {
      let [seenCount, recordCount] = [0, 0];
      for (const bucket of this.buckets) {
        const [seenHere, recordsHere] = (await this.send(bucket.seen, ["EVAL", "return {redis.call('SCARD', KEYS[1]), redis.call('HLEN', KEYS[2])}", "2", bucket.seen, bucket.records])) as [number, number];
        seenCount += Number(seenHere);
        recordCount += Number(recordsHere);
      }
      return { seen: [], todo: seenCount - recordCount, records: null, recorded: recordCount };
    }
    const seen: string[] = [];
    let recorded = 0;
    const records: FetchStatistic[] = [];
    for (const bucket of this.buckets) {
      for await (const members of this.scan("SSCAN", bucket.seen, 1000)) seen.push(...members);
      for await (const values of this.scan("HSCAN", bucket.records, 1000)) {
        recorded += values.length;
        for (const value of values) records.push(JSON.parse(value) as FetchStatistic);
      }
    }
    return { seen, todo: seen.length - recorded, records: keepRecords ? records : null, recorded };
  }

  /**
   * The crawl's state in Redis now: queue, leases, records, and the processes that took part.
   *
   * @throws FrontierError (a rejection) when Redis does not answer.
   */
  async status(): Promise<FrontierStatus> {
    let replies: Array<Array<number | string>>;
    try {
      replies = (await Promise.all(this.buckets.map((_bucket, i) => this.run("STATUS", [], i)))) as Array<Array<number | string>>;
    } catch (error) {
      throw this.failure ?? this.readFailure(error);
    }
    // In a Cluster, each bucket's reading: summed, and each process as seen last in any bucket, with its leases in all.
    const sums = [0, 0, 0, 0];
    const workers = new Map<string, FrontierWorker>();
    for (const reply of replies) {
      const [queued, leased, recordCount, seenCount, now] = reply.slice(0, 5).map(Number) as [number, number, number, number, number];
      for (const [i, value] of [queued, leased, recordCount, seenCount].entries()) sums[i] = (sums[i] ?? 0) + value;
      for (let i = 6; i + 2 < reply.length; i += 3) {
        const owner = String(reply[i]);
        const idleMs = Math.max(0, now - Number(reply[i + 1]));
        const known = workers.get(owner);
        workers.set(owner, { owner, idleMs: Math.min(idleMs, known?.idleMs ?? Infinity), leased: Number(reply[i + 2]) + (known?.leased ?? 0) });
      }
    }
    const list = [...workers.values()].sort((a, b) => a.idleMs - b.idleMs);
    const [queued = 0, leased = 0, records = 0, seen = 0] = sums;
    return { queued, leased, records, seen, workers: list, created: Number(replies[0]?.[5]) === 1 };
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
    if (this.due !== null) clearTimeout(this.due.timer);
    this.due = null;
    await Promise.allSettled([...this.writes]);
    for (const connection of new Set([this.subscriber, this.client])) {
      if (!connection.isOpen) continue;
      // After a failure a graceful close may wait for a connection that is gone (node-redis): destroy it.
      if (this.failure !== null) connection.destroy();
      else await connection.close().catch(() => connection.destroy());
    }
  }

  /**
   * Leases up to `count` URLs to this process (the pump's `TakeSource.lease`):
   * TAKE first puts back the leases that expired, then moves URLs from the
   * queue to this process's leases. When it finds none queued and none
   * leased anywhere, the crawl may be over: check.
   */
  private async lease(count: number): Promise<QueueItem[]> {
    await this.begun;
    const jitter = this.crawl === null ? 0 : this.crawl.delayJitter * Math.random();
    const taken: QueueItem[] = [];
    const unknown = new Set<string>();
    const now = performance.now();
    const size = this.buckets.length;
    // The ready-set (a Cluster): the buckets that may have a URL to take now, in turn from the cursor, until `count` are taken.
    for (let step = 0; step < size && taken.length < count; step += 1) {
      const bucket = (this.cursor + step) % size;
      if (size > 1 && (this.notBefore[bucket] ?? 0) > now) continue;
      const heard = this.heardIn[bucket];
      const asked = count - taken.length;
      const got = await this.takeFrom(bucket, asked, jitter, unknown);
      taken.push(...got.items);
      this.left[bucket] = got.left;
      if (size > 1 && got.items.length < asked && this.heardIn[bucket] === heard) this.notBefore[bucket] = got.waitMs >= 0 ? performance.now() + got.waitMs : Infinity;
      if (got.waitMs >= 0) this.wakeIn(got.waitMs);
      if (got.items.length > 0) this.cursor = (bucket + 1) % size;
    }
    if (unknown.size > 0) await this.learnRobots([...unknown]);
    if (taken.length === 0 && this.allEmpty()) void this.checkDone();
    return taken;
  }

  /** One TAKE in one bucket: the items leased (held here), the URLs queued and leased there after it, and the ms until its next origin may start (-1: none waits for time). */
  private async takeFrom(bucket: number, count: number, jitter: number, unknown: Set<string>): Promise<{ items: QueueItem[]; left: number; waitMs: number }> {
    const sent = performance.now();
    const reply = (await this.run("TAKE", [this.owner, String(this.leaseMs), String(count), String(jitter), ...this.callId()], bucket)) as Array<number | string>;
    const items: QueueItem[] = [];
    for (let i = 3; i + 2 < reply.length; i += 3) {
      const next = JSON.parse(String(reply[i])) as QueueItem;
      const origin = String(reply[i + 1]);
      items.push(next);
      this.held.set(next.url, next);
      this.deadlines.set(next.url, sent + this.leaseMs);
      // Not the reader: another process read its robots.txt, whose rules this process must know before the core asks.
      if (this.crawl?.robots === true && reply[i + 2] === 0 && !this.rules.has(origin)) unknown.add(origin);
    }
    return { items, left: Number(reply[0]) + Number(reply[1]), waitMs: Number(reply[2]) };
  }

  /** Reads the rules other processes stored for these origins. */
  private async learnRobots(origins: readonly string[]): Promise<void> {
    const groups = new Map<number, string[]>();
    for (const origin of origins) groups.set(this.bucketOf(origin), [...(groups.get(this.bucketOf(origin)) ?? []), origin]);
    await Promise.all([...groups].map(async ([bucket, group]) => {
      const key = this.buckets[bucket]?.politeness ?? "";
      const values = (await this.send(key, ["HMGET", key, ...group.map((origin) => `r:${origin}`)])) as Array<string | null>;
      group.forEach((origin, i) => {
        const value = values[i];
        if (typeof value !== "string" || value.startsWith("?")) return; // Not read after all (its reader's lease ended): this process reads it.
        const stored = JSON.parse(value) as StoredRobots;
        this.rules.set(origin, storedRobotsRules(origin, stored.verdict, stored.text, this.crawl?.userAgent ?? "", stored.refusal ?? null));
      });
    }));
  }

  /** The pause between two starts at the origin: the crawl's delay, or a longer `Crawl-delay` (capped) this process knows. */
  private delayOf(origin: string): number {
    if (this.crawl === null) return 0;
    const crawlDelay = this.rules.get(origin)?.crawlDelayMs ?? null;
    return crawlDelay === null ? this.crawl.delayMs : Math.max(this.crawl.delayMs, Math.min(crawlDelay, this.crawl.maxCrawlDelayMs));
  }

  /** Makes the pump look again in `ms`, when the next host's start comes (unless a wake-up is due sooner). */
  private wakeIn(ms: number): void {
    const at = performance.now() + ms;
    if (this.due !== null && this.due.at <= at) return;
    if (this.due !== null) clearTimeout(this.due.timer);
    const timer = setTimeout(() => {
      this.due = null;
      this.pump.wake();
    }, Math.min(ms, MAX_TIMER_MS));
    timer.unref();
    this.due = { timer, at };
  }

  /** Keeps a script call that `close()` waits for; its failure stops the crawl. */
  private track(call: Promise<unknown>): void {
    const tracked = call.catch((error: unknown) => this.fail(error));
    this.writes.add(tracked);
    void tracked.finally(() => this.writes.delete(tracked));
  }

  /** A message on a bucket's channel: URLs were queued there (look again), or it has nothing queued or leased any more (the crawl may be done: check). */
  private heard(message: string, bucket: number): void {
    if (bucket >= 0) {
      this.heardIn[bucket] = (this.heardIn[bucket] ?? 0) + 1;
      this.notBefore[bucket] = 0;
      if (message === "done") this.left[bucket] = 0;
    }
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
      await this.begun; // A process BEGIN refuses hears so before it could take a finished crawl for its own.
      if (this.failure !== null) return;
      if (this.clustered) {
        if (await this.collectedTwice()) this.joined.resolve();
        return;
      }
      const [queued, leased] = (await this.run("DONE", [])) as [number, number];
      if (queued === 0 && leased === 0) this.joined.resolve();
    } catch (error) {
      this.fail(error);
    }
  }

  /** Whether every bucket was last seen with nothing queued or leased. */
  private allEmpty(): boolean {
    return !this.left.some((left) => left !== 0);
  }

  /**
   * The end of a crawl over a Cluster's buckets, without the race of a sum
   * (a bucket read empty, then given a page's links by a bucket read after):
   * two collects of every bucket's (queued, leased, seen), one after the
   * other; done when both see nothing queued or leased anywhere and each
   * bucket's seen count unchanged. Seen is the bucket's epoch: a bucket
   * with nothing queued or leased changes only when ADD (or FINISH, PREPARE)
   * queues a URL it never saw, so the same count in both collects means
   * each bucket stayed empty from its first reading to its second; those
   * spans all hold the moment between the two collects, when nothing was
   * queued or leased anywhere, so no lease was left to make more work.
   * Read only when every bucket was last seen empty.
   */
  private async collectedTwice(): Promise<boolean> {
    if (!this.allEmpty()) return false;
    const collect = (): Promise<Array<[number, number, number]>> => Promise.all(this.buckets.map(async (bucket) => {
      const counts = (await this.send(bucket.meta, ["EVAL", COLLECT, "3", bucket.meta, bucket.leases, bucket.seen])) as [number, number, number];
      return counts.map(Number) as [number, number, number];
    }));
    const first = await collect();
    for (const [i, [queued, leased]] of first.entries()) this.left[i] = queued + leased;
    if (!this.allEmpty()) return false;
    const second = await collect();
    for (const [i, [queued, leased]] of second.entries()) this.left[i] = queued + leased;
    return second.every(([queued, leased, seen], i) => queued === 0 && leased === 0 && seen === first[i]?.[2]);
  }

  /** A URL is no longer held here: finished, handed back, or fenced off. */
  private forget(url: string): void {
    this.held.delete(url);
    this.deadlines.delete(url);
  }

  /** A URL held here was finished or released: after a stop, the last one ends `join()`. */
  private settled(): void {
    if (this.stopped) void this.checkDone();
  }

  /** URLs held here that this process will not fetch: no longer held, and handed back. */
  private letGo(items: readonly QueueItem[]): void {
    for (const item of items) this.forget(item.url);
    this.handBack(items);
  }

  /** Hands leased URLs back to the queue, for another process or a later run. */
  private handBack(items: readonly QueueItem[]): void {
    if (items.length === 0 || this.failure !== null) return;
    for (const [bucket, group] of this.byBucket(items)) this.track(this.run("RELEASE", [this.owner, ...group.map((item) => JSON.stringify(item))], bucket));
  }

  /**
   * The timers of a crawl under way: one renews the leases this process
   * holds (every third of a lease); one makes the pump look again, which
   * puts back the leases that expired elsewhere, and checks whether the crawl is done.
   */
  private startTimers(): void {
    if (this.timers.length > 0) return;
    const renew = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
    const watch = setInterval(() => this.watchSilence(), Math.max(50, Math.floor(this.options.warnAfterMs / 4)));
    watch.unref();
    this.timers.push(watch);
    const look = setInterval(() => {
      this.notBefore.fill(0); // Every bucket's turn again: TAKE puts back the leases that expired there.
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
    const sent = performance.now();
    const urls = [...this.held.keys()];
    const groups = new Map<number, string[]>();
    for (const url of urls) groups.set(this.bucketOf(originOf(url)), [...(groups.get(this.bucketOf(originOf(url))) ?? []), url]);
    try {
      await Promise.all([...groups].map(([bucket, group]) => this.run("RENEW", [this.owner, String(this.leaseMs), ...group], bucket)));
      for (const url of urls) if (this.deadlines.has(url)) this.deadlines.set(url, sent + this.leaseMs);
    } catch (error) {
      this.fail(error);
    }
  }

  /**
   * Runs one of the scripts by its SHA1, with a bucket's keys, its queues'
   * prefix and channel, then `args`. A failure stops the crawl, and rejects
   * with the {@link FrontierError} that says what it was.
   *
   * @remarks In a Cluster the client sends it to the node of the bucket's
   * slot and follows `MOVED` and `ASK`; this adds what a resharding, a
   * failover or a single Redis's restart needs: `NOSCRIPT` (a node that
   * never ran it: a new primary, a slot moved; a Redis restarted, its
   * scripts gone) sends the script itself (EVAL, which caches it there), and
   * a lost connection, `LOADING`, and in a Cluster `TRYAGAIN`, `CLUSTERDOWN`
   * and `MASTERDOWN` are tried again, after 25 ms doubling to 1 s, for up to
   * half a lease (`send`). A call whose reply was lost is so sent again:
   * ADD, PREPARE, FINISH and TAKE carry an id (`callId`) under which Redis
   * kept their reply, and answer the same again without running twice;
   * RENEW and RELEASE are harmless twice (by the lease's owner), and so are
   * STARTED, HOLD, ROBOTS (a later next start, at most) and BEGIN.
   */
  private run(name: string, args: readonly string[], bucket = 0): Promise<unknown> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const { fixed, queuePrefix, publish } = this.buckets[bucket] ?? (this.buckets[0] as Bucket);
    const call = { at: performance.now() };
    this.unanswered.add(call);
    const tail = [String(fixed.length), ...fixed, queuePrefix, publish, ...args];
    const attempt = async (): Promise<unknown> => {
      try {
        return await this.send(fixed[0], ["EVALSHA", this.sha.get(name) ?? "", ...tail]);
      } catch (error) {
        if (this.closing || !(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
        this.clusterEvents.noscript += 1; // A node new to the crawl (a failover's replica, a resharding's target) or a Redis restarted: the script sent whole.
        return await this.send(fixed[0], ["EVAL", SCRIPTS[name] ?? "", ...tail]);
      }
    };
    return attempt().then(
      (reply: unknown) => {
        this.answered(call);
        return reply;
      },
      (error: unknown) => {
        this.answered(call);
        this.fail(error);
        throw this.failure ?? error;
      },
    );
  }

  /** A script call was answered: after a warning of silence, says Redis answers again. */
  private answered(call: { at: number }): void {
    this.unanswered.delete(call);
    if (this.warnedAt === 0 || this.failure !== null) return;
    this.warnedAt = 0;
    this.options.onWarning?.(`Redis at ${redact(this.options.url)} answers again`);
  }

  /** Warns when the oldest script call in flight has waited `warnAfterMs`, then at each doubling of that. */
  private watchSilence(): void {
    if (this.failure !== null || this.closing) return;
    let oldest = Infinity;
    for (const call of this.unanswered) oldest = Math.min(oldest, call.at);
    const silentMs = performance.now() - oldest;
    const due = this.warnedAt === 0 ? this.options.warnAfterMs : this.warnedAt * 2;
    if (!(silentMs >= due)) return;
    this.warnedAt = due;
    this.options.onWarning?.(`Redis at ${redact(this.options.url)} has not answered for ${due % 1000 === 0 ? due / 1000 : (due / 1000).toFixed(1)} s; waiting for it (this process starts no fetch on a lease that may have run out, and goes on when it answers)`);
  }

  /**
   * The crawl is another than this process's: it stops, as when Redis
   * fails, with a message saying why, which `summary()` throws.
   */
  private refuse(error: FrontierError): void {
    if (this.failure !== null || this.closing) return;
    this.failure = error;
    for (const timer of this.timers) clearInterval(timer);
    this.stopped = true;
    this.pump.shutdown(); // The URLs ready here stay leased: taken again once their leases expire.
    this.joined?.reject(this.failure);
    this.stopCrawl(); // Its requests in flight are abandoned.
  }

  /**
   * Redis failed: the crawl stops (its requests in flight abandoned),
   * `summary()` throws a {@link FrontierError} that says what it was, and
   * nothing more is written. Records written stay; the URLs leased here are
   * taken again once their leases expire.
   */
  private fail(error: unknown): void {
    if (this.failure !== null || this.closing) return;
    const where = `Redis at ${redact(this.options.url)}`;
    const reply = explainReply(error, this.options.name, this.clustered);
    const what = reply === null ? `${where} stopped answering: ${reason(error)}` : `${where} refused the crawl's command: ${reply}`;
    const after =
      this.persistent === true
        ? "records written are kept, and running the crawl again resumes it"
        : this.persistent === false
          ? "this Redis keeps nothing on disk (no appendonly, no save): if it restarts, the crawl is lost, and running it again starts it over"
          : "records written are kept as long as Redis keeps them: running the crawl again resumes it, or starts it over if Redis lost them";
    this.refuse(new FrontierError(`${what}; ${after}`, { cause: error }));
  }
}

/**
 * The number of buckets a crawl is spread over in a Redis Cluster, stored
 * by its first process (a later one reads it): each bucket's keys share one
 * hash tag, so one slot, and its origins' queues, leases, politeness and
 * records live there. Sixteen spread a crawl evenly enough over 3 to 6
 * shards (each with 5 ± 2 of them), and keep the end-of-crawl collect (one
 * small read per bucket, twice) and a process's wake-ups cheap.
 */
const CLUSTER_BUCKETS = 16;

/**
 * How long one `WAIT` for a replica waits (ms): it holds this process's
 * connection to that node meanwhile, and one that times out with a replica
 * connected is sent again.
 */
const REPLICA_WAIT_MS = 1_000;

/**
 * How Redis refuses a `WAIT` sent to a replica: the node was a primary until a
 * failover the client has not heard of yet. (A `WAIT` the failover caught
 * under way is ended with `UNBLOCKED … (master -> replica?)`, taken the same way.)
 */
const WAIT_ON_REPLICA = "ERR WAIT cannot be used with replica";

/** How long a node's `ROLE` (its replicas) is taken as true before it is asked again (ms). */
const ROLE_MAX_AGE_MS = 5_000;

/** The end's collect of one bucket (KEYS: meta, leases, seen): URLs queued, leased, and seen (the bucket's epoch). */
const COLLECT = "return {tonumber(redis.call('HGET', KEYS[1], 'queued')) or 0, redis.call('ZCARD', KEYS[2]), redis.call('SCARD', KEYS[3])}";

/** The scripts by name, loaded (or sent) as they are. */
const SCRIPTS: Readonly<Record<string, string>> = { ADD, BEGIN, DONE, TAKE, FINISH, HOLD, PREPARE, RELEASE, RENEW, ROBOTS, STARTED, STATUS };

/**
 * The names of a crawl's keys and channels, by bucket. In a single Redis,
 * one bucket with the hash tag `{NAME}` (the layout of every crawl made
 * before Cluster support: `coroutine-crawler:{NAME}:seen`, …) and plain
 * Pub/Sub; in a Cluster, `count` buckets tagged `{NAME:bN}`, each in its
 * own slot, and sharded Pub/Sub (SPUBLISH) on each bucket's channel. Each
 * bucket's `fixed` are the nine every script gets, in the order scripts.ts lists them.
 */
function bucketsOf(name: string, count: number): Bucket[] {
  const buckets: Bucket[] = [];
  for (let n = 0; n < count; n += 1) {
    const prefix = count === 1 ? `coroutine-crawler:{${name}}:` : `coroutine-crawler:{${name}:b${n}}:`;
    const keys = {
      seen: `${prefix}seen`,
      hosts: `${prefix}hosts`,
      leases: `${prefix}leases`,
      owners: `${prefix}owners`,
      items: `${prefix}items`,
      records: `${prefix}records`,
      workers: `${prefix}workers`,
      politeness: `${prefix}politeness`,
      meta: `${prefix}meta`,
    };
    const channel = `${prefix}events`;
    buckets.push({ ...keys, fixed: Object.values(keys), queuePrefix: `${prefix}q:`, channel, publish: `${count === 1 ? "PUBLISH" : "SPUBLISH"} ${channel}` });
  }
  return buckets;
}

/**
 * An origin's bucket among `count`: FNV-1a (32 bits) of the origin, mod
 * `count`. Stable across processes and versions: every process must put an
 * origin, and so each of its URLs, in the same bucket.
 */
export function bucketIndex(origin: string, count: number): number {
  if (count === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < origin.length; i += 1) {
    hash ^= origin.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/**
 * How the cluster client reconnects to a node whose connection broke: at
 * once, then every 50–500 ms, for 30 s (a failover takes the cluster about
 * its `cluster-node-timeout` and a vote); then it gives up, and the
 * commands to that node fail for good.
 */
function clusterReconnect(retries: number): number | Error {
  return retries > 100 ? new Error("Redis Cluster node unreachable for 30 s") : Math.min(500, 50 * (retries + 1));
}

/**
 * Connects `client` and says whether the Redis there is a Cluster node
 * (`INFO cluster` says `cluster_enabled:1`); if so, closes it (the cluster
 * client takes over). A Redis that refuses INFO (an ACL) is taken as a
 * single Redis.
 *
 * @throws FrontierError (a rejection) when Redis cannot be reached.
 */
async function clusterEnabled(client: Client, resolved: Required<RedisFrontierOptions>): Promise<boolean> {
  try {
    await client.connect(); // The connection's failure is the rejection of connect() (the client has an "error" listener).
  } catch (error) {
    client.destroy();
    throw new FrontierError(`cannot use Redis at ${redact(resolved.url)}: ${explainReply(error, resolved.name) ?? reason(error)}`, { cause: error });
  }
  let info = "";
  try {
    info = String(await client.sendCommand(["INFO", "cluster"]));
  } catch {
    return false;
  }
  if (!/^cluster_enabled:1/m.test(info)) return false;
  await client.close();
  return true;
}

/** The per-page script calls, each gathered into calls of several pages (see {@link ScriptBatch}), one batch per script and bucket. */
interface PageBatches {
  /** PREPARE for one page of `bucket`: resolves with the URLs it queued and whether this process may still store its record (1 or 0). */
  prepare(url: string, links: readonly string[], bucket: number): Promise<readonly [number, number]>;
  /** FINISH for one page of `bucket` (`record` null: Redis keeps only that it has one): resolves with 1 if stored else 0, and the URLs queued. */
  finish(url: string, record: FetchStatistic | null, earlier: number, links: readonly string[], bucket: number): Promise<readonly [number, number]>;
  /** STARTED for one request to `origin`, of `bucket`. */
  started(origin: string, bucket: number): Promise<unknown>;
}

/**
 * The batches of one process (`owner`), sending through `run`: a batch for
 * each script and bucket, since one call runs in one bucket's slot (a
 * single Redis has bucket 0 only). Each PREPARE and FINISH call starts with
 * the owner and the call's id (`callId`: the id, and how long Redis keeps
 * the reply).
 */
function pageBatches(owner: string, run: (name: string, args: readonly string[], bucket: number) => Promise<unknown>, callId: () => readonly string[]): PageBatches {
  const batches = new Map<string, ScriptBatch>();
  function batchOf(name: "PREPARE" | "FINISH" | "STARTED", bucket: number): ScriptBatch {
    const key = `${name} ${bucket}`;
    let batch = batches.get(key);
    if (batch === undefined) {
      batch = name === "STARTED" ? new ScriptBatch((args) => run(name, args, bucket), [], 1) : new ScriptBatch((args) => run(name, args, bucket), function head() { return [owner, ...callId()]; }, 2);
      batches.set(key, batch);
    }
    return batch;
  }
  return {
    async prepare(url, links, bucket) {
      const [added, holds] = await batchOf("PREPARE", bucket).call([url, String(links.length / 3), ...links]);
      return [Number(added), Number(holds)];
    },
    async finish(url, record, earlier, links, bucket) {
      const [kind, stored] = record === null ? ["0", ""] : record.nextUrl === null ? ["2", pageHead(record)] : ["1", JSON.stringify(record)];
      const [added, queued] = await batchOf("FINISH", bucket).call([url, kind, stored, String(earlier), String(links.length / 3), ...links]);
      return [Number(added), Number(queued)];
    },
    started(origin, bucket) {
      return batchOf("STARTED", bucket).call([origin]);
    },
  };
}

/**
 * A page's record as FINISH's kind `2` takes it: its JSON with `numNewUrls`
 * last and cut before its value, which the script writes (the URLs the page
 * really queued) before closing the brace.
 */
function pageHead(record: FetchStatistic): string {
  const { numNewUrls: _, ...rest } = record;
  const json = JSON.stringify(rest);
  return json === "{}" ? '{"numNewUrls":' : `${json.slice(0, -1)},"numNewUrls":`;
}

/** An origin's `robots.txt` as Redis keeps it: the verdict, and the file's text the rules are read from again. */
interface StoredRobots {
  verdict: RobotsVerdict;
  text: string;
  /** For `unreachable`: the failure each page there is recorded with. */
  refusal?: RobotsRules["refusal"];
}

/**
 * The URL's origin (scheme, host, port), the host of politeness. A URL as
 * the crawl makes them (an `href`: scheme and host in lower case, no default
 * port) is cut before its path's slash, which is the origin, without parsing
 * it again (once per link found, the frontier's largest cost after the
 * round trips); one with a user name or without that slash is parsed.
 */
function originOf(url: string): string {
  const authority = url.indexOf("//") + 2;
  const path = url.indexOf("/", authority);
  if (authority < 2 || path < 0 || (!url.startsWith("http://") && !url.startsWith("https://"))) return new URL(url).origin;
  const origin = url.slice(0, path);
  return origin.includes("@", authority) ? new URL(url).origin : origin;
}

/** A `finish()` without a callback: its caller awaits what it returns. */
function ignore(): void {}

/** The sum of the numbers Redis answered. */
function total(counts: readonly unknown[]): number {
  return counts.reduce<number>((sum, count) => sum + Number(count), 0);
}

/** (url, origin, item JSON) triples, as ADD and FINISH take them. */
function triples(items: readonly QueueItem[]): string[] {
  return items.flatMap((item) => [item.url, originOf(item.url), JSON.stringify(item)]);
}

/**
 * What makes a crawl what it is, recorded when it starts: its roots and the
 * options that decide which URLs it crawls and how politely. Options a
 * process may choose for itself (`maxTasks`, timeouts, retries, `maxPages`,
 * `keepRecords`) are not in it. `open()` adds the frontier's own `records`:
 * a process that keeps its records only in its `--jsonl` would store `1` as
 * the record of each URL it finishes, where every other process reads JSON.
 */
function crawlIdentity(options: ResolvedCrawlOptions, roots: readonly string[]): Record<string, unknown> {
  return {
    roots: [...roots].sort(),
    maxRedirect: options.maxRedirect,
    exclude: options.exclude?.source ?? null,
    include: options.include?.source ?? null,
    noParent: options.noParent,
    maxDepth: options.maxDepth === Infinity ? null : options.maxDepth,
    strict: options.strict,
    allowedDomains: options.allowedDomains,
    skipNonHtml: options.skipNonHtml,
    maxBodyBytes: options.maxBodyBytes,
    userAgent: options.userAgent,
    robots: options.robots,
    maxPerHost: options.maxPerHost === Infinity ? null : options.maxPerHost,
    delayMs: options.delayMs,
    delayJitter: options.delayJitter,
    maxCrawlDelayMs: options.maxCrawlDelayMs,
    linkAttributes: [...options.linkAttributes], // Which links a page has: every process must read the same.
  };
}

/**
 * The first field (but those `ignored`) in which two crawls differ, in words
 * (`maxPerHost 2, and this process has 4`), or null when they are the same.
 * A field the stored identity lacks was not recorded by the version that
 * started the crawl, and is not compared.
 */
function differenceOf(stored: Record<string, unknown>, mine: Record<string, unknown>, ignored: readonly string[] = []): string | null {
  for (const field of new Set([...Object.keys(stored), ...Object.keys(mine)])) {
    if (ignored.includes(field) || !(field in stored)) continue;
    if (JSON.stringify(stored[field] ?? null) === JSON.stringify(mine[field] ?? null)) continue;
    if (field === "records") return `records kept ${shownRecords(stored[field])}, and this process keeps them ${shownRecords(mine[field])}`;
    return `${field} ${shown(field, stored[field])}, and this process has ${shown(field, mine[field])}`;
  }
  return null;
}

/**
 * A field of a crawl's identity as the command's help says it: a limit not
 * set as `no limit`, a regex or `allowedDomains` not given as `none`, a regex as `/SOURCE/` (its
 * source once, not escaped again as a JSON string); JSON for the rest (the
 * roots, a user agent, numbers).
 */
function shown(field: string, value: unknown): string {
  const regex = field === "exclude" || field === "include";
  if (value === null || value === undefined) return regex || field === "allowedDomains" ? "none" : "no limit";
  if (regex && typeof value === "string") return `/${value}/`;
  return JSON.stringify(value);
}

/** Where a crawl's records are kept, in words: the frontier's `records`. */
function shownRecords(records: unknown): string {
  return records === false ? "in each process's --jsonl only (--no-redis-records)" : "in Redis";
}

/**
 * Checks a frontier's options and fills in the defaults.
 *
 * @throws TypeError naming the option: a URL that is not `redis://` or
 * `rediss://` with a host (and a database number, if any), an empty name,
 * one with a brace, a space or a control character, or one over 200 characters, a lease or timeout that is not a positive number of ms.
 */
export function resolveFrontierOptions(options: RedisFrontierOptions): Required<RedisFrontierOptions> {
  const { url, name, leaseMs = 30_000, connectTimeoutMs = 5_000, tls = {}, records = true, overridePoliteness = false, journal = null, onWarning = null, warnAfterMs = 5_000 } = options;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`url: ${JSON.stringify(redact(url))} is not a URL; expected redis://HOST:PORT/DB`);
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw new TypeError(`url: ${JSON.stringify(redact(url))} is not a redis:// or rediss:// URL`);
  if (parsed.hostname === "") throw new TypeError(`url: ${JSON.stringify(redact(url))} has no host; expected redis://HOST:PORT/DB`);
  if (!/^(\/\d*)?$/.test(parsed.pathname)) throw new TypeError(`url: ${JSON.stringify(redact(url))}: the path must be a database number, as in redis://HOST:PORT/0`);
  if (typeof name !== "string" || name === "" || /[{}\s]/.test(name)) throw new TypeError(`name: ${JSON.stringify(shortened(String(name)))} must be a non-empty name without braces or spaces`);
  if ([...name].some((char) => { const code = char.codePointAt(0) ?? 0; return code < 0x20 || (code >= 0x7f && code <= 0x9f); })) throw new TypeError(`name: ${JSON.stringify(shortened(name))} has control characters; a crawl's name is printed and typed again`);
  if (name.length > MAX_NAME_LENGTH) throw new TypeError(`name: ${JSON.stringify(shortened(name))} is ${name.length} characters long; a crawl's name has at most ${MAX_NAME_LENGTH} characters`);
  if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs < 100 || leaseMs > MAX_TIMER_MS) {
    throw new TypeError(`leaseMs: ${String(leaseMs)} must be a number of milliseconds from 100 to ${MAX_TIMER_MS}`);
  }
  if (typeof connectTimeoutMs !== "number" || !Number.isFinite(connectTimeoutMs) || connectTimeoutMs <= 0) throw new TypeError(`connectTimeoutMs: ${String(connectTimeoutMs)} must be a positive number of milliseconds`);
  const tlsGiven = Object.values(tls).some((file) => file !== undefined);
  if (tlsGiven && parsed.protocol !== "rediss:") throw new TypeError(`tls: the certificate files are for a rediss:// URL, and ${JSON.stringify(redact(url))} is not one`);
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) throw new TypeError("tls: a client certificate and its key come together: give both certFile and keyFile, or neither");
  if (typeof records !== "boolean") throw new TypeError(`records: ${String(records)} must be true or false`);
  if (typeof overridePoliteness !== "boolean") throw new TypeError(`overridePoliteness: ${String(overridePoliteness)} must be true or false`);
  if (journal !== null && typeof journal !== "function") throw new TypeError(`journal: ${String(journal)} must be a function that writes a record, or null`);
  if (onWarning !== null && typeof onWarning !== "function") throw new TypeError(`onWarning: ${String(onWarning)} must be a function that takes a line, or null`);
  if (typeof warnAfterMs !== "number" || !Number.isFinite(warnAfterMs) || warnAfterMs < 100 || warnAfterMs > MAX_TIMER_MS) throw new TypeError(`warnAfterMs: ${String(warnAfterMs)} must be a number of milliseconds from 100 to ${MAX_TIMER_MS}`);
  return { url, name, leaseMs, connectTimeoutMs, tls, records, overridePoliteness, journal, onWarning, warnAfterMs };
}

/** Whether Redis keeps its data on disk: an append-only file, or snapshots (`save`); null when CONFIG is refused (an ACL, a managed Redis). */
async function persistence(command: (args: string[]) => Promise<unknown>): Promise<boolean | null> {
  try {
    const setting = async (name: string): Promise<string> => {
      // A map in the client's default reply types, a [name, value] list in others.
      const reply = (await command(["CONFIG", "GET", name])) as Record<string, string> | string[];
      return (Array.isArray(reply) ? reply[1] : reply[name]) ?? "";
    };
    return (await setting("appendonly")) === "yes" || (await setting("save")) !== "";
  } catch {
    return null;
  }
}

/**
 * The most links one script queues: a page's links beyond it are queued in
 * steps of this many before its FINISH. One FINISH of 5,000 links held Redis
 * 174 ms; 250 hold it a few ms.
 */
const FINISH_CHUNK = 250;

/**
 * The most URLs a process keeps in its cache of URLs Redis has seen (a
 * million URLs: some 100 MB at most, about what a crawl in memory of that
 * size holds in its own seen set).
 */
const KNOWN_SEEN_MOST = 1_000_000;

/** About how many records (or seen URLs) one HSCAN (SSCAN) reads when they are streamed out at the end of a crawl. */
const STREAM_CHUNK = 200;

/** The longest crawl name: it is in every key and every message. */
const MAX_NAME_LENGTH = 200;

/** A name cut to its first 40 characters, for a message about it. */
function shortened(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name;
}

/** The longest delay Node's timers take (2^31 - 1 ms); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The URL without its password, for messages: `redis://:***@host:6379/0`; a
 * user name without a password is masked too (`redis://***@host`), as it is
 * most often a password given without its colon; in what is not a URL,
 * whatever stands before an `@`.
 */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    else if (parsed.username !== "") parsed.username = "***";
    return parsed.href;
  } catch {
    return url.replace(/^([^@]*?\/\/)?[^@/]*@/, (_match, scheme: string | undefined) => `${scheme ?? ""}***@`);
  }
}

/**
 * The socket's TLS options for a `rediss://` URL: the PEM files read.
 *
 * @throws FrontierError (a rejection) naming a file that cannot be read.
 */
async function tlsOptions(options: Required<RedisFrontierOptions>): Promise<{ tls: true; ca?: Buffer; cert?: Buffer; key?: Buffer } | Record<string, never>> {
  if (!options.url.startsWith("rediss:")) return {};
  const read = async (what: string, file: string | undefined): Promise<Buffer | undefined> => {
    if (file === undefined) return undefined;
    try {
      return await readFile(file);
    } catch (error) {
      throw new FrontierError(`cannot use Redis at ${redact(options.url)}: cannot read the ${what} ${JSON.stringify(file)}: ${reason(error)}`, { cause: error });
    }
  };
  const [ca, cert, key] = [await read("CA file", options.tls.caFile), await read("client certificate", options.tls.certFile), await read("client key", options.tls.keyFile)];
  return { tls: true, ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) };
}

/** The Redis client's module, once loaded by {@link redisClient}. */
let clientModule: typeof import("@redis/client") | null = null;

/**
 * Loads the Redis client, `@redis/client`, an optional peer dependency: only
 * a crawl with a Redis frontier needs it, so a plain install goes without.
 *
 * @throws FrontierError (a rejection) saying what to install when it is missing.
 */
async function redisClient(): Promise<typeof import("@redis/client")> {
  if (clientModule !== null) return clientModule;
  try {
    clientModule = await import("@redis/client");
    return clientModule;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new FrontierError("the Redis client is not installed; a crawl with --frontier needs it: npm install @redis/client@6", { cause: error });
  }
}

/**
 * What a Redis error reply means for the crawl, and what to do, by its code;
 * null for an error that is not a reply (a connection lost, refused).
 */
function explainReply(error: unknown, name: string, cluster = false): string | null {
  if (clientModule === null || !(error instanceof clientModule.ErrorReply)) return null;
  const code = /^[A-Z]+/.exec(error.message)?.[0] ?? "";
  const keys = `coroutine-crawler:{${name}}:*`;
  const acl = cluster
    ? `the user needs, on every node of the Cluster, the keys ~${keys} and ~coroutine-crawler:{${name}:b*}:*, the channels &coroutine-crawler:{${name}:b*}:events, and the commands the crawl and its scripts run (Redis checks a script's too), as in ACL SETUSER USER on >PASSWORD ${aclRule(name, true)}`
    : `the user needs the keys ~${keys}, the channel &coroutine-crawler:{${name}}:events, and the commands the crawl and its scripts run (Redis checks a script's too), as in ACL SETUSER USER on >PASSWORD ${aclRule(name)}`;
  // A command a script runs, refused by the ACL: Redis 7 says ERR, not NOPERM.
  if (code === "ERR" && /can't run this command/.test(error.message)) return `its ACL does not let this user run a command of the crawl's scripts (ERR … can't run this command): ${acl}`;
  switch (code) {
    case "OOM":
      return `it is out of memory (OOM: maxmemory reached): raise its maxmemory, or free room (delete the keys ${keys} of crawls you no longer need)`;
    case "NOPERM":
      return `its ACL does not let this user do that (NOPERM): ${acl}`;
    case "READONLY":
      return "it is a read-only replica (READONLY): give --frontier the URL of its primary";
    case "WRONGTYPE":
      return `a key of this crawl holds another kind of value (WRONGTYPE): something else uses the keys ${keys}, or an older version of this crawler made them; choose another --crawl-name or database`;
    case "NOAUTH":
      return "it asks for a password (NOAUTH): give it in the URL after a colon, redis://:PASSWORD@HOST:PORT/0 (redis://PASSWORD@HOST is a user name without a password)";
    case "WRONGPASS":
      return "it refused the user name or password (WRONGPASS)";
    default:
      return `it answered ${JSON.stringify(error.message)}`;
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
