/**
 * `CrawlCore.view()` (src/crawl/core.ts) and `HostLines.view()`: what the
 * stepper's recorder draws of the core. Read-only counts and host lines,
 * on a core driven by hand, on the test's clock.
 */
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { CrawlCore } from "../../src/crawl/core.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { mulberry32 } from "../../src/crawl/random.js";
import { MemoryStore } from "../../src/crawl/store.js";

let clock = 1_000;

function begun(delayMs: number): CrawlCore {
  const core = new CrawlCore("callbacks", "http://example.com/", resolveOptions({ seed: 1, delayMs, maxTasks: 4 }), { store: new MemoryStore(), wallClock: () => 0, random: mulberry32(1) });
  core.begin(null, function now() { return clock; });
  return core;
}

describe("CrawlCore.view", () => {
  it("counts the URLs seen, to do and recorded, the jobs out, and each host's line with its next start", () => {
    clock = 1_000;
    const core = begun(500);
    expect(core.view()).toEqual({ seen: 1, todo: 1, recorded: 0, jobs: 0, hosts: [] });
    const root = core.next();
    if (root === null) throw new Error("no job for the root");
    core.started(root);
    expect(core.view()).toEqual({ seen: 1, todo: 0, recorded: 0, jobs: 1, hosts: [{ origin: "http://example.com", waiting: 0, inFlight: 1, nextStart: 1_500 }] });
    const body = Buffer.from('<a href="/a">a</a> <a href="/b">b</a>');
    core.settle(root, { status: 200, headers: { "content-type": "text/html" }, body });
    core.finish(root);
    expect(core.next()?.kind).toBe("wait"); // The host's delay: /a and /b wait in its line.
    const view = core.view();
    expect(view).toMatchObject({ seen: 3, todo: 2, recorded: 1, jobs: 1 });
    expect(view.hosts).toEqual([{ origin: "http://example.com", waiting: 2, inFlight: 0, nextStart: 1_500 }]);
  });

  it("changes nothing it reads: two views in a row are equal, and the next job is the same", () => {
    clock = 1_000;
    const core = begun(0);
    const first = core.view();
    expect(core.view()).toEqual(first);
    expect(core.next()?.url).toBe("http://example.com/");
  });
});
