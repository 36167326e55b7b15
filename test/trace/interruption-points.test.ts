/**
 * The chapter's point, read from the trace: a coroutine runs until it
 * yields (stage 2) or awaits (stage 3), and nothing else runs in between.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawl as crawlWithAsyncAwait } from "../../src/asyncawait/index.js";
import { crawl as crawlWithGenerators } from "../../src/generators/index.js";
import type { TraceEvent } from "../../src/shared/trace.js";
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

  it("runs each slot's fetch-start and fetch-end in one worker Task, and each request's steps in one Task", () => {
    const workerOf = new Map<number, number>();
    const requestTaskOf = new Map<string, number>();
    for (const { step, slotEvents } of segments(events).segments) {
      for (const event of slotEvents) {
        if (event.type === "fetch-start" || event.type === "fetch-end") {
          expect(workerOf.get(event.slot) ?? step.task).toBe(step.task);
          workerOf.set(event.slot, step.task);
          expect(step.coroutine).toBe("work");
        } else {
          const key = `${event.slot} ${event.url}`;
          expect(requestTaskOf.get(key) ?? step.task).toBe(step.task);
          requestTaskOf.set(key, step.task);
        }
      }
    }
    expect(workerOf.size).toBe(4);
  });
});

describe("asyncawait worker", () => {
  it("takes, fetches, awaits, resumes and finishes each URL in order, suspended only at its await", async () => {
    const events: TraceEvent[] = [];
    const result = await crawlWithAsyncAwait(demo.url, {
      maxTasks: 4,
      trace: function collect(event) {
        events.push(event);
      },
    });
    const sequence = new Map<number, string[]>();
    const suspended = new Set<number>();
    for (const event of events) {
      let worker: number;
      if (event.type === "take" || event.type === "await" || event.type === "resume" || event.type === "done") {
        worker = event.worker;
      } else if (event.type === "fetch-start" || event.type === "fetch-end") {
        worker = event.slot;
      } else {
        continue;
      }
      // While a worker waits at its await, none of its own code runs.
      if (event.type === "resume") suspended.delete(worker);
      expect(suspended.has(worker)).toBe(false);
      if (event.type === "await") suspended.add(worker);
      const steps = sequence.get(worker) ?? [];
      steps.push(event.type);
      sequence.set(worker, steps);
    }
    let urls = 0;
    for (const steps of sequence.values()) {
      const text = steps.join(" ");
      expect(text).toMatch(/^(take (fetch-start await resume fetch-end )+done ?)+$/);
      urls += steps.filter((type) => type === "done").length;
    }
    expect(urls).toBe(result.records.length);
  });
});
