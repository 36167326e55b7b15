/**
 * Four decisions a long real crawl got wrong (issue 35, part 6), held to
 * docs/behaviour.md in every registered stage, on the fixture site:
 * - a `Retry-After` hold holds every request to its host, the retries of
 *   other URLs included;
 * - a `robots.txt` `429` or `503` honours its `Retry-After`;
 * - `maxPages` counts pages fetched, not the URLs `robots.txt` refused, and
 *   a crawl it stopped says so;
 * - "queued" counts every URL waiting, those in a host's line included.
 *
 * Nothing here reads a clock. A hold is shown by what its host saw between
 * the refusal and the end of the crawl, which a second host ends: its own
 * retries, each after a backoff, are the crawl's clock, and its third
 * attempt (three backoffs after the refusal was sent) aborts the crawl,
 * long before a 30-second hold is over. A retry of the held host that did
 * not wait for the hold arrives after one backoff, before that abort.
 */
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { TraceEvent } from "../../src/observe/events.js";
import type { FixtureSite } from "../../src/site/fixture-site.js";
import { linksHtml } from "../../src/site/html.js";
import { errorRecordOf } from "./records.js";
import { sitesOfEachTest } from "./sites.js";
import { withFourth } from "./stages.js";

/** The pause before a first retry in these crawls: short beside the 30 s holds, long beside reading a response. */
const BACKOFF_MS = 100;

function answerPage(response: ServerResponse, links: string[] = []): void {
  const body = linksHtml(links);
  response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": String(Buffer.byteLength(body)) }).end(body);
}

function answerStatus(response: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  response.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": "3", ...headers }).end("no\n");
}

/**
 * The crawl's clock, on a host of its own: `/tick` answers `500` twice,
 * once `start()` lets its first request through, and aborts the crawl when
 * its third request comes, two backoffs after its second.
 */
class Ticker {
  readonly controller = new AbortController();
  private readonly held: ServerResponse[] = [];
  private started = false;
  private requests = 0;

  constructor(readonly site: FixtureSite) {
    const ticker = this;
    site.addHandler("/tick", function tick(_request, response) {
      ticker.requests += 1;
      if (ticker.requests >= 3) {
        ticker.controller.abort();
        answerPage(response);
      } else if (ticker.started) answerStatus(response, 500);
      else ticker.held.push(response);
    });
  }

  get url(): string {
    return this.site.urlFor("/tick");
  }

  /** Answers the first request, holding it until now: the clock starts. */
  start(): void {
    this.started = true;
    for (const response of this.held.splice(0)) answerStatus(response, 500);
  }
}

