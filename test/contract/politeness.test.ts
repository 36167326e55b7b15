/**
 * Politeness, held to docs/behaviour.md ("Politeness: robots.txt, hosts,
 * delays, Retry-After") in every registered stage: what each host's server
 * saw (its request log, its peak of requests in flight) and what the crawl
 * recorded. A host is an origin, so several hosts are several FixtureSites on
 * ports of 127.0.0.1.
 *
 * Timing is checked only from below, on the servers' arrival times against
 * a reading of the same clock taken before the crawl (a loaded machine can
 * only make a request arrive later); everything else is counted.
 */
import type { ServerResponse } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { RobotsFetch } from "../../src/crawl/robots.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { FixtureSite, ReceivedRequest } from "../../src/site/fixture-site.js";
import { linksHtml } from "../../src/site/html.js";
import { errorRecordOf, linksPageRecord, pageRecordOf } from "./records.js";
import { sitesOfEachTest } from "./sites.js";
import { withFourth } from "./stages.js";

const DISALLOW_PRIVATE = "User-agent: *\nDisallow: /private/\n";

function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

function byOrigin(fetches: readonly RobotsFetch[]): RobotsFetch[] {
  return [...fetches].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
}

function pathsOf(requests: ReadonlyArray<ReceivedRequest>): string[] {
  return requests.map((request) => request.path);
}

/** Answers with the page `addPage(path, [])` serves: a page of no links. */
function answerEmptyPage(response: ServerResponse): void {
  const body = linksHtml([]);
  response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)) }).end(body);
}

