/**
 * The crawl core on its own: no socket, no loop, no stage. A test plays the
 * stage, handing each job's outcome back as plain data, and moves the clock
 * itself (`performance.now`, which the core and its host lines read). This is
 * what the sans-I/O shape buys: every decision can be checked in a few lines.
 */
import { Buffer } from "node:buffer";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CrawlCore, type Job } from "../../src/crawl/core.js";
import type { CrawlOptions } from "../../src/crawl/options.js";
import type { HttpResponse } from "../../src/http/parser.js";

const ROOT = "http://example.com/";

function page(...paths: string[]): HttpResponse {
  const body = paths.map((path) => `<a href="${path}">${path}</a>`).join(" ");
  return { status: 200, headers: { "content-type": "text/html" }, body: Buffer.from(body) };
}

function response(status: number, headers: Record<string, string> = {}, body = ""): HttpResponse {
  return { status, headers, body: Buffer.from(body) };
}

/** A core whose crawl has begun, and the jobs `next()` hands out now. */
function begun(options: CrawlOptions = {}): CrawlCore {
  const core = new CrawlCore("callbacks", ROOT, options);
  core.begin(null, () => {});
  return core;
}

function takeAll(core: CrawlCore): Job[] {
  const jobs: Job[] = [];
  for (let job = core.next(); job !== null; job = core.next()) jobs.push(job);
  return jobs;
}

/** One attempt at a page or robots.txt, answered with `outcome`, then finished if settle says done. */
function answer(core: CrawlCore, job: Job, outcome: HttpResponse | "ConnectionRefused"): "retry" | "done" {
  core.started(job);
  const step = core.settle(job, outcome);
  if (step.kind === "done") core.finish(job);
  return step.kind;
}

