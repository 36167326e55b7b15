/**
 * The three stages (and the fourth, examples/18) crawl identically: on
 * seeded synthetic sites and on small random sites, every registered stage's
 * records equal the breadth-first expectation worked out from the site's definition alone
 * (src/site/expected-crawl.ts), and so equal each other.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CrawlResult, FetchError, FetchStatistic } from "../../src/crawl/records.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { startHostGroup, type HostGroup } from "../../src/site/host-group.js";
import { linksHtml } from "../../src/site/html.js";
import type { ExpectedCrawl } from "../../src/site/expected-crawl.js";
import { pagePath, type SyntheticRoute, type SyntheticSiteDefinition } from "../../src/site/synthetic.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { stages, withFourth } from "./stages.js";

const SEEDED_SITES = [
  { pages: 60, linksPerPage: 4, seed: 1, redirects: 5, notFound: 3 },
  { pages: 120, linksPerPage: 3, seed: 2, redirects: 10, notFound: 5 },
  { pages: 80, linksPerPage: 6, seed: 3 },
];

function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/**
 * A record without the fields that depend on timing: the three that say
 * which page first found its URL (`numNewUrls`, `referrer`, and `depth`,
 * its referrer's plus one) and when it was fetched.
 */
function withoutNewUrls(record: FetchStatistic): Omit<FetchStatistic, "numNewUrls" | "referrer" | "depth" | "fetchedAt"> {
  const { numNewUrls: _timingDependent, referrer: _alsoTimingDependent, depth: _referrersDepth, fetchedAt: _when, ...rest } = record;
  return rest;
}

/** A record without `fetchedAt`, which says when, the one field a crawl with one worker leaves to timing. */
function withoutTime(record: FetchStatistic): Omit<FetchStatistic, "fetchedAt"> {
  const { fetchedAt: _when, ...rest } = record;
  return rest;
}

/**
 * With several workers a URL's referrer is whichever page or redirect queued
 * it first, but always one that could: the root has none, and every other
 * record names a recorded redirect to it or a recorded page with links.
 */
function expectPossibleReferrers(result: CrawlResult, root: string): void {
  const byUrlMap = new Map(result.records.map((record) => [record.url, record]));
  for (const record of result.records) {
    if (record.url === root) {
      expect(record.referrer).toBeNull();
      continue;
    }
    const referrer = record.referrer === null ? undefined : byUrlMap.get(record.referrer);
    const couldQueue = referrer !== undefined && (referrer.nextUrl === record.url || referrer.numNewUrls > 0);
    expect({ url: record.url, referrer: record.referrer, couldQueue }).toEqual({ url: record.url, referrer: record.referrer, couldQueue: true });
    const depth = referrer === undefined ? null : referrer.nextUrl === record.url ? referrer.depth : referrer.depth + 1;
    expect({ url: record.url, depth: record.depth }).toEqual({ url: record.url, depth }); // A link one deeper than its page, a redirect's target as deep.
  }
}

function sumOfNewUrls(records: readonly FetchStatistic[]): number {
  return records.reduce((sum, record) => sum + record.numNewUrls, 0);
}

/** With one worker the crawl is the breadth-first walk: the same records in the same order. */
function expectBreadthFirst(result: CrawlResult, expected: ExpectedCrawl): void {
  expect(result.records.map(withoutTime)).toEqual(expected.records.map(withoutTime));
  expect(result.seen).toEqual(expected.seen);
  expect(result.todo).toBe(0);
}

/**
 * With several workers the records are the same as a set, `numNewUrls` and `referrer` aside.
 * Every URL but the root was queued by exactly one record: a page (counted in
 * its `numNewUrls`) or a redirect. So the sum of `numNewUrls` is `seen - 1`
 * less the redirects that queued their target, which depends on timing when
 * a link and a redirect race to the same URL.
 */
function expectSameSet(result: CrawlResult, expected: ExpectedCrawl): void {
  expect(byUrl(result.records).map(withoutNewUrls)).toEqual(byUrl(expected.records).map(withoutNewUrls));
  expectPossibleReferrers(result, expected.seen[0] ?? "");
  expect([...result.seen].sort()).toEqual([...expected.seen].sort());
  expect(result.todo).toBe(0);
  const redirects = result.records.filter((record) => record.nextUrl !== null).length;
  const newUrls = sumOfNewUrls(result.records);
  expect(newUrls).toBeLessThanOrEqual(result.seen.length - 1);
  expect(newUrls).toBeGreaterThanOrEqual(result.seen.length - 1 - redirects);
  if (redirects === 0) expect(newUrls).toBe(sumOfNewUrls(expected.records));
}

