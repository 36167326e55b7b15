/**
 * A C10K-shaped crawl in the bottle: 10,000 pages, each answered after one
 * virtual second, 10,000 tasks. On the real network it takes a machine
 * with 10,000 sockets; here it takes CPU time only (docs/the-bottle.md
 * gives the figure). Counted, never timed.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "../../src/bottle/simulate.js";

describe("the bottle at C10K", () => {
  it("crawls 10,000 pages with 1 s responses and 10,000 tasks in stage 3, closing every socket", async () => {
    const simulation = await simulate({
      seed: 1,
      stage: "asyncawait",
      trace: false,
      network: { latencyMs: 1, bytesPerMs: 12_500, faults: {} },
      options: { maxTasks: 10_000 },
      site: async (world) => {
        const synthetic = await world.synthetic("http://c10k.test", { pages: 10_000, linksPerPage: 10, seed: 1, delayMs: 1_000 });
        return { roots: synthetic.url };
      },
    });
    expect(simulation.result.records).toHaveLength(10_000);
    expect(simulation.result.records.every((record) => record.status === 200)).toBe(true);
    // Seven breadth-first levels of one virtual second each, plus the network's milliseconds: the crawl took 7 s of virtual time.
    expect(Math.floor(simulation.virtualMs / 1_000)).toBe(7);
    expect(simulation.connections).toBeGreaterThan(5_000); // thousands of connections open at once
    expect(simulation.leftOpen).toEqual({ sockets: 0, timers: 0 });
  }, 120_000);
});
