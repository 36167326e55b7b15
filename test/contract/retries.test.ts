/**
 * The crawl core's retries and what each record says of them, in every
 * stage: the statuses of `retryHttpCodes`, a name that does not resolve, a
 * `Retry-After` of 0 or in the past, the reason an origin's `robots.txt`
 * could not be read, and each record's `tries`, `depth` and `fetchedAt`.
 */
import type { ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/fixture-site.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { nodeTurns } from "../helpers/loop-turns.js";
import { startTlsSite, TEST_CA, type TlsSite } from "../helpers/tls-site.js";
import { errorRecordOf, ISO_TIME, linksPageRecord, pageRecordOf, redirectRecordOf } from "./records.js";
import { withFourth } from "./stages.js";

/** A handler that answers `status` the first `times` requests, then a page without links. */
function failingThenServing(status: number, times: number) {
  let failed = 0;
  return function answer(_request: unknown, response: ServerResponse): void {
    if (failed < times) {
      failed += 1;
      response.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": "4" }).end("no\r\n");
      return;
    }
    response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": "0" }).end();
  };
}

describe.each(withFourth)("$name crawler: retries and what records say of them", ({ crawl }) => {
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

  describe("retryHttpCodes", () => {
    it.each([408, 500, 502, 504, 522, 524])("tries a %i again after the backoff, and the record counts the tries", async (status) => {
      site.addPage("/", ["/flaky"]).addHandler("/flaky", failingThenServing(status, 2));
      const result = await crawl(site.url, { retryDelayMs: 1 });
      expect(result.records).toEqual([linksPageRecord(u("/"), ["/flaky"], 1, 1), pageRecordOf(u("/flaky"), { tries: 3 })]);
      expect(site.requestsFor("/flaky")).toBe(3);
    });

    it("records the last response after maxTries, with tries equal to maxTries", async () => {
      site.addHandler("/", failingThenServing(500, 1_000));
      const result = await crawl(site.url, { retryDelayMs: 0, maxTries: 3 });
      expect(result.records).toEqual([pageRecordOf(u("/"), { status: 500, size: 4, contentType: "text/plain", tries: 3 })]);
      expect(site.requestsFor("/")).toBe(3);
    });

    it("tries only the statuses given, and none with an empty list", async () => {
      site.addPage("/", ["/a", "/b"]).addHandler("/a", failingThenServing(500, 1)).addHandler("/b", failingThenServing(503, 1));
      const only503 = await crawl(site.url, { retryDelayMs: 0, retryHttpCodes: [503], maxTasks: 1 });
      expect(only503.records.map(({ url, status, tries }) => ({ url, status, tries }))).toEqual([
        { url: u("/"), status: 200, tries: 1 },
        { url: u("/a"), status: 500, tries: 1 },
        { url: u("/b"), status: 200, tries: 2 },
      ]);
      site.addHandler("/a", failingThenServing(500, 1)).addHandler("/b", failingThenServing(503, 1));
      const none = await crawl(site.url, { retryDelayMs: 0, retryHttpCodes: [], maxTasks: 1 });
      expect(none.records.map(({ status, tries }) => [status, tries])).toEqual([[200, 1], [500, 1], [503, 1]]);
      expect([site.requestsFor("/a"), site.requestsFor("/b")]).toEqual([2, 3]);
    });

    it("waits at least the backoff after a Retry-After of 0 or a date in the past, holding the host", async () => {
      site.addPage("/", ["/zero", "/past"]);
      site.addRetryAfter("/zero", { status: 429, retryAfter: "0", times: 1_000, then: [] });
      site.addRetryAfter("/past", { status: 503, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT", times: 1_000, then: [] });
      // A backoff far longer than the crawl is let run: each URL is requested once before the stop. The stop comes
      // 20 turns of Node's loop after both refusals were read (counted, not timed: a retry after no wait at all
      // would be on the wire within a few), not at a wall-clock instant a loaded machine may reach before the refusals.
      const controller = new AbortController();
      let refusals = 0;
      function stopAfterBothRefusals(event: TraceEvent): void {
        if (event.type !== "fetch-end" || event.url === u("/") || ++refusals < 2) return;
        void nodeTurns(20).then(() => controller.abort());
      }
      const result = await crawl(site.url, { retryDelayMs: 60_000, signal: controller.signal, trace: stopAfterBothRefusals });
      expect(result.records.map((record) => record.url)).toEqual([u("/")]);
      expect(result.todo).toBe(2);
      expect(refusals).toBe(2);
      expect([site.requestsFor("/zero"), site.requestsFor("/past")]).toEqual([1, 1]);
    });
  });

  describe("a name that does not resolve", () => {
    it("is tried once, its record saying so; a resolver that did not answer is tried again", async () => {
      // RFC 6761: no `.invalid` name resolves. Where no resolver answers at all, the name is EAI_AGAIN, and tried maxTries times.
      const url = "http://crawler-contract.invalid/";
      const result = await crawl(url, { retryDelayMs: 0, maxTries: 3 });
      const [record] = result.records;
      const notFound = record?.detail === "ENOTFOUND: the name does not resolve";
      expect(record).toEqual({
        ...errorRecordOf(url, "HostNotFound", null, notFound ? "ENOTFOUND: the name does not resolve" : "EAI_AGAIN: the DNS server did not answer in time (a temporary failure)"),
        depth: 0,
        tries: notFound ? 1 : 3,
      });
    });
  });

  describe("depth and fetchedAt", () => {
    it("gives each record its links from a root, a redirect's target as deep as the redirect, and when it came", async () => {
      site.addPage("/", ["/a", "/r"]).addPage("/a", ["/b"]).addPage("/b", []).addRedirect("/r", "/c").addPage("/c", []);
      const before = new Date().toISOString();
      const result = await crawl(site.url, { maxTasks: 1 });
      const after = new Date().toISOString();
      expect(result.records).toEqual([
        linksPageRecord(u("/"), ["/a", "/r"], 2, 2, null),
        { ...linksPageRecord(u("/a"), ["/b"], 1, 1, u("/")), depth: 1, tries: 1 },
        { ...redirectRecordOf(u("/r"), 302, u("/c"), u("/")), depth: 1, tries: 1 },
        { ...linksPageRecord(u("/b"), [], 0, 0, u("/a")), depth: 2, tries: 1 },
        { ...linksPageRecord(u("/c"), [], 0, 0, u("/r")), depth: 1, tries: 1 },
      ]);
      expect(result.records[0]).toMatchObject({ depth: 0, tries: 1, fetchedAt: ISO_TIME });
      const times = result.records.map((record) => record.fetchedAt);
      expect(times).toEqual([...times].sort()); // One worker: in completion order.
      expect(times.every((time) => time >= before && time <= after)).toBe(true);
    });
  });

  describe("an origin whose robots.txt could not be read", () => {
    const tlsSites: TlsSite[] = [];
    afterEach(async () => {
      await Promise.all(tlsSites.splice(0).map((tls) => tls.close()));
    });

    it("gives its pages the TLS failure's name and detail, never requested", async () => {
      const expired = await startTlsSite("expired");
      tlsSites.push(expired);
      const result = await crawl(expired.url, { robots: true, ca: TEST_CA });
      const detail = `robots.txt ${expired.url}robots.txt could not be read (1 attempt): CERT_HAS_EXPIRED: certificate has expired`;
      expect(result.records).toEqual([{ ...errorRecordOf(expired.url, "TlsError", null, detail), depth: 0, tries: 0 }]);
      expect(result.robots).toEqual([expect.objectContaining({ error: "TlsError", detail: "CERT_HAS_EXPIRED: certificate has expired", verdict: "unreachable", attempts: 1 })]);
      expect(expired.connections).toBe(1);
    });
  });
});
