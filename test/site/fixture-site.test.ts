import { connect } from "node:net";
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { NOT_FOUND_BODY } from "../../src/site/html.js";
import { get, getRequest, rawExchange } from "./helpers.js";

describe("FixtureSite", () => {
  let site: FixtureSite;
  beforeEach(async () => {
    site = await FixtureSite.start();
  });
  afterEach(async () => {
    await site.close();
  });

  it("listens on 127.0.0.1 and builds absolute URLs for paths", () => {
    expect(site.url).toBe(`http://127.0.0.1:${site.port}`);
    expect(site.urlFor("/a/b?c=1#d")).toBe(`${site.url}/a/b?c=1#d`);
  });

  it("serves a page whose links are the given hrefs, in order", async () => {
    site.addPage("/", ["/b", "/a", "mailto:x@example.com", "/a#top"]);
    const response = await get(site.urlFor("/"));
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    const hrefs = [...response.body.toString().matchAll(/href="([^"]*)"/g)].map((match) => match[1]);
    expect(hrefs).toEqual(["/b", "/a", "mailto:x@example.com", "/a#top"]);
  });

  it("serves a body with its content type and status", async () => {
    site.addPage("/text", "plain words", "text/plain", { status: 203, headers: { "X-Extra": "yes" } });
    const response = await get(site.urlFor("/text"));
    expect(response).toMatchObject({ status: 203, headers: { "content-type": "text/plain", "x-extra": "yes" } });
    expect(response.body.toString()).toBe("plain words");
  });

  it("compresses a page with gzip, deflate and raw deflate", async () => {
    site.addPage("/gz", "zipped", "text/plain", { contentEncoding: "gzip" });
    site.addPage("/xgz", "x-zipped", "text/plain", { contentEncoding: "x-gzip" });
    site.addPage("/zlib", "deflated", "text/plain", { contentEncoding: "deflate" });
    site.addPage("/raw", "raw deflated", "text/plain", { contentEncoding: "deflate-raw" });
    const [gz, xgz, zlib, raw] = await Promise.all(["/gz", "/xgz", "/zlib", "/raw"].map((path) => get(site.urlFor(path))));
    expect(gz?.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz?.body ?? Buffer.alloc(0)).toString()).toBe("zipped");
    expect(xgz?.headers["content-encoding"]).toBe("x-gzip");
    expect(gunzipSync(xgz?.body ?? Buffer.alloc(0)).toString()).toBe("x-zipped");
    expect(zlib?.headers["content-encoding"]).toBe("deflate");
    expect(inflateSync(zlib?.body ?? Buffer.alloc(0)).toString()).toBe("deflated");
    expect(raw?.headers["content-encoding"]).toBe("deflate");
    expect(inflateRawSync(raw?.body ?? Buffer.alloc(0)).toString()).toBe("raw deflated");
  });

  it("matches non-ASCII paths the way a URL percent-encodes them", async () => {
    site.addPage("/日本/", "found");
    const response = await get(`${site.url}/%E6%97%A5%E6%9C%AC/`);
    expect(response.body.toString()).toBe("found");
    expect(site.requestsFor("/日本/")).toBe(1);
  });

  it("answers a redirect with its code and Location as given", async () => {
    site.addRedirect("/old", "/new").addRedirect("/moved", "http://example.com/x", 308);
    const [old, moved] = await Promise.all([get(site.urlFor("/old")), get(site.urlFor("/moved"))]);
    expect(old).toMatchObject({ status: 302, headers: { location: "/new" } });
    expect(moved).toMatchObject({ status: 308, headers: { location: "http://example.com/x" } });
  });

  it("answers an unknown path with a 404", async () => {
    const response = await get(site.urlFor("/nowhere"));
    expect(response.status).toBe(404);
    expect(response.body.toString()).toBe(NOT_FOUND_BODY);
  });

  it("answers 500 when a handler throws", async () => {
    site.addHandler("/bug", function broken() {
      throw new Error("handler bug");
    });
    const response = await get(site.urlFor("/bug"));
    expect(response.status).toBe(500);
    expect(response.body.toString()).toContain("handler bug");
  });

  it("counts requests per path and in total, until reset", async () => {
    site.addPage("/", ["/a"]);
    await get(site.urlFor("/"));
    await get(site.urlFor("/"));
    await get(site.urlFor("/missing?x=1"));
    expect(site.requestsFor("/")).toBe(2);
    expect(site.requestsFor("/missing?x=1")).toBe(1);
    expect(site.requestsFor("/missing")).toBe(0);
    expect(site.totalRequests).toBe(3);
    site.resetCounters();
    expect(site.requestsFor("/")).toBe(0);
    expect(site.totalRequests).toBe(0);
  });

  it("logs every request's path and query with its arrival time, in order of arrival", async () => {
    site.addPage("/", ["/a"]);
    const before = performance.now();
    await get(site.urlFor("/"));
    await get(site.urlFor("/missing?x=1"));
    await get(site.urlFor("/日本"));
    const log = site.requests();
    expect(log.map((request) => request.path)).toEqual(["/", "/missing?x=1", "/%E6%97%A5%E6%9C%AC"]);
    expect(log[0]?.at).toBeGreaterThanOrEqual(before);
    expect(log[1]?.at).toBeGreaterThanOrEqual(log[0]?.at ?? Infinity);
    expect(log[2]?.at).toBeGreaterThanOrEqual(log[1]?.at ?? Infinity);
  });

  it("logs a delayed request when it arrives, not when it is answered", async () => {
    site.addPage("/slow", "slow").setDelay("/slow", 60_000);
    void rawExchange(site.port, getRequest("/slow"));
    await vi.waitFor(() => expect(site.requests().map((request) => request.path)).toEqual(["/slow"]));
    expect(site.requestsInFlight).toBe(1);
  });

  it("hands out a copy of the log and empties it on resetCounters", async () => {
    await get(site.urlFor("/a"));
    const log = site.requests();
    await get(site.urlFor("/b"));
    expect(log).toHaveLength(1);
    expect(site.requests()).toHaveLength(2);
    site.resetCounters();
    expect(site.requests()).toEqual([]);
  });

  it("serves robots.txt as plain text", async () => {
    site.addRobots("User-agent: *\nDisallow: /private/\n");
    const response = await get(site.urlFor("/robots.txt"));
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(response.body.toString()).toBe("User-agent: *\nDisallow: /private/\n");
  });

  it("refuses a path the given number of times with Retry-After, then serves its page", async () => {
    site.addRetryAfter("/busy", { status: 503, retryAfter: "2", times: 2, then: ["/a"] });
    site.addRetryAfter("/limited", { status: 429, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", times: 1, then: "at last" });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await get(site.urlFor("/busy"));
      statuses.push(response.status);
      if (response.status === 503) {
        expect(response.headers["retry-after"]).toBe("2");
        expect(response.body.toString()).toBe("Service Unavailable\n");
      } else {
        expect(response.headers["retry-after"]).toBeUndefined();
        expect(response.body.toString()).toContain('<a href="/a">');
      }
    }
    expect(statuses).toEqual([503, 503, 200, 200]);
    const limited = await get(site.urlFor("/limited"));
    expect(limited).toMatchObject({ status: 429, headers: { "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT" } });
    expect((await get(site.urlFor("/limited"))).body.toString()).toBe("at last");
    expect(site.requestsFor("/busy")).toBe(4);
  });

  it("serves the page at once when no refusal is asked for, and rejects a count below 0", async () => {
    site.addRetryAfter("/open", { status: 429, retryAfter: "1", times: 0, then: "open" });
    expect((await get(site.urlFor("/open"))).status).toBe(200);
    expect(() => site.addRetryAfter("/bad", { status: 429, retryAfter: "1", times: -1, then: "" })).toThrow(RangeError);
    expect(() => site.addRetryAfter("/bad", { status: 503, retryAfter: "1", times: 1.5, then: "" })).toThrow("times");
  });

  it("counts the peak of requests in flight at once", async () => {
    const held: ServerResponse[] = [];
    site.addHandler("/held", function holdUntilThree(_request, response) {
      held.push(response);
      if (held.length === 3) for (const waiting of held) waiting.end("released");
    });
    const responses = await Promise.all([1, 2, 3].map(() => get(site.urlFor("/held"))));
    expect(responses.map((response) => response.body.toString())).toEqual(["released", "released", "released"]);
    expect(site.peakRequestsInFlight).toBe(3);
    expect(site.peakConnections).toBe(3);
    await site.connectionsClosed();
    expect(site.requestsInFlight).toBe(0);
    expect(site.openConnections).toBe(0);
  });

  it("holds a delayed route's request in flight until the delay ends", async () => {
    site.addPage("/slow", "slow").setDelay("/slow", 60_000);
    const exchange = rawExchange(site.port, getRequest("/slow"));
    await vi.waitFor(() => expect(site.requestsInFlight).toBe(1));
    await site.close();
    expect((await exchange).bytes.length).toBe(0);
  });

  it("resolves connectionsClosed once the clients have closed", async () => {
    site.addPage("/", "hello");
    await get(site.urlFor("/"));
    await site.connectionsClosed();
    expect(site.openConnections).toBe(0);
  });

  it("rejects connectionsClosed, naming the count, while a connection stays open", async () => {
    const socket = connect(site.port, "127.0.0.1");
    await vi.waitFor(() => expect(site.openConnections).toBe(1));
    await expect(site.connectionsClosed(50)).rejects.toThrow("1 connection(s) to the fixture site still open after 50 ms");
    socket.destroy();
    await site.connectionsClosed();
  });

  it("closes idle keep-alive connections and is safe to close twice", async () => {
    const socket = connect(site.port, "127.0.0.1");
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await vi.waitFor(() => expect(site.openConnections).toBe(1));
    await Promise.all([site.close(), site.close()]);
    await closed;
    expect(site.openConnections).toBe(0);
  });
});

describe("FixtureSite.start", () => {
  it("delays every route by the site's delayMs unless the route overrides it", async () => {
    const site = await FixtureSite.start({ delayMs: 60_000 });
    site.addPage("/quick", "quick").setDelay("/quick", 0).addPage("/slow", "slow");
    expect((await get(site.urlFor("/quick"))).body.toString()).toBe("quick");
    void rawExchange(site.port, getRequest("/slow"));
    await vi.waitFor(() => expect(site.requestsFor("/slow")).toBe(1));
    expect(site.requestsInFlight).toBe(1);
    await site.close();
  });

  it("rejects a negative delay", async () => {
    await expect(FixtureSite.start({ delayMs: -1 })).rejects.toThrow(RangeError);
  });
});
