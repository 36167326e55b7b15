import net from "node:net";
import type { Server, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidStateError } from "../../src/kernel/errors.js";
import { EVENT_READ, EVENT_WRITE, Selector } from "../../src/kernel/selector.js";
import { connect, recv, send } from "../../src/kernel/socket.js";
import type { SelectorKey } from "../../src/kernel/selector.js";

/** A loopback server that hands each accepted connection to the test. */
interface Peer {
  server: Server;
  url: URL;
  accepted: Promise<Socket>;
}

const cleanups: Array<() => void> = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function startPeer(): Promise<Peer> {
  return new Promise((resolve) => {
    let accept: (socket: Socket) => void = () => {};
    const accepted = new Promise<Socket>((resolveAccepted) => {
      accept = resolveAccepted;
    });
    const server = net.createServer(function onConnection(socket) {
      cleanups.push(() => socket.destroy());
      accept(socket);
    });
    server.listen(0, "127.0.0.1", function onListening() {
      const address = server.address() as net.AddressInfo;
      cleanups.push(() => server.close());
      resolve({ server, url: new URL(`http://127.0.0.1:${address.port}/`), accepted });
    });
  });
}

function open(url: URL): Socket {
  const socket = connect(url);
  cleanups.push(() => socket.destroy());
  return socket;
}

function connected(socket: Socket): Promise<void> {
  return new Promise((resolve) => socket.once("connect", () => resolve()));
}

type Ready = Array<{ key: SelectorKey<string>; events: number }>;

function selectNow(selector: Selector<string>): Ready {
  const ready: Ready = [];
  selector.select(function collect(key, events) {
    ready.push({ key, events });
  });
  return ready;
}

/** Selects until something is ready, sleeping on the selector's wakeup in between. */
async function selectReady(selector: Selector<string>): Promise<Ready> {
  for (;;) {
    const ready = selectNow(selector);
    if (ready.length > 0) return ready;
    await new Promise<void>((resolve) => selector.setWakeup(resolve));
  }
}

/** Waits until `socket` is ready for READ and has at least `bytes` buffered, or is at its end. */
async function bufferedAtLeast(selector: Selector<string>, socket: Socket, bytes: number): Promise<void> {
  while (socket.readableLength < bytes && !socket.readableEnded) {
    await new Promise<void>((resolve) => selector.setWakeup(resolve));
    selectNow(selector);
  }
}