describe("identical crawls", () => {
  describe.each(SEEDED_SITES)("synthetic site (seed $seed, $pages pages)", (options) => {
    it.each(withFourth)("$name crawler makes the breadth-first records in order with maxTasks 1", async ({ crawl }) => {
      const synthetic = await SyntheticSite.start(options);
      try {
        expectBreadthFirst(await crawl(synthetic.url, { maxTasks: 1 }), synthetic.expected);
        await synthetic.site.connectionsClosed();
      } finally {
        await synthetic.close();
      }
    });

    it.each(withFourth)("$name crawler makes the same records as a set with maxTasks 10", async ({ crawl }) => {
      const synthetic = await SyntheticSite.start(options);
      try {
        expectSameSet(await crawl(synthetic.url, { maxTasks: 10 }), synthetic.expected);
        expect(synthetic.site.peakRequestsInFlight).toBeLessThanOrEqual(10);
        await synthetic.site.connectionsClosed();
      } finally {
        await synthetic.close();
      }
    });
  });

  it("gives every stage the same record for each hostile response", async () => {
    const site = await FixtureSite.start();
    try {
      for (const { path, bytes, hold } of HOSTILE) {
        if (hold === true) {
          site.addHandler(path, function writeAndHold(request) {
            request.socket.write(Buffer.from(bytes, "latin1"));
          });
        } else {
          site.addFault(path, { kind: "raw", bytes });
        }
      }
      const roots = HOSTILE.map(({ path }) => site.urlFor(path));
      const expected = HOSTILE.map(({ path, error }) => ({ url: site.urlFor(path), error }));
      // The three stages only: these are the project's raw-byte limits (a chunk's announced size, a head's 64 KiB, a
      // Content-Length over maxBodyBytes while the body stalls) and unasked 101s, which the fourth stage leaves to
      // node:http's own parser: on 8 of the 12 it records Timeout, BadResponse, ConnectionReset or the 101 itself.
      for (const stage of stages) {
        const result = await stage.crawl(roots, { maxTasks: 1, maxTries: 1, maxBodyBytes: 1000, timeoutMs: 2_000 });
        const records = result.records.map(({ url, error }) => ({ url, error }));
        expect({ stage: stage.name, records }).toEqual({ stage: stage.name, records: expected });
      }
      await site.connectionsClosed();
    } finally {
      await site.close();
    }
  });

  it("gives every stage the same records on random small sites", async () => {
    await fc.assert(
      fc.asyncProperty(randomSite(), fc.integer({ min: 0, max: 3 }), async (definition, maxRedirect) => {
        const synthetic = await SyntheticSite.start(definition);
        try {
          const expected = synthetic.expectedFor({ maxRedirect });
          for (const stage of withFourth) {
            const result = await stage.crawl(synthetic.url, { maxTasks: 1, maxRedirect });
            expect({ stage: stage.name, records: result.records.map(withoutTime) }).toEqual({ stage: stage.name, records: expected.records.map(withoutTime) });
            expect(result.seen).toEqual(expected.seen);
            const concurrent = await stage.crawl(synthetic.url, { maxTasks: 4, maxRedirect: 10 });
            expectSameSet(concurrent, synthetic.expectedFor({ maxRedirect: 10 }));
          }
          await synthetic.site.connectionsClosed();
        } finally {
          await synthetic.close();
        }
      }),
      { numRuns: 20 },
    );
  });

  describe("politeness on a group of hosts", () => {
    it.each(withFourth)("$name crawler makes the expected records as a set with robots, maxPerHost and delayMs", async ({ crawl }) => {
      const group = await startHostGroup(POLITE_GROUP);
      try {
        const result = await crawl(group.url, { robots: true, maxPerHost: 2, delayMs: 5, maxTasks: 8 });
        expectPoliteSet(result, group);
        expect(group.peakInFlightPerHost().filter((peak) => peak > 2)).toEqual([]);
        for (const site of group.sites) await site.connectionsClosed();
      } finally {
        await group.close();
      }
    });

    it("gives every stage the same records in the same order with maxTasks 1, robots and maxPerHost", async () => {
      // Without a delay, nothing here depends on timing: one worker, a FIFO
      // queue, and a URL that waits for its host's robots.txt comes back at the
      // end of the queue, in the same place in every stage.
      const group = await startHostGroup(POLITE_GROUP);
      try {
        const results: Array<{ stage: string; records: Array<Omit<FetchStatistic, "fetchedAt">>; robots: CrawlResult["robots"] }> = [];
        for (const stage of withFourth) {
          const result = await stage.crawl(group.url, { robots: true, maxPerHost: 2, maxTasks: 1 });
          expectPoliteSet(result, group);
          results.push({ stage: stage.name, records: result.records.map(withoutTime), robots: result.robots });
        }
        const [first, ...others] = results;
        for (const other of others) {
          expect(other).toEqual({ ...first, stage: other.stage });
        }
      } finally {
        await group.close();
      }
    });

    it.each(withFourth)("$name crawler makes the expected records as a set with maxTasks 1 and delayMs", async ({ crawl }) => {
      // With a delay the order depends on timing even with one worker: whether
      // a URL's host is free when the worker takes it depends on how long the
      // fetches before it took, and a URL that finds its host not free waits
      // in the host's line and comes back at the end of the queue. So the
      // records are compared as a set.
      const group = await startHostGroup(POLITE_GROUP);
      try {
        expectPoliteSet(await crawl(group.url, { robots: true, maxPerHost: 2, delayMs: 5, maxTasks: 1 }), group);
        for (const site of group.sites) await site.connectionsClosed();
      } finally {
        await group.close();
      }
    });
  });
});


