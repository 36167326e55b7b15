/**
 * The crawl controls a crawler user reaches for first (`headers`, `maxDepth`,
 * `include`, `noParent`, `skipNonHtml`), held to docs/behaviour.md ("Crawl
 * controls") in every registered stage: what the server saw (the headers of
 * each request, its request log) and what the crawl recorded.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FetchStatistic } from "../../src/crawl/records.js";
import { requestHeaders } from "../../src/http/request.js";
import type { RouteHandler } from "../../src/site/faults.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { linksHtml } from "../../src/site/html.js";
import { errorRecordOf, linksPageRecord, pageRecordOf, redirectRecordOf, untimed } from "./records.js";
import { withFourth } from "./stages.js";

function byUrl(records: readonly FetchStatistic[]): FetchStatistic[] {
  return [...records].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/**
 * A 200 whose head announces `contentLength` bytes (or, when null, a chunked
 * body), then body bytes every few milliseconds until the client goes away:
 * a body no crawler can read to its end. `written` counts the bytes sent.
 */
function endlessBody(contentType: string, contentLength: number | null, written: { bytes: number }): RouteHandler {
  return function dripForever(_request, response: ServerResponse) {
    const headers: Record<string, string> = { "Content-Type": contentType };
    if (contentLength !== null) headers["Content-Length"] = String(contentLength);
    response.writeHead(200, headers);
    response.flushHeaders();
    const chunk = Buffer.alloc(1024, 0x41);
    const timer = setInterval(function dripOne() {
      if (response.destroyed || response.writableEnded) return;
      response.write(chunk);
      written.bytes += chunk.length;
    }, 5);
    response.once("close", function clientGone() {
      clearInterval(timer);
    });
  };
}

