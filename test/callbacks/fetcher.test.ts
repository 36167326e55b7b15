import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventLoop } from "../../src/callbacks/event-loop.js";
import { Fetcher } from "../../src/callbacks/fetcher.js";
import type { FetcherOptions, FetchOutcome } from "../../src/callbacks/fetcher.js";
import { FixtureSite } from "../../src/site/fixture-site.js";

const options: FetcherOptions = { maxTries: 3, timeoutMs: 2_000, maxBodyBytes: 1024 * 1024, userAgent: "fetcher-test" };

let site: FixtureSite | null = null;

afterEach(async () => {
  await site?.close();
  site = null;
});

/** Runs one Fetcher on its own loop until it hands over its outcome. */
function fetchOne(url: string, fetcherOptions: FetcherOptions = options): Promise<{ outcome: FetchOutcome; fetcher: Fetcher; loop: EventLoop }> {
  return new Promise((resolve) => {
    const loop = new EventLoop();
    let outcome: FetchOutcome | null = null;
    const fetcher = new Fetcher(url, loop, fetcherOptions, function fetched(_fetcher, result) {
      outcome = result;
      loop.stop();
    });
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
    expect(outcome.error).toBeNull();
    expect(outcome.response?.status).toBe(200);
    expect(Buffer.from(outcome.response?.body ?? []).toString()).toBe("<p>import antigravity</p>");
    expect(fetcher.tries).toBe(1);
    expect(fetcher.socket).toBeNull();
    expect(loop.selector.size).toBe(0);
    expect(loop.pendingTimers).toBe(0);
    await site.connectionsClosed();
    expect(site.requestsFor("/353/")).toBe(1);
  });

  it("sends the shared request headers", async () => {
    site = await FixtureSite.start();
    const seen: Array<string | undefined> = [];
    site.addHandler("/", function echo(request, response) {
      seen.push(request.headers["user-agent"], request.headers["accept-encoding"], request.headers.connection);
      response.end("ok");
    });
    await fetchOne(site.urlFor("/"));
    expect(seen).toEqual(["fetcher-test", "gzip, deflate, identity", "close"]);
  });

  it("reads a response larger than one 4096-byte recv", async () => {
    site = await FixtureSite.start();
    site.addPage("/big", "x".repeat(50_000), "text/plain");
    const { outcome } = await fetchOne(site.urlFor("/big"));
    expect(outcome.response?.body.length).toBe(50_000);
  });

  it("retries a refused connection maxTries times, then names the error", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const { outcome, fetcher, loop } = await fetchOne(`http://127.0.0.1:${port}/`);
    expect(outcome).toEqual({ response: null, error: "ConnectionRefused" });
    expect(fetcher.tries).toBe(3);
    expect(loop.pendingTimers).toBe(0);
  });

  it("gives up on a silent server after timeoutMs, once per try", async () => {
    site = await FixtureSite.start();
    site.addFault("/silent", { kind: "silent" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/silent"), { ...options, maxTries: 2, timeoutMs: 50 });
    expect(outcome.error).toBe("Timeout");
    expect(fetcher.tries).toBe(2);
    expect(site.requestsFor("/silent")).toBe(2);
    await site.connectionsClosed();
  });

  it("names a malformed response BadResponse without retrying", async () => {
    site = await FixtureSite.start();
    site.addFault("/garbage", { kind: "raw", bytes: "SMTP ready\r\n\r\n" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/garbage"));
    expect(outcome.error).toBe("BadResponse");
    expect(fetcher.tries).toBe(1);
  });

  it("names a connection dropped before any byte ConnectionReset, after every try", async () => {
    site = await FixtureSite.start();
    site.addFault("/drop", { kind: "drop" });
    const { outcome, fetcher } = await fetchOne(site.urlFor("/drop"));
    expect(outcome.error).toBe("ConnectionReset");
    expect(fetcher.tries).toBe(3);
  });
});
