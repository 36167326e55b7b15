import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HttpClient, type HttpClientOptions } from "../../src/http/http-client.js";
import { CancelledError, FetchFailure } from "../../src/kernel/errors.js";
import type { FetchError } from "../../src/crawl/records.js";
import { parseResponse } from "../../src/http/parser.js";
import { requestHeaders } from "../../src/http/request.js";
import { FixtureSite } from "../../src/site/fixture-site.js";

const OPTIONS: HttpClientOptions = {
  connections: 4,
  timeoutMs: 5_000,
  idleTimeoutMs: 5_000,
  maxBodyBytes: 1_000_000,
  userAgent: "test-agent/1",
  ca: null,
  rejectUnauthorized: true,
};

/** The error kind a failed `get()` gave, or the status of the response it got. */
async function outcome(promise: Promise<{ status: number }>): Promise<number | FetchError> {
  try {
    return (await promise).status;
  } catch (error) {
    if (error instanceof FetchFailure) return error.kind;
    throw error;
  }
}

/** What the shared parser (stages 1 and 2) makes of the same bytes. */
function sharedOutcome(bytes: string): number | FetchError {
  try {
    return parseResponse(Buffer.from(bytes, "latin1"), { maxBodyBytes: OPTIONS.maxBodyBytes }).status;
  } catch (error) {
    if (error instanceof FetchFailure) return error.kind;
    throw error;
  }
}

