/**
 * The crawl core on its own: no socket, no loop, no stage. A test plays the
 * stage, handing each job's outcome back as plain data, and moves the clock
 * itself: the core reads only the clock it is given at `begin()`. This is
 * what the sans-I/O shape buys: every decision can be checked in a few lines.
 */
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { CrawlCore, type Job } from "../../src/crawl/core.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import { mulberry32 } from "../../src/crawl/random.js";
import { MemoryStore } from "../../src/crawl/store.js";
import type { HttpResponse } from "../../src/http/parser.js";
import { InvalidStateError } from "../../src/kernel/errors.js";

const ROOT = "http://example.com/";

function page(...paths: string[]): HttpResponse {
  const body = paths.map((path) => `<a href="${path}">${path}</a>`).join(" ");
  return { status: 200, headers: { "content-type": "text/html" }, body: Buffer.from(body) };
}

function response(status: number, headers: Record<string, string> = {}, body = ""): HttpResponse {
  return { status, headers, body: Buffer.from(body) };
}

/** The test's clock, in ms: the core reads it, and only the test moves it. */
let clock = 1_000;
function now(): number {
  return clock;
}
/** Sets the test's clock back to its start, for a test that moves it. */
function useClock(): void {
  clock = 1_000;
}

/** A core not begun, in a world of the test's: a memory store, a wall clock that stands still, a seeded random source. */
function coreOf(roots: string | string[], options: CrawlOptions = {}): CrawlCore {
  const settings = resolveOptions({ seed: 1, ...options });
  return new CrawlCore("callbacks", roots, settings, { store: new MemoryStore(), wallClock: () => 0, random: mulberry32(1) });
}

/** A core whose crawl has begun, on the test's clock. */
function begun(options: CrawlOptions = {}, roots: string | string[] = ROOT): CrawlCore {
  const core = coreOf(roots, options);
  core.begin(null, now);
  return core;
}

function takeAll(core: CrawlCore): Job[] {
  const jobs: Job[] = [];
  for (let job = core.next(); job !== null; job = core.next()) jobs.push(job);
  return jobs;
}

