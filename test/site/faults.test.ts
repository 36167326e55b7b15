import { connect, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { get, getRequest, rawExchange } from "./helpers.js";

/** Sends two requests on one keep-alive connection; resolves with everything received before the close. */
function keepAliveExchange(port: number, first: string, second: string): Promise<string> {
  return new Promise(function exchange(resolve) {
    const socket: Socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", function onData(chunk: Buffer) {
      received += chunk.toString("latin1");
      if (received.endsWith("first-body")) socket.write(getRequest(second));
    });
    socket.on("error", function ignoreReset() {});
    socket.on("close", function onClose() {
      resolve(received);
    });
    socket.write(getRequest(first));
  });
}

describe("faultHandler", () => {
  let site: FixtureSite;
  beforeEach(async () => {
    site = await FixtureSite.start();
    site.addPage("/first", "first-body", "text/plain");
  });
  afterEach(async () => {
    await site.close();
  });

  it("drops the connection without sending a byte", async () => {
    site.addFault("/drop", { kind: "drop" });
    const exchange = await rawExchange(site.port, getRequest("/drop"));
    expect(exchange.bytes.length).toBe(0);
    expect(site.requestsFor("/drop")).toBe(1);
    await site.connectionsClosed();
    expect(site.requestsInFlight).toBe(0);
  });

  it("drops a keep-alive connection after an earlier response on it", async () => {
    site.addFault("/drop", { kind: "drop" });
    const received = await keepAliveExchange(site.port, "/first", "/drop");
    expect(received.startsWith("HTTP/1.1 200 OK")).toBe(true);
    expect(received.endsWith("first-body")).toBe(true);
    expect(site.requestsFor("/drop")).toBe(1);
  });

  it("writes its bytes, then resets the connection instead of closing it", async () => {
    site.addFault("/reset", { kind: "reset", bytes: "HTTP/1.1 200 OK\r\nContent-", afterMs: 50 });
    const exchange = await rawExchange(site.port, getRequest("/reset"));
    expect(exchange.bytes.toString("latin1")).toBe("HTTP/1.1 200 OK\r\nContent-");
    expect(exchange.ending).toBe("error");
    expect(site.requestsFor("/reset")).toBe(1);
    await site.connectionsClosed();
  });

  it("keeps a silent request open until the site closes", async () => {
    site.addFault("/silent", { kind: "silent" });
    const exchange = rawExchange(site.port, getRequest("/silent"));
    await vi.waitFor(() => expect(site.requestsInFlight).toBe(1));
    expect(site.openConnections).toBe(1);
    await site.close();
    expect((await exchange).bytes.length).toBe(0);
    expect(site.openConnections).toBe(0);
    expect(site.requestsInFlight).toBe(0);
  });

  it("drips the body a few bytes at a time with its length declared", async () => {
    site.addFault("/drip", { kind: "drip", body: "abcdef", bytesPerTick: 2, intervalMs: 5, contentType: "text/plain" });
    const response = await get(site.urlFor("/drip"));
    expect(response.status).toBe(200);
    expect(response.headers["content-length"]).toBe("6");
    expect(response.headers["content-type"]).toBe("text/plain");
    expect(response.body.toString()).toBe("abcdef");
  });

  it("stops dripping when the client goes away", async () => {
    site.addFault("/drip", { kind: "drip", body: "x".repeat(1_000), intervalMs: 5 });
    const socket = connect(site.port, "127.0.0.1");
    socket.write(getRequest("/drip"));
    await new Promise((resolve) => socket.once("data", resolve));
    socket.destroy();
    await site.connectionsClosed();
    expect(site.requestsInFlight).toBe(0);
  });

  it("writes raw bytes on the socket, then closes it", async () => {
    const garbage = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi\xff";
    site.addFault("/raw", { kind: "raw", bytes: garbage });
    const exchange = await rawExchange(site.port, getRequest("/raw"));
    expect(exchange.bytes).toEqual(Buffer.from(garbage, "latin1"));
    expect(exchange.ending).toBe("end");
  });

  it("writes raw bytes on a keep-alive connection after an earlier response", async () => {
    site.addFault("/raw", { kind: "raw", bytes: "garbage\r\n\r\n" });
    const received = await keepAliveExchange(site.port, "/first", "/raw");
    expect(received.endsWith("first-bodygarbage\r\n\r\n")).toBe(true);
  });

  it("streams a huge body with its length declared", async () => {
    site.addFault("/huge", { kind: "huge", bytes: 100_000 });
    const response = await get(site.urlFor("/huge"));
    expect(response.headers["content-length"]).toBe("100000");
    expect(response.body.length).toBe(100_000);
  });

  it("streams a huge body chunked when its length is not declared", async () => {
    site.addFault("/huge", { kind: "huge", bytes: 70_000, declared: false, contentType: "text/plain" });
    const response = await get(site.urlFor("/huge"));
    expect(response.headers["content-length"]).toBeUndefined();
    expect(response.headers["transfer-encoding"]).toBe("chunked");
    expect(response.body.length).toBe(70_000);
  });

  it("stops streaming a huge body when the client closes early", async () => {
    site.addFault("/huge", { kind: "huge", bytes: 1_000_000_000 });
    const socket = connect(site.port, "127.0.0.1");
    socket.write(getRequest("/huge"));
    await new Promise((resolve) => socket.once("data", resolve));
    socket.destroy();
    await site.connectionsClosed();
    expect(site.requestsInFlight).toBe(0);
  });
});
