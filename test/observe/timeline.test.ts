/**
 * The timeline page, from hand-made traces: attempts rebuilt from events, the
 * in-flight and queue series, the time axis, and the HTML.
 */
import { describe, expect, it } from "vitest";
import type { StageName, TraceEvent } from "../../src/observe/events.js";
import { fetchAttempts, inFlightSeries, peak, queuedSeries, TimeScale, timelinePage, whatToNotice } from "../../src/observe/timeline/index.js";
import { timelineWritten } from "../../src/observe/timeline/timeline-page.js";

const A = "http://127.0.0.1:1/a";
const B = "http://127.0.0.1:1/b?x=1&y=<2>";

/** Two attempts in two slots: `A` succeeds, `B` is refused before it connects. */
function trace(stage: StageName = "callbacks"): TraceEvent[] {
  const counters = { queued: 0, unfinished: 2, inFlight: 0 };
  return [
    { t: 0, stage, type: "fetch-start", url: A, slot: 0, attempt: 1, ...counters, queued: 1, inFlight: 1 },
    { t: 1, stage, type: "fetch-start", url: B, slot: 1, attempt: 1, ...counters, inFlight: 2 },
    { t: 2, stage, type: "connect", url: A, slot: 0 },
    { t: 2.5, stage, type: "send", url: A, slot: 0 },
    { t: 3, stage, type: "fetch-end", url: B, slot: 1, attempt: 1, status: null, error: "ConnectionRefused", ...counters, inFlight: 1 },
    { t: 5, stage, type: "first-byte", url: A, slot: 0 },
    { t: 5, stage, type: "read", url: A, slot: 0, bytes: 100 },
    { t: 6, stage, type: "read", url: A, slot: 0, bytes: 20 },
    { t: 8, stage, type: "fetch-end", url: A, slot: 0, attempt: 1, status: 200, error: null, ...counters, unfinished: 1 },
  ];
}

describe("fetchAttempts", () => {
  it("rebuilds each attempt's phases, outcome and bytes from its slot's events", () => {
    expect(fetchAttempts(trace())).toEqual([
      { url: A, slot: 0, attempt: 1, start: 0, connect: 2, firstByte: 5, end: 8, status: 200, error: null, bytes: 120 },
      { url: B, slot: 1, attempt: 1, start: 1, connect: null, firstByte: null, end: 3, status: null, error: "ConnectionRefused", bytes: 0 },
    ]);
  });

  it("ends an attempt that never ended at the trace's last time", () => {
    const events = trace().slice(0, 4);
    expect(fetchAttempts(events).map((attempt) => [attempt.end, attempt.status])).toEqual([
      [2.5, null],
      [2.5, null],
    ]);
  });
});

describe("inFlightSeries", () => {
  it("counts fetches in flight, ending one before starting another at the same moment", () => {
    const attempts = fetchAttempts([
      ...trace(),
      { t: 8, stage: "callbacks", type: "fetch-start", url: B, slot: 0, attempt: 2, queued: 0, unfinished: 1, inFlight: 1 },
      { t: 9, stage: "callbacks", type: "select", ready: 0 },
    ]);
    const series = inFlightSeries(attempts);
    expect(series).toEqual([[0, 0], [0, 1], [1, 2], [3, 1], [8, 0], [8, 1], [9, 0]]);
    expect(peak(series)).toBe(2);
  });
});

describe("queuedSeries", () => {
  it("follows the queued counter of the fetch events", () => {
    expect(queuedSeries(trace())).toEqual([[0, 0], [0, 1], [1, 0], [3, 0], [8, 0]]);
  });
});

