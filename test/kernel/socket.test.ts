import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import net from "node:net";
import type { AddressInfo, Server, Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { errorName } from "../../src/kernel/errors.js";
import { connect, recv, send } from "../../src/kernel/socket.js";

const cleanups: Array<() => void> = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A loopback TCP server that runs `onConnection` for each connection; resolves with its URL. */
function listen(onConnection: (socket: Socket) => void, server: Server = net.createServer()): Promise<URL> {
  server.on("connection", function accepted(socket: Socket) {
    socket.on("error", function ignoreReset() {});
    cleanups.push(() => socket.destroy());
  });
  server.on("connection", onConnection);
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", function listening() {
      cleanups.push(() => server.close());
      const scheme = "setSecureContext" in server ? "https" : "http";
      resolve(new URL(`${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/`));
    });
  });
}

function open(url: URL, options?: Parameters<typeof connect>[1]): Socket {
  const socket = connect(url, options);
  cleanups.push(() => socket.destroy());
  return socket;
}

/** Calls recv until the end of stream or an error other than EAGAIN: each call's bytes, then the end ("") or the error's code. */
async function recvAll(socket: Socket): Promise<Array<string | { code: unknown }>> {
  const results: Array<string | { code: unknown }> = [];
  for (;;) {
    try {
      const chunk = recv(socket);
      results.push(chunk.toString("latin1"));
      if (chunk.length === 0) return results;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== "EAGAIN") {
        results.push({ code });
        return results;
      }
      socket.read(0); // As the selector does: Node notices a pending end only when asked to read.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

describe("recv", () => {
  it("hands out the bytes that came before a reset, then throws the reset", async () => {
    const url = await listen(function writeThenReset(socket) {
      socket.write("HTTP/1.1 200 OK\r\nContent-");
      setTimeout(() => socket.resetAndDestroy(), 30);
    });
    const socket = open(url);
    // Let both arrive before the first recv: the bytes, then the reset.
    await vi.waitFor(() => expect(socket.errored).not.toBeNull());
    expect(socket.readableLength).toBe(25);
    expect(recv(socket).toString("latin1")).toBe("HTTP/1.1 200 OK\r\nContent-");
    expect(() => recv(socket)).toThrow(expect.objectContaining({ code: "ECONNRESET" }));
  });

  it("hands out the bytes buffered before any error, one bufsize at a time", async () => {
    const url = await listen(function write(socket) {
      socket.write("0123456789");
    });
    const socket = open(url);
    await vi.waitFor(() => expect(socket.readableLength).toBe(10));
    socket.destroy(Object.assign(new Error("gone"), { code: "EPIPE" }));
    expect(recv(socket, 4).toString()).toBe("0123");
    expect(recv(socket).toString()).toBe("456789");
    expect(() => recv(socket)).toThrow(expect.objectContaining({ code: "EPIPE" }));
  });
});

describe("connect", () => {
  it("fails a connection on which no byte comes for idleTimeoutMs with ETIMEDOUT, which errorName calls Timeout", async () => {
    const url = await listen(function neverAnswer() {});
    const socket = open(url, { idleTimeoutMs: 100 });
    await vi.waitFor(() => expect(socket.errored).not.toBeNull());
    let thrown: unknown = null;
    try {
      recv(socket);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "ETIMEDOUT" });
    expect(errorName(thrown)).toBe("Timeout");
  });

  it("keeps a connection whose bytes keep coming, each sooner than idleTimeoutMs, though they take longer in all", async () => {
    const url = await listen(function drip(socket) {
      let sent = 0;
      const timer = setInterval(function sendOne() {
        sent += 1;
        if (sent < 24) socket.write(String.fromCharCode(96 + sent));
        else {
          clearInterval(timer);
          socket.end("x");
        }
      }, 50);
      socket.on("close", () => clearInterval(timer));
    });
    // The drip takes 1.2 s in all, a byte every 50 ms. The server and the socket share this process's loop: a
    // stall as long as the idle timeout less a gap lets both timers run in one turn, the idle one before the byte
    // is read. So the idle timeout is 20 gaps long (a 950 ms stall; with 400 ms, 350 ms were enough).
    const socket = open(url, { idleTimeoutMs: 1_000 });
    await vi.waitFor(() => expect(socket.connecting).toBe(false));
    send(socket, Buffer.from("go"));
    const results = await recvAll(socket);
    expect(results.at(-1)).toBe(""); // The end of stream, not ETIMEDOUT.
    expect(results.join("")).toBe("abcdefghijklmnopqrstuvwx");
    expect(socket.errored).toBeNull();
  });

  it("checks a TLS certificate against `ca`, or not at all with rejectUnauthorized false", async () => {
    const fixtures = new URL("../fixtures/tls/", import.meta.url);
    const key = readFileSync(new URL("server.key.pem", fixtures));
    const cert = readFileSync(new URL("localhost.pem", fixtures));
    const ca = readFileSync(new URL("ca.pem", fixtures), "utf8");
    const url = await listen(function hold() {}, createHttpsServer({ key, cert }));
    const untrusted = open(url);
    await vi.waitFor(() => expect(untrusted.errored).not.toBeNull());
    expect(untrusted.errored).toMatchObject({ code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    for (const options of [{ ca }, { rejectUnauthorized: false }]) {
      const trusted = open(url, options);
      await new Promise((resolve) => {
        trusted.once("secureConnect", resolve);
        trusted.once("error", resolve);
      });
      expect(trusted.errored).toBeNull();
    }
  });
});