/** One attempt at a page or robots.txt, answered with `outcome`, then finished if settle says done. */
function answer(core: CrawlCore, job: Job, outcome: HttpResponse | "ConnectionRefused"): "retry" | "hook" | "done" {
  core.started(job);
  const step = core.settle(job, outcome);
  if (step.kind === "done") core.finish(job);
  return step.kind;
}

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

  it("puts a URL back to rest the retry delay after a network error, hands it out again after it, and records the error after maxTries", () => {
    useClock();
    const core = begun({ maxTries: 2, retryDelayMs: 100 });
    const [root] = takeAll(core) as [Job];
    expect(answer(core, root, "ConnectionRefused")).toBe("done"); // No retry in place: it goes back through its host's line.
    expect(core.records).toEqual([]);
    const [wait] = takeAll(core) as [Job];
    expect(wait.kind).toBe("wait");
    expect(wait.delayMs).toBe(100);
    clock += 100;
    core.finish(wait);
    const [again] = takeAll(core) as [Job];
    expect(again.url).toBe(ROOT);
    expect(again.attempt).toBe(1);
    expect(answer(core, again, "ConnectionRefused")).toBe("done");
    expect(core.records.map(({ status, error, tries }) => ({ status, error, tries }))).toEqual([{ status: null, error: "ConnectionRefused", tries: 2 }]);
  });

  it("makes a retry of a URL whose host a Retry-After holds wait for the hold's end", () => {
    useClock();
    const core = begun({ maxTasks: 4, retryDelayMs: 100 });
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/busy", "/flaky"));
    const [busy, flaky] = takeAll(core) as [Job, Job];
    core.started(flaky);
    expect(core.settle(flaky, response(500))).toEqual({ kind: "done" }); // To rest 100 ms.
    expect(answer(core, busy, response(503, { "retry-after": "2" }))).toBe("done"); // The host is held 2 s.
    core.finish(flaky);
    const [wait] = takeAll(core) as [Job];
    expect(wait.delayMs).toBe(100);
    clock += 100;
    core.finish(wait); // /flaky's rest is over: it comes back, and waits in the held host's line.
    const [hold] = takeAll(core) as [Job];
    expect(hold.kind).toBe("wait");
    expect(hold.delayMs).toBe(1_900);
    clock += 1_900;
    core.finish(hold);
    expect(takeAll(core).map((job) => [job.url, job.attempt])).toEqual([
      [`${ROOT}busy`, 1],
      [`${ROOT}flaky`, 1],
    ]);
  });

  it("waits a robots.txt 503's Retry-After before its retry, and makes the origin unreachable at once when it is over maxRetryAfterMs", () => {
    useClock();
    const core = begun({ robots: true, retryDelayMs: 100 });
    const [robots] = takeAll(core) as [Job];
    core.started(robots);
    expect(core.settle(robots, response(503, { "retry-after": "2" }))).toEqual({ kind: "retry", delayMs: 2_000 });
    clock += 1_000;
    core.started(robots); // Too early (a stage that did not wait): the host is still held, and the next retry waits for that too.
    expect(core.settle(robots, response(500))).toEqual({ kind: "retry", delayMs: 1_000 });
    clock += 1_000;
    core.started(robots);
    expect(core.settle(robots, response(429))).toEqual({ kind: "retry", delayMs: 400 }); // No Retry-After: the backoff, doubled twice.
    const strict = begun({ robots: true, maxRetryAfterMs: 1_000 });
    const [busy] = takeAll(strict) as [Job];
    expect(answer(strict, busy, response(429, { "retry-after": "5" }))).toBe("done");
    expect(takeAll(strict)).toEqual([]); // The root is refused, and recorded.
    expect(strict.records.map(({ error, detail }) => ({ error, detail }))).toEqual([
      { error: "RobotsUnreachable", detail: `robots.txt ${ROOT}robots.txt could not be read (1 attempt): status 429` },
    ]);
  });

  it("counts pages fetched against maxPages, not the URLs robots.txt refuses, and says maxPages stopped the crawl", () => {
    const core = begun({ robots: true, maxPages: 2 });
    const [robots] = takeAll(core) as [Job];
    answer(core, robots, response(200, { "content-type": "text/plain" }, "User-agent: *\nDisallow: /private/\n"));
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/private/1", "/private/2", "/a", "/b"));
    const jobs = takeAll(core);
    expect(jobs.map((job) => job.url)).toEqual([`${ROOT}a`]); // Two refused records, and one page more: maxPages.
    answer(core, jobs[0] as Job, page());
    const result = core.end();
    expect(result.recorded).toBe(4);
    expect([result.todo, result.stoppedBy]).toEqual([1, "maxPages"]);
  });

  it("gives a URL whose job was finished without an outcome a NetworkError record (a bug in the stage), and none once stopped", () => {
    const core = begun({ maxTasks: 2 });
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/a", "/b"));
    const [a, b] = takeAll(core) as [Job, Job];
    core.finish(a);
    expect(core.records.at(-1)?.error).toBe("NetworkError");
    core.started(b);
    core.stop();
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
    const core = begun({ delayMs: 500, strict: false }, [ROOT, "http://other.example/"]);
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

  it("does not listen to the signal option: the stage's abort handling calls stop()", () => {
    const controller = new AbortController();
    const core = begun({ signal: controller.signal });
    const [root] = takeAll(core) as [Job];
    controller.abort();
    expect(core.stopped).toBe(false);
    core.stop();
    expect(core.state).toBe("stopping");
    core.finish(root);
    expect(core.records).toEqual([]);
    expect(core.done).toBe(true);
    expect(core.end().todo).toBe(1);
  });

  it("reads time only from the clock it is given, and the wall clock only from its world", () => {
    let wall = 5_000;
    const settings = resolveOptions({ seed: 1, delayMs: 100 });
    const core = new CrawlCore("callbacks", ROOT, settings, { store: new MemoryStore(), wallClock: () => wall, random: mulberry32(1) });
    let stageClock = 0;
    core.begin(null, () => stageClock);
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/a"));
    const [wait] = takeAll(core) as [Job];
    expect([wait.kind, wait.delayMs]).toEqual(["wait", 100]);
    stageClock = 60;
    expect(wait.delayMs).toBe(40);
    stageClock = 100;
    core.finish(wait);
    expect(takeAll(core).map((job) => job.url)).toEqual([`${ROOT}a`]);
    wall = 9_000;
    expect(() => core.end()).toThrow(InvalidStateError); // "/a" is out.
  });

  it("answers a stop() from inside settle() (a fetch-end subscriber): the outcome makes no record, and the job is settled", () => {
    const core = begun();
    const [root] = takeAll(core) as [Job];
    core.started(root);
    core.stop(); // as the stage's abort handler does, called from the publish of fetch-end
    expect(core.settle(root, page("/a"))).toEqual({ kind: "done" });
    expect(root.state).toBe("settled");
    core.finish(root);
    expect(core.records).toEqual([]);
    expect(core.end()).toMatchObject({ todo: 1, seen: [ROOT] });
  });

  it("asks for the request a job needs: a page's body may be skipped, a robots.txt is read whole", () => {
    const core = begun({ robots: true, timeoutMs: 5_000, headers: { "X-Test": "1" } });
    const [robots] = takeAll(core) as [Job];
    expect(core.request(robots)).toMatchObject({ url: `${ROOT}robots.txt`, body: "whole", timeoutMs: 5_000, headers: { "X-Test": "1" } });
    answer(core, robots, response(404));
    const [root] = takeAll(core) as [Job];
    expect(core.request(root)).toMatchObject({ url: ROOT, body: "skippable" });
  });
});

