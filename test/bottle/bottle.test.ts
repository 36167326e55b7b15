/**
 * The bottle: the real stages on a simulated network and a virtual clock.
 * Each fault gives the error name the real network gives; each delay is
 * asserted exactly, in virtual milliseconds; the same seed gives the same
 * bytes in any run and any process; nothing is left open or installed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance as perfHooksPerformance } from "node:perf_hooks";
import { setTimeout as sleepExport } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { DeadlockError, VirtualClock } from "../../src/bottle/clock.js";
import type { Fault, NetworkOptions } from "../../src/bottle/network.js";
import { SimulatedNetwork } from "../../src/bottle/network.js";
import { simulate, STAGES, type SiteBuilder, type Simulation } from "../../src/bottle/simulate.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import { HttpClient } from "../../src/http/http-client.js";
import { FixtureSite } from "../../src/site/fixture-site.js";
import type { HostGroup } from "../../src/site/host-group.js";
import { linksHtml } from "../../src/site/html.js";

const realSetTimeout = globalThis.setTimeout;
const realDate = globalThis.Date;
const realPerformanceNow = perfHooksPerformance.now;

/** A page long enough that a cut after 100 bytes falls inside its body. */
const LONG_PAGE = linksHtml(Array.from({ length: 40 }, (_, i) => `/nowhere/${i}`));

/** One site, `http://f.test`, whose `/` is a long page: what each fault test crawls. */
function faultSite(setUp: (site: FixtureSite) => void = () => {}): SiteBuilder {
  return async (world) => {
    const site = await world.fixture("http://f.test");
    site.addPage("/", LONG_PAGE);
    setUp(site);
    return { roots: "http://f.test/", options: { exclude: "/nowhere/" } };
  };
}

async function run(stage: string, site: SiteBuilder, options: CrawlOptions = {}, network: Omit<NetworkOptions, "seed"> = {}): Promise<Simulation> {
  return simulate({ seed: 1, stage, site, options: { maxTries: 1, idleTimeoutMs: 1_000, timeoutMs: 10_000, ...options }, network: { latencyMs: 1, faults: {}, ...network } });
}

function scripted(fault: Fault): Omit<NetworkOptions, "seed"> {
  return { scripted: [{ path: "/", fault }] };
}

/** The `t` of each trace line of `type` for `url` (the trace's first column, virtual ms). */
function times(simulation: Simulation, type: string, url: string): number[] {
  return simulation.trace
    .filter((line) => line.includes(` ${type} ${url} `))
    .map((line) => Number.parseFloat(line.trim().split("ms")[0] ?? "NaN"));
}

