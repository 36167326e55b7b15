import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import type robotsParserModule from "robots-parser";
import { describe, expect, it } from "vitest";
import { DEMO_ROBOTS_TXT, demoSiteDefinition, startDemoSite } from "../../src/site/demo-site.js";
import { EXPECTED_AT, expectedCrawl, latencyBound } from "../../src/site/expected-crawl.js";
import { linksHtml } from "../../src/site/html.js";
import { mulberry32, renderPage, syntheticSite, type SyntheticRoute } from "../../src/site/synthetic.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { get } from "./helpers.js";

const ORIGIN = "http://127.0.0.1:8080";

// robots-parser is CommonJS: require() hands back its module.exports, the parser function itself.
const robotsParser: typeof robotsParserModule.default = createRequire(import.meta.url)("robots-parser");

function definitionOf(routes: Record<string, SyntheticRoute>) {
  return { options: syntheticSite({ pages: 1, linksPerPage: 0, seed: 0 }).options, routes: new Map(Object.entries(routes)) };
}

function sizeOf(path: string, links: string[]): number {
  return Buffer.byteLength(linksHtml(links, { title: `Page ${path}` }));
}

describe("mulberry32", () => {
  it("gives the same sequence for the same seed, in [0, 1)", () => {
    const first = mulberry32(42);
    const second = mulberry32(42);
    const a = Array.from({ length: 100 }, () => first());
    expect(Array.from({ length: 100 }, () => second())).toEqual(a);
    expect(a.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(new Set(a).size).toBe(100);
  });
});

describe("syntheticSite", () => {
  it("builds the same site from the same seed and another from another seed", () => {
    const options = { pages: 50, linksPerPage: 5, seed: 7, redirects: 4, notFound: 2 };
    expect(syntheticSite(options)).toEqual(syntheticSite(options));
    expect(syntheticSite({ ...options, seed: 8 }).routes).not.toEqual(syntheticSite(options).routes);
  });

  it("makes every page link first to the next page, with K links each", () => {
    const site = syntheticSite({ pages: 30, linksPerPage: 4, seed: 3, redirects: 5, notFound: 3 });
    expect(site.routes.size).toBe(35);
    for (let i = 0; i < 30; i++) {
      const route = site.routes.get(i === 0 ? "/" : `/p/${i}`);
      expect(route?.kind).toBe("page");
      if (route?.kind !== "page") continue;
      expect(route.links).toHaveLength(4);
      expect(route.links[0]?.replace(/#.*/, "")).toBe((i + 1) % 30 === 0 ? "/" : `/p/${i + 1}`);
    }
    const statuses = [0, 1, 2, 3, 4].map((j) => site.routes.get(`/r/${j}`));
    expect(statuses.map((route) => (route?.kind === "redirect" ? route.status : 0))).toEqual([301, 302, 303, 307, 308]);
  });

  it("rejects counts that are not integers", () => {
    expect(() => syntheticSite({ pages: 0, linksPerPage: 1, seed: 1 })).toThrow(RangeError);
    expect(() => syntheticSite({ pages: 2, linksPerPage: 1.5, seed: 1 })).toThrow("linksPerPage");
  });
});

describe("expectedCrawl", () => {
  const tiny = definitionOf({
    "/": { kind: "page", links: ["/a", "/r", "/a#x", "/gone", "/"] },
    "/a": { kind: "page", links: ["/b", "/"] },
    "/r": { kind: "redirect", to: "/b", status: 301 },
    "/b": { kind: "page", links: ["/r"] },
  });

  it("walks a tiny hand-checked site breadth first", () => {
    const expected = expectedCrawl(tiny, { origin: `${ORIGIN}/` });
    const at = { tries: 1, fetchedAt: EXPECTED_AT };
    const page = { nextUrl: null, status: 200, error: null, contentType: "text/html", encoding: "utf-8", detail: null, ...at };
    expect(expected.records).toEqual([
      { ...page, url: `${ORIGIN}/`, size: sizeOf("/", ["/a", "/r", "/a#x", "/gone", "/"]), numUrls: 4, numNewUrls: 3, referrer: null, depth: 0 },
      { ...page, url: `${ORIGIN}/a`, size: sizeOf("/a", ["/b", "/"]), numUrls: 2, numNewUrls: 1, referrer: `${ORIGIN}/`, depth: 1 },
      { url: `${ORIGIN}/r`, nextUrl: `${ORIGIN}/b`, status: 301, error: null, size: 0, contentType: null, encoding: null, numUrls: 0, numNewUrls: 0, referrer: `${ORIGIN}/`, detail: null, depth: 1, ...at },
      { ...page, url: `${ORIGIN}/gone`, status: 404, size: 10, contentType: "text/plain", numUrls: 0, numNewUrls: 0, referrer: `${ORIGIN}/`, depth: 1 },
      // /a links /b before the redirect /r to it is processed: /a queued it, one link deeper.
      { ...page, url: `${ORIGIN}/b`, size: sizeOf("/b", ["/r"]), numUrls: 1, numNewUrls: 0, referrer: `${ORIGIN}/a`, depth: 2 },
    ]);
    expect(expected.seen).toEqual([`${ORIGIN}/`, `${ORIGIN}/a`, `${ORIGIN}/r`, `${ORIGIN}/gone`, `${ORIGIN}/b`]);
    expect(Object.fromEntries(expected.depthOf)).toEqual({
      [`${ORIGIN}/`]: 0,
      [`${ORIGIN}/a`]: 1,
      [`${ORIGIN}/r`]: 1,
      [`${ORIGIN}/gone`]: 1,
      [`${ORIGIN}/b`]: 2,
    });
    expect(expected.maxDepth).toBe(2);
  });

  it("queues a redirect's target only while redirects are left", () => {
    const chain = definitionOf({
      "/": { kind: "page", links: ["/r1"] },
      "/r1": { kind: "redirect", to: "/r2", status: 302 },
      "/r2": { kind: "redirect", to: "/c", status: 307 },
      "/c": { kind: "page", links: [] },
    });
    const urls = (maxRedirect: number) =>
      expectedCrawl(chain, { origin: ORIGIN, maxRedirect }).records.map((record) => record.url.slice(ORIGIN.length));
    expect(urls(10)).toEqual(["/", "/r1", "/r2", "/c"]);
    expect(urls(2)).toEqual(["/", "/r1", "/r2", "/c"]);
    expect(urls(1)).toEqual(["/", "/r1", "/r2"]);
    expect(urls(0)).toEqual(["/", "/r1"]);
  });

  it("reaches every page of a synthetic site", () => {
    const site = syntheticSite({ pages: 300, linksPerPage: 3, seed: 11, redirects: 10, notFound: 5 });
    const expected = expectedCrawl(site, { origin: ORIGIN });
    const urls = new Set(expected.records.map((record) => record.url));
    expect(urls.size).toBe(expected.records.length);
    for (let i = 0; i < 300; i++) expect(urls.has(`${ORIGIN}${i === 0 ? "/" : `/p/${i}`}`)).toBe(true);
    expect(expected.seen).toHaveLength(expected.records.length);
    const fromLinks = expected.records.reduce((sum, record) => sum + record.numNewUrls, 0);
    expect(fromLinks).toBeLessThan(expected.records.length);
    expect(expected.records.filter((record) => record.status === 404).length).toBeGreaterThan(0);
    expect(expected.records.filter((record) => record.nextUrl !== null).length).toBeGreaterThan(0);
  });
});

describe("latencyBound", () => {
  it("is the larger of total work over the workers and one delay per level", () => {
    const expected = { records: new Array(100).fill(null), seen: [], depthOf: new Map(), maxDepth: 4 };
    expect(latencyBound(expected, 10, 1)).toBe(1_000);
    expect(latencyBound(expected, 10, 10)).toBe(100);
    expect(latencyBound(expected, 10, 100)).toBe(50);
  });
});

describe("SyntheticSite", () => {
  it("serves every route of its definition as the expected crawl says", async () => {
    const synthetic = await SyntheticSite.start({ pages: 20, linksPerPage: 3, seed: 5, redirects: 3, notFound: 2 });
    try {
      expect(synthetic.url).toBe(`${synthetic.site.url}/`);
      for (const record of synthetic.expected.records) {
        const response = await get(record.url);
        expect(response.status).toBe(record.status);
        if (record.nextUrl !== null) expect(new URL(response.headers.location ?? "", record.url).href).toBe(record.nextUrl);
        else expect(response.body.length).toBe(record.size);
      }
      expect(synthetic.expectedFor({ maxRedirect: 10 })).toEqual(synthetic.expected);
    } finally {
      await synthetic.close();
    }
  });
});

describe("startDemoSite", () => {
  it("serves a gzip page and a windows-1252 page among the synthetic ones", async () => {
    const demo = await startDemoSite();
    try {
      const gzip = await get(`${demo.site.url}/gzip`);
      expect(gzip.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(gzip.body).toString()).toContain("Compressed with gzip");
      const latin = await get(`${demo.site.url}/latin-1`);
      expect(latin.headers["content-type"]).toBe("text/html; charset=windows-1252");
      expect(latin.body.includes(Buffer.from("Caf\xe9, cr\xe8me br\xfbl\xe9e", "latin1"))).toBe(true);
      const records = demo.expected.records;
      expect(records.find((record) => record.url.endsWith("/latin-1"))).toMatchObject({ encoding: "windows-1252", status: 200 });
      expect(records.find((record) => record.url.endsWith("/gzip"))?.size).toBe(renderPage("/gzip", { kind: "page", links: ["/p/1", "/p/2"], title: "Compressed with gzip" }).size);
      expect(records.filter((record) => record.status === 404)).toHaveLength(1);
      expect(records.filter((record) => record.nextUrl !== null).length).toBeGreaterThan(0);
      expect(demoSiteDefinition().options.delayMs).toBe(5);
    } finally {
      await demo.close();
    }
  });

  it("serves a robots.txt that keeps every crawler out of /private/, which the root links to", async () => {
    const demo = await startDemoSite();
    try {
      const response = await get(`${demo.site.url}/robots.txt`);
      expect(response.status).toBe(200);
      expect(response.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(response.body.toString()).toBe(DEMO_ROBOTS_TXT);
      const robots = robotsParser(`${demo.site.url}/robots.txt`, DEMO_ROBOTS_TXT);
      for (const agent of ["coroutine-crawler", "SomeOtherBot"]) {
        expect(robots.isAllowed(`${demo.site.url}/private/`, agent), agent).toBe(false);
        expect(robots.isAllowed(`${demo.site.url}/private/drafts`, agent), agent).toBe(false);
        expect(robots.isAllowed(`${demo.site.url}/p/1`, agent), agent).toBe(true);
        expect(robots.isAllowed(`${demo.site.url}/`, agent), agent).toBe(true);
      }
      // No Crawl-delay: `npm start` shows concurrency on this one-host site.
      expect(robots.getCrawlDelay("coroutine-crawler")).toBeUndefined();
      expect(robots.getCrawlDelay("SomeOtherBot")).toBeUndefined();
      // A crawl without robots fetches the private pages like any other: the expected crawl has them.
      const urls = demo.expected.records.map((record) => record.url);
      expect(urls).toContain(`${demo.site.url}/private/`);
      expect(urls).toContain(`${demo.site.url}/private/drafts`);
      expect(urls).not.toContain(`${demo.site.url}/robots.txt`);
    } finally {
      await demo.close();
    }
  });
});
