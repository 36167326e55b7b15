import net from "node:net";
import type { Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { IdleConnections } from "../../src/http/idle-connections.js";
import { errorName } from "../../src/kernel/errors.js";
import { EventLoop } from "../../src/generators/event-loop.js";
import { Future, type Coroutine } from "../../src/generators/futures.js";
import { connect, read, readAll, request, sendAll } from "../../src/generators/sockets.js";
import { Task } from "../../src/generators/tasks.js";
import { outcome } from "./outcome.js";
import { startKeepAliveServer, type KeepAliveServer } from "../helpers/keep-alive-server.js";

/** A loopback TCP server whose reply to each connection the test decides. */
interface TestServer {
  url: URL;
  received: Buffer[];
  close(): Promise<void>;
}

function startServer(onConnection: (socket: Socket) => void): Promise<TestServer> {
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = net.createServer(function accepted(socket) {
    sockets.add(socket);
    socket.on("data", function collect(data: Buffer) {
      received.push(data);
    });
    socket.on("error", function ignore() {});
    socket.on("close", function forget() {
      sockets.delete(socket);
    });
    onConnection(socket);
  });
  return new Promise(function listening(resolve) {
    server.listen(0, "127.0.0.1", function ready() {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      resolve({
        url: new URL(`http://127.0.0.1:${port}/`),
        received,
        close() {
          for (const socket of sockets) socket.destroy();
          return new Promise(function closed(done) {
            server.close(function serverClosed() {
              done();
            });
          });
        },
      });
    });
  });
}

/** A port nothing listens on: listen, note the port, close. */
async function closedPortUrl(): Promise<URL> {
  const server = await startServer(function never() {});
  const url = server.url;
  await server.close();
  return url;
}

let loop: EventLoop;
beforeEach(() => {
  loop = new EventLoop();
});
afterEach(() => {
  if (!loop.isRunning()) loop.close();
});

describe("connect, sendAll, readAll", () => {
  it("sends a request and reads the whole reply until the peer closes", async () => {
    const reply = Buffer.alloc(10_000, "x");
    const server = await startServer(function answer(socket) {
      socket.once("data", function respond() {
        socket.end(reply);
      });
    });
    function* exchange(): Coroutine<Uint8Array> {
      const socket = yield* connect(server.url);
      try {
        yield* sendAll(socket, Buffer.from("GET / HTTP/1.1\r\n\r\n"));
        return yield* readAll(socket);
      } finally {
        socket.destroy();
      }
    }
    const body = await loop.runUntilComplete(exchange());
    expect(Buffer.from(body).equals(reply)).toBe(true);
    expect(Buffer.concat(server.received).toString()).toBe("GET / HTTP/1.1\r\n\r\n");
    expect(loop.selector.size).toBe(0);
    await server.close();
  });

  it("sends at once on a connected socket, without pausing its Task, as asyncio's sock_sendall does", async () => {
    const server = await startServer(function listen() {});
    const sends: boolean[] = [];
    function* sendTwice(): Coroutine<void> {
      const socket = yield* connect(server.url);
      try {
        for (const line of ["one\n", "two\n"]) {
          const sending = sendAll(socket, Buffer.from(line));
          sends.push(sending.next().done === true); // done in its first step: no Future yielded, no loop iteration
        }
      } finally {
        socket.destroy();
      }
    }
    await loop.runUntilComplete(sendTwice());
    expect(sends).toEqual([true, true]);
    expect(loop.selector.size).toBe(0);
    await server.close();
  });

  it("reads at most 4096 bytes per read", async () => {
    const server = await startServer(function answer(socket) {
      socket.end(Buffer.alloc(10_000, "y"));
    });
    const sizes: number[] = [];
    function* chunks(): Coroutine<void> {
      const socket = yield* connect(server.url);
      try {
        let chunk = yield* read(socket);
        while (chunk.length > 0) {
          sizes.push(chunk.length);
          chunk = yield* read(socket);
        }
      } finally {
        socket.destroy();
      }
    }
    await loop.runUntilComplete(chunks());
    expect(sizes.every((size) => size <= 4096)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    await server.close();
  });

  it("throws the refusal when nothing listens, leaving no registration", async () => {
    const url = await closedPortUrl();
    function* attempt(): Coroutine<string> {
      try {
        yield* connect(url);
        return "connected";
      } catch (error) {
        return errorName(error);
      }
    }
    expect(await loop.runUntilComplete(attempt())).toBe("ConnectionRefused");
    expect(loop.selector.size).toBe(0);
  });

  it("leaves the selector empty and the socket closable when cancelled in the middle of readAll", async () => {
    const server = await startServer(function dribble(socket) {
      socket.write("first part, and then nothing more for a while");
    });
    const opened: Socket[] = [];
    const trail: string[] = [];
    const firstChunk = new Future<void>(loop);
    function* reader(socket: Socket): Coroutine<Uint8Array> {
      const chunk = yield* read(socket);
      firstChunk.setResult(undefined);
      return Buffer.concat([chunk, yield* readAll(socket)]);
    }
    function* fetchForever(): Coroutine<void> {
      const socket = yield* connect(server.url);
      opened.push(socket);
      try {
        yield* reader(socket);
        trail.push("read to the end");
      } finally {
        trail.push("finally");
      }
    }
    function* main(): Coroutine<boolean> {
      const task = new Task(fetchForever());
      yield* firstChunk;
      expect(loop.selector.size).toBe(1); // paused inside readAll's read
      task.cancel();
      expect(yield* outcome(task)).toBe("CancelledError");
      return task.cancelled();
    }
    expect(await loop.runUntilComplete(main())).toBe(true);
    expect(trail).toEqual(["finally"]);
    expect(loop.selector.size).toBe(0);
    const socket = opened[0];
    expect(socket?.destroyed).toBe(false);
    socket?.destroy();
    expect(socket?.destroyed).toBe(true);
    await server.close();
  });

  it("destroys the socket when cancelled while connecting", async () => {
    const server = await startServer(function silent() {});
    const netConnect = vi.spyOn(net, "connect");
    function* main(): Coroutine<number> {
      const attempt = new Task(connect(server.url));
      yield* sleepOneTurn(); // connect() has started and is paused at its yield*
      expect(loop.selector.size).toBe(1);
      attempt.cancel();
      expect(yield* outcome(attempt)).toBe("CancelledError");
      return loop.selector.size;
    }
    expect(await loop.runUntilComplete(main())).toBe(0);
    expect(netConnect).toHaveBeenCalledTimes(1);
    const socket: unknown = netConnect.mock.results[0]?.value;
    expect(socket instanceof net.Socket && socket.destroyed).toBe(true);
    netConnect.mockRestore();
    await server.close();
  });
});

describe("request with kept connections", () => {
  let server: KeepAliveServer | null = null;
  afterEach(() => {
    server?.close();
    server = null;
  });

  async function keepAliveServer(keepAliveTimeout: number): Promise<{ url: URL; accepted: () => number }> {
    const started = await startKeepAliveServer(keepAliveTimeout);
    server = started;
    return { url: new URL(started.url), accepted: started.accepted };
  }

  /** Two requests to `url`, one after the other, sharing `connections` as a Crawler's workers do. */
  function* twice(url: URL, connections: IdleConnections): Coroutine<number[]> {
    const options = { userAgent: "sockets-test", maxBodyBytes: 1024, connections };
    const first = yield* request(url, options);
    const second = yield* request(url, options);
    return [first.status, second.status];
  }

  it("sends the next request to the origin on the connection it kept", async () => {
    const { url, accepted } = await keepAliveServer(5_000); // Keep-Alive: timeout=5
    const connections = new IdleConnections();
    expect(await loop.runUntilComplete(twice(url, connections))).toEqual([200, 200]);
    expect([accepted(), connections.size]).toEqual([1, 1]);
    connections.close();
  });

  it("connects anew when the server's Keep-Alive timeout leaves no time to reuse its connection", async () => {
    const { url, accepted } = await keepAliveServer(1_000); // Keep-Alive: timeout=1, less undici's 2 s margin
    const connections = new IdleConnections();
    expect(await loop.runUntilComplete(twice(url, connections))).toEqual([200, 200]);
    expect([accepted(), connections.size]).toEqual([2, 0]);
    connections.close();
  });
});

/** Yields to the loop once: a Future resolved by callSoon. */
function* sleepOneTurn(): Coroutine<void> {
  const turn = new Future<void>();
  loop.callSoon(function next() {
    turn.setResult(undefined);
  });
  yield* turn;
}