/** A port of 127.0.0.1 nobody listens on: one the system handed out a moment ago, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo; // listening on TCP: an AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.each(withFourth)("$name crawler, politely", ({ crawl, Crawler }) => {
  const { startSite, startGroup } = sitesOfEachTest();

  describe("robots.txt", () => {
    it("never requests a disallowed path, records it as RobotsDisallowed and crawls the rest", async () => {
      const site = await startSite();
      const u = (path: string): string => site.urlFor(path);
      site.addRobots(DISALLOW_PRIVATE);
      site.addPage("/", ["/a", "/private/x", "/private/y"]).addPage("/a", ["/private/z", "/b"]).addPage("/b", []);
      site.addPage("/private/x", ["/c"]).addPage("/private/y", []).addPage("/private/z", []).addPage("/c", []);
      const result = await crawl(site.url, { robots: true, maxTasks: 10 });
      expect(pathsOf(site.requests()).filter((path) => path.startsWith("/private/") || path === "/c")).toEqual([]);
      expect(site.requests()[0]?.path).toBe("/robots.txt"); // before the first page
      expect(byUrl(result.records)).toEqual(
        byUrl([
          linksPageRecord(u("/"), ["/a", "/private/x", "/private/y"], 3, 3),
          linksPageRecord(u("/a"), ["/private/z", "/b"], 2, 2),
          linksPageRecord(u("/b"), [], 0, 0),
          errorRecordOf(u("/private/x"), "RobotsDisallowed"),
          errorRecordOf(u("/private/y"), "RobotsDisallowed"),
          errorRecordOf(u("/private/z"), "RobotsDisallowed"),
        ]),
      );
      expect(result.todo).toBe(0);
      expect(result.robots).toEqual([
        { origin: site.url, url: u("/robots.txt"), status: 200, error: null, detail: null, verdict: "rules", crawlDelayMs: null, attempts: 1 },
      ]);
      expect(site.requestsFor("/robots.txt")).toBe(1);
    });

    it("ends when the last URL waiting for its host's delay is one robots.txt refuses", async () => {
      const site = await startSite();
      site.addRobots(DISALLOW_PRIVATE);
      site.addPage("/", []).addPage("/private/a", []);
      // Both roots are taken while robots.txt is read, so both wait in the host's line; after the
      // delay, "/" goes, and after another, "/private/a" gets its turn only to be refused, on a timer
      // (stage 1 once waited forever here). Usually the last thing the crawl does; on a loaded machine
      // "/" may still be on its way when the second delay is over, so the records' order is not checked.
      const result = await crawl([site.urlFor("/"), site.urlFor("/private/a")], { robots: true, delayMs: 30, maxTasks: 2 });
      expect(result.records.map((record) => [new URL(record.url).pathname, record.error]).sort()).toEqual([
        ["/", null],
        ["/private/a", "RobotsDisallowed"],
      ]);
      expect(result.todo).toBe(0);
      expect(pathsOf(site.requests())).toEqual(["/robots.txt", "/"]);
    });

    it("reads each origin's robots.txt once, however many workers wait for it", async () => {
      const group = await startGroup({
        hosts: 3,
        pagesPerHost: 20,
        linksPerPage: 3,
        seed: 4,
        robots: (host) => (host === 1 ? "User-agent: *\nDisallow: /p/1\n" : "User-agent: *\nDisallow: /nothing-here\n"),
      });
      // A slow robots.txt: every URL of its host found meanwhile waits in the host's line.
      for (const site of group.sites) site.setDelay("/robots.txt", 30);
      const disallowed = (url: string): boolean => new URL(url).origin === group.origins[1] && new URL(url).pathname.startsWith("/p/1");
      const result = await crawl(group.url, { robots: true, maxTasks: 20 });
      for (const site of group.sites) {
        expect({ host: site.url, robotsRequests: site.requestsFor("/robots.txt"), first: site.requests()[0]?.path }).toEqual({
          host: site.url,
          robotsRequests: 1,
          first: "/robots.txt",
        });
      }
      expect(pathsOf(group.sites[1]?.requests() ?? []).filter((path) => path.startsWith("/p/1"))).toEqual([]);
      const expected = group.reachable((url) => !disallowed(url));
      expect(result.records.map((record) => record.url).sort()).toEqual([...expected].sort());
      for (const record of result.records) {
        const want = disallowed(record.url) ? { status: null, error: "RobotsDisallowed" } : { status: 200, error: null };
        expect({ url: record.url, status: record.status, error: record.error }).toEqual({ url: record.url, ...want });
      }
      expect(byOrigin(result.robots).map(({ origin, verdict, attempts }) => ({ origin, verdict, attempts }))).toEqual(
        [...group.origins].sort().map((origin) => ({ origin, verdict: "rules", attempts: 1 })),
      );
    });

    it("uses the group of its user agent's product token when robots.txt has one, else *", async () => {
      const site = await startSite();
      site.addRobots("User-agent: testbot\nDisallow: /tb/\n\nUser-agent: *\nDisallow: /star/\n");
      site.addPage("/", ["/tb/1", "/star/1"]).addPage("/tb/1", []).addPage("/star/1", []);

      const asTestbot = await crawl(site.url, { robots: true, userAgent: "testbot/1.0" });
      expect(site.requestsFor("/tb/1")).toBe(0);
      expect(site.requestsFor("/star/1")).toBe(1);
      expect(byUrl(asTestbot.records)).toEqual(
        byUrl([linksPageRecord(site.urlFor("/"), ["/tb/1", "/star/1"], 2, 2), errorRecordOf(site.urlFor("/tb/1"), "RobotsDisallowed"), linksPageRecord(site.urlFor("/star/1"), [], 0, 0)]),
      );

      site.resetCounters();
      const asUs = await crawl(site.url, { robots: true });
      expect(site.requestsFor("/tb/1")).toBe(1);
      expect(site.requestsFor("/star/1")).toBe(0);
      expect(asUs.records.find((record) => record.url === site.urlFor("/star/1"))?.error).toBe("RobotsDisallowed");
    });

    it("allows everything when robots.txt is a 404", async () => {
      const site = await startSite();
      site.addPage("/", ["/a"]).addPage("/a", []);
      const result = await crawl(site.url, { robots: true });
      expect(result.records).toEqual([linksPageRecord(site.urlFor("/"), ["/a"], 1, 1), linksPageRecord(site.urlFor("/a"), [], 0, 0)]);
      expect(result.robots).toEqual([
        { origin: site.url, url: site.urlFor("/robots.txt"), status: 404, error: null, detail: null, verdict: "allow-all", crawlDelayMs: null, attempts: 1 },
      ]);
      expect(pathsOf(site.requests())).toEqual(["/robots.txt", "/", "/a"]);
    });

    it("fetches nothing from an origin whose robots.txt answers 500 on every attempt, and crawls the others", async () => {
      const home = await startSite();
      const down = await startSite();
      down.addPage("/robots.txt", "down for maintenance\n", "text/plain; charset=utf-8", { status: 500 });
      down.addPage("/", ["/inner"]).addPage("/x", []).addPage("/inner", []);
      const links = [down.urlFor("/"), down.urlFor("/x"), "/a"];
      home.addPage("/", links).addPage("/a", []);
      const result = await crawl(home.url, { robots: true, maxTries: 2, retryDelayMs: 0 });
      expect(pathsOf(down.requests())).toEqual(["/robots.txt", "/robots.txt"]);
      expect(byUrl(result.records)).toEqual(
        byUrl([
          linksPageRecord(home.urlFor("/"), links, 3, 3),
          linksPageRecord(home.urlFor("/a"), [], 0, 0),
          { ...errorRecordOf(down.urlFor("/"), "RobotsUnreachable", home.urlFor("/"), `robots.txt ${down.urlFor("/robots.txt")} could not be read (2 attempts): status 500`), depth: 1, tries: 0 },
          { ...errorRecordOf(down.urlFor("/x"), "RobotsUnreachable", home.urlFor("/"), `robots.txt ${down.urlFor("/robots.txt")} could not be read (2 attempts): status 500`), depth: 1, tries: 0 },
        ]),
      );
      expect(result.robots.find((fetch) => fetch.origin === down.url)).toEqual({
        origin: down.url,
        url: down.urlFor("/robots.txt"),
        status: 500,
        error: null,
        detail: null,
        verdict: "unreachable",
        crawlDelayMs: null,
        attempts: 2,
      });
      expect(result.robots.find((fetch) => fetch.origin === home.url)?.verdict).toBe("allow-all");
    });

    it("fetches nothing from an origin nobody listens on, and crawls the others", async () => {
      const home = await startSite();
      const port = await closedPort();
      const nowhere = `http://127.0.0.1:${port}`;
      // An IP host matches a root's only exactly, and ports are not compared: the other port is crawled.
      expect(new Crawler(home.url).urlAllowed(`${nowhere}/x`)).toBe(true);
      const links = [`${nowhere}/`, `${nowhere}/x`, "/a"];
      home.addPage("/", links).addPage("/a", []);
      const result = await crawl(home.url, { robots: true, maxTries: 2, retryDelayMs: 0 });
      expect(byUrl(result.records)).toEqual(
        byUrl([
          linksPageRecord(home.urlFor("/"), links, 3, 3),
          linksPageRecord(home.urlFor("/a"), [], 0, 0),
          // The pages get the failure's own name, and a detail that says robots.txt could not be read.
          { ...errorRecordOf(`${nowhere}/`, "ConnectionRefused", home.urlFor("/"), `robots.txt ${nowhere}/robots.txt could not be read (2 attempts): ConnectionRefused`), depth: 1, tries: 0 },
          { ...errorRecordOf(`${nowhere}/x`, "ConnectionRefused", home.urlFor("/"), `robots.txt ${nowhere}/robots.txt could not be read (2 attempts): ConnectionRefused`), depth: 1, tries: 0 },
        ]),
      );
      expect(result.robots.find((fetch) => fetch.origin === nowhere)).toEqual({
        origin: nowhere,
        url: `${nowhere}/robots.txt`,
        status: null,
        error: "ConnectionRefused",
        detail: null,
        verdict: "unreachable",
        crawlDelayMs: null,
        attempts: 2,
      });
    });

    it("follows a redirect of robots.txt to another allowed path", async () => {
      const site = await startSite();
      site.addRedirect("/robots.txt", "/real-robots.txt", 301);
      site.addPage("/real-robots.txt", DISALLOW_PRIVATE, "text/plain; charset=utf-8");
      site.addPage("/", ["/private/x", "/a"]).addPage("/a", []).addPage("/private/x", []);
      const result = await crawl(site.url, { robots: true });
      expect(pathsOf(site.requests()).slice(0, 2)).toEqual(["/robots.txt", "/real-robots.txt"]);
      expect(site.requestsFor("/private/x")).toBe(0);
      expect(byUrl(result.records)).toEqual(
        byUrl([
          linksPageRecord(site.urlFor("/"), ["/private/x", "/a"], 2, 2),
          linksPageRecord(site.urlFor("/a"), [], 0, 0),
          errorRecordOf(site.urlFor("/private/x"), "RobotsDisallowed"),
        ]),
      );
      expect(result.robots).toEqual([
        { origin: site.url, url: site.urlFor("/real-robots.txt"), status: 200, error: null, detail: null, verdict: "rules", crawlDelayMs: null, attempts: 2 },
      ]);
    });

    it("waits a Crawl-delay between two requests to the host", async () => {
      const crawlDelayMs = 250;
      const site = await startSite();
      site.addRobots(`User-agent: *\nCrawl-delay: ${crawlDelayMs / 1000}\n`);
      site.addPage("/", ["/a"]).addPage("/a", []);
      const before = performance.now(); // The clock HostLines and the site's log read: no request starts before this.
      const result = await crawl(site.url, { robots: true, maxTasks: 4 });
      expect(result.robots[0]?.crawlDelayMs).toBe(crawlDelayMs);
      expect(result.records.map((record) => record.status)).toEqual([200, 200]);
      const requests = site.requests();
      expect(pathsOf(requests)).toEqual(["/robots.txt", "/", "/a"]);
      // Request k starts no earlier than k delays after robots.txt's start, which follows `before`, and
      // arrives later still. A loaded machine only makes arrivals later, so this floor needs no slack
      // (two arrivals' gap has none that holds: the first may arrive late and the next on time).
      expect(requests.filter((request, k) => request.at - before < k * crawlDelayMs)).toEqual([]);
    });

    it("makes no robots.txt request when politeness is off (the library's default)", async () => {
      const site = await startSite();
      site.addRobots("User-agent: *\nDisallow: /\n");
      site.addPage("/", ["/a"]).addPage("/a", []);
      const result = await crawl(site.url);
      expect(site.requestsFor("/robots.txt")).toBe(0);
      expect(result.robots).toEqual([]);
      expect(result.records.map((record) => record.status)).toEqual([200, 200]);
    });
  });

  describe("one host's share", () => {
    it("never has more than maxPerHost requests in flight at one host, and crawls every page", async () => {
      const group = await startGroup({ hosts: 4, pagesPerHost: 30, linksPerPage: 3, seed: 7, delayMs: 5 });
      const result = await crawl(group.url, { maxTasks: 20, maxPerHost: 2 });
      expect(group.peakInFlightPerHost().filter((peak) => peak > 2)).toEqual([]);
      expect(new Set(result.records.map((record) => record.url))).toEqual(group.expectedUrls);
      expect(result.records).toHaveLength(group.expectedUrls.size);
      expect(result.records.filter((record) => record.status !== 200)).toEqual([]);
      expect(result.todo).toBe(0);
    });

    it("crawls the other hosts while one host's line waits (maxPerHost 1): a busy host holds no worker", async () => {
      // The slow host answers its pages only once every page of the fast hosts
      // has a record. A worker that waited for the slow host instead of moving
      // on would never get to the fast pages, and the crawl would hang: so the
      // test counts records and needs no clock.
      const slow = await startSite();
      const fast = [await startSite(), await startSite(), await startSite()];
      const slowPaths = ["/s/0", "/s/1", "/s/2", "/s/3", "/s/4", "/s/5"];
      slow.addPage("/", slowPaths);
      const held: ServerResponse[] = [];
      let released = false;
      for (const path of slowPaths) {
        slow.addHandler(path, (_request, response) => {
          if (released) answerEmptyPage(response);
          else held.push(response);
        });
      }
      const fastUrls = new Set<string>();
      for (const site of fast) {
        const pages = ["/f/0", "/f/1", "/f/2", "/f/3", "/f/4"];
        site.addPage("/", pages);
        for (const path of pages) site.addPage(path, []);
        for (const path of ["/", ...pages]) fastUrls.add(site.urlFor(path));
      }
      let fastRecorded = 0;
      function onRecord(record: FetchStatistic): void {
        if (fastUrls.has(record.url)) fastRecorded += 1;
        if (fastRecorded < fastUrls.size || released) return;
        released = true;
        for (const response of held.splice(0)) answerEmptyPage(response);
      }
      const roots = [slow.url, ...fast.map((site) => site.url)];
      const result = await crawl(roots, { maxTasks: 2, maxPerHost: 1, onRecord });
      expect(released).toBe(true);
      expect(result.records).toHaveLength(1 + slowPaths.length + fastUrls.size);
      expect(result.records.filter((record) => record.status !== 200)).toEqual([]);
      expect(slow.peakRequestsInFlight).toBe(1);
    });

    it("starts two requests to one host at least delayMs apart", async () => {
      const delayMs = 120;
      const site = await startSite();
      site.addPage("/", ["/a", "/b", "/c"]).addPage("/a", []).addPage("/b", []).addPage("/c", []);
      const before = performance.now(); // The clock HostLines and the site's log read: no request starts before this.
      const result = await crawl(site.url, { delayMs, maxTasks: 4 });
      expect(result.records).toHaveLength(4);
      // Request k starts no earlier than k delays after the first, which follows `before`, and arrives
      // later still: a floor that a loaded machine can only make easier to meet, so it needs no slack.
      expect(site.requests().filter((request, k) => request.at - before < k * delayMs)).toEqual([]);
    });
  });

  describe("Retry-After", () => {
    it.each([
      { how: "with one worker and politeness off", options: { maxTasks: 1 } },
      { how: "with several workers and maxPerHost 1", options: { maxTasks: 4, maxPerHost: 1 } },
    ])("retries a 429 after its Retry-After in seconds, holding its host back meanwhile ($how)", async ({ options }) => {
      const site = await startSite();
      site.addPage("/", ["/busy", "/a", "/b"]).addPage("/a", []).addPage("/b", []);
      site.addRetryAfter("/busy", { status: 429, retryAfter: "1", times: 1, then: [] });
      const result = await crawl(site.url, options);
      expect(byUrl(result.records)).toEqual(
        byUrl([
          linksPageRecord(site.urlFor("/"), ["/busy", "/a", "/b"], 3, 3),
          linksPageRecord(site.urlFor("/busy"), [], 0, 0),
          linksPageRecord(site.urlFor("/a"), [], 0, 0),
          linksPageRecord(site.urlFor("/b"), [], 0, 0),
        ]),
      );
      expect(site.requestsFor("/busy")).toBe(2);
      // One request at a time here, so every request after the 429 started after the
      // crawler read it, and the hold counts from then: no slack is needed below.
      const requests = site.requests();
      const refused = requests.findIndex((request) => request.path === "/busy");
      const first = requests[refused]?.at ?? 0;
      const after = requests.slice(refused + 1).map(({ path, at }) => ({ path, early: at - first < 1000 }));
      expect(after.filter((request) => request.early)).toEqual([]);
      expect(after.map((request) => request.path)).toContain("/busy");
    });

    it("retries a 503 after its Retry-After as an HTTP date", async () => {
      const site = await startSite();
      site.addPage("/", ["/busy"]);
      const arrivals: number[] = [];
      let retryAt = 0;
      site.addHandler("/busy", (_request, response) => {
        arrivals.push(Date.now());
        if (arrivals.length > 1) {
          answerEmptyPage(response);
          return;
        }
        // An HTTP date has whole seconds: the next one at least 300 ms away.
        retryAt = Math.ceil((Date.now() + 300) / 1000) * 1000;
        response.writeHead(503, { "Retry-After": new Date(retryAt).toUTCString(), "Content-Length": "0" }).end();
      });
      const result = await crawl(site.url, { maxTasks: 2 });
      expect(result.records.find((record) => record.url === site.urlFor("/busy"))).toEqual(linksPageRecord(site.urlFor("/busy"), [], 0, 0));
      expect(arrivals).toHaveLength(2);
      // The crawler turned the date into a wait with Date.now(), as this handler reads the time; 5 ms for the wall clock's steps.
      expect(arrivals[1]).toBeGreaterThanOrEqual(retryAt - 5);
    });

    it("records a 429 as it is when its Retry-After is over maxRetryAfterMs", async () => {
      const site = await startSite();
      site.addPage("/", ["/busy"]);
      site.addRetryAfter("/busy", { status: 429, retryAfter: "5", times: 1, then: [] });
      const result = await crawl(site.url, { maxRetryAfterMs: 1_000 });
      const refusal = "Too Many Requests\n";
      expect(result.records).toEqual([
        linksPageRecord(site.urlFor("/"), ["/busy"], 1, 1),
        pageRecordOf(site.urlFor("/busy"), { status: 429, size: Buffer.byteLength(refusal), contentType: "text/plain" }),
      ]);
      expect(site.requestsFor("/busy")).toBe(1);
    });

    it("retries a 503 without Retry-After after the backoff, and records the last response after maxTries", async () => {
      const site = await startSite();
      site.addPage("/", ["/down"]).addPage("/down", "down\n", "text/plain; charset=utf-8", { status: 503 });
      const result = await crawl(site.url, { retryDelayMs: 1 });
      expect(result.records).toEqual([
        linksPageRecord(site.urlFor("/"), ["/down"], 1, 1),
        pageRecordOf(site.urlFor("/down"), { status: 503, size: 5, contentType: "text/plain", tries: 4 }),
      ]);
      expect(site.requestsFor("/down")).toBe(4);
    });

    it("records a 503 as an ordinary response, after one request, when retryHttpCodes leaves it out", async () => {
      const site = await startSite();
      site.addPage("/", ["/down"]).addPage("/down", "down\n", "text/plain; charset=utf-8", { status: 503 });
      const result = await crawl(site.url, { retryHttpCodes: [500] });
      expect(result.records).toEqual([
        linksPageRecord(site.urlFor("/"), ["/down"], 1, 1),
        pageRecordOf(site.urlFor("/down"), { status: 503, size: 5, contentType: "text/plain", tries: 1 }),
      ]);
      expect(site.requestsFor("/down")).toBe(1);
    });

    it("counts each Retry-After as an attempt and records the last response after maxTries", async () => {
      const site = await startSite();
      site.addPage("/", ["/busy"]);
      site.addRetryAfter("/busy", { status: 429, retryAfter: "0", times: 1_000, then: [] });
      const result = await crawl(site.url, { maxTries: 2 });
      expect(result.records.map(({ url, status, error }) => ({ url, status, error }))).toEqual([
        { url: site.urlFor("/"), status: 200, error: null },
        { url: site.urlFor("/busy"), status: 429, error: null },
      ]);
      expect(site.requestsFor("/busy")).toBe(2);
    });

    it("records the answer after a Retry-After when maxPages is 1: the URL held back is still the one page", async () => {
      const site = await startSite();
      site.addPage("/a", []);
      site.addRetryAfter("/", { status: 429, retryAfter: "1", times: 1, then: ["/a"] });
      const result = await crawl(site.url, { maxPages: 1 });
      expect(result.records.map(({ url, status, error }) => ({ url, status, error }))).toEqual([{ url: site.urlFor("/"), status: 200, error: null }]);
      expect(site.requestsFor("/")).toBe(2);
      expect(result.todo).toBe(1); // "/a", found on the page, not fetched
    });
  });

  describe("stopping early with URLs waiting in a host's line", () => {
    /** A root linking to ten pages of one host, which maxPerHost 1 and a delay line up. */
    async function lineSite(): Promise<FixtureSite> {
      const site = await startSite();
      const pages = Array.from({ length: 10 }, (_, index) => `/p/${index + 1}`);
      site.addPage("/", pages);
      for (const path of pages) site.addPage(path, []);
      return site;
    }

    it("ends at maxPages, counting the URLs still in the line as todo", async () => {
      const site = await lineSite();
      const result = await crawl(site.url, { maxTasks: 4, maxPerHost: 1, delayMs: 30, maxPages: 3 });
      expect(result.records).toHaveLength(3);
      expect(result.seen).toHaveLength(11);
      expect(result.todo).toBe(8);
      expect(site.totalRequests).toBe(3);
      const requests = site.totalRequests;
      await sleep(100); // No host's wake-up is left to start a request after the end.
      expect(site.totalRequests).toBe(requests);
    });

    it("ends when the signal aborts, counting the URLs still in the line as todo", async () => {
      const site = await lineSite();
      const controller = new AbortController();
      let recorded = 0;
      function abortAfterTwo(): void {
        if (++recorded === 2) controller.abort();
      }
      const result = await crawl(site.url, { maxTasks: 4, maxPerHost: 1, delayMs: 30, signal: controller.signal, onRecord: abortAfterTwo });
      expect(result.records).toHaveLength(2);
      expect(result.todo).toBe(result.seen.length - result.records.length);
      expect(result.todo).toBe(9);
      const requests = site.totalRequests;
      expect(requests).toBe(2);
      await sleep(100);
      expect(site.totalRequests).toBe(requests);
    });
  });
});
