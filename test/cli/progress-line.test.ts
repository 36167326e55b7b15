import { describe, expect, it } from "vitest";
import { canRedraw, CrawlCounters, elapsedText, ProgressLine, StatsLines } from "../../src/cli/progress-line.js";
import { errorRecord, pageRecord } from "../../src/crawl/records.js";
import type { FetchStartEvent } from "../../src/observe/events.js";

class FakeTerminal {
  readonly writes: string[] = [];
  constructor(readonly isTTY: boolean, readonly columns = 80) {}
  write(text: string): boolean {
    this.writes.push(text);
    return true;
  }
}

function fetchStart(inFlight: number, queued: number): FetchStartEvent {
  return { type: "fetch-start", t: 0, stage: "asyncawait", url: "http://h/", slot: 0, attempt: 1, queued, unfinished: queued + inFlight, inFlight };
}

const page = pageRecord("http://h/", { status: 200, size: 1, contentType: "text/html", encoding: "utf-8" }, 0, 0);

describe("CrawlCounters", () => {
  it("counts records and errors, and takes the queue's figures from fetch events", () => {
    const counters = new CrawlCounters(0);
    counters.onRecord(page);
    counters.onRecord(errorRecord("http://h/x", "Timeout"));
    expect([counters.done, counters.errors, counters.inFlight, counters.peakInFlight]).toEqual([2, 1, null, null]);
    counters.onTrace(fetchStart(3, 5));
    counters.onTrace(fetchStart(1, 4));
    expect([counters.queued, counters.inFlight, counters.peakInFlight, counters.attempts]).toEqual([4, 1, 3, 2]);
    expect(counters.pagesPerSecond(1000)).toBe(2);
  });
});

describe("ProgressLine", () => {
  it("draws nothing on a stream that is not a terminal", () => {
    const stream = new FakeTerminal(false);
    const line = new ProgressLine(stream, new CrawlCounters(0), "asyncawait", () => 0);
    line.update();
    line.clear();
    line.stop();
    expect(stream.writes).toEqual([]);
  });

  it("draws the figures in place and wipes them before other output", () => {
    const stream = new FakeTerminal(true);
    const counters = new CrawlCounters(0);
    let now = 1000;
    const line = new ProgressLine(stream, counters, "callbacks", () => now);
    counters.onRecord(page);
    line.update();
    expect(stream.writes).toEqual(["\r\x1b[Kcallbacks: done 1 · queued - · in flight - · errors 0 · 1.0 pages/s · 0:01"]);
    line.clear();
    line.clear();
    expect(stream.writes.slice(1)).toEqual(["\r\x1b[K"]);
    now = 1200;
    counters.onTrace(fetchStart(2, 7));
    line.update();
    expect(stream.writes.at(-1)).toBe("\r\x1b[Kcallbacks: done 1 · queued 7 · in flight 2 · errors 0 · 0.8 pages/s · 0:01");
  });

  it("redraws at most once per interval, and never wider than the terminal", () => {
    const stream = new FakeTerminal(true, 21);
    const line = new ProgressLine(stream, new CrawlCounters(0), "generators", () => 5000);
    line.update();
    line.update();
    line.update();
    line.stop();
    expect(stream.writes).toEqual(["\r\x1b[Kgenerators: done 0 ·", "\r\x1b[K"]);
  });
});

describe("ProgressLine on a dumb terminal", () => {
  it("draws nothing when TERM is dumb, which cannot erase a line", () => {
    const stream = new FakeTerminal(true);
    const line = new ProgressLine(stream, new CrawlCounters(0), "asyncawait", () => 0, { TERM: "dumb" });
    line.update();
    line.stop();
    expect(stream.writes).toEqual([]);
    expect([canRedraw(stream, { TERM: "dumb" }), canRedraw(stream, { TERM: "xterm" }), canRedraw(stream, {})]).toEqual([false, true, true]);
  });
});

describe("elapsedText", () => {
  it("writes minutes and seconds, and hours once there are any", () => {
    expect([0, 7_999, 65_000, 750_000, 3_723_000, 36_000_000].map(elapsedText)).toEqual(["0:00", "0:07", "1:05", "12:30", "1:02:03", "10:00:00"]);
  });
});

describe("StatsLines", () => {
  it("writes the figures as a plain line: pages, errors, queued, rate, elapsed", () => {
    const counters = new CrawlCounters(0);
    counters.onRecord(page);
    counters.onRecord(errorRecord("http://h/x", "Timeout"));
    const lines = new StatsLines(() => {}, counters, 60_000, "", false, () => 65_000);
    expect(lines.text()).toBe("crawl: 2 pages, 1 error, - queued, 0.0 pages/s, 1:05 elapsed");
    counters.onTrace(fetchStart(2, 30));
    const labelled = new StatsLines(() => {}, counters, 60_000, "generators", false, () => 4_000);
    expect(labelled.text()).toBe("crawl: generators: 2 pages, 1 error, 30 queued, 0.5 pages/s, 0:04 elapsed");
  });

  it("is off with an interval of 0, and where a progress line is drawn instead", () => {
    const counters = new CrawlCounters(0);
    expect(new StatsLines(() => {}, counters, 0, "", false).enabled).toBe(false);
    expect(new StatsLines(() => {}, counters, 1000, "", true).enabled).toBe(false);
    expect(new StatsLines(() => {}, counters, 1000, "", false).enabled).toBe(true);
  });

  it("prints a line per interval until stopped", async () => {
    const written: string[] = [];
    const lines = new StatsLines((line) => written.push(line), new CrawlCounters(Date.now()), 5, "", false);
    lines.start();
    while (written.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    lines.stop();
    const count = written.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(written).toHaveLength(count);
    expect(written.every((line) => /^crawl: 0 pages, 0 errors, - queued, 0\.0 pages\/s, 0:00 elapsed\n$/.test(line))).toBe(true);
  });
});
