/**
 * Every stage's trace, checked against what it claims: well-formed events in
 * time order, one fetch-end per fetch-start, no more fetches in flight than
 * `maxTasks`, and each stage's own vocabulary.
 */
import diagnostics_channel from "node:diagnostics_channel";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlResult } from "../../src/crawl/records.js";
import { crawlChannel, loopChannel } from "../../src/observe/channels.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { FixtureSite, startDemoSite } from "../../src/site/index.js";
import type { SyntheticSite } from "../../src/site/index.js";
import { fetchAttempts, inFlightSeries, peak } from "../../src/observe/timeline/index.js";
import { stages } from "../contract/stages.js";

const MAX_TASKS = 4;

/** The fields each event type must have, beside `t`, `stage` and `type`. */
const FIELDS: Record<TraceEvent["type"], string[]> = {
  "fetch-start": ["url", "slot", "attempt", "queued", "unfinished", "inFlight"],
  connect: ["url", "slot"],
  send: ["url", "slot"],
  "first-byte": ["url", "slot"],
  read: ["url", "slot", "bytes"],
  "fetch-end": ["url", "slot", "attempt", "status", "error", "detail", "queued", "unfinished", "inFlight"],
  select: ["ready"],
  dispatch: ["callback", "url", "socket"],
  timer: ["callback"],
  step: ["task", "coroutine", "yielded"],
  resolve: ["future", "label"],
  cancel: ["task"],
  take: ["worker", "url"],
  await: ["worker", "url", "what"],
  resume: ["worker", "url"],
  done: ["worker", "url"],
};

/** The event types only one stage emits. */
const OWN_TYPES: Record<string, string[]> = {
  callbacks: ["select", "dispatch"],
  generators: ["step", "resolve", "cancel"],
  asyncawait: ["take", "await", "resume", "done"],
};

async function tracedCrawl(
  crawl: (typeof stages)[number]["crawl"],
  root: string,
  maxTasks = MAX_TASKS,
): Promise<{ result: CrawlResult; events: TraceEvent[] }> {
  const events: TraceEvent[] = [];
  const result = await crawl(root, {
    maxTasks,
    retryDelayMs: 0, // The retries are traced, not timed: no pause between them.
    trace: function collect(event) {
      events.push(event);
    },
  });
  return { result, events };
}

function count(events: readonly TraceEvent[], type: TraceEvent["type"]): number {
  return events.filter((event) => event.type === type).length;
}

describe.each(stages)("$name trace", function stageTrace(stage) {
  let demo: SyntheticSite;
  let events: TraceEvent[];
  let result: CrawlResult;

  beforeAll(async () => {
    demo = await startDemoSite();
    ({ events, result } = await tracedCrawl(stage.crawl, demo.url));
  });
  afterAll(async () => {
    await demo.close();
  });

  it("emits well-formed events of its stage, with a monotonic t", () => {
    expect(events.length).toBeGreaterThan(result.records.length * 4);
    let previous = 0;
    for (const event of events) {
      expect(event.stage).toBe(stage.name);
      expect(Number.isFinite(event.t)).toBe(true);
      expect(event.t).toBeGreaterThanOrEqual(previous);
      previous = event.t;
      expect(Object.keys(event).sort()).toEqual(["stage", "t", "type", ...FIELDS[event.type]].sort());
    }
  });

  it("emits its own vocabulary and no other stage's", () => {
    for (const [owner, types] of Object.entries(OWN_TYPES)) {
      for (const type of types) {
        if (type === "cancel" && owner === stage.name) continue; // only when workers are cancelled at the end
        const emitted = events.some((event) => event.type === type);
        expect({ type, emitted }).toEqual({ type, emitted: owner === stage.name });
      }
    }
  });

  it("ends every fetch-start with a fetch-end of the same slot and URL", () => {
    const open = new Map<number, string>();
    for (const event of events) {
      if (event.type === "fetch-start") {
        expect(open.has(event.slot)).toBe(false);
        open.set(event.slot, event.url);
      } else if (event.type === "fetch-end") {
        expect(open.get(event.slot)).toBe(event.url);
        open.delete(event.slot);
      }
    }
    expect(open.size).toBe(0);
    expect(count(events, "fetch-start")).toBe(result.records.length);
  });

  it("traces each successful fetch through connect, send, first-byte, read* and fetch-end in order", () => {
    const attempts = fetchAttempts(events).filter((attempt) => attempt.status !== null);
    expect(attempts.length).toBe(result.records.length);
    for (const attempt of attempts) {
      const steps = events
        .filter((event) => "slot" in event && event.slot === attempt.slot && event.url === attempt.url)
        .map((event) => event.type);
      // Reads (none for an empty body in stage 3, which counts body bytes only) come after the first byte.
      const firstByte = steps.indexOf("first-byte");
      expect(steps.slice(firstByte + 1, -1).every((type) => type === "read")).toBe(true);
      expect(steps.filter((type) => type !== "read")).toEqual(["fetch-start", "connect", "send", "first-byte", "fetch-end"]);
    }
  });

  it("never has more fetches in flight than maxTasks, and has more than one at once", () => {
    const attempts = fetchAttempts(events);
    const highest = peak(inFlightSeries(attempts));
    expect(highest).toBeLessThanOrEqual(MAX_TASKS);
    expect(highest).toBeGreaterThan(1); // the fetches overlap
    const slots = new Set(attempts.map((attempt) => attempt.slot));
    for (const slot of slots) expect(slot).toBeLessThan(MAX_TASKS);
    for (const event of events) {
      if (event.type === "fetch-start" || event.type === "fetch-end") {
        expect(event.inFlight).toBeLessThanOrEqual(MAX_TASKS);
      }
    }
  });

  it("counts what the queue holds in the fetch events", () => {
    for (const event of events) {
      if (event.type !== "fetch-start" && event.type !== "fetch-end") continue;
      expect(event.queued).toBeGreaterThanOrEqual(0);
      expect(event.unfinished).toBeGreaterThanOrEqual(event.queued);
    }
    const last = events.filter((event) => event.type === "fetch-end").at(-1);
    expect(last?.queued).toBe(0);
  });

  it("counts the fetch an event is about as in flight, at its start and at its end", () => {
    for (const event of events) {
      if (event.type === "fetch-start" || event.type === "fetch-end") expect(event.inFlight).toBeGreaterThanOrEqual(1);
    }
    const ends = events.filter((event) => event.type === "fetch-end");
    expect(ends.at(-1)?.inFlight).toBe(1); // the last fetch, still counted as it ends
  });
});

