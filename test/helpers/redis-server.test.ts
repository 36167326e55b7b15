/**
 * The test harness's redis-server (test/helpers/redis-server.ts), checked
 * against the real server with node-redis: it answers, append-only data
 * survives a crash and a restart on the same port, and remove() leaves nothing
 * behind.
 */
import { existsSync } from "node:fs";
import { createClient } from "@redis/client";
import { afterEach, expect, it } from "vitest";
import { describeWithRedis, type RedisServer, startRedis } from "./redis-server.js";

/** Connects to `url` without retrying, so a server that is not there fails the test at once. */
async function connectTo(url: string) {
  return createClient({ url, socket: { reconnectStrategy: false } }).connect();
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describeWithRedis("RedisServer", () => {
  const servers: RedisServer[] = [];
  async function started(options?: { appendOnly?: boolean }): Promise<RedisServer> {
    const server = await startRedis(options);
    servers.push(server);
    return server;
  }
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.remove()));
  });

  it("starts a server on a loopback port that answers PING", async () => {
    const server = await started();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}/0`);
    const client = await connectTo(server.url);
    try {
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.destroy();
    }
  });

  it("gives each server its own port and directory", async () => {
    const [first, second] = await Promise.all([started(), started()]);
    expect(first?.port).not.toBe(second?.port);
    expect(first?.dir).not.toBe(second?.dir);
  });

  it("keeps append-only data across kill() and restart() on the same port", async () => {
    const server = await started({ appendOnly: true });
    const { port } = server;
    const writer = await connectTo(server.url);
    await writer.set("frontier:seen", "http://127.0.0.1/a");
    writer.destroy();
    const killedPid = server.pid;

    await server.kill();
    expect(killedPid !== undefined && processExists(killedPid)).toBe(false);
    await server.restart();

    expect(server.port).toBe(port);
    expect(server.pid).not.toBe(killedPid);
    const reader = await connectTo(server.url);
    try {
      expect(await reader.get("frontier:seen")).toBe("http://127.0.0.1/a");
    } finally {
      reader.destroy();
    }
  });

  it("loses its data across kill() and restart() without appendOnly", async () => {
    const server = await started();
    const writer = await connectTo(server.url);
    await writer.set("frontier:seen", "http://127.0.0.1/a");
    writer.destroy();

    await server.kill();
    await server.restart();

    const reader = await connectTo(server.url);
    try {
      expect(await reader.get("frontier:seen")).toBeNull();
    } finally {
      reader.destroy();
    }
  });

  it("keeps append-only data across stop() and restart()", async () => {
    const server = await started({ appendOnly: true });
    const writer = await connectTo(server.url);
    await writer.rPush("frontier:todo", ["http://127.0.0.1/a", "http://127.0.0.1/b"]);
    writer.destroy();

    await server.stop();
    expect(existsSync(server.dir)).toBe(true);
    await server.restart();

    const reader = await connectTo(server.url);
    try {
      expect(await reader.lRange("frontier:todo", 0, -1)).toEqual(["http://127.0.0.1/a", "http://127.0.0.1/b"]);
    } finally {
      reader.destroy();
    }
  });

  it("leaves no directory and no process behind after remove()", async () => {
    const server = await started({ appendOnly: true });
    const pid = server.pid;
    expect(pid !== undefined && processExists(pid)).toBe(true);
    expect(existsSync(server.dir)).toBe(true);

    await server.remove();
    await server.remove(); // idempotent

    expect(processExists(pid ?? -1)).toBe(false);
    expect(existsSync(server.dir)).toBe(false);
    await expect(server.restart()).rejects.toThrow(/was removed/);
  });
});
