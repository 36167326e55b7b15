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
    const core = new CrawlCore("callbacks", ROOT, { sitemaps: true, robots: true, maxTasks: 1 });
    core.begin(null, () => {});
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