describe.each(stages)("$name trace of failed attempts", function failedAttempts(stage) {
  it("reports each retry of a dropped connection as an attempt ending in an error", async () => {
    const site = await FixtureSite.start();
    try {
      site.addPage("/", ["/dropped"]).addFault("/dropped", { kind: "drop" });
      const { result, events } = await tracedCrawl(stage.crawl, site.url);
      const dropped = fetchAttempts(events).filter((attempt) => attempt.url === site.urlFor("/dropped"));
      const maxTries = result.options.maxTries;
      expect(dropped.map((attempt) => attempt.attempt)).toEqual(Array.from({ length: maxTries }, (_, i) => i + 1));
      for (const attempt of dropped) {
        expect(attempt.status).toBeNull();
        expect(attempt.error).toBe(result.records.find((record) => record.url === attempt.url)?.error);
      }
    } finally {
      await site.close();
    }
  });
});

describe.each(stages)("$name trace of a refused connection", function refused(stage) {
  it("reports no connect event, only the attempts and their errors", async () => {
    const closed = await FixtureSite.start();
    const root = closed.url;
    await closed.close(); // Nothing listens on that port now.
    const { result, events } = await tracedCrawl(stage.crawl, root);
    expect(result.records[0]?.error).toBe("ConnectionRefused");
    expect(count(events, "connect")).toBe(0);
    expect(count(events, "fetch-end")).toBe(result.options.maxTries);
  });
});

describe("callbacks trace", () => {
  it("names the callback, URL and socket of every dispatch", async () => {
    const demo = await startDemoSite();
    try {
      const { events } = await tracedCrawl(stages[0].crawl, demo.url);
      const dispatches = events.filter((event) => event.type === "dispatch");
      expect(dispatches.length).toBeGreaterThan(0);
      for (const event of dispatches) {
        expect(["connected", "readResponse"]).toContain(event.callback);
        expect(event.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
        expect(event.socket).toBeGreaterThan(0);
      }
      // Each select reports as many ready keys as dispatches follow it.
      let expected = 0;
      for (const event of events) {
        if (event.type === "select") {
          expect(event.ready).toBe(expected);
          expected = 0;
        } else if (event.type === "dispatch") expected += 1;
      }
    } finally {
      await demo.close();
    }
  });
});

describe("traces of crawls run at once", () => {
  it("give each trace only its own crawl's events, when the three stages crawl three sites at once", async () => {
    const sites = await Promise.all(stages.map(() => startDemoSite()));
    try {
      const crawls = await Promise.all(stages.map((stage, i) => tracedCrawl(stage.crawl, sites[i].url)));
      for (const [i, { result, events }] of crawls.entries()) {
        const stage = stages[i].name;
        const own = sites[i].url;
        expect(new Set(events.map((event) => event.stage))).toEqual(new Set([stage]));
        const foreign = events.filter((event) => "url" in event && event.url !== null && !event.url.startsWith(own));
        expect({ stage, foreign: foreign.length }).toEqual({ stage, foreign: 0 });
        expect(count(events, "fetch-start")).toBe(result.records.length);
        // Every successful attempt of this crawl was traced through its connect, also in stage 3 (from undici).
        const attempts = fetchAttempts(events).filter((attempt) => attempt.status !== null);
        expect(attempts.length).toBe(result.records.length);
        expect(attempts.every((attempt) => attempt.connect !== null && attempt.firstByte !== null)).toBe(true);
      }
    } finally {
      await Promise.all(sites.map((site) => site.close()));
    }
  });
});

describe.each(stages)("$name crawl without a trace", function untraced(stage) {
  it("publishes nothing: no subscriber exists on our channels or undici's while it crawls", async () => {
    const demo = await startDemoSite();
    const seen: boolean[] = [];
    try {
      const result = await stage.crawl(demo.url, {
        maxTasks: MAX_TASKS,
        onRecord: function checkNobodyListens() {
          seen.push(
            crawlChannel.hasSubscribers ||
              loopChannel.hasSubscribers ||
              diagnostics_channel.hasSubscribers("undici:request:create") ||
              diagnostics_channel.hasSubscribers("undici:client:sendHeaders"),
          );
        },
      });
      expect(seen.length).toBe(result.records.length);
      expect(seen.every((listened) => !listened)).toBe(true);
    } finally {
      await demo.close();
    }
  });
});