describe.each(STAGES.map((stage) => ({ name: stage.name })))("the bottle, $name stage", ({ name }) => {
  describe("faults give the real network's error names", () => {
    it("names an unknown host HostNotFound", async () => {
      const simulation = await run(name, async (world) => {
        world.network.addHost("f.test");
        return { roots: "http://nowhere.test/" };
      });
      expect(simulation.result.records.map((r) => [r.url, r.error])).toEqual([["http://nowhere.test/", "HostNotFound"]]);
      expect(simulation.leftOpen).toEqual({ sockets: 0, timers: 0 });
    });

    it("names a closed port ConnectionRefused", async () => {
      const simulation = await run(name, async (world) => {
        world.network.addHost("f.test");
        return { roots: "http://f.test:81/" };
      });
      expect(simulation.result.records.map((r) => r.error)).toEqual(["ConnectionRefused"]);
    });

    it("names a reset before any response byte ConnectionReset, and one after some bytes BadResponse", async () => {
      const before = await run(name, faultSite(), {}, scripted({ kind: "reset", afterBytes: 0 }));
      expect(before.result.records.map((r) => r.error)).toEqual(["ConnectionReset"]);
      const after = await run(name, faultSite(), {}, scripted({ kind: "reset", afterBytes: 300 }));
      expect(after.result.records.map((r) => r.error)).toEqual(["BadResponse"]);
      expect(after.leftOpen).toEqual({ sockets: 0, timers: 0 });
    });

    it("names a stalled response Timeout, exactly idleTimeoutMs after the last byte moved", async () => {
      const simulation = await run(name, faultSite(), {}, scripted({ kind: "stall", afterBytes: 0 }));
      expect(simulation.result.records.map((r) => r.error)).toEqual(["Timeout"]);
      // Connected at 2 ms (two one-way latencies), the request written then: the idle clock runs out at 1,002.
      expect(times(simulation, "fetch-end", "http://f.test/")).toEqual([1_002]);
    });

    it("names a response that never completes Timeout at exactly timeoutMs", async () => {
      const simulation = await run(name, faultSite((site) => site.addFault("/", { kind: "silent" })), { idleTimeoutMs: 60_000, timeoutMs: 5_000 });
      expect(simulation.result.records.map((r) => r.error)).toEqual(["Timeout"]);
      expect(times(simulation, "fetch-end", "http://f.test/")).toEqual([5_000]);
    });

    it("names malformed bytes BadResponse and a dropped connection ConnectionReset", async () => {
      const simulation = await run(name, faultSite((site) => {
        site.addPage("/", ["/raw", "/drop"]).addFault("/raw", { kind: "raw", bytes: "HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n" }).addFault("/drop", { kind: "drop" });
      }));
      expect(simulation.result.records.map((r) => [new URL(r.url).pathname, r.error]).sort()).toEqual([
        ["/", null],
        ["/drop", "ConnectionReset"],
        ["/raw", "BadResponse"],
      ]);
    });

    it("reads a dripped and a split response as the same page", async () => {
      const plain = await run(name, faultSite());
      const dripped = await run(name, faultSite(), {}, scripted({ kind: "drip" }));
      const split = await run(name, faultSite(), {}, scripted({ kind: "split" }));
      const summary = (s: Simulation) => s.result.records.map((r) => [r.url, r.status, r.size, r.numUrls]);
      expect(summary(dripped)).toEqual(summary(plain));
      expect(summary(split)).toEqual(summary(plain));
      expect(dripped.virtualMs).toBeGreaterThan(plain.virtualMs + 1_000); // 64 bytes every 100 virtual ms
    });
  });

  it("connects to an https: site through the network, waiting for secureConnect", async () => {
    const simulation = await run(name, async (world) => {
      const site = await world.fixture("https://s.test");
      site.addPage("/", ["/a"]).addPage("/a", []);
      return { roots: "https://s.test/" };
    });
    expect(simulation.result.records.map((r) => [r.url, r.status])).toEqual([
      ["https://s.test/", 200],
      ["https://s.test/a", 200],
    ]);
  });

  it("crawls a host group, keeping maxPerHost on every host", async () => {
    const built: { group: HostGroup | null } = { group: null };
    const simulation = await run(name, async (world) => {
      const group = await world.hostGroup({ hosts: 3, pagesPerHost: 8, delayMs: 50 }); // http://group.test:8000 to 8002
      built.group = group;
      return { roots: group.url, options: { maxPerHost: 2, maxTasks: 10 } };
    });
    const started = built.group;
    if (started === null) throw new Error("the site builder did not run");
    expect(simulation.result.records.map((r) => r.url).sort()).toEqual([...started.expectedUrls].sort());
    expect(started.peakInFlightPerHost()).toEqual([2, 2, 2]);
  });

  describe("virtual time", () => {
    const threePages: SiteBuilder = async (world) => {
      const site = await world.fixture("http://f.test");
      site.addPage("/", ["/a"]).addPage("/a", ["/b"]).addPage("/b", []);
      return { roots: "http://f.test/" };
    };

    it("starts requests to one host exactly delayMs apart", async () => {
      const simulation = await run(name, threePages, { delayMs: 1_000, maxTasks: 4 });
      const starts = ["/", "/a", "/b"].flatMap((path) => times(simulation, "fetch-start", `http://f.test${path}`));
      expect(starts).toEqual([0, 1_000, 2_000]);
    });

    it("honours a robots.txt Crawl-delay to the millisecond", async () => {
      const simulation = await run(name, async (world) => {
        const built = await threePages(world);
        world.sites[0]?.addRobots("User-agent: *\nCrawl-delay: 2\n");
        return { ...built, options: { robots: true } };
      });
      const starts = ["/robots.txt", "/", "/a", "/b"].flatMap((path) => times(simulation, "fetch-start", `http://f.test${path}`));
      expect(starts).toEqual([0, 2_000, 4_000, 6_000]);
    });

    it("waits out a Retry-After exactly before trying again", async () => {
      const simulation = await run(
        name,
        async (world) => {
          const site = await world.fixture("http://f.test");
          site.addRetryAfter("/", { status: 503, retryAfter: "3", times: 1, then: [] });
          return { roots: "http://f.test/" };
        },
        { maxTries: 2 },
      );
      expect(simulation.result.records.map((r) => [r.status, r.tries])).toEqual([[200, 2]]);
      const [firstEnd] = times(simulation, "fetch-end", "http://f.test/");
      expect(times(simulation, "fetch-start", "http://f.test/")).toEqual([0, (firstEnd ?? Number.NaN) + 3_000]);
    });

    it("backs off exactly retryDelayMs, then twice that, between failed attempts", async () => {
      const simulation = await run(name, faultSite(), { maxTries: 3, retryDelayMs: 100 }, scripted({ kind: "reset", afterBytes: 0 }));
      expect(simulation.result.records.map((r) => [r.error, r.tries])).toEqual([["ConnectionReset", 3]]);
      const starts = times(simulation, "fetch-start", "http://f.test/");
      const ends = times(simulation, "fetch-end", "http://f.test/");
      expect([(starts[1] ?? 0) - (ends[0] ?? 0), (starts[2] ?? 0) - (ends[1] ?? 0)]).toEqual([100, 200]);
    });

    it("reuses a kept connection within the server's keep-alive timeout, and opens a new one after it", async () => {
      const twoPages: SiteBuilder = async (world) => {
        const site = await world.fixture("http://f.test"); // Keep-Alive: timeout=5
        site.addPage("/", ["/a"]).addPage("/a", []);
        return { roots: "http://f.test/" };
      };
      const soon = await run(name, twoPages, { delayMs: 1_000, maxTasks: 1 });
      const late = await run(name, twoPages, { delayMs: 6_000, maxTasks: 1 });
      expect([soon.connections, late.connections]).toEqual([1, 2]);
      expect(late.result.records.map((r) => r.status)).toEqual([200, 200]);
    });

    it("dates the records on the virtual clock", async () => {
      const simulation = await run(name, threePages, { delayMs: 1_000, maxTasks: 1 });
      expect(simulation.result.startedAt).toBe(Date.UTC(2026, 0, 1));
      expect(simulation.result.records.map((r) => r.fetchedAt.slice(11, 19))).toEqual(["00:00:00", "00:00:01", "00:00:02"]);
    });
  });

  describe("replay", () => {
    it("gives the same records and trace, byte for byte, on two runs of one seed", async () => {
      const first = await simulate({ seed: 11, stage: name });
      const second = await simulate({ seed: 11, stage: name });
      expect(JSON.stringify(second.result.records)).toBe(JSON.stringify(first.result.records));
      expect(second.trace.join("\n")).toBe(first.trace.join("\n"));
      expect(first.trace.length).toBeGreaterThan(50);
      expect(first.leftOpen).toEqual({ sockets: 0, timers: 0 });
    });
  });
});

