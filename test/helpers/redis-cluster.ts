/**
 * A real Redis Cluster for the Redis frontier's cluster tests: three primaries
 * (and, if asked, one replica each) of Debian's `redis-server`, each started
 * by {@link startRedis} on a free loopback port with its own temp directory,
 * with `--cluster-enabled yes`, its cluster bus on a second free port
 * (`--cluster-port`), and the 16,384 slots assigned by hand (CLUSTER
 * ADDSLOTSRANGE, MEET, REPLICATE), so nothing leans on `redis-cli`.
 *
 * Lifecycle of a {@link RedisCluster}: {@link startRedisCluster} →
 * (`failover()` | `reshard()`)* → `remove()`, which ends every process and
 * deletes every directory.
 */
import { createClient } from "@redis/client";
import { freeLoopbackPort, type RedisServer, startRedis } from "./redis-server.js";
import { within } from "./within.js";

/** How long the cluster may take to agree on its state (`cluster_state:ok`, a failover, a slot's owner): generous, CI machines are shared. */
const SETTLE_TIMEOUT_MS = 20_000;

/** The number of hash slots of a Redis Cluster. */
export const SLOTS = 16_384;

/** Options for {@link startRedisCluster}. */
export interface StartRedisClusterOptions {
  /** The number of primaries, each with an equal range of slots. Default 3. */
  primaries?: number;
  /** Whether each primary gets one replica (for failover tests). Default false. */
  replicas?: boolean;
  /** More arguments for every redis-server. Default none. */
  args?: readonly string[];
}

/** One node of a {@link RedisCluster}: its server, and its id in the cluster. */
export interface ClusterNode {
  readonly server: RedisServer;
  /** The node's 40-character id (CLUSTER MYID). */
  readonly id: string;
  /** `redis://127.0.0.1:PORT/0`. */
  readonly url: string;
}

type Client = ReturnType<typeof createClient>;

/**
 * Runs one command on one node (or any Redis), on a connection of its own,
 * closed after; with `readOnly`, after `READONLY`, so that a replica answers
 * a read of its own copy instead of redirecting it to its primary.
 */