describe("TimeScale", () => {
  it("maps times onto the axis and picks round ticks", () => {
    const scale = new TimeScale(180, 100, 1000);
    expect(scale.x(0)).toBe(100);
    expect(scale.x(90)).toBe(550);
    expect(scale.x(500)).toBe(1000);
    expect(scale.ticks()).toEqual([0, 20, 40, 60, 80, 100, 120, 140, 160, 180]);
    expect(new TimeScale(3.7, 0, 10).ticks(4)).toEqual([0, 1, 2, 3]);
    expect(new TimeScale(0.2, 0, 10).ticks(2)).toEqual([0, 0.5, 1]); // at least 1 ms
  });
});

describe("timelinePage", () => {
  it("draws one panel per stage and one bar per attempt, with phase rects", () => {
    const page = timelinePage([
      { stage: "callbacks", events: trace("callbacks"), maxTasks: 2 },
      { stage: "asyncawait", events: trace("asyncawait") },
    ]);
    expect(page.match(/<section class="panel" data-stage="(\w+)"/g)).toEqual([
      '<section class="panel" data-stage="callbacks"',
      '<section class="panel" data-stage="asyncawait"',
    ]);
    expect(page.match(/<g class="bar/g)?.length).toBe(4);
    expect(page.match(/<g class="bar failed"/g)?.length).toBe(2);
    // A's three phases; B failed while connecting.
    expect(page.match(/<rect class="connecting"/g)?.length).toBe(4);
    expect(page.match(/<rect class="waiting"/g)?.length).toBe(2);
    expect(page.match(/<rect class="reading"/g)?.length).toBe(2);
    expect(page).toContain("callbacks: 2 fetch attempts, at most 2 in flight (maxTasks 2), 8.0 ms");
    expect(page).toContain("maxTasks 2</text>");
    expect(page).toContain("worker 0");
  });

  it("escapes URLs and names each bar's outcome and timings for the hover title and the click box", () => {
    const page = timelinePage([{ stage: "generators", events: trace("generators") }]);
    expect(page).not.toContain("y=<2>");
    expect(page).toContain('data-url="http://127.0.0.1:1/b?x=1&amp;y=&lt;2&gt;"');
    expect(page).toContain('data-outcome="ConnectionRefused"');
    expect(page).toContain("start 0.0 ms · connect +2.0 ms · first byte +3.0 ms · read 3.0 ms, 120 bytes · total 8.0 ms");
    expect(page).toMatch(/<title>http:\/\/127\.0\.0\.1:1\/a\n200 · slot 0 · try 1\n/);
  });

  it("is one self-contained file: no external script, style sheet or image", () => {
    const page = timelinePage([{ stage: "callbacks", events: trace() }]);
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).not.toMatch(/\b(src|href)=/);
    expect(page.match(/<script>/g)?.length).toBe(1);
  });

  it("still renders an empty trace", () => {
    const page = timelinePage([{ stage: "asyncawait", events: [] }]);
    expect(page).toContain("asyncawait: 0 fetch attempts, at most 0 in flight, 0.0 ms");
    expect(page).not.toContain('<g class="bar');
  });
});

/** Two attempts one after the other (robots.txt, then the root), then two at once: the root's links. */
function fanOut(stage: StageName): TraceEvent[] {
  const counters = { queued: 0, unfinished: 2, inFlight: 1 };
  const attempt = (url: string, slot: number, start: number, end: number): TraceEvent[] => [
    { t: start, stage, type: "fetch-start", url, slot, attempt: 1, ...counters },
    { t: end, stage, type: "fetch-end", url, slot, attempt: 1, status: 200, error: null, ...counters },
  ];
  const root = "http://127.0.0.1:1/";
  return [
    ...attempt(`${root}robots.txt`, 0, 0, 2),
    ...attempt(root, 0, 3, 5),
    { t: 6, stage, type: "fetch-start", url: `${root}p/1`, slot: 0, attempt: 1, ...counters },
    { t: 7, stage, type: "fetch-start", url: `${root}p/2?x=1`, slot: 1, attempt: 1, ...counters, inFlight: 2 },
    { t: 9, stage, type: "fetch-end", url: `${root}p/2?x=1`, slot: 1, attempt: 1, status: 200, error: null, ...counters },
    { t: 10, stage, type: "fetch-end", url: `${root}p/1`, slot: 0, attempt: 1, status: 200, error: null, ...counters },
  ];
}

describe("whatToNotice", () => {
  it("begins with how the panel's stage waits", () => {
    expect(whatToNotice({ stage: "callbacks", events: [] })[0]).toMatch(/^One thread runs every bar\. .*the loop's select\(\) finds other sockets ready/);
    expect(whatToNotice({ stage: "generators", events: [] })[0]).toMatch(/^Each bar is a worker Task paused at a yield\* on a Future/);
    expect(whatToNotice({ stage: "asyncawait", events: [] })[0]).toMatch(/suspended at await client\.get\(url\)/);
    expect(whatToNotice({ stage: "asyncawait", events: [] })).toHaveLength(1);
  });

  it("names the first bars that ran one after the other, before the crawl fanned out", () => {
    expect(whatToNotice({ stage: "callbacks", events: fanOut("callbacks") })).toContain(
      "The first 2 bars run one after the other (/robots.txt, /): each had to be read before anything else could be fetched. " +
        "Then the queue fills and the bars fan out.",
    );
    // A and B overlap from the start: no bar ran alone.
    expect(whatToNotice({ stage: "callbacks", events: trace() }).join(" ")).not.toContain("The first");
  });

  it("says whether the fetches in flight reached maxTasks or stayed under it", () => {
    expect(whatToNotice({ stage: "generators", events: fanOut("generators"), maxTasks: 2 })).toContain(
      "The fetches in flight reach maxTasks (2) and go no higher: the limit set how many overlapped.",
    );
    expect(whatToNotice({ stage: "generators", events: fanOut("generators"), maxTasks: 5 })).toContain(
      "At most 2 fetches overlapped, under maxTasks (5): the URLs known at each moment, not the limit, bounded them.",
    );
    expect(whatToNotice({ stage: "generators", events: fanOut("generators") }).join(" ")).not.toContain("maxTasks");
  });

  it("counts the failed attempts, and says nothing of failures when none failed", () => {
    expect(whatToNotice({ stage: "asyncawait", events: trace("asyncawait") })).toContain("1 attempt failed (outlined in red): click one to see why.");
    expect(whatToNotice({ stage: "asyncawait", events: fanOut("asyncawait") }).join(" ")).not.toContain("failed");
  });
});

describe("timelinePage's captions", () => {
  it("puts a 'What to notice' caption between each panel's heading and its chart", () => {
    const page = timelinePage([
      { stage: "callbacks", events: fanOut("callbacks"), maxTasks: 2 },
      { stage: "generators", events: fanOut("generators"), maxTasks: 2 },
      { stage: "asyncawait", events: trace("asyncawait"), maxTasks: 2 },
    ]);
    const captions = [...page.matchAll(/<section class="panel" data-stage="(\w+)">\n<h2>[^<]*<\/h2>\n<p class="notice"><b>What to notice:<\/b> ([^<]*)<\/p>\n<svg /g)];
    expect(captions.map((caption) => caption[1])).toEqual(["callbacks", "generators", "asyncawait"]);
    expect(captions[0][2]).toContain("select()");
    expect(captions[1][2]).toContain("(/robots.txt, /)");
    expect(captions[2][2]).toContain("1 attempt failed");
  });
});

describe("timelineWritten", () => {
  it("names the file as given, the stages drawn, and the file: URL to open in a browser", () => {
    const line = timelineWritten("out dir/timeline.html", [{ stage: "callbacks", events: [] }, { stage: "asyncawait", events: [] }]);
    expect(line).toMatch(/^Timeline of callbacks, asyncawait written to out dir\/timeline\.html: open file:\/\/\/\S+\/out%20dir\/timeline\.html in a browser\.\n$/);
    expect(line).toContain(`file://${process.cwd()}/`);
  });
});