describe("simulate", () => {
  it("gives the same records and trace in another process (npm run simulate)", async () => {
    const here = await simulate({ seed: 23, stage: "generators" });
    const dir = mkdtempSync(join(tmpdir(), "bottle-"));
    execFileSync(process.execPath, ["--import", "tsx", "src/bottle/cli.ts", "--seed", "23", "--stage", "generators", "--trace", join(dir, "trace"), "--json", join(dir, "result.json")], { encoding: "utf8" });
    expect(readFileSync(join(dir, "trace"), "utf8")).toBe(here.trace.map((line) => `${line}\n`).join(""));
    expect(JSON.stringify(JSON.parse(readFileSync(join(dir, "result.json"), "utf8")).records)).toBe(JSON.stringify(here.result.records));
  });

  it("uninstalls the clock when the crawl throws", async () => {
    const broken = { name: "broken", crawl: () => Promise.reject(new RangeError("boom")) };
    await expect(simulate({ seed: 1, stage: broken })).rejects.toThrow("boom");
    expect(globalThis.setTimeout).toBe(realSetTimeout);
    expect(globalThis.Date).toBe(realDate);
    expect(perfHooksPerformance.now).toBe(realPerformanceNow);
    expect((await import("node:timers/promises")).setTimeout).toBe(sleepExport);
  });

  it("fails with DeadlockError when the crawl can no longer end, and uninstalls the clock", async () => {
    const stuck = { name: "stuck", crawl: () => new Promise<never>(() => {}) };
    await expect(simulate({ seed: 1, stage: stuck })).rejects.toThrow(DeadlockError);
    expect(globalThis.setTimeout).toBe(realSetTimeout);
  });

  it("refuses an unknown stage name with a TypeError", async () => {
    await expect(simulate({ seed: 1, stage: "threads" })).rejects.toThrow(TypeError);
  });
});

