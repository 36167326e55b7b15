import { Buffer, constants as bufferConstants } from "node:buffer";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HttpResponse } from "../../src/http/parser.js";
import { UrlPolicy } from "../../src/crawl/urls.js";
import { visit, type QueueItem, type VisitContext } from "../../src/crawl/visit.js";

const ROOT = "http://example.com/";

function context(seen: readonly string[] = [], maxBodyBytes = 10_000, maxDepth = Infinity): VisitContext {
  return {
    policy: new UrlPolicy([ROOT], { strict: true, exclude: null, maxDepth }),
    seenUrls: new Set(seen),
    maxRedirect: 10,
    maxBodyBytes,
  };
}

function html(body: string | Uint8Array, status = 200): HttpResponse {
  return { status, headers: { "content-type": "text/html" }, body: typeof body === "string" ? Buffer.from(body) : body };
}

function redirect(location: string): HttpResponse {
  return { status: 302, headers: { location }, body: Buffer.alloc(0) };
}

describe("visit", () => {
  describe("fetchedAt", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("records the time now, to the millisecond, for a page, a redirect and a failure", () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const item: QueueItem = { url: ROOT, maxRedirect: 10 };
      for (const ms of [Date.UTC(2026, 10, 28, 1, 2, 3, 4), Date.UTC(2026, 10, 28, 1, 2, 3, 4), Date.UTC(2026, 10, 28, 1, 2, 3, 5), Date.UTC(2030, 0, 1)]) {
        vi.setSystemTime(ms);
        const iso = new Date(ms).toISOString();
        expect(visit(item, html("<p>x</p>"), context()).record.fetchedAt).toBe(iso);
        expect(visit(item, redirect("/b"), context()).record.fetchedAt).toBe(iso);
        expect(visit(item, "ConnectionRefused", context()).record.fetchedAt).toBe(iso);
      }
    });
  });

  describe("referrer", () => {
    it("records no referrer for a root, and queues the page's new links with the page as their referrer", () => {
      const root: QueueItem = { url: ROOT, maxRedirect: 10 };
      const v = visit(root, html('<a href="/a">a</a> <a href="/b">b</a> <a href="/seen">s</a>'), context([ROOT, `${ROOT}seen`]));
      expect(v.record.referrer).toBeNull();
      expect(v.next).toEqual([
        { url: `${ROOT}a`, maxRedirect: 10, referrer: ROOT, depth: 1 },
        { url: `${ROOT}b`, maxRedirect: 10, referrer: ROOT, depth: 1 },
      ]);
    });

    it("records the referrer its queue item carries, for a page, a redirect and a failure", () => {
      const item: QueueItem = { url: `${ROOT}a`, maxRedirect: 3, referrer: ROOT };
      expect(visit(item, html("<p>no links</p>"), context()).record.referrer).toBe(ROOT);
      expect(visit(item, html("gone", 404), context()).record.referrer).toBe(ROOT);
      expect(visit(item, "ConnectionRefused", context()).record.referrer).toBe(ROOT);
      expect(visit(item, redirect("/b"), context()).record.referrer).toBe(ROOT);
    });

    it("queues a redirect's target with the redirect as its referrer", () => {
      const item: QueueItem = { url: `${ROOT}old`, maxRedirect: 3, referrer: ROOT };
      expect(visit(item, redirect("/new"), context()).next).toEqual([{ url: `${ROOT}new`, maxRedirect: 2, referrer: `${ROOT}old`, depth: 0 }]);
    });
  });

  describe("depth", () => {
    const LINKS = '<a href="/a">a</a> <a href="/b">b</a> <a href="/seen">s</a>';

    it("queues a page's links one level deeper than the page, a root being at 0", () => {
      expect(visit({ url: ROOT, maxRedirect: 10 }, html(LINKS), context([ROOT])).next.map((item) => item.depth)).toEqual([1, 1, 1]);
      const deep: QueueItem = { url: `${ROOT}x`, maxRedirect: 10, referrer: ROOT, depth: 4 };
      expect(visit(deep, html(LINKS), context([ROOT])).next.map((item) => item.depth)).toEqual([5, 5, 5]);
    });

    it("queues a redirect's target as deep as the redirect", () => {
      const item: QueueItem = { url: `${ROOT}old`, maxRedirect: 3, referrer: ROOT, depth: 2 };
      expect(visit(item, redirect("/new"), context([], 10_000, 2)).next).toEqual([{ url: `${ROOT}new`, maxRedirect: 2, referrer: `${ROOT}old`, depth: 2 }]);
    });

    it("queues no link deeper than maxDepth, but counts it in numUrls and leaves it unseen", () => {
      const item: QueueItem = { url: `${ROOT}x`, maxRedirect: 10, referrer: ROOT, depth: 1 };
      const atLimit = visit(item, html(LINKS), context([ROOT, `${ROOT}seen`], 10_000, 1));
      expect(atLimit.next).toEqual([]);
      expect(atLimit.record).toMatchObject({ numUrls: 3, numNewUrls: 0 });
      const below = visit(item, html(LINKS), context([ROOT, `${ROOT}seen`], 10_000, 2));
      expect(below.next.map((next) => next.url)).toEqual([`${ROOT}a`, `${ROOT}b`]);
      expect(below.record).toMatchObject({ numUrls: 3, numNewUrls: 2 });
    });

    it("queues nothing from a root with maxDepth 0", () => {
      const v = visit({ url: ROOT, maxRedirect: 10 }, html(LINKS), context([ROOT], 10_000, 0));
      expect(v.next).toEqual([]);
      expect(v.record).toMatchObject({ numUrls: 3, numNewUrls: 0 });
    });
  });

  describe("credentials", () => {
    it("drops user:pass@ from links, so a page linked with and without them is queued once", () => {
      const links = `<a href="http://u:p@example.com/a">1</a> <a href="/a">2</a> <a href="http://@example.com/b">3</a>`;
      const v = visit({ url: ROOT, maxRedirect: 10 }, html(links), context([ROOT]));
      expect(v.next.map((item) => item.url)).toEqual([`${ROOT}a`, `${ROOT}b`]);
      expect(v.record.numUrls).toBe(2);
    });

    it("drops user:pass@ from a redirect's target, in the record and in the queue", () => {
      const v = visit({ url: `${ROOT}old`, maxRedirect: 3 }, redirect("http://user:secret@example.com/new"), context());
      expect(v.record.nextUrl).toBe(`${ROOT}new`);
      expect(v.next.map((item) => item.url)).toEqual([`${ROOT}new`]);
    });
  });

  describe("text too long for a string", () => {
    // Node makes no string longer than MAX_STRING_LENGTH (2^29 - 24 on Node 20). The buffer is
    // zero-filled memory that decoding refuses before reading, so the test costs no real memory.
    it("records BodyTooLarge, not NetworkError, for an HTML body longer than the longest string", () => {
      const bytes = Buffer.alloc(bufferConstants.MAX_STRING_LENGTH + 1);
      const v = visit({ url: ROOT, maxRedirect: 10 }, html(bytes), context([], bytes.length));
      expect(v.record).toMatchObject({ url: ROOT, status: null, error: "BodyTooLarge" });
      expect(v.next).toEqual([]);
    });
  });
});

describe("visit with linkAttributes", () => {
  it("queues the links the named attributes hold, besides the hrefs", () => {
    const page = html('<a href="/a">a</a><div data-href="/b"></div>');
    const urls = (attributes?: readonly string[]) => visit({ url: ROOT, maxRedirect: 10 }, page, { ...context(), linkAttributes: attributes }).next.map((item) => item.url);
    expect(urls()).toEqual(["http://example.com/a"]);
    expect(urls(["data-href"])).toEqual(["http://example.com/a", "http://example.com/b"]);
  });
});
