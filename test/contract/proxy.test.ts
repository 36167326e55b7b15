/**
 * Every stage crawls through a forward proxy (the `proxy` and `noProxy`
 * options): a real proxy on 127.0.0.1 (test/helpers/forward-proxy.ts) that
 * forwards absolute-form requests and opens `CONNECT` tunnels, counting both.
 * A crawl through it gives the records a direct crawl gives; a proxy that
 * refuses, or is not there, gives records whose `detail` names it; and no
 * stage leaves a connection to it open.
 */
import net, { type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";
import { startForwardProxy, type ForwardProxy, type ForwardProxyOptions } from "../helpers/forward-proxy.js";
import { startTinyproxy, TINYPROXY } from "../helpers/tinyproxy.js";
import { startTlsSite, TEST_CA, type TlsSite } from "../helpers/tls-site.js";
import { sitesOfEachTest } from "./sites.js";
import { stages } from "./stages.js";

/** A record without `fetchedAt`, the one field a crawl with one worker leaves to timing. */
function withoutTime({ fetchedAt: _when, ...rest }: FetchStatistic): Omit<FetchStatistic, "fetchedAt"> {
  return rest;
}

/** The records, timeless, in the order they came (one worker: the same order every run). */
function timeless(result: CrawlResult): Array<Omit<FetchStatistic, "fetchedAt">> {
  return result.records.map(withoutTime);
}

describe.each(stages)("$name crawler through a forward proxy", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();
  let proxies: ForwardProxy[] = [];
  let tlsSites: TlsSite[] = [];

  afterEach(async () => {
    const started = proxies;
    const sites = tlsSites;
    proxies = [];
    tlsSites = [];
    try {
      for (const proxy of started) await proxy.connectionsClosed(); // No stage leaves a connection to the proxy open.
    } finally {
      await Promise.all([...started.map((proxy) => proxy.close()), ...sites.map((site) => site.close())]);
    }
  });

  async function startProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
    const proxy = await startForwardProxy(options);
    proxies.push(proxy);
    return proxy;
  }

  async function startSecureSite(): Promise<TlsSite> {
    const site = await startTlsSite("localhost");
    tlsSites.push(site);
    return site;
  }

  async function threePages(): Promise<string> {
    const site = await startSite();
    site.addPage("/", ["/a", "/b"]);
    site.addPage("/a", ["/b", "/"]);
    site.addPage("/b", ["/missing"]);
    return `${site.url}/`;
  }

  it("sends every request, robots.txt too, through the proxy in absolute-form, and records what a direct crawl records", async () => {
    const root = await threePages();
    const proxy = await startProxy();
    const direct = await crawl(root, { maxTasks: 1, robots: true });
    const proxied = await crawl(root, { maxTasks: 1, robots: true, proxy: proxy.url });
    expect(timeless(proxied)).toEqual(timeless(direct));
    const origin = new URL(root).origin;
    expect(proxy.requests.toSorted()).toEqual([`${origin}/`, `${origin}/a`, `${origin}/b`, `${origin}/missing`, `${origin}/robots.txt`]);
    expect(proxied.records).toHaveLength(4); // pages; the robots.txt is the fifth request
  });

  it("sends the proxy URL's credentials as Proxy-Authorization (Basic) with each request", async () => {
    const root = await threePages();
    const proxy = await startProxy({ auth: "crawler:s3cr%t" });
    const result = await crawl(root, { maxTasks: 2, proxy: `http://crawler:s3cr%25t@127.0.0.1:${proxy.port}` });
    expect(result.records.map((record) => record.status).toSorted()).toEqual([200, 200, 200, 404]);
    expect(proxy.authorizations).toEqual(Array(4).fill(`Basic ${Buffer.from("crawler:s3cr%t").toString("base64")}`));
  });

  it("reaches an https site through a CONNECT tunnel, TLS checked end to end", async () => {
    const site = await startSecureSite();
    const proxy = await startProxy({ auth: "u:p" });
    const direct = await crawl(site.url, { maxTasks: 1, ca: TEST_CA });
    const proxied = await crawl(site.url, { maxTasks: 1, ca: TEST_CA, proxy: `http://u:p@127.0.0.1:${proxy.port}` });
    expect(timeless(proxied)).toEqual(timeless(direct));
    expect(proxied.records.map((record) => record.status)).toEqual([200, 200]);
    expect(proxy.requests).toEqual([]); // no absolute-form request: the https requests went inside the tunnel
    expect(proxy.connects.length).toBeGreaterThanOrEqual(1);
    expect(new Set(proxy.connects)).toEqual(new Set([new URL(site.url).host]));
    expect(new Set(proxy.authorizations)).toEqual(new Set([`Basic ${Buffer.from("u:p").toString("base64")}`]));
  });

  it("sends the target's host name by SNI through the tunnel, and checks the certificate against it", async () => {
    const site = await startSecureSite();
    const proxy = await startProxy();
    const root = site.url.replace("127.0.0.1", "localhost");
    const result = await crawl(root, { maxTasks: 1, ca: TEST_CA, proxy: proxy.url });
    expect(result.records.map((record) => record.status)).toEqual([200, 200]);
    expect(new Set(site.servernames)).toEqual(new Set(["localhost"]));
    expect(new Set(proxy.connects)).toEqual(new Set([new URL(root).host]));
  });

  it("checks the target's certificate through the tunnel: an unknown CA is a TlsError", async () => {
    const site = await startSecureSite();
    const proxy = await startProxy();
    const result = await crawl(site.url, { maxTries: 1, proxy: proxy.url });
    expect(result.records.map((record) => record.error)).toEqual(["TlsError"]);
    expect(proxy.connects).toEqual([new URL(site.url).host]);
  });

  it("goes direct to the hosts noProxy names, and through the proxy to the others", async () => {
    const root = await threePages();
    const proxy = await startProxy();
    const port = new URL(root).port;
    const bypassed = await crawl(root, { maxTasks: 1, proxy: proxy.url, noProxy: [`127.0.0.1:${port}`] });
    expect(bypassed.records).toHaveLength(4);
    expect(proxy.requests).toEqual([]);
    await crawl(root, { maxTasks: 1, proxy: proxy.url, noProxy: ["example.com", `127.0.0.1:${Number(port) + 1}`] });
    expect(proxy.requests).toHaveLength(4);
  });

  it.each([407, 403])("records ConnectionRefused, naming the proxy and its status, when the proxy answers %i to CONNECT", async (status) => {
    const site = await startSecureSite();
    const proxy = await startProxy(status === 407 ? { auth: "u:right" } : { refuseConnect: 403 });
    const result = await crawl(site.url, { ca: TEST_CA, maxTries: 2, retryDelayMs: 0, proxy: `http://u:wrong@127.0.0.1:${proxy.port}` });
    const host = new URL(site.url).host;
    expect(result.records).toEqual([expect.objectContaining({ url: site.url, status: null, error: "ConnectionRefused", tries: 2 })]);
    expect(result.records[0].detail).toMatch(new RegExp(`^proxy 127\\.0\\.0\\.1:${proxy.port} answered ${status} \\(.+\\) to CONNECT ${host.replace(/\./g, "\\.")}$`));
    expect(proxy.connects).toEqual([host, host]);
  });

  it("records the proxy's own answer for an http URL: a 407 is the page's status", async () => {
    const root = await threePages();
    const proxy = await startProxy({ auth: "u:right" });
    const result = await crawl(root, { maxTries: 1, proxy: `http://u:wrong@127.0.0.1:${proxy.port}` });
    expect(result.records).toEqual([expect.objectContaining({ url: root, status: 407, error: null })]);
  });

  it("records ConnectionRefused naming the proxy when nothing listens at its address", async () => {
    const root = await threePages();
    const proxy = await startProxy();
    const port = proxy.port;
    await proxy.close(); // Nothing listens there any more.
    for (const target of [root, "https://127.0.0.1:9/"]) {
      const result = await crawl(target, { maxTries: 1, proxy: `http://127.0.0.1:${port}` });
      expect(result.records).toEqual([expect.objectContaining({ url: target, status: null, error: "ConnectionRefused" })]);
      expect(result.records[0].detail).toBe(`proxy 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
    }
  });

  it("fails with Timeout when the proxy never answers CONNECT, and closes its connection to it", async () => {
    const open = new Set<Socket>();
    let accepted = 0;
    const silent = net.createServer(function neverAnswer(socket) {
      accepted += 1;
      open.add(socket);
      socket.resume(); // reads (and drops) the CONNECT, so that the crawler's close is seen
      socket.on("close", function closed() { open.delete(socket); });
    });
    await new Promise<void>(function listen(resolve) { silent.listen(0, "127.0.0.1", resolve); });
    const { port } = silent.address() as AddressInfo; // listening on TCP: an AddressInfo
    try {
      const result = await crawl("https://127.0.0.1:9/", { maxTries: 1, idleTimeoutMs: 300, proxy: `http://127.0.0.1:${port}` });
      expect(result.records.map((record) => record.error)).toEqual(["Timeout"]);
      expect(accepted).toBe(1);
      for (let turns = 0; open.size > 0 && turns < 200; turns += 1) await new Promise(function later(resolve) { setTimeout(resolve, 10); });
      expect(open.size).toBe(0);
    } finally {
      for (const socket of open) socket.destroy(); // left open by a failing stage: closed, so that the test fails rather than hangs
      await new Promise(function closed(resolve) { silent.close(resolve); });
    }
  });

  it("uses each scheme's own proxy: { http } leaves https URLs direct", async () => {
    const site = await startSecureSite();
    const proxy = await startProxy();
    const result = await crawl(site.url, { maxTasks: 1, ca: TEST_CA, proxy: { http: proxy.url, https: null } });
    expect(result.records.map((record) => record.status)).toEqual([200, 200]);
    expect(proxy.connects).toEqual([]);
  });
});