const CHUNKED = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n";

/**
 * Responses the stages once gave different records (issue 17, "Hostile pages
 * and real servers"), with the record each now gets everywhere under
 * `maxBodyBytes: 1000`. Each is written raw; with `hold`, the connection then
 * stays open, so a stage that waited for more bytes would end in `Timeout`.
 */
const HOSTILE: ReadonlyArray<{ path: string; bytes: string; hold?: boolean; error: FetchError }> = [
  { path: "/chunk-over-the-limit", bytes: `${CHUNKED}3e9\r\nabc`, hold: true, error: "BodyTooLarge" },
  { path: "/chunk-of-2-64-minus-1", bytes: `${CHUNKED}ffffffffffffffff\r\nabc`, hold: true, error: "BodyTooLarge" },
  { path: "/chunk-of-2-64-minus-1-closed", bytes: `${CHUNKED}ffffffffffffffff\r\nabc`, error: "BodyTooLarge" },
  { path: "/chunk-of-2-64", bytes: `${CHUNKED}10000000000000000\r\nabc`, error: "BadResponse" },
  { path: "/chunks-adding-up-over-the-limit", bytes: `${CHUNKED}3e8\r\n${"a".repeat(1000)}\r\n1\r\n`, hold: true, error: "BodyTooLarge" },
  { path: "/12000-header-lines", bytes: `HTTP/1.1 200 OK\r\n${"a: b\r\n".repeat(12_000)}Content-Length: 2\r\n\r\nhi`, error: "BadResponse" },
  { path: "/100-kb-chunk-extension", bytes: `${CHUNKED}2;${"x".repeat(100_000)}\r\nhi\r\n0\r\n\r\n`, error: "BadResponse" },
  { path: "/70-kb-reason-phrase", bytes: `HTTP/1.1 200 ${"O".repeat(70_000)}\r\nContent-Length: 2\r\n\r\nhi`, error: "BadResponse" },
  {
    path: "/unsolicited-101",
    bytes: "HTTP/1.1 101 Switching Protocols\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nhi",
    error: "BadResponse",
  },
  {
    path: "/101-with-upgrade",
    bytes: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
    error: "BadResponse",
  },
  { path: "/content-length-over-the-limit", bytes: "HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\nabc", hold: true, error: "BodyTooLarge" },
  { path: "/close-delimited-over-the-limit", bytes: `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n${"a".repeat(1001)}`, hold: true, error: "BodyTooLarge" },
];

/**
 * A small random site: up to 8 pages, 3 redirects (which may point at a page,
 * another redirect, themselves or a missing path: chains and cycles) and 2
 * missing paths, each page with up to 5 links, some with a fragment.
 */
