/**
 * The three stages crawl identically: on seeded synthetic sites and on
 * small random sites, every registered stage's records equal the
 * breadth-first expectation worked out from the site's definition alone
 * (src/site/expected-crawl.ts), and so equal each other.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";
import type { ExpectedCrawl } from "../../src/site/expected-crawl.js";
import { pagePath, type SyntheticRoute, type SyntheticSiteDefinition } from "../../src/site/synthetic.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { stages } from "./stages.js";

const SEEDED_SITES = [
  { pages: 60, linksPerPage: 4, seed: 1, redirects: 5, notFound: 3 },
  { pages: 120, linksPerPage: 3, seed: 2, redirects: 10, notFound: 5 },
  { pages: 80, linksPerPage: 6, seed: 3 },
];

function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/** A record without the two fields that say which page first found its URL, which depends on timing. */
function withoutNewUrls(record: FetchStatistic): Omit<FetchStatistic, "numNewUrls" | "referrer"> {
  const { numNewUrls: _timingDependent, referrer: _alsoTimingDependent, ...rest } = record;
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
  }
}

function sumOfNewUrls(records: readonly FetchStatistic[]): number {
  return records.reduce((sum, record) => sum + record.numNewUrls, 0);
}

/** With one worker the crawl is the breadth-first walk: the same records in the same order. */
function expectBreadthFirst(result: CrawlResult, expected: ExpectedCrawl): void {
  expect(result.records).toEqual(expected.records);
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
    it.each(stages)("$name crawler makes the breadth-first records in order with maxTasks 1", async ({ crawl }) => {
      const synthetic = await SyntheticSite.start(options);
      try {
        expectBreadthFirst(await crawl(synthetic.url, { maxTasks: 1 }), synthetic.expected);
        await synthetic.site.connectionsClosed();
      } finally {
        await synthetic.close();
      }
    });

    it.each(stages)("$name crawler makes the same records as a set with maxTasks 10", async ({ crawl }) => {
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

  it("gives every stage the same records on random small sites", async () => {
    await fc.assert(
      fc.asyncProperty(randomSite(), fc.integer({ min: 0, max: 3 }), async (definition, maxRedirect) => {
        const synthetic = await SyntheticSite.start(definition);
        try {
          const expected = synthetic.expectedFor({ maxRedirect });
          for (const stage of stages) {
            const result = await stage.crawl(synthetic.url, { maxTasks: 1, maxRedirect });
            expect({ stage: stage.name, records: result.records }).toEqual({ stage: stage.name, records: expected.records });
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
});


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
