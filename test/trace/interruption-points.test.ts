/**
 * The chapter's point, read from the trace: a coroutine runs until it
 * yields (stage 2) or awaits (stage 3), and nothing else runs in between.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import { MemoryStore } from "../../src/crawl/store.js";
import type { QueueItem } from "../../src/crawl/visit.js";
import { crawl as crawlWithGenerators } from "../../src/generators/index.js";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";
import type { TraceEvent } from "../../src/observe/events.js";
import { startDemoSite } from "../../src/site/index.js";
import type { SyntheticSite } from "../../src/site/index.js";

let demo: SyntheticSite;

beforeAll(async () => {
  demo = await startDemoSite();
});
afterAll(async () => {
  await demo.close();
});

/** The events a Task step ran: the slot events since the previous step, closed by this step's event. */
interface Segment {
  step: Extract<TraceEvent, { type: "step" }>;
  slotEvents: Array<Extract<TraceEvent, { slot: number }>>;
}

function segments(events: readonly TraceEvent[]): { segments: Segment[]; trailing: number } {
  const result: Segment[] = [];
  let pending: Segment["slotEvents"] = [];
  for (const event of events) {
    if (event.type === "step") {
      result.push({ step: event, slotEvents: pending });
      pending = [];
    } else if ("slot" in event) {
      pending.push(event);
    }
  }
  return { segments: result, trailing: pending.length };
}

describe("generators Task", () => {
  let events: TraceEvent[];

  beforeAll(async () => {
    events = [];
    await crawlWithGenerators(demo.url, {
      maxTasks: 4,
      trace: function collect(event) {
        events.push(event);
      },
    });
  });

  it("runs one worker's code between two steps: a coroutine is interrupted only at a yield*", () => {
    const { segments: all, trailing } = segments(events);
    const busy = all.filter((segment) => segment.slotEvents.length > 0);
    expect(busy.length).toBeGreaterThan(50);
    for (const segment of busy) {
      const slots = new Set(segment.slotEvents.map((event) => event.slot));
      expect(slots.size).toBe(1);
    }
    // Every piece of worker code ended in a step: it yielded (or returned) to its Task.
    expect(trailing).toBe(0);
  });

  // Slots are numbered by the trace's subscriber, not by the workers (a slot is held by a URL while it
  // is fetched), so the worker Task is checked per URL: all of a URL's attempts run in one worker.
  it("runs each URL's fetch-starts and fetch-ends in one worker Task, and each request's steps in one Task", () => {
    const workerOf = new Map<string, number>();
    const requestTaskOf = new Map<string, number>();
    for (const { step, slotEvents } of segments(events).segments) {
      for (const event of slotEvents) {
        if (event.type === "fetch-start" || event.type === "fetch-end") {
          expect(workerOf.get(event.url) ?? step.task).toBe(step.task);
          workerOf.set(event.url, step.task);
          expect(step.coroutine).toBe("work");
        } else {
          const key = `${event.slot} ${event.url}`;
          expect(requestTaskOf.get(key) ?? step.task).toBe(step.task);
          requestTaskOf.set(key, step.task);
        }
      }
    }
    expect(new Set(workerOf.values()).size).toBe(4);
  });
});