function randomSite(): fc.Arbitrary<SyntheticSiteDefinition> {
  return fc
    .record({
      pages: fc.integer({ min: 1, max: 8 }),
      redirects: fc.integer({ min: 0, max: 3 }),
      notFound: fc.integer({ min: 0, max: 2 }),
    })
    .chain(function routesFor({ pages, redirects, notFound }) {
      const targets = pages + redirects + notFound;
      const path = (index: number): string =>
        index < pages ? pagePath(index) : index < pages + redirects ? `/r/${index - pages}` : `/missing/${index - pages - redirects}`;
      const link = fc.record({ target: fc.integer({ min: 0, max: targets - 1 }), fragment: fc.boolean() });
      return fc
        .record({
          pageLinks: fc.array(fc.array(link, { maxLength: 5 }), { minLength: pages, maxLength: pages }),
          redirectTo: fc.array(
            fc.record({ target: fc.integer({ min: 0, max: targets - 1 }), status: fc.constantFrom(301, 302, 303, 307, 308) }),
            { minLength: redirects, maxLength: redirects },
          ),
        })
        .map(function build({ pageLinks, redirectTo }): SyntheticSiteDefinition {
          const routes = new Map<string, SyntheticRoute>();
          pageLinks.forEach((links, index) => {
            routes.set(pagePath(index), {
              kind: "page",
              links: links.map(({ target, fragment }) => (fragment ? `${path(target)}#f` : path(target))),
            });
          });
          redirectTo.forEach(({ target, status }, index) => {
            routes.set(`/r/${index}`, { kind: "redirect", to: path(target), status });
          });
          return {
            options: { pages, linksPerPage: 0, seed: 0, delayMs: 0, redirects, notFound },
            routes,
          };
        });
    });
}

/**
 * Four hosts whose `robots.txt` differ: host 0 has none (a 404: everything
 * allowed), host 1 disallows `/p/2`, host 2 allows everything, host 3
 * disallows to our token's group (not `*`) every path starting `/p/1`
 * (`/p/1`, `/p/10`, `/p/11`).
 */
const POLITE_ROBOTS: ReadonlyArray<string | null> = [
  null,
  "User-agent: *\nDisallow: /p/2\n",
  "User-agent: *\nDisallow:\n",
  "User-agent: coroutine-crawler\nDisallow: /p/1\n",
];

const POLITE_GROUP = { hosts: 4, pagesPerHost: 12, linksPerPage: 3, seed: 5, robots: (host: number) => POLITE_ROBOTS[host] ?? null };

/** Whether `POLITE_ROBOTS` disallows `url`, worked out by prefix, without robots-parser. */
function politeDisallows(group: HostGroup, url: string): boolean {
  const { origin, pathname } = new URL(url);
  const host = group.origins.indexOf(origin);
  return (host === 1 && pathname.startsWith("/p/2")) || (host === 3 && pathname.startsWith("/p/1"));
}

/**
 * The records a polite crawl of the group makes, `numNewUrls` and `referrer`
 * aside, worked out from the group's links: every page reachable without
 * following a disallowed one, each a page record (its size from the links as
 * served: a path on its own host, a URL on another), or a `RobotsDisallowed`
 * record; and one robots.txt reading per host.
 */
function expectPoliteSet(result: CrawlResult, group: HostGroup): void {
  const expected = group.reachable((url) => !politeDisallows(group, url)).map(function expectedRecord(url): Omit<FetchStatistic, "numNewUrls" | "referrer" | "depth" | "fetchedAt"> {
    if (politeDisallows(group, url)) {
      return { url, nextUrl: null, status: null, error: "RobotsDisallowed", size: 0, contentType: null, encoding: null, numUrls: 0, detail: null, tries: 0 };
    }
    const links = group.links.get(url) ?? [];
    const origin = new URL(url).origin;
    const hrefs = links.map((link) => (new URL(link).origin === origin ? new URL(link).pathname : link));
    const size = Buffer.byteLength(linksHtml(hrefs));
    return { url, nextUrl: null, status: 200, error: null, size, contentType: "text/html", encoding: "utf-8", numUrls: new Set(links).size, detail: null, tries: 1 };
  });
  expect(byUrl(result.records).map(withoutNewUrls)).toEqual(byUrl(expected.map((record) => ({ ...record, numNewUrls: 0, referrer: null, depth: 0, fetchedAt: "" }))).map(withoutNewUrls));
  expect(result.todo).toBe(0);
  expect(sumOfNewUrls(result.records)).toBe(result.seen.length - 1); // No redirects: every URL but the root was new to one page.
  const verdicts = result.robots.map(({ origin, verdict, status }) => ({ host: group.origins.indexOf(origin), verdict, status }));
  expect(verdicts.sort((a, b) => a.host - b.host)).toEqual([
    { host: 0, verdict: "allow-all", status: 404 },
    { host: 1, verdict: "rules", status: 200 },
    { host: 2, verdict: "rules", status: 200 },
    { host: 3, verdict: "rules", status: 200 },
  ]);
}
