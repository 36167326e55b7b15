/**
 * Cookies (`cookies`, `cookieFile`) and `allowedDomains`, held to
 * docs/behaviour.md ("Cookies", "Which URLs are crawled") in every stage,
 * against real fixture sites: what their servers saw in each request's
 * `Cookie` header, and what the crawl recorded.
 *
 * The tests that need several host names give the crawl a `network` that
 * connects every name to 127.0.0.1 at the URL's port: real sockets and real
 * servers, only the name lookup stands in (the machine has no DNS for
 * `a.test`; cookies ignore ports, so two ports of 127.0.0.1 would be one
 * host to a jar).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CookieJar } from "tough-cookie";
import { afterAll, describe, expect, it } from "vitest";
import type { FixtureSite } from "../../src/site/fixture-site.js";
import { linksHtml } from "../../src/site/html.js";
import type { Network, NetworkAddress } from "../../src/kernel/socket.js";
import { sitesOfEachTest } from "./sites.js";
import { stages, withFourth } from "./stages.js";

/** The `Cookie` header of each request a site received, by path, in order of arrival ("" when none came). */
function cookieLog(): { seen: Array<[string, string]>; note(request: IncomingMessage): void } {
  const seen: Array<[string, string]> = [];
  return {
    seen,
    note(request) {
      seen.push([request.url ?? "", request.headers.cookie ?? ""]);
    },
  };
}

/** Serves `body` as HTML with `status` and more headers. */
function html(response: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void {
  response.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)), ...headers }).end(body);
}

/**
 * A site with a login: `/` links to `/login`, which sets the session cookie
 * (with a second cookie whose `Expires` holds a comma) and redirects to
 * `/members`; `/members` and `/members/a` answer 403 without the session.
 */
function loginSite(site: FixtureSite): ReturnType<typeof cookieLog> {
  const log = cookieLog();
  const member = (request: IncomingMessage): boolean => /(?:^|; )session=s3cret(?:;|$)/.test(request.headers.cookie ?? "");
  site.addHandler("/", function root(request, response) {
    log.note(request);
    html(response, 200, linksHtml(["/login"]));
  });
  site.addHandler("/login", function login(request, response) {
    log.note(request);
    response.writeHead(302, { Location: "/members", "Content-Length": "0", "Set-Cookie": ["session=s3cret; Path=/; HttpOnly", "seen=1; Path=/; Expires=Wed, 21 Oct 2099 07:28:00 GMT"] }).end();
  });
  for (const path of ["/members", "/members/a"]) {
    site.addHandler(path, function members(request, response) {
      log.note(request);
      if (member(request)) html(response, 200, linksHtml(path === "/members" ? ["/members/a"] : []));
      else html(response, 403, "no session\n");
    });
  }
  return log;
}

describe.each(withFourth)("$name crawler, with cookies", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();

  it("logs in: the cookie /login sets on its redirect opens the pages behind it", async () => {
    const site = await startSite();
    const log = loginSite(site);
    const result = await crawl(site.url, { cookies: true, maxTasks: 1 });
    expect(result.records.map((record) => [new URL(record.url).pathname, record.status])).toEqual([
      ["/", 200],
      ["/login", 302],
      ["/members", 200],
      ["/members/a", 200],
    ]);
    expect(log.seen).toEqual([
      ["/", ""],
      ["/login", ""],
      ["/members", "session=s3cret; seen=1"],
      ["/members/a", "session=s3cret; seen=1"],
    ]);
  });

  it("fills a jar of the caller's own, which can be read after the crawl", async () => {
    const site = await startSite();
    loginSite(site);
    const jar = new CookieJar();
    const result = await crawl(site.url, { cookies: jar, maxTasks: 2 });
    expect(result.records.filter((record) => record.status === 200)).toHaveLength(3);
    expect(jar.getCookieStringSync(`${site.url}/`)).toBe("session=s3cret; seen=1");
    expect(jar.getCookieStringSync("http://localhost/")).toBe("");
  });

  it("sends no cookie without the option: the pages behind the login stay 403", async () => {
    const site = await startSite();
    const log = loginSite(site);
    const result = await crawl(site.url, { maxTasks: 1 });
    expect(result.records.map((record) => [new URL(record.url).pathname, record.status])).toEqual([
      ["/", 200],
      ["/login", 302],
      ["/members", 403],
    ]);
    expect(log.seen.every(([, cookie]) => cookie === "")).toBe(true);
    expect(log.seen).toHaveLength(3);
  });
});