describe("asyncawait worker", () => {
  /**
   * What a crawl did, in order, seen from outside: trace events, records
   * (`onRecord`), URLs queued in the crawl's store (a spy on `MemoryStore.add`), and a marker
   * from a microtask queued at each `take` and `resume`. That microtask runs
   * only once the worker's code stops running (at an `await`, or when its
   * function returns), so whatever the log shows between a take or resume
   * and its marker ran in one stretch, with no other code in between.
   */
  type Entry =
    | { kind: "event"; event: TraceEvent; marker: number | null }
    | { kind: "record"; record: FetchStatistic }
    | { kind: "put"; url: string }
    | { kind: "marker"; id: number };

  let log: Entry[];
  let result: CrawlResult;

  beforeAll(async () => {
    log = [];
    let markers = 0;
    const originalAdd = MemoryStore.prototype.add;
    const put = vi.spyOn(MemoryStore.prototype, "add").mockImplementation(function loggedAdd(this: MemoryStore, items: readonly QueueItem[]): void {
      for (const item of items) if (!this.seenUrls.has(item.url)) log.push({ kind: "put", url: item.url });
      originalAdd.call(this, items);
    });
    try {
      result = await crawlWithAsyncAwait(demo.url, {
        maxTasks: 4,
        trace: function collect(event) {
          if (event.type !== "take" && event.type !== "resume") {
            log.push({ kind: "event", event, marker: null });
            return;
          }
          const id = markers++;
          log.push({ kind: "event", event, marker: id });
          queueMicrotask(function markStretchEnded() {
            log.push({ kind: "marker", id });
          });
        },
        onRecord: function collect(record) {
          log.push({ kind: "record", record });
        },
      });
    } finally {
      put.mockRestore();
    }
  });

  function indexOfMarker(id: number | null): number {
    const index = log.findIndex((entry) => entry.kind === "marker" && entry.id === id);
    expect(index).toBeGreaterThan(-1);
    return index;
  }

  it("runs a worker without a break from taking a URL to awaiting its request", () => {
    let takes = 0;
    for (const [index, entry] of log.entries()) {
      if (entry.kind !== "event" || entry.event.type !== "take") continue;
      const { worker, url } = entry.event;
      takes += 1;
      const awaited = log.findIndex(
        (later, laterIndex) =>
          laterIndex > index && later.kind === "event" && later.event.type === "await" && later.event.worker === worker,
      );
      expect({ url, awaitedBeforeItsFirstBreak: awaited > index && awaited < indexOfMarker(entry.marker) }).toEqual({
        url,
        awaitedBeforeItsFirstBreak: true,
      });
    }
    expect(takes).toBe(result.records.length);
  });

  it("checks a URL's links against seenUrls, queues the new ones and records it in the stretch that resumed after its request, so no other worker runs in between", () => {
    const putAt = new Map<string, number>();
    for (const [index, entry] of log.entries()) if (entry.kind === "put") putAt.set(entry.url, index);
    let linksQueued = 0;
    for (const [recordIndex, entry] of log.entries()) {
      if (entry.kind !== "record") continue;
      const { record } = entry;
      // The resume after the attempt that made this record: the last one for this URL before it.
      let resumeIndex = -1;
      for (let index = recordIndex - 1; index >= 0; index--) {
        const earlier = log[index];
        if (earlier.kind === "event" && earlier.event.type === "resume" && earlier.event.url === record.url) {
          resumeIndex = index;
          break;
        }
      }
      expect(resumeIndex).toBeGreaterThan(-1);
      const resumed = log[resumeIndex];
      const stretchEnd = indexOfMarker(resumed.kind === "event" ? resumed.marker : null);
      // The core's settle() has visit() check seenUrls, the store queue the new links and the record
      // made, all before the worker's next await: in the stretch that resumed, the record after the puts.
      const puts = log.slice(resumeIndex + 1, recordIndex).filter((later) => later.kind === "put");
      const queued = record.nextUrl === null ? puts.length : puts.filter((later) => later.url === record.nextUrl).length;
      // A page queues its numNewUrls links; a redirect queues its target unless it was already seen (put before it resumed).
      const expected = record.nextUrl === null ? record.numNewUrls : (putAt.get(record.nextUrl) ?? -1) > resumeIndex ? 1 : 0;
      expect({ url: record.url, recordedInThatStretch: recordIndex < stretchEnd, queued }).toEqual({
        url: record.url,
        recordedInThatStretch: true,
        queued: expected,
      });
      linksQueued += queued;
    }
    expect(result.records.length).toBeGreaterThan(50);
    expect(linksQueued).toBe(result.seen.length - 1);
  });

  it("takes, fetches, awaits, resumes and finishes each URL in order", () => {
    const sequence = new Map<number, string[]>();
    for (const entry of log) {
      if (entry.kind !== "event") continue;
      const { event } = entry;
      let worker: number;
      if (event.type === "take" || event.type === "await" || event.type === "resume" || event.type === "done") {
        worker = event.worker;
      } else if (event.type === "fetch-start" || event.type === "fetch-end") {
        worker = event.slot;
      } else {
        continue;
      }
      const steps = sequence.get(worker) ?? [];
      steps.push(event.type);
      sequence.set(worker, steps);
    }
    let urls = 0;
    for (const steps of sequence.values()) {
      expect(steps.join(" ")).toMatch(/^(take (fetch-start await resume fetch-end )+done ?)+$/);
      urls += steps.filter((type) => type === "done").length;
    }
    expect(urls).toBe(result.records.length);
  });
});