describe.each(withFourth)("$name crawler: holds, maxPages and queued counts", ({ crawl }) => {
  const { startSite } = sitesOfEachTest();

  describe("a Retry-After hold", () => {
    it("holds the retries of the host's other URLs too: none reaches it during the hold", async () => {
      const held = await startSite();
      const ticker = new Ticker(await startSite());
      held.addPage("/", ["/busy", "/e1", "/e2", ticker.url]);
      // /busy, /e1 and /e2 are answered together once the three are in: /busy's 503 first, then the
      // two 500s, which the crawler reads after the 503 and retries after a backoff, within the hold.
      const waiting = new Map<string, ServerResponse>();
      let requestsAtHold = -1;
      function answerTogether(): void {
        if (waiting.size < 3) return;
        const busy = waiting.get("/busy") as ServerResponse;
        busy.once("finish", function busyAnswered() {
          requestsAtHold = held.totalRequests;
          answerStatus(waiting.get("/e1") as ServerResponse, 500);
          answerStatus(waiting.get("/e2") as ServerResponse, 500);
          ticker.start();
        });
        answerStatus(busy, 503, { "Retry-After": "30" });
      }
      for (const path of ["/busy", "/e1", "/e2"]) {
        held.addHandler(path, function gather(_request, response) {
          if (requestsAtHold >= 0) answerPage(response);
          else {
            waiting.set(path, response);
            answerTogether();
          }
        });
      }
      const result = await crawl(held.urlFor("/"), { retryDelayMs: BACKOFF_MS, maxTasks: 10, signal: ticker.controller.signal });
      expect(requestsAtHold).toBe(4);
      expect(held.requests().slice(requestsAtHold).map((request) => request.path)).toEqual([]);
      expect(result.records.map((record) => record.url)).toEqual([held.urlFor("/")]);
      expect(result.stoppedBy).toBe("signal");
      expect(result.todo).toBe(4);
    });
  });

  describe("a retry", () => {
    it("holds no place at its host while it pauses: with maxPerHost 1, the host's next URL goes meanwhile", async () => {
      const site = await startSite();
      const controller = new AbortController();
      site.addPage("/", ["/flaky", "/other"]);
      site.addHandler("/flaky", function failOnce(_request, response) {
        answerStatus(response, 500);
      });
      site.addHandler("/other", function stopHere(_request, response) {
        controller.abort(); // A retry that kept /flaky's place would keep /other waiting for its 30 s pause.
        answerPage(response);
      });
      const result = await crawl(site.url, { maxPerHost: 1, maxTasks: 4, retryDelayMs: 30_000, signal: controller.signal });
      expect(site.requests().map((request) => request.path)).toEqual(["/", "/flaky", "/other"]);
      expect(result.todo).toBe(2);
    });
  });

  describe("a robots.txt 429 or 503", () => {
    it("waits for its Retry-After before robots.txt is asked for again", async () => {
      const held = await startSite();
      const ticker = new Ticker(await startSite());
      held.addPage("/", []);
      let robotsRequests = 0;
      held.addHandler("/robots.txt", function busyRobots(_request, response) {
        robotsRequests += 1;
        if (robotsRequests > 1) {
          answerStatus(response, 404);
          return;
        }
        response.once("finish", function robotsAnswered() {
          ticker.start();
        });
        answerStatus(response, 503, { "Retry-After": "30" });
      });
      const result = await crawl([held.urlFor("/"), ticker.url], { robots: true, retryDelayMs: BACKOFF_MS, maxTasks: 10, signal: ticker.controller.signal });
      expect(held.requests().map((request) => request.path)).toEqual(["/robots.txt"]);
      expect(result.records).toEqual([]);
      expect(result.stoppedBy).toBe("signal");
    });

    it("makes the origin unreachable at once when its Retry-After is over maxRetryAfterMs", async () => {
      const site = await startSite();
      site.addPage("/", []);
      site.addRetryAfter("/robots.txt", { status: 429, retryAfter: "5", times: 1_000, then: "" });
      const result = await crawl(site.url, { robots: true, retryDelayMs: 0, maxRetryAfterMs: 1_000 });
      expect(site.requests().map((request) => request.path)).toEqual(["/robots.txt"]);
      const detail = `robots.txt ${site.urlFor("/robots.txt")} could not be read (1 attempt): status 429`;
      expect(result.records).toEqual([{ ...errorRecordOf(site.urlFor("/"), "RobotsUnreachable", null, detail), depth: 0, tries: 0 }]);
      expect(result.robots.map(({ status, verdict, attempts }) => ({ status, verdict, attempts }))).toEqual([{ status: 429, verdict: "unreachable", attempts: 1 }]);
    });
  });

  describe("maxPages", () => {
    /** A root linking to ten pages robots.txt refuses, then to three it allows. */
    async function refusingSite(): Promise<FixtureSite> {
      const site = await startSite();
      const refused = Array.from({ length: 10 }, (_, index) => `/private/${index + 1}`);
      site.addRobots("User-agent: *\nDisallow: /private/\n");
      site.addPage("/", [...refused, "/a", "/b", "/c"]).addPage("/a", []).addPage("/b", []).addPage("/c", []);
      for (const path of refused) site.addPage(path, []);
      return site;
    }

    it.each([1, 4])("counts the pages fetched, not the URLs robots.txt refused, and says it stopped the crawl (maxTasks %i)", async (maxTasks) => {
      const site = await refusingSite();
      const result = await crawl(site.url, { robots: true, maxPages: 3, maxTasks });
      const pages = site.requests().filter((request) => request.path !== "/robots.txt");
      expect(pages.map((request) => request.path)).toEqual(["/", "/a", "/b"]);
      expect(result.records.filter((record) => record.error === "RobotsDisallowed")).toHaveLength(10);
      expect(result.records.filter((record) => record.error === null).map((record) => new URL(record.url).pathname)).toEqual(["/", "/a", "/b"]);
      expect(result.todo).toBe(1);
      expect(result.stoppedBy).toBe("maxPages");
    });

    it("says nothing stopped a crawl that fetched its last page as maxPages was reached", async () => {
      const site = await refusingSite();
      const result = await crawl(site.url, { robots: true, maxPages: 4 });
      expect(result.todo).toBe(0);
      expect(result.stoppedBy).toBeNull();
    });
  });

  describe("queued", () => {
    it("counts the URLs waiting in a host's line", async () => {
      const site = await startSite();
      const pages = Array.from({ length: 6 }, (_, index) => `/p/${index + 1}`);
      site.addPage("/", pages);
      for (const path of pages) site.addPage(path, []);
      const queuedAtStart = new Map<string, number>();
      function onTrace(event: TraceEvent): void {
        if (event.type === "fetch-start") queuedAtStart.set(new URL(event.url).pathname, event.queued);
      }
      const records: FetchStatistic[] = [];
      await crawl(site.url, { maxTasks: 4, maxPerHost: 1, trace: onTrace, onRecord: (record) => records.push(record) });
      // One request at a time: when /p/k starts, the k - 1 before it are done and the other 6 - k wait, whether in the store or in the host's line.
      expect(pages.map((path) => queuedAtStart.get(path))).toEqual([5, 4, 3, 2, 1, 0]);
      expect(records).toHaveLength(7);
    });
  });
});
