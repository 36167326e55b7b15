/**
 * A crawl stopped from inside one of its own channel messages (a trace
 * subscriber, a progress display, Ctrl-C handled synchronously) ends the same
 * way in every stage: no more attempts, no record for the URL cut short, no
 * socket left open.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/fixture-site.js";
import { withFourth } from "./stages.js";

describe.each(withFourth)("$name crawler stopped by a subscriber", ({ crawl }) => {
  let site: FixtureSite;

  beforeEach(async () => {
    site = await FixtureSite.start();
  });

  afterEach(async () => {
    await site.connectionsClosed();
    await site.close();
  });

  it.each(["fetch-start", "fetch-end"])("makes no record and leaves no socket open when it aborts at the first %s", async (type) => {
    site.addPage("/", ["/a", "/b"]).addPage("/a", []).addPage("/b", []);
    const controller = new AbortController();
    function abortAt(message: unknown): void {
      if (typeof message !== "object" || message === null || !("type" in message) || !("url" in message)) return;
      if (message.type === type && message.url === site.urlFor("/")) controller.abort(); // synchronously, inside the publish
    }
    diagnostics_channel.subscribe("coroutine-crawler:crawl", abortAt);
    try {
      const result = await crawl(site.url, { signal: controller.signal, maxTries: 3 });
      expect(controller.signal.aborted).toBe(true);
      expect(result.records).toEqual([]);
      expect(result.todo).toBe(1);
      expect(site.requestsFor("/a") + site.requestsFor("/b")).toBe(0);
    } finally {
      diagnostics_channel.unsubscribe("coroutine-crawler:crawl", abortAt);
    }
  });
});
