/**
 * IdleConnections: the connections stages 1 and 2 keep between two requests
 * to one origin, against a real TCP server on 127.0.0.1.
 */
import { once } from "node:events";
import net, { type AddressInfo, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { IdleConnections, KEEP_ALIVE_MARGIN_MS, KEEP_IDLE_MS } from "../../src/http/idle-connections.js";

let server: Server;
/** The server's side of every connection, in order of arrival. */
let accepted: Socket[] = [];
const opened: Socket[] = [];

async function startServer(): Promise<string> {
  accepted = [];
  server = net.createServer(function accept(socket) {
    accepted.push(socket);
    socket.on("error", function ignore() {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A connected client socket, paused as the stages' sockets are. */
async function connection(origin: string): Promise<Socket> {
  const url = new URL(origin);
  const socket = net.connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
  socket.on("error", function ignore() {});
  opened.push(socket);
  await once(socket, "connect");
  return socket;
}

/** Resolves a loop iteration later (two check phases): when IdleConnections has watched what it kept before. */
async function turnEnded(): Promise<void> {
  for (let phase = 0; phase < 2; phase += 1) await new Promise(function later(resolve) { setImmediate(resolve); });
}

/** Resolves once `socket` has closed. */
async function closed(socket: Socket): Promise<void> {
  if (!socket.closed) await once(socket, "close");
}

afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  for (const socket of accepted) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("IdleConnections", () => {
  it("hands a kept connection to the next request to its origin, and none to another", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const socket = await connection(origin);
    connections.keep(origin, socket);
    expect(connections.size).toBe(1);
    expect(connections.take("http://127.0.0.1:1")).toBeNull();
    expect(connections.take(origin)).toBe(socket);
    expect(connections.take(origin)).toBeNull();
    expect(connections.size).toBe(0);
    expect(socket.destroyed).toBe(false);
  });

  it("hands out the connection that waited least first", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const first = await connection(origin);
    const second = await connection(origin);
    connections.keep(origin, first);
    connections.keep(origin, second);
    expect([connections.take(origin), connections.take(origin)]).toEqual([second, first]);
  });

  it("closes and forgets a kept connection the server closes while it waits", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const socket = await connection(origin);
    connections.keep(origin, socket);
    accepted[0].end();
    await closed(socket);
    expect(connections.size).toBe(0);
    expect(connections.take(origin)).toBeNull();
  });

  it("hands out no connection its watch has closed, though its close event has not come yet", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const socket = await connection(origin);
    connections.keep(origin, socket);
    const seen: Array<[Socket | null, boolean, number]> = [];
    let closeEvents = 0;
    socket.once("close", function counted() { closeEvents += 1; });
    // Added after keep(): runs right after the watch's own listener has destroyed the socket for its end.
    socket.once("readable", function askAtOnce() {
      seen.push([connections.take(origin), socket.destroyed, closeEvents]);
    });
    accepted[0].end();
    await closed(socket);
    expect(seen).toEqual([[null, true, 0]]); // Destroyed, not closed yet: its close event comes a phase of Node's loop later.
    expect(connections.size).toBe(0);
  });

  it("closes a kept connection that receives bytes nobody asked for", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const socket = await connection(origin);
    connections.keep(origin, socket);
    accepted[0].write("HTTP/1.1 200 OK\r\n");
    await closed(socket);
    expect(connections.size).toBe(0);
  });

  it("does not keep a connection whose end has already arrived, though nobody has read past it", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const socket = await connection(origin);
    accepted[0].end("hi");
    // No listener reads the socket: the bytes and the end wait in its buffer, as a stage's do between two reads.
    while (socket.readableLength < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(socket.read(2)?.toString()).toBe("hi"); // The last bytes of a response, read as the stages read them.
    expect(socket.readableEnded).toBe(false); // Node says so only a tick later.
    connections.keep(origin, socket);
    expect(socket.destroyed).toBe(true);
    expect(connections.size).toBe(0);
  });

  it("gives up a connection it handed out that has turned spent since, and no connection it did not hand out", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const kept = await connection(origin);
    const fresh = await connection(origin);
    connections.keep(origin, kept);
    expect(connections.take(origin)).toBe(kept);
    expect(connections.spentSinceTaken(kept)).toBe(false); // Still good: the request may go out on it.
    for (const socket of accepted) socket.end(); // Each server side closes, as a server does right after its response.
    while (kept.readableLength + fresh.readableLength > 0 || !kept.readableEnded || !fresh.readableEnded) {
      kept.read();
      fresh.read();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(connections.spentSinceTaken(fresh)).toBe(false); // Not taken here: its attempt reports its own failure.
    expect(fresh.destroyed).toBe(false);
    expect(connections.spentSinceTaken(kept)).toBe(true);
    expect(kept.destroyed).toBe(true);
  });

  it("closes a kept connection that waits longer than keepIdleMs, and puts its own timeout back when taken", async () => {
    const origin = await startServer();
    const connections = new IdleConnections(50); // KEEP_IDLE_MS in a crawl
    const waited = await connection(origin);
    connections.keep(origin, waited);
    await closed(waited);
    expect([connections.size, connections.take(origin)]).toEqual([0, null]);
    const taken = await connection(origin);
    taken.setTimeout(30_000);
    connections.keep(origin, taken);
    await turnEnded();
    expect(taken.timeout).toBe(50);
    expect(connections.take(origin)).toBe(taken);
    expect(taken.timeout).toBe(30_000);
    expect(KEEP_IDLE_MS).toBe(4_000); // undici's keepAliveTimeout, which stage 3 uses
  });

  it("watches a kept connection a loop iteration after it was kept, and never one taken again before", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const [again, waits] = [await connection(origin), await connection(origin)];
    const listeners = (socket: Socket) => ["readable", "end", "timeout", "close"].map((event) => socket.listenerCount(event));
    const before = listeners(again);
    connections.keep(origin, waits);
    connections.keep(origin, again);
    expect(connections.take(origin)).toBe(again); // The next request, in the same turn.
    expect([listeners(waits), waits.timeout]).toEqual([before, undefined]);
    await turnEnded();
    expect([listeners(again), again.timeout]).toEqual([before, undefined]);
    expect([listeners(waits), waits.timeout]).toEqual([before.map((count) => count + 1), 4_000]);
    expect(connections.take(origin)).toBe(waits);
    expect([listeners(waits), waits.timeout]).toEqual([before, 0]);
  });

  it("waits no longer than the server's Keep-Alive timeout less undici's 2 s margin, and never longer than keepIdleMs", async () => {
    const origin = await startServer();
    const connections = new IdleConnections(); // keepIdleMs: 4 s
    const [short, long, none] = [await connection(origin), await connection(origin), await connection(origin)];
    connections.keep(origin, short, "timeout=5"); // Node's servers say so
    connections.keep(origin, long, "timeout=75, max=100"); // nginx waits 75 s
    connections.keep(origin, none, "max=100");
    await turnEnded();
    expect([short.timeout, long.timeout, none.timeout]).toEqual([3_000, 4_000, 4_000]);
    expect(KEEP_ALIVE_MARGIN_MS).toBe(2_000); // undici's keepAliveTimeoutThreshold
  });

  it("does not keep a connection whose server's Keep-Alive timeout leaves no time after the margin", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const [one, two] = [await connection(origin), await connection(origin)];
    connections.keep(origin, one, "timeout=1");
    connections.keep(origin, two, "timeout=2");
    expect([one.destroyed, two.destroyed, connections.size, connections.origins]).toEqual([true, true, 0, 0]);
  });

  it("forgets an origin once its last waiting connection is taken or closes", async () => {
    const origin = await startServer();
    const other = "http://localhost:1"; // Another origin: only its name matters to IdleConnections.
    const connections = new IdleConnections();
    const [first, second, elsewhere] = [await connection(origin), await connection(origin), await connection(origin)];
    connections.keep(origin, first);
    connections.keep(origin, second);
    connections.keep(other, elsewhere);
    expect(connections.origins).toBe(2);
    connections.take(origin);
    expect(connections.origins).toBe(2); // One is still waiting there.
    connections.take(origin);
    expect(connections.origins).toBe(1);
    accepted[2].end(); // The server closes the one waiting for the other origin.
    await closed(elsewhere);
    expect([connections.origins, connections.size]).toEqual([0, 0]);
  });

  it("closes every kept connection when closed, and any kept later at once", async () => {
    const origin = await startServer();
    const connections = new IdleConnections();
    const [first, second, later] = [await connection(origin), await connection(origin), await connection(origin)];
    connections.keep(origin, first);
    connections.keep(origin, second);
    connections.close();
    expect([first.destroyed, second.destroyed, connections.size]).toEqual([true, true, 0]);
    connections.keep(origin, later);
    expect(later.destroyed).toBe(true);
  });
});