describe("CrawlCore refuses a call out of order", () => {
  it("throws on finish() of a job already finished, and its done and maxPages stay right", () => {
    const core = begun({ maxTasks: 2, maxPages: 2 });
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/a", "/b"));
    expect(() => core.finish(root)).toThrow(new InvalidStateError(`finish() of a job already finished (${ROOT})`));
    const jobs = takeAll(core);
    expect(jobs.map((job) => job.url)).toEqual([`${ROOT}a`]); // maxPages 2: one page more, not two.
    answer(core, jobs[0] as Job, page());
    expect(takeAll(core)).toEqual([]);
    expect(core.done).toBe(true);
  });

  it("throws on settle() after finish(), and makes no second record", () => {
    const core = begun();
    const [root] = takeAll(core) as [Job];
    answer(core, root, page());
    expect(() => core.settle(root, page())).toThrow(new InvalidStateError(`settle() of a job already finished (${ROOT})`));
    expect(core.records).toHaveLength(1);
  });

  it("throws on settle() of a job never started, and of one already settled", () => {
    const core = begun();
    const [root] = takeAll(core) as [Job];
    expect(() => core.settle(root, page())).toThrow(new InvalidStateError(`settle() of a job not started (${ROOT})`));
    core.started(root);
    core.settle(root, page());
    expect(() => core.settle(root, page())).toThrow(new InvalidStateError(`settle() of a job already settled (${ROOT})`));
    expect(core.records).toHaveLength(1);
  });

  it("throws on started() after stop(), and counts no attempt", () => {
    const core = begun();
    const [root] = takeAll(core) as [Job];
    core.stop();
    expect(() => core.started(root)).toThrow(new InvalidStateError(`started() after stop() (${ROOT}): check \`stopped\` first, and finish() the job`));
    expect(root.attempt).toBe(0);
    core.finish(root);
    expect(core.end().todo).toBe(1);
  });

  it("throws on started() of a job attempting, and of a wait", () => {
    const core = begun({ delayMs: 100 });
    const [root] = takeAll(core) as [Job];
    core.started(root);
    expect(() => core.started(root)).toThrow(new InvalidStateError(`started() of a job already attempting (${ROOT})`));
    core.settle(root, page("/a"));
    core.finish(root);
    const [wait] = takeAll(core) as [Job];
    expect(() => core.started(wait)).toThrow(new InvalidStateError("started() of a wait job: wait its delayMs, then finish() it"));
  });

  it("throws on next() before begin(), and after end()", () => {
    const core = coreOf(ROOT);
    expect(() => core.next()).toThrow(new InvalidStateError("next() of a crawl not begun"));
    core.begin(null, now);
    const [root] = takeAll(core) as [Job];
    answer(core, root, page());
    core.end();
    expect(() => core.next()).toThrow(new InvalidStateError("next() of a crawl already ended"));
    expect(() => core.end()).toThrow(new InvalidStateError("end() of a crawl already ended"));
  });

  it("throws on begin() a second time, and on stop() and end() before begin()", () => {
    const core = coreOf(ROOT);
    expect(() => core.stop()).toThrow(new InvalidStateError("stop() of a crawl not begun"));
    expect(() => core.end()).toThrow(new InvalidStateError("end() of a crawl not begun"));
    core.begin(null, now);
    expect(() => core.begin(null, now)).toThrow(new InvalidStateError("begin() of a crawl already running: this Crawler has already crawled; make a new one"));
    expect(core.state).toBe("running");
  });

  it("throws on end() while a job is out, and ends once it is finished", () => {
    const core = begun({ maxTasks: 2 });
    const [root] = takeAll(core) as [Job];
    answer(core, root, page("/a", "/b"));
    const [a, b] = takeAll(core) as [Job, Job];
    core.stop();
    expect(() => core.end()).toThrow(new InvalidStateError("end() of a crawl with 2 jobs out: finish() each first"));
    core.finish(a);
    core.finish(b);
    expect(core.end()).toMatchObject({ todo: 2 });
    expect(core.state).toBe("ended");
  });

  it("stays usable after refusing a call: the refused call changed nothing", () => {
    const core = begun();
    const [root] = takeAll(core) as [Job];
    expect(() => core.settle(root, page("/a"))).toThrow(InvalidStateError);
    expect([root.state, root.attempt, core.records.length]).toEqual(["handed", 0, 0]);
    answer(core, root, page("/a"));
    expect(takeAll(core).map((job) => job.url)).toEqual([`${ROOT}a`]);
  });

  it("allows stop() any number of times, and after end()", () => {
    const core = begun();
    core.stop();
    core.stop();
    core.end();
    core.stop();
    expect(core.state).toBe("ended");
  });
});