describe.each(withFourth)("$name crawler, with a cookie file", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();
  const dir = mkdtempSync(join(tmpdir(), "cookie-file-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts from the file's cookies, sent with robots.txt and the sitemap too", async () => {
    const site = await startSite();
    const log = loginSite(site);
    for (const path of ["/robots.txt", "/sitemap.xml"]) {
      site.addHandler(path, function logged(request, response) {
        log.note(request);
        response.writeHead(404, { "Content-Length": "0" }).end();
      });
    }
    const file = join(dir, "cookies.txt");
    writeFileSync(file, `# Netscape HTTP Cookie File\n#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\ts3cret\n`);
    const result = await crawl(`${site.url}/members`, { cookieFile: file, robots: true, sitemaps: true, maxTasks: 1 });
    expect(result.records.filter((record) => record.status === 200).map((record) => new URL(record.url).pathname)).toEqual(["/members", "/members/a"]);
    expect(new Set(log.seen.map(([path]) => path))).toEqual(new Set(["/robots.txt", "/sitemap.xml", "/members", "/members/a"]));
    for (const [, cookie] of log.seen) expect(cookie).toBe("session=s3cret");
  });
});

/**
 * A network where every host name is 127.0.0.1: a connection to
 * `http://any.name:PORT/` reaches the fixture site listening on PORT.
 * A real socket; only the name lookup is skipped.
 */
const namesOnLoopback: Network = {
  connect(address: NetworkAddress): Socket {
    return connect({ host: "127.0.0.1", port: address.port, allowHalfOpen: address.allowHalfOpen ?? false });
  },
};

describe.each(stages)("$name crawler, cookies across hosts", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();

  /**
   * Host `a.test` sets a host-only cookie and a `Domain=a.test` one on its
   * root, which links to its subdomain `www.a.test` and to `b.test` (each
   * its own site, so each logs its own requests).
   */
  async function threeHosts(): Promise<{ a: string; www: string; b: string; seen: Map<string, string[]> }> {
    const [siteA, siteWww, siteB] = [await startSite(), await startSite(), await startSite()];
    const a = `http://a.test:${siteA.port}`;
    const www = `http://www.a.test:${siteWww.port}`;
    const b = `http://b.test:${siteB.port}`;
    const seen = new Map<string, string[]>();
    function logged(name: string, links: string[], headers: Record<string, string | string[]> = {}) {
      return function page(request: IncomingMessage, response: ServerResponse): void {
        seen.set(name, [...(seen.get(name) ?? []), request.headers.cookie ?? ""]);
        html(response, 200, linksHtml(links), headers);
      };
    }
    siteA.addHandler("/", logged("a", [`${www}/`, `${b}/`], { "Set-Cookie": ["host=a; Path=/", "wide=a; Path=/; Domain=a.test", "safe=a; Path=/; Secure"] }));
    siteWww.addHandler("/", logged("www", []));
    siteB.addHandler("/", logged("b", []));
    return { a, www, b, seen };
  }

  it("sends a cookie only to the host that set it, a Domain cookie to its subdomains too, a Secure one never over http", async () => {
    const { a, seen } = await threeHosts();
    const jar = new CookieJar();
    jar.setCookieSync("pre=1; Path=/; Secure; Domain=a.test", "https://a.test/"); // as if set over https before: never sent over http
    const result = await crawl(`${a}/`, { cookies: jar, allowedDomains: ["a.test", "b.test"], network: namesOnLoopback, maxTasks: 1 });
    expect(result.records.map((record) => record.status)).toEqual([200, 200, 200]);
    expect(jar.getCookieStringSync("https://www.a.test/")).toBe("pre=1; wide=a");
    expect(seen.get("a")).toEqual([""]);
    expect(seen.get("www")).toEqual(["wide=a"]); // not host=a (host-only), not safe=a (Secure, set over http: dropped), not pre=1 (Secure)
    expect(seen.get("b")).toEqual([""]);
  });

  it("follows links to the allowedDomains and their subdomains only, whatever strict says", async () => {
    const { a, www, b, seen } = await threeHosts();
    const strict = await crawl(`${a}/`, { network: namesOnLoopback, maxTasks: 1 });
    expect(strict.records.map((record) => record.url)).toEqual([`${a}/`, `${www}/`]); // www. is the same host to strict
    const onlyA = await crawl(`${a}/`, { strict: true, allowedDomains: ["A.test"], network: namesOnLoopback, maxTasks: 1 });
    expect(onlyA.records.map((record) => record.url)).toEqual([`${a}/`, `${www}/`]);
    const withB = await crawl(`${a}/`, { allowedDomains: ["b.test"], exclude: "www\\.", network: namesOnLoopback, maxTasks: 1 });
    expect(withB.records.map((record) => record.url)).toEqual([`${a}/`, `${b}/`]); // exclude still applies
    expect(seen.get("b")).toEqual([""]);
  });
});