describe("Selector", () => {
  it("throws InvalidStateError naming the misuse when a socket is registered twice", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_WRITE, "connected");
    expect(() => selector.register(socket, EVENT_READ, "again")).toThrow(InvalidStateError);
    expect(() => selector.register(socket, EVENT_READ, "again")).toThrow(/is already registered/);
  });

  it("throws InvalidStateError when an unknown socket is unregistered or modified", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    expect(() => selector.unregister(socket)).toThrow(/is not registered/);
    expect(() => selector.modify(socket, EVENT_READ, "x")).toThrow(InvalidStateError);
    selector.register(socket, EVENT_READ, "x");
    selector.unregister(socket);
    expect(() => selector.unregister(socket)).toThrow(/is not registered/);
  });

  it("rejects event masks that are empty, unknown or not integers", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    expect(() => selector.register(socket, 0, "x")).toThrow(RangeError);
    expect(() => selector.register(socket, 4, "x")).toThrow(/Invalid events: 4/);
    expect(() => selector.register(socket, 1.5, "x")).toThrow(TypeError);
    expect(selector.size).toBe(0);
    selector.register(socket, EVENT_READ, "x");
    expect(() => selector.modify(socket, EVENT_READ | 8, "x")).toThrow(RangeError);
  });

  it("keeps keys with their data and forgets them when unregistered", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const first = open(peer.url);
    const second = open(peer.url);
    selector.register(first, EVENT_READ, "first");
    selector.register(second, EVENT_WRITE, "second");
    expect(selector.size).toBe(2);
    expect([selector.getKey(first)?.data, selector.getKey(second)?.data]).toEqual(["first", "second"]);
    selector.modify(second, EVENT_READ | EVENT_WRITE, "changed");
    expect(selector.getKey(second)).toMatchObject({ events: EVENT_READ | EVENT_WRITE, data: "changed" });
    expect(selector.unregister(first).data).toBe("first");
    expect(selector.getKey(first)).toBeUndefined();
    expect(selector.size).toBe(1);
  });

  it("reports a connecting socket as write-ready once it has connected", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_WRITE, "connected");
    expect(selectNow(selector)).toEqual([]); // Still connecting: nothing is ready yet.
    const ready = await selectReady(selector);
    expect(ready).toHaveLength(1);
    expect(ready[0]?.key.data).toBe("connected");
    expect(ready[0]?.events).toBe(EVENT_WRITE);
  });

  it("throws EAGAIN from send while connecting and from recv before any byte", async () => {
    const peer = await startPeer();
    const socket = open(peer.url);
    expect(() => send(socket, Buffer.from("x"))).toThrow(expect.objectContaining({ code: "EAGAIN" }));
    expect(() => recv(socket)).toThrow(expect.objectContaining({ code: "EAGAIN" }));
  });

  it("reports buffered bytes as read-ready until they are all received", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_READ, "readResponse");
    (await peer.accepted).write("0123456789");
    await bufferedAtLeast(selector, socket, 10);
    // Level-triggered: nothing was read, so it is reported again and again.
    expect(selectNow(selector).map((pair) => pair.events)).toEqual([EVENT_READ]);
    expect(selectNow(selector).map((pair) => pair.events)).toEqual([EVENT_READ]);
    expect(recv(socket, 4).toString()).toBe("0123");
    expect(selectNow(selector)).toHaveLength(1);
    expect(recv(socket).toString()).toBe("456789");
    expect(selectNow(selector)).toEqual([]);
  });

  it("hands back at most 4096 bytes per recv", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_READ, "readResponse");
    (await peer.accepted).write(Buffer.alloc(10_000, 7));
    await bufferedAtLeast(selector, socket, 10_000);
    const sizes = [recv(socket).length, recv(socket).length, recv(socket).length];
    expect(sizes).toEqual([4096, 4096, 10_000 - 2 * 4096]);
  });

  it("reports the end of stream as read-ready, then recv returns an empty buffer", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_READ, "readResponse");
    (await peer.accepted).end("bye");
    const chunks: string[] = [];
    for (;;) {
      const ready = await selectReady(selector);
      expect(ready[0]?.events).toBe(EVENT_READ);
      const chunk = recv(socket);
      if (chunk.length === 0) break;
      chunks.push(chunk.toString());
    }
    expect(chunks.join("")).toBe("bye");
    // The end stays a level: still ready, still empty, until unregistered.
    expect(selectNow(selector)).toHaveLength(1);
    expect(recv(socket).length).toBe(0);
    selector.unregister(socket);
    expect(selectNow(selector)).toEqual([]);
  });

  it("reports a refused connect as ready, and recv and send throw ECONNREFUSED", async () => {
    const peer = await startPeer();
    await new Promise<void>((resolve) => peer.server.close(() => resolve()));
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_WRITE, "connected");
    const ready = await selectReady(selector);
    expect(ready[0]?.events).toBe(EVENT_WRITE);
    expect(() => send(socket, Buffer.from("GET / HTTP/1.1\r\n\r\n"))).toThrow(
      expect.objectContaining({ code: "ECONNREFUSED" }),
    );
    selector.modify(socket, EVENT_READ, "readResponse");
    expect(selectNow(selector).map((pair) => pair.events)).toEqual([EVENT_READ]);
    expect(() => recv(socket)).toThrow(expect.objectContaining({ code: "ECONNREFUSED" }));
  });

  it("keeps a TLS socket from write-readiness until its handshake ends, and reports a failed one", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const url = new URL(peer.url.href.replace("http:", "https:"));
    const socket = open(url);
    selector.register(socket, EVENT_WRITE, "connected");
    const server = await peer.accepted; // TCP is up; the TLS handshake is not.
    await new Promise<void>((resolve) => server.once("data", () => resolve())); // the ClientHello
    expect(selectNow(selector)).toEqual([]);
    expect(() => send(socket, Buffer.from("x"))).toThrow(expect.objectContaining({ code: "EAGAIN" }));
    server.write("HTTP/1.1 400 Bad Request\r\n\r\n"); // not a TLS record: the handshake fails
    const ready = await selectReady(selector);
    expect(ready[0]?.events).toBe(EVENT_WRITE);
    expect(() => recv(socket)).toThrow(expect.objectContaining({ code: expect.stringMatching(/SSL|TLS/) }));
  });

  it("reports data that arrived while a socket was unregistered as soon as it is registered again", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_READ, "first");
    (await peer.accepted).write("hello");
    await bufferedAtLeast(selector, socket, 5);
    selector.unregister(socket);
    expect(selectNow(selector)).toEqual([]);
    selector.register(socket, EVENT_READ, "again");
    expect(selectNow(selector).map((pair) => pair.key.data)).toEqual(["again"]);
  });

  it("skips a key that an earlier callback of the same select unregistered", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const first = open(peer.url);
    const second = open(peer.url);
    selector.register(first, EVENT_WRITE, "first");
    selector.register(second, EVENT_WRITE, "second");
    await Promise.all([connected(first), connected(second)]);
    const handed: string[] = [];
    const count = selector.select(function unregisterTheOther(key) {
      handed.push(key.data);
      selector.unregister(key.socket === first ? second : first);
    });
    expect(count).toBe(2);
    expect(handed).toHaveLength(1);
  });

  it("calls the wakeup once per select when sockets may have become ready", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    let wakeups = 0;
    const woken = new Promise<void>((resolve) => {
      selector.setWakeup(function wakeup() {
        wakeups += 1;
        resolve();
      });
    });
    const sockets = [open(peer.url), open(peer.url), open(peer.url)];
    selectNow(selector);
    for (const socket of sockets) selector.register(socket, EVENT_WRITE, "connected");
    await woken;
    expect(wakeups).toBe(1); // Three registrations, coalesced into one call.
    await Promise.all(sockets.map(connected));
    expect(wakeups).toBe(1); // No select since: still one.
    selectNow(selector);
    selector.modify(sockets[0] as Socket, EVENT_READ | EVENT_WRITE, "again");
    expect(wakeups).toBe(2);
  });

  it("refuses to be used once closed", async () => {
    const peer = await startPeer();
    const selector = new Selector<string>();
    const socket = open(peer.url);
    selector.register(socket, EVENT_WRITE, "connected");
    selector.close();
    expect(selector.size).toBe(0);
    expect(() => selector.register(socket, EVENT_WRITE, "again")).toThrow(/Selector is closed/);
    expect(() => selectNow(selector)).toThrow(InvalidStateError);
  });
});