export async function command(url: string, args: string[], { readOnly = false }: { readOnly?: boolean } = {}): Promise<unknown> {
  const client: Client = createClient({ url, socket: { reconnectStrategy: false } });
  client.on("error", function ignoreClosedConnection() {});
  await client.connect();
  try {
    if (readOnly) await client.sendCommand(["READONLY"]);
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}

/** How long one look of {@link until} may wait for a node's answer before it counts as "not yet". */
const LOOK_TIMEOUT_MS = 5_000;

/**
 * Waits until `check` returns true, looking every 50 ms; throws naming `what`
 * after {@link SETTLE_TIMEOUT_MS}. A look that has no answer within
 * {@link LOOK_TIMEOUT_MS} (a node that accepted the connection and says
 * nothing) counts as false, so the deadline holds whatever the nodes do.
 */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    if (await within(LOOK_TIMEOUT_MS, check(), what).catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: ${what} not reached within ${SETTLE_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The slot of a key, as Redis Cluster computes it: CRC16 (XMODEM) of the key,
 * or of its hash tag (the text between the first `{` and the next `}`, when
 * not empty), mod 16,384.
 */
export function keySlot(key: string): number {
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key, "utf8")) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % SLOTS;
}

/** A local Redis Cluster; made by {@link startRedisCluster}. */
export class RedisCluster {
  constructor(
    /** The primaries, in slot order (the first holds slots from 0), at start. */
    readonly primaries: ClusterNode[],
    /** Each primary's replica, by the primary's index; empty without replicas. */
    readonly replicas: ClusterNode[],
  ) {}

  /** Every node's URL, primaries first. */
  get urls(): string[] {
    return [...this.primaries, ...this.replicas].map((node) => node.url);
  }

  /** The node serving `slot` now, as the first live primary answering CLUSTER SHARDS sees it. */
  async ownerOf(slot: number): Promise<ClusterNode> {
    const nodes = [...this.primaries, ...this.replicas];
    for (const node of nodes) {
      if (node.server.pid === undefined) continue;
      const reply = (await command(node.url, ["CLUSTER", "SLOTS"]).catch(() => null)) as Array<[number, number, [string, number, string]]> | null;
      if (reply === null) continue;
      const range = reply.find(([from, to]) => from <= slot && slot <= to);
      if (range === undefined) continue;
      const owner = nodes.find((candidate) => candidate.id === range[2][2]);
      if (owner !== undefined) return owner;
    }
    throw new Error(`redis cluster: no node serves slot ${slot}`);
  }

  /**
   * Makes every node, and so every client, know `node` at `port` instead of
   * its own (CONFIG SET cluster-announce-port on it, which its pings carry
   * to the others): the port of a proxy in front of it
   * (test/helpers/redis-proxy.ts), or its own again. Resolves once every
   * live node's CLUSTER SLOTS says so.
   */
  async announce(node: ClusterNode, port: number): Promise<void> {
    await command(node.url, ["CONFIG", "SET", "cluster-announce-port", String(port)]);
    for (const other of [...this.primaries, ...this.replicas]) {
      if (other.server.pid === undefined) continue;
      await until(`${other.url} to know ${node.url} at port ${port}`, async () => {
        const reply = (await command(other.url, ["CLUSTER", "SLOTS"])) as Array<Array<number | [string, number, string]>>;
        return reply.some((range) => range.slice(2).some((entry) => Array.isArray(entry) && entry[2] === node.id && Number(entry[1]) === port));
      });
    }
  }

  /** Resolves once every live node says `cluster_state:ok`. */
  async settled(): Promise<void> {
    for (const node of [...this.primaries, ...this.replicas]) {
      if (node.server.pid === undefined) continue;
      await until(`cluster_state:ok on ${node.url}`, async () => String(await command(node.url, ["CLUSTER", "INFO"])).includes("cluster_state:ok"));
    }
  }

  /**
   * Makes `primary`'s replica its primary (CLUSTER FAILOVER on the replica, a
   * failover both agree on: no write acknowledged by the old primary is lost)
   * and waits until the replica says it is a primary and the cluster is ok.
   * With `kill`, the primary is killed first (SIGKILL) and the replica takes
   * over by the cluster's own vote, after `cluster-node-timeout`.
   *
   * @returns the new primary.
   * @throws Error when the cluster was started without replicas.
   */
  async failover(primary: ClusterNode, options: { kill?: boolean } = {}): Promise<ClusterNode> {
    const index = this.primaries.indexOf(primary);
    const replica = this.replicas[index];
    if (index < 0 || replica === undefined) throw new Error("redis cluster: failover() needs a primary with a replica (startRedisCluster({ replicas: true }))");
    if (options.kill === true) await primary.server.kill();
    else await command(replica.url, ["CLUSTER", "FAILOVER"]);
    await until(`${replica.url} a primary`, async () => String(await command(replica.url, ["ROLE"]).then((role) => (role as unknown[])[0])) === "master");
    this.primaries[index] = replica;
    this.replicas[index] = primary;
    const live = this.primaries.filter((node) => node.server.pid !== undefined);
    for (const node of live) await until(`${node.url} to see ${replica.url} as a primary`, async () => String(await command(node.url, ["CLUSTER", "NODES"])).split("\n").some((line) => line.startsWith(replica.id) && line.includes("master") && !line.includes("fail")));
    await this.settled();
    return replica;
  }

  /**
   * Moves `slots` to the primary `to`, keys and all, as `redis-cli --cluster
   * reshard` does: for each slot, SETSLOT IMPORTING on the target and
   * MIGRATING on the source, MIGRATE of its keys a hundred at a time, then
   * SETSLOT NODE on both (and the other primaries). Clients meanwhile get
   * `ASK` for keys moved already and `TRYAGAIN` for commands on several
   * keys split between the two.
   */
  async reshard(slots: readonly number[], to: ClusterNode): Promise<void> {
    for (const slot of slots) {
      const from = await this.ownerOf(slot);
      if (from.id === to.id) continue;
      const [host, port] = ["127.0.0.1", String(to.server.port)];
      await command(to.url, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", from.id]);
      await command(from.url, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", to.id]);
      for (;;) {
        const keys = (await command(from.url, ["CLUSTER", "GETKEYSINSLOT", String(slot), "100"])) as string[];
        if (keys.length === 0) break;
        await command(from.url, ["MIGRATE", host, port, "", "0", "5000", "KEYS", ...keys]);
      }
      for (const node of [to, from, ...this.primaries.filter((primary) => primary !== to && primary !== from)]) {
        await command(node.url, ["CLUSTER", "SETSLOT", String(slot), "NODE", to.id]);
      }
    }
    for (const node of this.primaries) {
      await until(`${node.url} to see slots ${slots.join(",")} on ${to.url}`, async () => {
        const reply = (await command(node.url, ["CLUSTER", "SLOTS"])) as Array<[number, number, [string, number, string]]>;
        return slots.every((slot) => reply.some(([a, b, owner]) => a <= slot && slot <= b && owner[2] === to.id));
      });
    }
  }

  /** Ends every node and deletes its directory; leaves no process. Idempotent. */
  async remove(): Promise<void> {
    await Promise.all([...this.primaries, ...this.replicas].map((node) => node.server.remove()));
  }
}

/**
 * Starts a Redis Cluster on loopback: `primaries` nodes (default 3) with the
 * slots split evenly, and with `replicas` one replica each; resolves once
 * every node says `cluster_state:ok` (and each replica has synced). The
 * caller owns it: `await cluster.remove()` when done.
 *
 * @throws Error if a node does not start or the cluster does not settle within 20 s (after removing what it started).
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisCluster> {
  const count = options.primaries ?? 3;
  const servers: RedisServer[] = [];
  try {
    const start = async (): Promise<ClusterNode> => {
      // The cluster bus's own port: by default it is PORT + 10000, which may be taken or past 65535.
      const args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", String(await freeLoopbackPort()), "--cluster-node-timeout", "1000", ...(options.args ?? [])];
      const server = await startRedis({ args });
      servers.push(server);
      const url = server.url.replace(/\/0$/, "");
      return { server, id: String(await command(url, ["CLUSTER", "MYID"])), url };
    };
    const primaries: ClusterNode[] = [];
    for (let i = 0; i < count; i += 1) primaries.push(await start());
    const replicas: ClusterNode[] = [];
    if (options.replicas === true) for (let i = 0; i < count; i += 1) replicas.push(await start());
    const [first] = primaries;
    if (first === undefined) throw new Error("redis cluster: at least one primary");
    for (const [i, node] of primaries.entries()) {
      const from = Math.floor((i * SLOTS) / count);
      const to = Math.floor(((i + 1) * SLOTS) / count) - 1;
      await command(node.url, ["CLUSTER", "ADDSLOTSRANGE", String(from), String(to)]);
    }
    for (const node of [...primaries.slice(1), ...replicas]) await command(node.url, ["CLUSTER", "MEET", "127.0.0.1", String(first.server.port), String(busPort(first))]);
    const cluster = new RedisCluster(primaries, replicas);
    for (const node of [...primaries, ...replicas]) {
      await until(`${node.url} to know every node`, async () => String(await command(node.url, ["CLUSTER", "NODES"])).trim().split("\n").length === primaries.length + replicas.length);
    }
    for (const [i, replica] of replicas.entries()) await command(replica.url, ["CLUSTER", "REPLICATE", primaries[i]?.id ?? ""]);
    await cluster.settled();
    for (const replica of replicas) await until(`${replica.url} to sync`, async () => String(await command(replica.url, ["INFO", "replication"])).includes("master_link_status:up"));
    return cluster;
  } catch (error) {
    await Promise.all(servers.map((server) => server.remove()));
    throw error;
  }
}

/** The cluster bus port a node was started with (`--cluster-port`). */
function busPort(node: ClusterNode): number {
  const args = node.server.args;
  return Number(args[args.indexOf("--cluster-port") + 1]);
}
