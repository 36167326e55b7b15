import diagnostics_channel from "node:diagnostics_channel";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventLoop } from "../../src/callbacks/event-loop.js";
import { Fetcher } from "../../src/callbacks/fetcher.js";
import type { FetcherOptions, FetchOutcome } from "../../src/callbacks/fetcher.js";
import { IdleConnections } from "../../src/http/idle-connections.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { startKeepAliveServer, type KeepAliveServer } from "../helpers/keep-alive-server.js";

const options: FetcherOptions = {
  timeoutMs: 2_000,
  idleTimeoutMs: 2_000,
  maxBodyBytes: 1024 * 1024,
  userAgent: "fetcher-test",
  ca: null,
  rejectUnauthorized: true,
};

let site: FixtureSite | null = null;
/** A plain node:http server, for a test that sets its keepAliveTimeout. */
let server: KeepAliveServer | null = null;

async function keepAliveServer(keepAliveTimeout: number): Promise<KeepAliveServer> {
  server = await startKeepAliveServer(keepAliveTimeout);
  return server;
}

afterEach(async () => {
  await site?.close();
  site = null;
  server?.close();
  server = null;
});


/**
 * Fetches `urls` one after another on one loop, each Fetcher taking and
 * keeping connections in `connections`, as a Crawler's Fetchers do.
 */
function fetchInTurn(urls: readonly string[], connections: IdleConnections): Promise<FetchOutcome[]> {
  return new Promise((resolve) => {
    const loop = new EventLoop();
    const outcomes: FetchOutcome[] = [];
    function next(): void {
      const url = urls[outcomes.length];
      if (url === undefined) {
        loop.stop();
        return;
      }
      new Fetcher(url, loop, { ...options, connections }, function fetched(_fetcher, outcome) {
        outcomes.push(outcome);
        next();
      }).fetch();
    }
    loop.runForever(function stopped() {
      resolve(outcomes);
    });
    next();
  });
}

/**
 * Runs one Fetcher on its own loop until it hands over its outcome; `attempts`
 * more than 1 calls `fetch()` again after each failed attempt, as the Crawler does.
 */
function fetchOne(
  url: string,
  fetcherOptions: FetcherOptions = options,
  attempts = 1,
  crawl = 0,
): Promise<{ outcome: FetchOutcome; fetcher: Fetcher; loop: EventLoop }> {
  return new Promise((resolve) => {
    const loop = new EventLoop();
    let outcome: FetchOutcome | null = null;
    const fetcher = new Fetcher(url, loop, fetcherOptions, function fetched(_fetcher, result) {
      if (typeof result === "string" && fetcher.tries < attempts) {
        fetcher.fetch();
        return;
      }
      outcome = result;
      loop.stop();
    }, crawl);
    loop.runForever(function stopped() {
      if (outcome !== null) resolve({ outcome, fetcher, loop });
    });
    fetcher.fetch();
  });
}

