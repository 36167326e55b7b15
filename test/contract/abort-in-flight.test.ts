/**
 * A crawl aborted while a request is in flight ends the same way in every
 * stage: the job cut short is handed back to the core (`finish()`), so its
 * URL stays to do and a `robots.txt` cut short is reported as such, whatever
 * the stage's way of ending what is in flight (stage 1's loop end, stage 2's
 * cancelled Tasks, stage 3's closed client).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { withFourth } from "./stages.js";

describe.each(withFourth)("$name crawler aborted in flight", ({ crawl }) => {
  let site: FixtureSite;

  beforeEach(async () => {
    site = await FixtureSite.start();
  });

  afterEach(async () => {
    await site.connectionsClosed();
    await site.close();
  });

  it("reports the robots.txt cut short, fetches nothing else and leaves the root to do, when it aborts during robots.txt", async () => {
    const controller = new AbortController();
    site.addPage("/", ["/a"]).addPage("/a", []);
    // The request arrives, the crawl is aborted, and no answer ever comes: the stage must end the request itself.
    site.addHandler("/robots.txt", function abortMidRequest(_request: IncomingMessage, _response: ServerResponse) {
      controller.abort();
    });
    const result = await crawl(site.url, { robots: true, signal: controller.signal });
    expect(result.robots).toEqual([
      { origin: site.url, url: site.urlFor("/robots.txt"), status: null, error: "NetworkError", detail: null, verdict: "unreachable", crawlDelayMs: null, attempts: 0 },
    ]);
    expect(result.records).toEqual([]);
    expect({ todo: result.todo, seen: result.seen }).toEqual({ todo: 1, seen: [site.urlFor("/")] });
    expect(site.requestsFor("/")).toBe(0);
  });
});