describe.each(withFourth)("$name crawler: crawl controls", ({ crawl }) => {
  let site: FixtureSite;
  let u: (path: string) => string;

  beforeEach(async () => {
    site = await FixtureSite.start();
    u = (path) => site.urlFor(path);
  });

  afterEach(async () => {
    await site.connectionsClosed();
    await site.close();
  });

  describe("headers", () => {
    /** Serves `path` as a page of `links`, keeping the headers of each request for it. */
    function recordHeaders(path: string, links: string[], seen: IncomingHttpHeaders[]): void {
      const body = linksHtml(links);
      site.addHandler(path, function keepHeaders(request, response) {
        seen.push(request.headers);
        response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)) }).end(body);
      });
    }

    it("sends the extra headers with every request, robots.txt included, one named like a default in its place", async () => {
      const seen: IncomingHttpHeaders[] = [];
      recordHeaders("/", ["/a"], seen);
      recordHeaders("/a", [], seen);
      site.addHandler("/robots.txt", function robotsHeaders(request, response) {
        seen.push(request.headers);
        response.writeHead(404, { "Content-Length": "0" }).end();
      });
      const headers = { "X-Api-Key": "k1", Cookie: "session=abc", Accept: "text/html" };
      const result = await crawl(site.url, { headers, robots: true });
      expect(result.records).toHaveLength(2);
      expect(seen).toHaveLength(3);
      for (const received of seen) {
        expect(received).toMatchObject({
          "x-api-key": "k1",
          cookie: "session=abc",
          accept: "text/html",
          "user-agent": requestHeaders(result.options.userAgent)["User-Agent"],
          "accept-encoding": "gzip, deflate, br, identity",
        });
      }
    });

    it("takes a User-Agent in headers as userAgent, which picks the robots.txt group", async () => {
      const seen: IncomingHttpHeaders[] = [];
      recordHeaders("/", ["/private/a", "/b"], seen);
      recordHeaders("/b", [], seen);
      site.addRobots("User-agent: mybot\nDisallow: /private/\n");
      const result = await crawl(site.url, { headers: { "User-Agent": "mybot/2.0" }, robots: true, maxTasks: 1 });
      expect(result.options.userAgent).toBe("mybot/2.0");
      expect(seen.map((received) => received["user-agent"])).toEqual(["mybot/2.0", "mybot/2.0"]);
      expect(byUrl(result.records).map((record) => [record.url, record.error])).toEqual([
        [u("/"), null],
        [u("/b"), null],
        [u("/private/a"), "RobotsDisallowed"],
      ]);
      expect(site.requestsFor("/private/a")).toBe(0);
    });

    it("throws TypeError for a header the crawler sets itself, before any request", async () => {
      await expect(crawl(site.url, { headers: { Host: "elsewhere.example" } })).rejects.toThrow(TypeError);
      await expect(crawl(site.url, { headers: { "X-A": "1\r\nX-B: 2" } })).rejects.toThrow(/`headers`/);
      expect(site.totalRequests).toBe(0);
    });
  });

  describe("maxDepth", () => {
    beforeEach(() => {
      site.addPage("/", ["/a", "/b"]).addPage("/a", ["/a1"]).addPage("/b", ["/b1", "/a"]);
      site.addPage("/a1", ["/a2"]).addPage("/b1", []).addPage("/a2", []);
    });

    it("crawls the root and its links only with maxDepth 1, counting the links it leaves", async () => {
      const result = await crawl(site.url, { maxDepth: 1, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/"), ["/a", "/b"], 2, 2),
        linksPageRecord(u("/a"), ["/a1"], 1, 0),
        linksPageRecord(u("/b"), ["/b1", "/a"], 2, 0),
      ]);
      expect(result.seen).toEqual([u("/"), u("/a"), u("/b")]);
      expect(result.todo).toBe(0);
      expect(site.requests().map((request) => request.path)).toEqual(["/", "/a", "/b"]);
    });

    it("crawls the roots alone with maxDepth 0, and everything without a limit", async () => {
      const rootOnly = await crawl(site.url, { maxDepth: 0 });
      expect(rootOnly.records).toEqual([linksPageRecord(u("/"), ["/a", "/b"], 2, 0)]);
      const all = await crawl(site.url, { maxTasks: 1 });
      expect(all.records.map((record) => record.url)).toEqual([u("/"), u("/a"), u("/b"), u("/a1"), u("/b1"), u("/a2")]);
      const deep = await crawl(site.url, { maxDepth: 2, maxTasks: 1 });
      expect(deep.records.map((record) => record.url)).toEqual([u("/"), u("/a"), u("/b"), u("/a1"), u("/b1")]);
    });

    it("does not count a redirect as a level", async () => {
      site.addPage("/", ["/old"]).addRedirect("/old", "/new").addRedirect("/new", "/a");
      const result = await crawl(site.url, { maxDepth: 1, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/"), ["/old"], 1, 1),
        redirectRecordOf(u("/old"), 302, u("/new")),
        redirectRecordOf(u("/new"), 302, u("/a")),
        linksPageRecord(u("/a"), ["/a1"], 1, 0),
      ]);
    });

    it("still crawls a link that a deeper page found first, once a shallower page finds it", async () => {
      // /a (depth 1) finds /c at depth 2, too deep; the root /late, slow to answer, finds it at depth 1.
      site.addPage("/", ["/a"]).addPage("/a", ["/c"]).addPage("/late", ["/c"]).addPage("/c", []);
      site.setDelay("/late", 300);
      const result = await crawl([site.url, u("/late")], { maxDepth: 1, maxTasks: 2 });
      expect(byUrl(result.records).map((record) => record.url)).toEqual([u("/"), u("/a"), u("/c"), u("/late")]);
      expect(site.requestsFor("/c")).toBe(1);
    });
  });

  describe("include", () => {
    it("crawls only the URLs include matches, and the roots whatever it says", async () => {
      site.addPage("/", ["/docs/a", "/blog/b", "/docs/c", "/docs/private"]);
      site.addPage("/docs/a", ["/blog/x", "/docs/d"]).addPage("/docs/d", []).addRedirect("/docs/c", "/blog/c");
      const result = await crawl(site.url, { include: "/docs/", exclude: /private/, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/"), ["/docs/a", "/blog/b", "/docs/c", "/docs/private"], 2, 2),
        linksPageRecord(u("/docs/a"), ["/blog/x", "/docs/d"], 1, 1),
        redirectRecordOf(u("/docs/c"), 302, u("/blog/c")),
        linksPageRecord(u("/docs/d"), [], 0, 0),
      ]);
      expect(site.requests().map((request) => request.path)).toEqual(["/", "/docs/a", "/docs/c", "/docs/d"]);
    });
  });

  describe("noParent", () => {
    beforeEach(() => {
      site.addPage("/a/b.html", ["/a/c.html", "sub/d.html", "/x.html", "/a", "/ab/e.html", "../y.html"]);
      site.addPage("/a/c.html", ["/a/"]).addPage("/a/", ["/"]).addPage("/a/sub/d.html", ["../c.html"]).addRedirect("/a/sub/out", "/out");
      site.addPage("/", ["/a/b.html"]).addPage("/x.html", []).addPage("/a", []).addPage("/ab/e.html", []).addPage("/y.html", []);
    });

    it("crawls only URLs under the root's directory", async () => {
      const result = await crawl(u("/a/b.html"), { noParent: true, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/a/b.html"), ["/a/c.html", "sub/d.html", "/x.html", "/a", "/ab/e.html", "../y.html"], 2, 2),
        linksPageRecord(u("/a/c.html"), ["/a/"], 1, 1),
        linksPageRecord(u("/a/sub/d.html"), ["../c.html"], 1, 0),
        linksPageRecord(u("/a/"), ["/"], 0, 0),
      ]);
      expect(site.requests().map((request) => request.path)).toEqual(["/a/b.html", "/a/c.html", "/a/sub/d.html", "/a/"]);
    });

    it("takes a root ending in / as its directory, records a redirect out of it without following, and joins several roots' directories", async () => {
      site.addPage("/a/", ["/a/sub/out", "/a/c.html", "/b/y.html", "/x.html"]).addPage("/b/x.html", []).addPage("/b/y.html", []);
      const result = await crawl([u("/a/"), u("/b/x.html")], { noParent: true, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/a/"), ["/a/sub/out", "/a/c.html", "/b/y.html", "/x.html"], 3, 3),
        linksPageRecord(u("/b/x.html"), [], 0, 0),
        redirectRecordOf(u("/a/sub/out"), 302, u("/out")),
        linksPageRecord(u("/a/c.html"), ["/a/"], 1, 0),
        linksPageRecord(u("/b/y.html"), [], 0, 0),
      ]);
      expect(site.requestsFor("/out")).toBe(0);
      expect(site.requestsFor("/x.html")).toBe(0);
    });
  });

  describe("skipNonHtml", () => {
    it("records a binary 200 with its type and announced size without reading its endless body", async () => {
      const written = { bytes: 0 };
      site.addPage("/", ["/movie.mp4", "/a"]).addPage("/a", []);
      // 50 MB, dripped at 1 KiB per 5 ms: reading it would take minutes, and it is over maxBodyBytes.
      site.addHandler("/movie.mp4", endlessBody("video/mp4", 50_000_000, written));
      const result = await crawl(site.url, { skipNonHtml: true, maxTasks: 1 });
      expect(result.records).toEqual([
        linksPageRecord(u("/"), ["/movie.mp4", "/a"], 2, 2),
        pageRecordOf(u("/movie.mp4"), { contentType: "video/mp4", size: 50_000_000 }),
        linksPageRecord(u("/a"), [], 0, 0),
      ]);
      expect(site.requestsFor("/movie.mp4")).toBe(1);
      expect(written.bytes).toBeLessThan(50_000_000);
    });

    it("applies no body limit to a skipped body, whatever comes with its head", async () => {
      // Over maxBodyBytes: a chunk's announced size, and close-delimited bytes, in the same packet as the head.
      site.addPage("/", ["/chunked.png", "/burst.png"]);
      site.addFault("/chunked.png", { kind: "raw", bytes: "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\nfffff\r\nabc" });
      site.addFault("/burst.png", { kind: "raw", bytes: `HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n${"x".repeat(3000)}` });
      const result = await crawl(site.url, { skipNonHtml: true, maxBodyBytes: 1000, maxTasks: 1 });
      expect(result.records.slice(1)).toEqual([
        pageRecordOf(u("/chunked.png"), { contentType: "image/png", size: 0 }),
        pageRecordOf(u("/burst.png"), { contentType: "image/png", size: 0 }),
      ]);
    });

    it("records size 0 for a skipped body that announces no length", async () => {
      site.addHandler("/", endlessBody("image/png", null, { bytes: 0 }));
      const result = await crawl(site.url, { skipNonHtml: true });
      expect(result.records).toEqual([pageRecordOf(u("/"), { contentType: "image/png", size: 0 })]);
    });

    it("records everything else as it does without skipNonHtml", async () => {
      site.addPage("/", ["/feed.xml", "/missing", "/old", "/notes.txt", "/gone"]);
      site.addPage("/feed.xml", '<a href="/a">a</a>', "application/xml").addPage("/a", []).addRedirect("/old", "/a");
      site.addPage("/notes.txt", "plain text", "text/plain; charset=latin1");
      site.addHandler("/gone", function gone(_request, response) {
        response.writeHead(410, { "Content-Type": "application/octet-stream", "Content-Length": "3" }).end("bye");
      });
      const skipping = await crawl(site.url, { skipNonHtml: true, maxTasks: 1 });
      const reading = await crawl(site.url, { maxTasks: 1 });
      const withoutNotes = (records: FetchStatistic[]): FetchStatistic[] => records.filter((record) => record.url !== u("/notes.txt"));
      expect(untimed(withoutNotes(skipping.records))).toEqual(untimed(withoutNotes(reading.records)));
      expect(skipping.records.find((record) => record.url === u("/gone"))).toMatchObject({ status: 410, size: 3 });
      // A body left unread still reports what its head says: the type, the charset and the Content-Length.
      expect(skipping.records.find((record) => record.url === u("/notes.txt"))).toEqual(
        pageRecordOf(u("/notes.txt"), { contentType: "text/plain", encoding: "latin1", size: 10 }),
      );
    });

    it("still reads robots.txt, which is text/plain, whole", async () => {
      site.addRobots("User-agent: *\nDisallow: /private/\n").addPage("/", ["/private/a", "/b"]).addPage("/b", []);
      const result = await crawl(site.url, { skipNonHtml: true, robots: true, maxTasks: 1 });
      expect(result.robots.map((fetch) => fetch.verdict)).toEqual(["rules"]);
      expect(byUrl(result.records)).toEqual([
        linksPageRecord(u("/"), ["/private/a", "/b"], 2, 2),
        linksPageRecord(u("/b"), [], 0, 0),
        errorRecordOf(u("/private/a"), "RobotsDisallowed"),
      ]);
    });
  });

  describe("seed", () => {
    it("reports the seed it crawled with: the one given, else one drawn for the crawl", async () => {
      site.addPage("/", []);
      expect((await crawl(site.url, { seed: 42 })).options.seed).toBe(42);
      const drawn = (await crawl(site.url)).options.seed;
      expect(Number.isInteger(drawn) && drawn >= 0 && drawn < 2 ** 32).toBe(true);
      await expect(crawl(site.url, { seed: -1 })).rejects.toThrow("Expected `seed` to be an integer from 0 to 4294967295, got -1");
    });
  });
});