let clock = 0;
function useClock(): void {
  clock = 1_000;
  vi.spyOn(performance, "now").mockImplementation(() => clock);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("CrawlCore", () => {
  it("hands out the root, then the page's links in document order, never more than maxTasks at once", () => {
    const core = begun({ maxTasks: 2 });
    const [root] = takeAll(core);
    expect(root?.url).toBe(ROOT);
    expect(answer(core, root as Job, page("/a", "/b", "/c", "/a"))).toBe("done");
    const jobs = takeAll(core);
    expect(jobs.map((job) => job.url)).toEqual([`${ROOT}a`, `${ROOT}b`]);
    expect(core.next()).toBeNull(); // Two out: maxTasks.
    answer(core, jobs[0] as Job, page());
    expect(takeAll(core).map((job) => job.url)).toEqual([`${ROOT}c`]);
    expect(core.records.map((record) => record.url)).toEqual([ROOT, `${ROOT}a`]);
  });

  it("says the crawl is done only when no job is out and nothing is queued", () => {
    const core = begun();
    const [root] = takeAll(core);
    expect(core.done).toBe(false);
    answer(core, root as Job, page("/a"));
    const [a] = takeAll(core);
    expect(core.done).toBe(false);
    answer(core, a as Job, page());
    expect(takeAll(core)).toEqual([]);
    expect(core.done).toBe(true);
    const result = core.end();
    expect(result.records).toHaveLength(2);
    expect(result.seen).toEqual([ROOT, `${ROOT}a`]);
    expect(result.todo).toBe(0);
  });

  it("asks for a retry after the retry delay on a network error, and records the error after maxTries", () => {
    const core = begun({ maxTries: 2, retryDelayMs: 100 });
    const [root] = takeAll(core) as [Job];
    core.started(root);
    expect(core.settle(root, "ConnectionRefused")).toEqual({ kind: "retry", delayMs: 100 });
    core.started(root);
    expect(core.settle(root, "ConnectionRefused")).toEqual({ kind: "done" });
    core.finish(root);
    expect(core.records.map(({ status, error }) => ({ status, error }))).toEqual([{ status: null, error: "ConnectionRefused" }]);
  });

  it("gives a URL whose job was finished without an outcome a NetworkError record (a bug in the stage), and none once stopped", () => {
    const core = begun({ maxTasks: 2 });
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/a", "/b"));
    const [a, b] = takeAll(core) as [Job, Job];
    core.finish(a);
    expect(core.records.at(-1)?.error).toBe("NetworkError");
    core.stop();
    core.started(b);
    expect(core.settle(b, page())).toEqual({ kind: "done" });
    core.finish(b);
    expect(core.records).toHaveLength(2);
    expect(core.next()).toBeNull();
    expect(core.end().todo).toBe(1);
  });

  it("reads an origin's robots.txt as a job of its own first, and records what it refuses without a job", () => {
    const core = begun({ robots: true });
    const [robots] = takeAll(core) as [Job];
    expect(robots.kind).toBe("robots");
    expect(robots.url).toBe(`${ROOT}robots.txt`);
    expect(core.next()).toBeNull(); // The root waits for robots.txt.
    answer(core, robots, response(200, { "content-type": "text/plain" }, "User-agent: *\nDisallow: /private/\n"));
    const [root] = takeAll(core) as [Job];
    expect(root.kind).toBe("page");
    answer(core, root, page("/private/x", "/a"));
    expect(takeAll(core).map((job) => job.url)).toEqual([`${ROOT}a`]);
    expect(core.records.map(({ url, error }) => ({ url, error }))).toEqual([
      { url: ROOT, error: null },
      { url: `${ROOT}private/x`, error: "RobotsDisallowed" },
    ]);
  });

  it("follows a robots.txt redirect as a retry of the same job at the new URL, at once", () => {
    const core = begun({ robots: true });
    const [robots] = takeAll(core) as [Job];
    core.started(robots);
    expect(core.settle(robots, response(301, { location: "/real-robots.txt" }))).toEqual({ kind: "retry", delayMs: 0 });
    expect(robots.url).toBe(`${ROOT}real-robots.txt`);
  });

  it("holds a host back for a Retry-After, hands out a wait while only time stands in the way, then the URL again", () => {
    useClock();
    const core = begun({ maxPages: 1 });
    const [root] = takeAll(core) as [Job];
    expect(answer(core, root, response(429, { "retry-after": "1" }))).toBe("done");
    expect(core.records).toEqual([]); // Held back, not recorded: it is still the one page maxPages allows.
    const [wait] = takeAll(core) as [Job];
    expect(wait.kind).toBe("wait");
    expect(wait.delayMs).toBe(1_000);
    expect(core.next()).toBeNull(); // One wait for one deadline.
    clock += 1_000;
    core.finish(wait);
    const [again] = takeAll(core) as [Job];
    expect(again.url).toBe(ROOT);
    expect(again.attempt).toBe(1); // The Retry-After counted as an attempt.
    answer(core, again, page("/a"));
    expect(core.records.map(({ status }) => status)).toEqual([200]);
    expect(core.next()).toBeNull(); // maxPages reached: "/a" stays to do.
    expect(core.end().todo).toBe(1);
  });

  it("hands out one wait per deadline while URLs wait for a host's delay and nothing else can run now", () => {
    useClock();
    const core = new CrawlCore("callbacks", [ROOT, "http://other.example/"], { delayMs: 500, strict: false });
    core.begin(null, () => {});
    const [root, other] = takeAll(core) as [Job, Job];
    expect([root.url, other.url]).toEqual([ROOT, "http://other.example/"]);
    answer(core, root, page("/a", "/b"));
    const [wait] = takeAll(core) as [Job]; // "/a" and "/b" wait for the delay: a wait, beside the other host's page.
    expect(wait.kind).toBe("wait");
    expect(wait.delayMs).toBe(500);
    answer(core, other, page());
    expect(takeAll(core)).toEqual([]); // The wait out ends as early as any deadline: no second one.
    clock += 500;
    core.finish(wait);
    // "/a" goes; "/b" now waits the delay after "/a"'s start, and nothing else can run: a wait again.
    expect(takeAll(core).map((job) => (job.kind === "wait" ? `wait ${job.delayMs}` : job.url))).toEqual([`${ROOT}a`, "wait 500"]);
  });

  it("throws InvalidStateError when a crawl begins twice", () => {
    const core = begun();
    expect(() => core.begin(null, () => {})).toThrow(/already crawled/);
  });

  it("stops and calls the stage's cancel when the signal aborts", () => {
    const controller = new AbortController();
    const core = new CrawlCore("callbacks", ROOT, { signal: controller.signal });
    let cancelled = 0;
    core.begin(null, () => {
      cancelled += 1;
    });
    const [root] = takeAll(core) as [Job];
    controller.abort();
    expect(cancelled).toBe(1);
    expect(core.stopped).toBe(true);
    core.started(root);
    core.settle(root, page("/a"));
    core.finish(root);
    expect(core.records).toEqual([]);
    expect(core.done).toBe(true);
  });
});
