/**
 * The test harness's Redis Cluster (test/helpers/redis-cluster.ts), checked
 * against real redis-servers: the slots are all served, a key is answered by
 * the node its slot names (else MOVED), a reshard moves a slot's keys, a
 * failover makes the replica the primary with the keys, and remove() leaves
 * no process.
 */
import { createClient, createCluster } from "@redis/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { keySlot, type RedisCluster, startRedisCluster } from "./redis-cluster.js";
import { describeWithRedis } from "./redis-server.js";

/** Whether a process with this id exists (signal 0 checks without sending anything). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describeWithRedis("RedisCluster", () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ replicas: true });
  }, 60_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it("computes a key's slot as Redis does, hash tag and all", async () => {
    const client = createClient({ url: cluster.primaries[0]?.url ?? "" });
    await client.connect();
    try {
      for (const key of ["a", "coroutine-crawler:{crawl}:seen", "{x:b3}:q", "{}", "é{"]) expect(keySlot(key)).toBe(Number(await client.sendCommand(["CLUSTER", "KEYSLOT", key])));
    } finally {
      client.destroy();
    }
  });

  it("serves every slot from three primaries, and sends a key elsewhere with MOVED", async () => {
    expect(cluster.primaries).toHaveLength(3);
    const owner = await cluster.ownerOf(keySlot("k"));
    const other = cluster.primaries.find((node) => node.id !== owner.id);
    const client = createClient({ url: other?.url ?? "" });
    await client.connect();
    try {
      await expect(client.sendCommand(["GET", "k"])).rejects.toThrow(/^MOVED/);
    } finally {
      client.destroy();
    }
  });

  it("moves a slot with its keys to another primary", async () => {
    const cli = createCluster({ rootNodes: [{ url: cluster.primaries[0]?.url ?? "" }] });
    await cli.connect();
    try {
      await cli.set("{moved}:a", "1");
      await cli.set("{moved}:b", "2");
      const slot = keySlot("{moved}");
      const before = await cluster.ownerOf(slot);
      const to = cluster.primaries.find((node) => node.id !== before.id);
      if (to === undefined) throw new Error("no other primary");
      await cluster.reshard([slot], to);
      expect((await cluster.ownerOf(slot)).id).toBe(to.id);
      const direct = createClient({ url: to.url });
      await direct.connect();
      expect(await direct.sendCommand(["MGET", "{moved}:a", "{moved}:b"])).toEqual(["1", "2"]);
      direct.destroy();
      expect(await cli.get("{moved}:b")).toBe("2"); // The cluster client follows the MOVED.
    } finally {
      cli.destroy();
    }
  }, 60_000);

  it("makes a replica the primary of its slots in a failover, with their keys", async () => {
    const cli = createCluster({ rootNodes: [{ url: cluster.primaries[0]?.url ?? "" }] });
    await cli.connect();
    try {
      await cli.set("{failed}:a", "1");
      const old = await cluster.ownerOf(keySlot("{failed}"));
      await cli.sendCommand("{failed}:a", false, ["WAIT", "1", "5000"]);
      const promoted = await cluster.failover(old);
      expect(promoted.id).not.toBe(old.id);
      expect((await cluster.ownerOf(keySlot("{failed}"))).id).toBe(promoted.id);
      const direct = createClient({ url: promoted.url });
      await direct.connect();
      expect(await direct.get("{failed}:a")).toBe("1");
      direct.destroy();
    } finally {
      cli.destroy();
    }
  }, 60_000);

  it("leaves no process after remove()", async () => {
    const small = await startRedisCluster({ primaries: 3 });
    const pids = small.primaries.map((node) => node.server.pid ?? 0);
    expect(pids.every(processExists)).toBe(true);
    await small.remove();
    expect(pids.filter(processExists)).toEqual([]);
  }, 60_000);
});