describe("Fetcher", () => {
  it("fetches one page through connected and readResponse, then closes its socket", async () => {
    site = await FixtureSite.start();
    site.addPage("/353/", "<p>import antigravity</p>", "text/html; charset=utf-8");
    const { outcome, fetcher, loop } = await fetchOne(site.urlFor("/353/"));
    if (typeof outcome === "string") throw new Error(`fetch failed: ${outcome}`);
    expect(outcome.status).toBe(200);
    expect(Buffer.from(outcome.body).toString()).toBe("<p>import antigravity</p>");
    expect(fetcher.tries).toBe(1);
    expect(fetcher.socket).toBeNull();
    expect(loop.selector.size).toBe(0);
    expect(loop.pendingTimers).toBe(0);
    await site.connectionsClosed();
    expect(site.requestsFor("/353/")).toBe(1);
  });

  it("publishes connect, send, first-byte and each read on the crawl channel, with its crawl id", async () => {
    site = await FixtureSite.start();
    site.addPage("/big", "x".repeat(10_000), "text/plain");
    const messages: unknown[] = [];
    let received = 0;
    function collect(message: unknown): void {
      if (typeof message === "object" && message !== null && "crawl" in message && message.crawl === 4242) messages.push(message);
    }
    diagnostics_channel.subscribe("coroutine-crawler:crawl", collect);
    try {
      const { fetcher } = await fetchOne(site.urlFor("/big"), options, 1, 4242);
      received = fetcher.received;
    } finally {
      diagnostics_channel.unsubscribe("coroutine-crawler:crawl", collect);
    }
    const url = site.urlFor("/big");
    expect(messages.slice(0, 3)).toEqual([
      { type: "connect", crawl: 4242, url, fd: expect.any(Number) },
      { type: "send", crawl: 4242, url },
      { type: "first-byte", crawl: 4242, url },
    ]);
    const reads = messages.slice(3);
    expect(reads.length).toBeGreaterThanOrEqual(3); // at most 4096 bytes per read
    const bytes = reads.map((m) => (typeof m === "object" && m !== null && "bytes" in m ? m.bytes : null));
    expect(bytes.reduce((sum: number, n) => sum + Number(n), 0)).toBe(received);
    expect(bytes.every((n) => typeof n === "number" && n <= 4096)).toBe(true);
  });

  it("sends the shared request headers", async () => {
    site = await FixtureSite.start();
    const seen: Array<string | undefined> = [];
    site.addHandler("/", function echo(request, response) {
      seen.push(request.headers["user-agent"], request.headers["accept-encoding"], request.headers.connection);
      response.end("ok");
    });
    await fetchOne(site.urlFor("/"));
    expect(seen).toEqual(["fetcher-test", "gzip, deflate, br, identity", "close"]);
  });

  it("sends the next request to the origin on the connection it kept", async () => {
    const { url, accepted } = await keepAliveServer(5_000); // Keep-Alive: timeout=5
    const connections = new IdleConnections();
    const outcomes = await fetchInTurn([url, url], connections);
    expect(outcomes.map((outcome) => (typeof outcome === "string" ? outcome : outcome.status))).toEqual([200, 200]);
    expect([accepted(), connections.size]).toEqual([1, 1]);
    connections.close();
  });

  it("connects anew when the server's Keep-Alive timeout leaves no time to reuse its connection", async () => {
    const { url, accepted } = await keepAliveServer(1_000); // Keep-Alive: timeout=1, less undici's 2 s margin
    const connections = new IdleConnections();
    const outcomes = await fetchInTurn([url, url], connections);
    expect(outcomes.map((outcome) => (typeof outcome === "string" ? outcome : outcome.status))).toEqual([200, 200]);
    expect([accepted(), connections.size]).toEqual([2, 0]);
    connections.close();
  });

  it("reads a response larger than one 4096-byte recv", async () => {
    site = await FixtureSite.start();
    site.addPage("/big", "x".repeat(50_000), "text/plain");
    const { outcome } = await fetchOne(site.urlFor("/big"));
    expect(typeof outcome === "string" ? outcome : outcome.body.length).toBe(50_000);
  });

  it("names a refused connection ConnectionRefused, and makes a new attempt each time fetch() is called", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const { outcome, fetcher, loop } = await fetchOne(`http://127.0.0.1:${port}/`, options, 3);
    expect(outcome).toBe("ConnectionRefused");
    expect(fetcher.tries).toBe(3);
    expect(fetcher.socket).toBeNull();
    expect(loop.selector.size).toBe(0);
    expect(loop.pendingTimers).toBe(0);
  });

  it("gives up on a silent server after timeoutMs, once per attempt", async () => {
    site = await FixtureSite.start();
    site.addFault("/silent", { kind: "silent" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/silent"), { ...options, timeoutMs: 50 }, 2);
    expect(outcome).toBe("Timeout");
    expect(fetcher.tries).toBe(2);
    expect(site.requestsFor("/silent")).toBe(2);
    await site.connectionsClosed();
  });

  it("names a malformed response BadResponse", async () => {
    site = await FixtureSite.start();
    site.addFault("/garbage", { kind: "raw", bytes: "SMTP ready\r\n\r\n" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/garbage"));
    expect(outcome).toBe("BadResponse");
    expect(fetcher.tries).toBe(1);
  });

  it("names a connection dropped before any byte ConnectionReset", async () => {
    site = await FixtureSite.start();
    site.addFault("/drop", { kind: "drop" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/drop"));
    expect(outcome).toBe("ConnectionReset");
    expect(fetcher.tries).toBe(1);
  });

  it("readResponse ends a body the server ends by closing: an empty recv is the end of the stream, not data", async () => {
    const closing = net.createServer(function answerThenClose(socket) {
      socket.once("data", function request() {
        socket.end("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<p>until the close</p>");
      });
    });
    await new Promise<void>((resolve) => closing.listen(0, "127.0.0.1", resolve));
    const { port } = closing.address() as net.AddressInfo;
    try {
      const { outcome, fetcher } = await fetchOne(`http://127.0.0.1:${port}/`, { ...options, timeoutMs: 10_000 });
      expect(typeof outcome === "string" ? outcome : Buffer.from(outcome.body).toString(), "readResponse did not end the body at the empty recv").toBe("<p>until the close</p>");
      expect(fetcher.socket).toBeNull();
    } finally {
      closing.close();
    }
  });

  it("fetch makes each attempt with a new parser, so a second attempt reads its own response", async () => {
    let answers = 0;
    const counting = net.createServer(function answer(socket) {
      socket.once("data", function request() {
        answers += 1;
        const body = `answer ${answers}`;
        socket.end(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      });
    });
    await new Promise<void>((resolve) => counting.listen(0, "127.0.0.1", resolve));
    const { port } = counting.address() as net.AddressInfo;
    try {
      const bodies = await new Promise<string[]>((resolve) => {
        const loop = new EventLoop();
        const seen: string[] = [];
        const fetcher = new Fetcher(`http://127.0.0.1:${port}/`, loop, options, function fetched(_fetcher, outcome) {
          seen.push(typeof outcome === "string" ? outcome : Buffer.from(outcome.body).toString());
          if (seen.length < 2) fetcher.fetch(); // a second attempt on the same Fetcher
          else loop.stop();
        });
        loop.runForever(function stopped() {
          resolve(seen);
        });
        fetcher.fetch();
      });
      expect(bodies, "the second attempt of fetch did not read a response of its own").toEqual(["answer 1", "answer 2"]);
    } finally {
      counting.close();
    }
  });

  it("readResponse calls onFetched once, outside its try: an exception in onFetched is not taken for a failed fetch", async () => {
    site = await FixtureSite.start();
    site.addPage("/page", []);
    const loop = new EventLoop();
    const outcomes: FetchOutcome[] = [];
    const escaped: unknown[] = [];
    loop.setExceptionHandler(function exceptionHandler(error) {
      escaped.push(error);
      loop.stop();
    });
    const bug = new Error("a bug in onFetched");
    const fetcher = new Fetcher(site.urlFor("/page"), loop, options, function fetched(_fetcher, outcome) {
      outcomes.push(outcome);
      throw bug;
    });
    await new Promise<void>((resolve) => {
      loop.runForever(resolve);
      fetcher.fetch();
    });
    expect(outcomes.map((outcome) => (typeof outcome === "string" ? outcome : outcome.status)), "readResponse called onFetched again with an error").toEqual([200]);
    expect(escaped).toEqual([bug]);
  });
});
