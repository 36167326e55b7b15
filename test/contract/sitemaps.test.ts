/**
 * Sitemaps, held to docs/behaviour.md ("Sitemaps") in every registered
 * stage: what the fixture site's server saw, and what the crawl recorded.
 * With one task the records are checked in order, so the three stages are
 * held to the same crawl, sitemaps and all.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { sitemapXml } from "../../src/site/html.js";
import { errorRecordOf, linksPageRecord, pageRecordOf } from "./records.js";
import { sitesOfEachTest } from "./sites.js";
import { withFourth } from "./stages.js";

const XML = "application/xml";

describe.each(withFourth)("$name crawler, with sitemaps", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();

  it("crawls the pages only its /sitemap.xml leads to, and their links, once each", async () => {
    const site = await startSite();
    const u = (path: string): string => site.urlFor(path);
    const sitemap = sitemapXml([u("/"), u("/hidden-a"), u("/hidden-b")]);
    site.addPage("/", []).addSitemap("/sitemap.xml", ["/", "/hidden-a", "/hidden-b"]);
    site.addPage("/hidden-a", ["/hidden-c"]).addPage("/hidden-b", ["/hidden-a"]).addPage("/hidden-c", []);

    const without = await crawl(site.url, { maxTasks: 1 });
    expect(without.records.map((record) => record.url)).toEqual([u("/")]);
    expect(site.requestsFor("/sitemap.xml")).toBe(0);
    site.resetCounters();

    const result = await crawl(site.url, { sitemaps: true, maxTasks: 1 });
    expect(result.records).toEqual([
      linksPageRecord(u("/"), [], 0, 0, null),
      pageRecordOf(u("/sitemap.xml"), { contentType: XML, size: sitemap.length, numUrls: 3, numNewUrls: 2, referrer: null }),
      linksPageRecord(u("/hidden-a"), ["/hidden-c"], 1, 1, u("/sitemap.xml")),
      linksPageRecord(u("/hidden-b"), ["/hidden-a"], 1, 0, u("/sitemap.xml")),
      linksPageRecord(u("/hidden-c"), [], 0, 0, u("/hidden-a")),
    ]);
    expect(result.todo).toBe(0);
    for (const path of ["/", "/sitemap.xml", "/hidden-a", "/hidden-b", "/hidden-c"]) expect(site.requestsFor(path)).toBe(1);
  });

  it("reads robots.txt's Sitemap: index, a plain and a gzipped sitemap under it, and obeys robots.txt for their pages", async () => {
    const site = await startSite();
    const u = (path: string): string => site.urlFor(path);
    site.addRobots("User-agent: *\nDisallow: /private/\nSitemap: /sitemap-index.xml\n");
    site.addPage("/", []).addSitemap("/sitemap-index.xml", ["/pages.xml", "/more.xml.gz"], { index: true });
    site.addSitemap("/pages.xml", ["/a", "/private/x"]).addSitemap("/more.xml.gz", ["/b", "/a"], { gzip: true });
    site.addPage("/a", []).addPage("/b", []).addPage("/private/x", []);
    const gzipped = sitemapXml([u("/b"), u("/a")]);

    // skipNonHtml: the gzipped sitemap (application/gzip) is still read whole.
    const result = await crawl(site.url, { sitemaps: true, robots: true, skipNonHtml: true, maxTasks: 1 });
    expect(result.records).toEqual([
      pageRecordOf(u("/sitemap.xml"), { status: 404, contentType: "text/plain", size: "Not found\n".length, encoding: "utf-8", referrer: null }),
      linksPageRecord(u("/"), [], 0, 0, null),
      pageRecordOf(u("/sitemap-index.xml"), { contentType: XML, size: sitemapXml([u("/pages.xml"), u("/more.xml.gz")], "sitemapindex").length, numUrls: 2, numNewUrls: 2, referrer: u("/robots.txt") }),
      pageRecordOf(u("/pages.xml"), { contentType: XML, size: sitemapXml([u("/a"), u("/private/x")]).length, numUrls: 2, numNewUrls: 2, referrer: u("/sitemap-index.xml") }),
      pageRecordOf(u("/more.xml.gz"), { contentType: "application/gzip", size: gzipped.length, numUrls: 2, numNewUrls: 1, referrer: u("/sitemap-index.xml") }),
      linksPageRecord(u("/a"), [], 0, 0, u("/pages.xml")),
      errorRecordOf(u("/private/x"), "RobotsDisallowed", u("/pages.xml")),
      linksPageRecord(u("/b"), [], 0, 0, u("/more.xml.gz")),
    ]);
    expect(site.requestsFor("/private/x")).toBe(0);
    expect(site.requestsFor("/robots.txt")).toBe(1);
    expect(site.requests()[0]?.path).toBe("/robots.txt");
    expect(site.requests()).toHaveLength(8);
  });

  it("records a gzip bomb and an HTML page posing as sitemaps as errors, and crawls on", async () => {
    const site = await startSite();
    const u = (path: string): string => site.urlFor(path);
    site.addRobots("Sitemap: /bomb.xml.gz\nSitemap: /soft-404.xml\n");
    site.addPage("/", []).addSitemap("/sitemap.xml", ["/a"]).addPage("/a", []);
    site.addPage("/bomb.xml.gz", gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)), "application/gzip");
    site.addPage("/soft-404.xml", ["/b"]).addPage("/b", []);

    const result = await crawl(site.url, { sitemaps: true, robots: true, maxBodyBytes: 1024 * 1024, maxTasks: 3 });
    const byUrl = new Map(result.records.map((record) => [record.url, record]));
    expect(byUrl.get(u("/bomb.xml.gz"))).toMatchObject({ status: null, error: "BodyTooLarge", detail: "The decoded body is longer than maxBodyBytes (1048576)" });
    expect(byUrl.get(u("/soft-404.xml"))).toMatchObject({ status: null, error: "BadResponse", detail: "Not a sitemap: its root element is <html>" });
    expect([...byUrl.keys()].sort()).toEqual([u("/"), u("/a"), u("/bomb.xml.gz"), u("/sitemap.xml"), u("/soft-404.xml")].sort());
    expect(site.requestsFor("/b")).toBe(0); // A page posing as a sitemap gives no links.
    expect(result.todo).toBe(0);
  });

  it("fetches no sitemap, and queues no page, on a host the crawl does not allow", async () => {
    const site = await startSite();
    const other = await startSite();
    // The hosts the crawl allows are by name: localhost is another host than 127.0.0.1, which the roots name.
    const elsewhere = (path: string): string => `http://localhost:${other.port}${path}`;
    site.addRobots(`Sitemap: ${elsewhere("/sitemap.xml")}\n`);
    site.addPage("/", []).addPage("/sitemap.xml", sitemapXml([site.urlFor("/a"), elsewhere("/b")]), XML).addPage("/a", []);
    other.addSitemap("/sitemap.xml", ["/b"]).addPage("/b", []);

    const result = await crawl(site.url, { sitemaps: true, robots: true, maxTasks: 2 });
    expect(other.requests()).toHaveLength(0);
    expect(result.records.map((record) => record.url).sort()).toEqual([site.urlFor("/"), site.urlFor("/a"), site.urlFor("/sitemap.xml")]);
    expect(result.records.find((record) => record.url === site.urlFor("/sitemap.xml"))).toMatchObject({ numUrls: 1, numNewUrls: 1 });
  });

  it("reads a text sitemap robots.txt names, one page per line", async () => {
    const site = await startSite();
    const u = (path: string): string => site.urlFor(path);
    const text = `${u("/a")}\n${u("/b")}\n`;
    site.addRobots("Sitemap: /pages.txt\n").addPage("/", []).addPage("/pages.txt", text, "text/plain").addPage("/a", []).addPage("/b", []);
    const result = await crawl(site.url, { sitemaps: true, robots: true, maxTasks: 1 });
    expect(result.records.find((record) => record.url === u("/pages.txt"))).toEqual(
      pageRecordOf(u("/pages.txt"), { contentType: "text/plain", size: text.length, numUrls: 2, numNewUrls: 2, referrer: u("/robots.txt") }),
    );
    expect(site.requestsFor("/a") + site.requestsFor("/b")).toBe(2);
  });

  it("counts sitemaps among the records maxPages allows", async () => {
    const site = await startSite();
    site.addPage("/", []).addSitemap("/sitemap.xml", ["/a", "/b", "/c"]).addPage("/a", []).addPage("/b", []).addPage("/c", []);
    const result = await crawl(site.url, { sitemaps: true, maxPages: 3, maxTasks: 1 });
    expect(result.records.map((record) => new URL(record.url).pathname)).toEqual(["/", "/sitemap.xml", "/a"]);
    expect(result.todo).toBe(2);
  });
});