/** Why the tinyproxy suite is skipped, in its name, when it is. */
const TINYPROXY_ABSENT = TINYPROXY === null ? " (skipped: tinyproxy is not installed; apt-get install tinyproxy, as .ci/run does)" : "";

describe.skipIf(TINYPROXY === null).each(stages)(`$name crawler through Debian's tinyproxy${TINYPROXY_ABSENT}`, ({ crawl }) => {
  const { startSite } = sitesOfEachTest();

  it("sends each http request through it in absolute-form and each https one through a CONNECT tunnel, with the credentials, and records what a direct crawl records", async () => {
    const proxy = await startTinyproxy("bot:hunter2");
    const secure = await startTlsSite("localhost");
    try {
      const site = await startSite();
      site.addPage("/", ["/a"]);
      site.addPage("/a", []);
      const root = `${site.url}/`;
      const options = { maxTasks: 1, robots: true, ca: TEST_CA };
      const via = { ...options, proxy: `http://bot:hunter2@127.0.0.1:${proxy.port}` };
      expect(timeless(await crawl(root, via))).toEqual(timeless(await crawl(root, options)));
      expect(timeless(await crawl(secure.url, via))).toEqual(timeless(await crawl(secure.url, options)));
      const refused = await crawl(secure.url, { ...options, maxTries: 1, proxy: `http://bot:wrong@127.0.0.1:${proxy.port}` });
      // tinyproxy 1.11 answers a CONNECT with wrong credentials 401, not 407; met first reading robots.txt, which the detail says.
      expect(refused.records.map((record) => record.error)).toEqual(["ConnectionRefused"]);
      expect(refused.records[0].detail).toMatch(new RegExp(`: proxy 127\\.0\\.0\\.1:${proxy.port} answered 40[17] \\(.+\\) to CONNECT ${new URL(secure.url).host.replace(/\./g, "\\.")}$`));
      await proxy.close(); // Its log is read whole once it has exited (the log comes through a pipe, which may lag the responses).
      const requests = proxy.requests();
      expect(requests.filter((line) => line.startsWith("GET ")).toSorted()).toEqual([`GET ${site.url}/ HTTP/1.1`, `GET ${site.url}/a HTTP/1.1`, `GET ${site.url}/robots.txt HTTP/1.1`]);
      const connects = requests.filter((line) => line.startsWith("CONNECT "));
      expect(connects.length).toBeGreaterThanOrEqual(1);
      expect(new Set(connects)).toEqual(new Set([`CONNECT ${new URL(secure.url).host} HTTP/1.1`]));
    } finally {
      await Promise.all([proxy.close(), secure.close()]);
    }
  });
});