describe("CrawlCore with sitemaps", () => {
  function xml(kind: "urlset" | "sitemapindex", urls: readonly string[]): HttpResponse {
    const entry = kind === "urlset" ? "url" : "sitemap";
    const body = `<${kind}>${urls.map((url) => `<${entry}><loc>${url}</loc></${entry}>`).join("")}</${kind}>`;
    return response(200, { "content-type": "application/xml" }, body);
  }

  it("hands out the root origin's /sitemap.xml as a sitemap job after the root, and its pages as page jobs", () => {
    const core = begun({ sitemaps: true, maxTasks: 1 });
    const [root] = takeAll(core);
    expect([root?.kind, root?.url]).toEqual(["page", ROOT]);
    answer(core, root as Job, page());
    const [sitemap] = takeAll(core);
    expect([sitemap?.kind, sitemap?.url]).toEqual(["sitemap", `${ROOT}sitemap.xml`]);
    answer(core, sitemap as Job, xml("urlset", [`${ROOT}a`]));
    const [a] = takeAll(core);
    expect([a?.kind, a?.url]).toEqual(["page", `${ROOT}a`]);
    answer(core, a as Job, page());
    expect(core.next()).toBeNull();
    expect(core.done).toBe(true);
    expect(core.end().records.map((record) => [record.url, record.numNewUrls])).toEqual([[ROOT, 0], [`${ROOT}sitemap.xml`, 1], [`${ROOT}a`, 0]]);
  });

  it("fetches at most 1,000 sitemap files in a crawl, /sitemap.xml and those indexes name together", () => {
    const core = begun({ sitemaps: true, maxTasks: 1 });
    let sitemaps = 0;
    for (let job = core.next(); job !== null; job = core.next()) {
      if (job.kind === "page") {
        answer(core, job, page());
        continue;
      }
      sitemaps += 1;
      // Each index names 600 more: two levels would be 360,000 files.
      const level = sitemaps === 1 ? "top" : job.url.slice(ROOT.length, -".xml".length);
      answer(core, job, xml("sitemapindex", Array.from({ length: 600 }, (_, i) => `${ROOT}${level}-${i}.xml`)));
    }
    expect(sitemaps).toBe(1_000);
    expect(core.done).toBe(true);
  });

  it("reads the Sitemap: lines of a root origin's robots.txt only", () => {
    const core = begun({ sitemaps: true, robots: true, maxTasks: 1 });
    const fetched: string[] = [];
    for (let job = core.next(); job !== null; job = core.next()) {
      fetched.push(job.url);
      if (job.kind === "robots") answer(core, job, response(200, { "content-type": "text/plain" }, `Sitemap: ${job.url.replace("robots.txt", "listed.xml")}\n`));
      else if (job.url === ROOT) answer(core, job, page("http://www.example.com/"));
      else if (job.kind === "sitemap") answer(core, job, response(404));
      else answer(core, job, page());
    }
    expect(fetched).toEqual([
      `${ROOT}robots.txt`, `${ROOT}sitemap.xml`, ROOT, `${ROOT}listed.xml`,
      "http://www.example.com/robots.txt", "http://www.example.com/", // another origin: its Sitemap: line is not read
    ]);
  });
});