describe("VirtualClock", () => {
  it("waits for real I/O the work started before moving time", async () => {
    const clock = new VirtualClock();
    clock.install();
    try {
      const { readFile } = await import("node:fs/promises");
      const { setTimeout: sleep } = await import("node:timers/promises");
      const order = await clock.run(async () => {
        const seen: string[] = [];
        await Promise.all([
          readFile(new URL(import.meta.url)).then(() => seen.push(`read at ${clock.now}`)),
          sleep(1_000).then(() => seen.push(`slept at ${clock.now}`)),
        ]);
        return seen;
      });
      expect(order).toEqual(["read at 0", "slept at 1000"]);
    } finally {
      clock.uninstall();
    }
  });

  it("sleeps stage 3's node:timers/promises setTimeout on virtual time", async () => {
    const clock = new VirtualClock();
    clock.install();
    try {
      const { setTimeout: sleep } = await import("node:timers/promises");
      const slept = await clock.run(async () => {
        await sleep(60_000);
        return clock.now;
      });
      expect(slept).toBe(60_000);
    } finally {
      clock.uninstall();
    }
  });
});

describe("HttpClient on a SimulatedNetwork", () => {
  it("fetches through the network's sockets with undici", async () => {
    const clock = new VirtualClock();
    clock.install();
    try {
      const network = new SimulatedNetwork({ seed: 1, latencyMs: 5 });
      const response = await clock.run(async () => {
        const site = await FixtureSite.start({ origin: "http://h.test" });
        site.addPage("/", ["/a"]);
        network.listen("h.test", 80, (socket) => site.accept(socket));
        const client = new HttpClient({ connections: 1, timeoutMs: 1_000, idleTimeoutMs: 1_000, maxBodyBytes: 1_000_000, userAgent: "t", ca: null, rejectUnauthorized: true, network });
        try {
          return await client.get("http://h.test/");
        } finally {
          await client.close();
          await site.close();
        }
      });
      expect(response.status).toBe(200);
      expect(Buffer.from(response.body).toString()).toContain('href="/a"');
      expect(network.openSockets).toBe(0);
    } finally {
      clock.uninstall();
    }
  });
});