/** A loopback port `server` listened on and no longer does: a connection there is refused. */
async function closedPort(server: Server): Promise<number> {
  await new Promise<void>(function listen(resolve) {
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo; // listening on TCP
  await new Promise<void>(function close(resolve) {
    server.close(function closed() {
      resolve();
    });
  });
  return port;
}

describe("HttpClient", () => {
  let site: FixtureSite;
  let client: HttpClient;

  beforeEach(async () => {
    site = await FixtureSite.start();
    client = new HttpClient(OPTIONS);
  });

  afterEach(async () => {
    await client.close();
    await site.close();
  });

  it("sends exactly the shared request headers, plus host and connection", async () => {
    let received: string[] = [];
    site.addHandler("/headers", function recordHeaders(request, response) {
      received = request.rawHeaders;
      response.end("ok");
    });
    await client.get(site.urlFor("/headers"));
    const names = received.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
    const sent = Object.fromEntries(
      names.map((name, i) => [name, received[2 * i + 1]]),
    );
    const expected = Object.fromEntries(
      Object.entries(requestHeaders("test-agent/1")).map(([name, value]) => [name.toLowerCase(), value]),
    );
    expect(sent).toEqual({ ...expected, host: `127.0.0.1:${site.port}`, connection: "keep-alive" });
  });

  it("returns status, lowercased headers and body of a page", async () => {
    site.addPage("/page", "<p>hello</p>", "text/html; charset=latin1", { headers: { "X-Extra": "yes" } });
    const response = await client.get(site.urlFor("/page"));
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/html; charset=latin1");
    expect(response.headers["x-extra"]).toBe("yes");
    expect(Buffer.from(response.body).toString()).toBe("<p>hello</p>");
  });

  it("returns a gzip body still encoded, for the shared readPage to decode", async () => {
    site.addPage("/gzip", "<p>compressed</p>", "text/html", { contentEncoding: "gzip" });
    const response = await client.get(site.urlFor("/gzip"));
    expect(response.headers["content-encoding"]).toBe("gzip");
    expect([...response.body.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });

  it("returns a redirect instead of following it", async () => {
    site.addRedirect("/from", "/to", 301).addPage("/to", "target");
    const response = await client.get(site.urlFor("/from"));
    expect(response.status).toBe(301);
    expect(response.headers.location).toBe("/to");
    expect(site.requestsFor("/to")).toBe(0);
  });

  it("reuses kept-alive connections for sequential requests", async () => {
    site.addPage("/a", "a").addPage("/b", "b");
    for (let i = 0; i < 10; i++) await client.get(site.urlFor(i % 2 === 0 ? "/a" : "/b"));
    expect(site.totalRequests).toBe(10);
    // undici checks an idle socket for a server's close before reusing it, and may open a
    // second one meanwhile; without keep-alive there would be ten.
    expect(site.peakConnections).toBeLessThanOrEqual(2);
    expect(site.openConnections).toBeGreaterThan(0);
  });

  it("sends the request a response leads to on that response's connection, though the pool has room for more", async () => {
    // undici gives a connection back a turn after its response ended; a request asked for at
    // once waits that turn rather than opening a connection of its own (src/http/undici.ts, fill).
    const roomy = new HttpClient({ ...OPTIONS, connections: 8 });
    site.addPage("/a", "a");
    async function chain(): Promise<void> {
      for (let i = 0; i < 5; i++) await roomy.get(site.urlFor("/a"));
    }
    try {
      await Promise.all([chain(), chain(), chain(), chain()]);
    } finally {
      await roomy.close();
    }
    expect(site.totalRequests).toBe(20);
    expect(site.connectionsOpened).toBe(4);
  });

  it("fails with BodyTooLarge before reading a body whose Content-Length is over the limit", async () => {
    const small = new HttpClient({ ...OPTIONS, maxBodyBytes: 1000 });
    site.addFault("/huge", { kind: "huge", bytes: 50_000_000 });
    await expect(outcome(small.get(site.urlFor("/huge")))).resolves.toBe("BodyTooLarge");
    await site.connectionsClosed(); // the client hung up without closing its pool
    await small.close();
  });

  it("fails with BodyTooLarge while a chunked body streams past the limit, and hangs up", async () => {
    const small = new HttpClient({ ...OPTIONS, maxBodyBytes: 100_000 });
    site.addFault("/huge", { kind: "huge", bytes: 50_000_000, declared: false });
    await expect(outcome(small.get(site.urlFor("/huge")))).resolves.toBe("BodyTooLarge");
    await site.connectionsClosed();
    await small.close();
  });

  /** Serves `path` with `bytes` written straight onto the socket, which then stays open. */
  function holdOpenAfter(path: string, bytes: string): void {
    site.addHandler(path, function writeAndHold(request) {
      request.socket.write(Buffer.from(bytes, "latin1"));
    });
  }

  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

  it("fails with BodyTooLarge as soon as a chunk is announced larger than maxBodyBytes, as the shared parser does", async () => {
    const small = new HttpClient({ ...OPTIONS, maxBodyBytes: 1000 });
    holdOpenAfter("/big-chunk", `${chunked}3e9\r\nabc`);
    holdOpenAfter("/second-chunk", `${chunked}3e0\r\n${"a".repeat(992)}\r\n9\r\n`);
    await expect(outcome(small.get(site.urlFor("/big-chunk")))).resolves.toBe("BodyTooLarge");
    await expect(outcome(small.get(site.urlFor("/second-chunk")))).resolves.toBe("BodyTooLarge");
    await site.connectionsClosed();
    await small.close();
  });

  it("fails with BodyTooLarge for a chunk of 2^64 - 1 bytes, as the shared parser does", async () => {
    holdOpenAfter("/max-chunk", `${chunked}ffffffffffffffff\r\nabc`);
    await expect(outcome(client.get(site.urlFor("/max-chunk")))).resolves.toBe("BodyTooLarge");
    expect(sharedOutcome(`${chunked}ffffffffffffffff\r\nabc`)).toBe("BodyTooLarge");
  });

  it("fails with BodyTooLarge for a body longer than a Buffer can be, whatever maxBodyBytes allows", async () => {
    // buffer.constants.MAX_LENGTH is 2^32 on Node 20: a 5 GB body could never be joined.
    const raised = new HttpClient({ ...OPTIONS, maxBodyBytes: 2 ** 40 });
    holdOpenAfter("/declared", "HTTP/1.1 200 OK\r\nContent-Length: 5000000000\r\n\r\nabc");
    holdOpenAfter("/chunked", `${chunked}12a05f200\r\nabc`);
    await expect(outcome(raised.get(site.urlFor("/declared")))).resolves.toBe("BodyTooLarge");
    await expect(outcome(raised.get(site.urlFor("/chunked")))).resolves.toBe("BodyTooLarge");
    await raised.close();
  });

  it("times out on a body that drips in slower than the timeout, though bytes keep arriving", async () => {
    const impatient = new HttpClient({ ...OPTIONS, timeoutMs: 150 });
    site.addFault("/drip", { kind: "drip", body: "x".repeat(200), bytesPerTick: 1, intervalMs: 10 });
    await expect(outcome(impatient.get(site.urlFor("/drip")))).resolves.toBe("Timeout");
    await site.connectionsClosed();
    await impatient.close();
  });

  it("times out on a server that never answers", async () => {
    const impatient = new HttpClient({ ...OPTIONS, timeoutMs: 100 });
    site.addFault("/silent", { kind: "silent" });
    await expect(outcome(impatient.get(site.urlFor("/silent")))).resolves.toBe("Timeout");
    await impatient.close();
  });

  describe("opens one connection per attempt", () => {
    let server: Server;
    let connections: number;
    let port: number;

    beforeEach(async () => {
      connections = 0;
      server = createServer();
      server.on("connection", function countConnection() {
        connections += 1;
      });
      await new Promise<void>(function listen(resolve) {
        server.listen(0, "127.0.0.1", resolve);
      });
      port = (server.address() as AddressInfo).port; // listening on TCP
    });

    afterEach(async () => {
      server.closeAllConnections();
      await new Promise<void>(function close(resolve) {
        server.close(function closed() {
          resolve();
        });
      });
    });

    /** Waits until every connection the client opened has reached the server. */
    async function settledConnections(): Promise<number> {
      let seen = -1;
      while (seen !== connections) {
        seen = connections;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return connections;
    }

    it("when every attempt times out (no connection opened again for an abandoned request)", async () => {
      // undici's own abort closes the socket with an informational error, its Client
      // puts the aborted request back in its queue and connects again for it (nodejs/undici#5845).
      const impatient = new HttpClient({ ...OPTIONS, timeoutMs: 100 });
      server.on("request", function neverAnswer() {});
      for (let attempt = 0; attempt < 3; attempt++) {
        await expect(outcome(impatient.get(`http://127.0.0.1:${port}/silent`))).resolves.toBe("Timeout");
      }
      expect(await settledConnections()).toBe(3);
      await impatient.close();
    });

    it("when every attempt is refused as too large", async () => {
      const small = new HttpClient({ ...OPTIONS, maxBodyBytes: 10 });
      server.on("request", function answerTooMuch(_request, response) {
        response.end("x".repeat(100));
      });
      for (let attempt = 0; attempt < 3; attempt++) {
        await expect(outcome(small.get(`http://127.0.0.1:${port}/big`))).resolves.toBe("BodyTooLarge");
      }
      expect(await settledConnections()).toBe(3);
      await small.close();
    });
  });

  it("fails with ConnectionRefused when nothing listens", async () => {
    const port = await closedPort(createServer());
    await expect(outcome(client.get(`http://127.0.0.1:${port}/`))).resolves.toBe("ConnectionRefused");
  });

  it("takes requests on a connection that was refused, more of them than it keeps connections", async () => {
    const server: Server = createServer(function answer(_request, response) {
      response.end("back");
    });
    const port = await closedPort(server);
    const url = `http://127.0.0.1:${port}/`;
    // Three rounds of as many requests as the pool keeps connections: a refused one must stay free for the next.
    for (let round = 0; round < 3; round++) {
      const refused = await Promise.all(Array.from({ length: OPTIONS.connections }, () => outcome(client.get(url))));
      expect(refused).toEqual(Array(OPTIONS.connections).fill("ConnectionRefused"));
    }
    await new Promise<void>(function listenAgain(resolve) {
      server.listen(port, "127.0.0.1", resolve);
    });
    try {
      await expect(outcome(client.get(url))).resolves.toBe(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("opens no more connections than requests in flight, and reuses the freed ones", async () => {
    site.addPage("/a", "a");
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: OPTIONS.connections }, () => client.get(site.urlFor("/a"))));
    }
    expect(site.totalRequests).toBe(3 * OPTIONS.connections);
    // As above, undici may open one more while it checks a kept socket for a close.
    expect(site.peakConnections).toBeLessThanOrEqual(OPTIONS.connections + 1);
  });

  it("keeps 256 free connections open, as node:http's Agent does, and connects again for later requests", async () => {
    const many = new HttpClient({ ...OPTIONS, connections: 300 });
    try {
      site.addPage("/a", "a");
      for (let round = 1; round <= 2; round++) {
        await Promise.all(Array.from({ length: 300 }, () => many.get(site.urlFor("/a"))));
        await vi.waitFor(() => expect(site.openConnections).toBe(256)); // The rest were closed as they went free.
      }
      expect(site.totalRequests).toBe(600);
      expect(site.peakConnections).toBeGreaterThan(256);
    } finally {
      await many.close();
    }
  });

  describe("with more requests to a host than connections", () => {
    /** A server that answers each request only once `release()` is called, counting requests and connections. */
    async function heldServer(): Promise<{ url: string; requests: string[]; connections: () => number; release: () => void; close: () => Promise<void> }> {
      const held: Array<() => void> = [];
      const requests: string[] = [];
      let connections = 0;
      let released = false;
      const server = createServer(function answer(request, response) {
        requests.push(request.url ?? "");
        const reply = (): void => {
          response.end("ok");
        };
        if (released) reply();
        else held.push(reply);
      });
      server.on("connection", function counted() {
        connections += 1;
      });
      await new Promise<void>(function listen(resolve) {
        server.listen(0, "127.0.0.1", resolve);
      });
      const { port } = server.address() as AddressInfo; // listening on TCP
      return {
        url: `http://127.0.0.1:${port}`,
        requests,
        connections: () => connections,
        release() {
          released = true;
          for (const reply of held.splice(0)) reply();
        },
        async close() {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        },
      };
    }

    it("opens only as many as it keeps, and sends each waiting request on the first one freed", async () => {
      const server = await heldServer();
      try {
        const answers = Array.from({ length: 3 * OPTIONS.connections }, (_, i) => outcome(client.get(`${server.url}/${i}`)));
        await vi.waitFor(() => expect(server.requests).toHaveLength(OPTIONS.connections));
        server.release();
        expect(await Promise.all(answers)).toEqual(Array(3 * OPTIONS.connections).fill(200));
        expect(server.requests).toHaveLength(3 * OPTIONS.connections);
        expect(server.connections()).toBe(OPTIONS.connections);
        expect(server.requests.slice(0, OPTIONS.connections).sort()).toEqual(["/0", "/1", "/2", "/3"]); // the first ones were sent first
      } finally {
        await server.close();
      }
    });

    it("never sends a request abandoned while it waited for a connection", async () => {
      const one = new HttpClient({ ...OPTIONS, connections: 1 });
      const server = await heldServer();
      try {
        const first = outcome(one.get(`${server.url}/first`));
        await vi.waitFor(() => expect(server.requests).toEqual(["/first"]));
        const controller = new AbortController();
        const abandoned = one.get(`${server.url}/abandoned`, controller.signal);
        const third = outcome(one.get(`${server.url}/third`));
        controller.abort(new CancelledError("given up"));
        await expect(abandoned).rejects.toBeInstanceOf(CancelledError);
        server.release();
        expect([await first, await third]).toEqual([200, 200]);
        expect(server.requests).toEqual(["/first", "/third"]);
        expect(server.connections()).toBe(1);
      } finally {
        await one.close();
        await server.close();
      }
    });
  });

  it("fails with ConnectionReset when the server drops the connection before answering", async () => {
    site.addFault("/drop", { kind: "drop" });
    await expect(outcome(client.get(site.urlFor("/drop")))).resolves.toBe("ConnectionReset");
    expect(site.requestsFor("/drop")).toBe(1);
  });

  it("makes one request per get() even on a kept-alive connection that is then dropped", async () => {
    site.addPage("/ok", "fine").addFault("/drop", { kind: "drop" });
    await client.get(site.urlFor("/ok"));
    await expect(outcome(client.get(site.urlFor("/drop")))).resolves.toBe("ConnectionReset");
    await expect(outcome(client.get(site.urlFor("/drop")))).resolves.toBe("ConnectionReset");
    expect(site.requestsFor("/drop")).toBe(2);
  });

  const oddResponses: Record<string, string> = {
    "a truncated body": "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhi",
    "a truncated body on a closing connection": "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nhi",
    "a truncated chunked body": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhi",
    "a truncated head": "HTTP/1.1 200 OK\r\nContent-Le",
    "garbage": "garbage\r\n\r\n",
    "a bad chunk size": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n0\r\n\r\n",
    "two different Content-Lengths": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi",
    "a negative Content-Length": "HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\nhi",
    "both Content-Length and chunked": "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
    "a space in a header name": "HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nhi",
    "bare LF line ends": "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",
    "an HTTP/1.0 close-delimited body": "HTTP/1.0 200 OK\r\n\r\nclose-delimited",
    "no reason phrase": "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nhi",
    "103 Early Hints before the response": "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
    "status 099": "HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\nhi",
    "status 999": "HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\nhi",
    "status 1000": "HTTP/1.1 1000 Odd\r\nContent-Length: 2\r\n\r\nhi",
    "no byte at all": "",
    "an unsolicited 101 Switching Protocols": "HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
    "a 101 Switching Protocols with Upgrade to a request that asked for none":
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
    // Each of these is under undici's own maxHeaderSize count (names and values only) and over the shared one.
    "12,000 header lines `a: b` (72 KB on the wire)": `HTTP/1.1 200 OK\r\n${"a: b\r\n".repeat(12_000)}Content-Length: 2\r\n\r\nhi`,
    "a 100 KB chunk extension": `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;${"x".repeat(100_000)}\r\nhi\r\n0\r\n\r\n`,
    "a 70 KB reason phrase": `HTTP/1.1 200 ${"O".repeat(70_000)}\r\nContent-Length: 2\r\n\r\nhi`,
    "70 KB of spaces around a header value": `HTTP/1.1 200 OK\r\nX-A: ${" ".repeat(70_000)}a\r\nContent-Length: 2\r\n\r\nhi`,
  };

  for (const [what, bytes] of Object.entries(oddResponses)) {
    it(`names ${what} as the raw-socket stages' parser does`, async () => {
      site.addFault("/odd", { kind: "raw", bytes });
      await expect(outcome(client.get(site.urlFor("/odd")))).resolves.toBe(sharedOutcome(bytes));
    });
  }

  // Two places where llhttp inside undici and the shared parser disagree; undici gives no way to
  // check the version or accept an unsolicited 100, so these pin what stage 3 does.
  it("accepts an HTTP/2.0 status line, as llhttp does, where the shared parser refuses it", async () => {
    const bytes = "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    site.addFault("/odd", { kind: "raw", bytes });
    await expect(outcome(client.get(site.urlFor("/odd")))).resolves.toBe(200);
    expect(sharedOutcome(bytes)).toBe("BadResponse");
  });

  it("refuses an unsolicited 100 Continue, as undici does, where the shared parser skips it", async () => {
    const bytes = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    site.addFault("/odd", { kind: "raw", bytes });
    await expect(outcome(client.get(site.urlFor("/odd")))).resolves.toBe("BadResponse");
    expect(sharedOutcome(bytes)).toBe(200);
  });

  it("keeps the first of repeated first-only headers and joins the others", async () => {
    site.addFault("/repeated", {
      kind: "raw",
      bytes:
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Type: text/plain\r\n" +
        "X-Many: a\r\nX-Many: b\r\nContent-Length: 2\r\n\r\nhi",
    });
    const response = await client.get(site.urlFor("/repeated"));
    expect(response.headers["content-type"]).toBe("text/html");
    expect(response.headers["x-many"]).toBe("a, b");
  });

  it("rejects with the signal's reason and hangs up when the signal aborts mid-response", async () => {
    site.addFault("/silent", { kind: "silent" });
    const controller = new AbortController();
    const pending = client.get(site.urlFor("/silent"), controller.signal);
    while (site.requestsFor("/silent") === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const reason = new CancelledError();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await site.connectionsClosed();
  });

  it("rejects at once, sending nothing, when the signal is already aborted", async () => {
    site.addPage("/page", "x");
    const reason = new CancelledError();
    await expect(client.get(site.urlFor("/page"), AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(site.totalRequests).toBe(0);
  });

  it("fails the requests in flight and hangs up when closed, and closing again waits for the same end", async () => {
    site.addFault("/silent", { kind: "silent" });
    const pending = client.get(site.urlFor("/silent"));
    while (site.requestsFor("/silent") === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = client.close();
    await expect(pending).rejects.toBeInstanceOf(FetchFailure);
    expect(client.close()).toBe(closing);
    await closing;
    await site.connectionsClosed();
  });

  it("closes every connection when closed", async () => {
    site.addPage("/a", "a");
    await Promise.all(Array.from({ length: 4 }, () => client.get(site.urlFor("/a"))));
    expect(site.openConnections).toBeGreaterThan(0);
    await client.close();
    await site.connectionsClosed();
  });
});
