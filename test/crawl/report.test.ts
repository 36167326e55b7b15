import { describe, expect, it } from "vitest";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";
import { errorRecord, pageRecord, redirectRecord } from "../../src/crawl/records.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { report, robotsLine, Stats, urlLine } from "../../src/crawl/report.js";
import type { RobotsFetch } from "../../src/crawl/robots.js";

const STARTED = Date.UTC(2024, 0, 2, 3, 4, 5);

function result(records: FetchStatistic[], overrides: Partial<CrawlResult> = {}): CrawlResult {
  return {
    records,
    items: [],
    recorded: records.length,
    seen: records.map((record) => record.url),
    todo: 0,
    stoppedBy: null,
    startedAt: STARTED,
    finishedAt: STARTED + 2000,
    options: resolveOptions({ maxTasks: 2 }),
    robots: [],
    ...overrides,
  };
}

const html = { status: 200, size: 1000, contentType: "text/html", encoding: "utf-8" };
const records: FetchStatistic[] = [
  pageRecord("http://x.test/b", html, 3, 2),
  redirectRecord("http://x.test/a", 301, "http://x.test/b"),
  errorRecord("http://x.test/e", "ConnectionRefused"),
  pageRecord("http://x.test/c.png", { status: 200, size: 20, contentType: "image/png", encoding: "utf-8" }, 0, 0),
  pageRecord("http://x.test/missing", { status: 404, size: 5, contentType: null, encoding: "utf-8" }, 0, 0),
  errorRecord("http://x.test/d", "Timeout"),
  errorRecord("http://x.test/f", "ConnectionRefused"),
  pageRecord("http://x.test/", html, 4, 4),
];

describe("report", () => {
  it("prints one line per URL sorted by URL, then the counters and the summary", () => {
    expect(report(result(records))).toBe(
      [
        "*** Report ***",
        "http://x.test/ 200 text/html utf-8 1000 4/4",
        "http://x.test/a 301 -> http://x.test/b",
        "http://x.test/b 200 text/html utf-8 1000 2/3",
        "http://x.test/c.png 200 image/png utf-8 20 0/0",
        "http://x.test/d error Timeout",
        "http://x.test/e error ConnectionRefused",
        "http://x.test/f error ConnectionRefused",
        "http://x.test/missing 404 - utf-8 5 0/0",
        "         2 html pages",
        "         1 other pages",
        "         1 redirects",
        "         1 status 404",
        "         2 ConnectionRefused",
        "         1 Timeout",
        "      2025 bytes",
        "Finished 8 urls in 2.000 secs (max_tasks=2) (2.000 urls/sec/task)",
        "Todo: 0",
        "Done: 8",
        "",
      ].join("\n"),
    );
  });

  it("prints only the error lines and the summary when quiet", () => {
    const lines = report(result(records), { quiet: true }).split("\n");
    expect(lines.filter((line) => line.startsWith("http://"))).toEqual([
      "http://x.test/d error Timeout",
      "http://x.test/e error ConnectionRefused",
      "http://x.test/f error ConnectionRefused",
    ]);
    expect(lines).toContain("         2 html pages");
    expect(lines).toContain("Done: 8");
  });

  it("reads no URL of a record it does not list when quiet", () => {
    // Each record's `url` counts its reads: a quiet report sorts the errors it prints, not every record.
    let urlReads = 0;
    const counted = records.map(function countingUrlReads(record) {
      const copy = { ...record };
      Object.defineProperty(copy, "url", {
        enumerable: true,
        get() {
          if (record.error === null) urlReads += 1;
          return record.url;
        },
      });
      return copy;
    });
    const given = result(counted);
    urlReads = 0; // The result's seen list read them.
    const lines = report(given, { quiet: true }).split("\n");
    expect(lines.filter((line) => line.startsWith("http://"))).toHaveLength(3);
    expect(urlReads).toBe(0);
  });

  it("adds the timestamps and the options in force when verbose", () => {
    const options = resolveOptions({ maxTasks: 3, exclude: "\\.pdf$", maxPages: 50, userAgent: "bot/1" });
    const text = report(result(records, { options }), { verbose: true });
    const lines = text.split("\n");
    expect(lines.slice(0, 6)).toEqual([
      "*** Report ***",
      "Started: 2024-01-02T03:04:05.000Z",
      "Ended: 2024-01-02T03:04:07.000Z",
      "Options: maxTasks=3 maxRedirect=10 maxTries=4 strict=true exclude=/\\.pdf$/ timeoutMs=120000" +
        ' maxPages=50 maxBodyBytes=10485760 userAgent="bot/1"',
      "Politeness: robots=false maxPerHost=- delayMs=0 delayJitter=0 maxCrawlDelayMs=30000 maxRetryAfterMs=60000",
      "Controls: include=- noParent=false maxDepth=- skipNonHtml=false headers=- keepRecords=true",
    ]);
    expect(lines.slice(6)).toEqual(report(result(records, { options })).split("\n").slice(1));
  });

  it("shows the crawl controls when verbose, naming the headers without their values", () => {
    const options = resolveOptions({
      include: "/docs/", noParent: true, maxDepth: 3, skipNonHtml: true, keepRecords: false,
      headers: { Cookie: "session=secret", "Accept-Language": "fr" },
    });
    const text = report(result([], { options }), { verbose: true });
    expect(text).toContain("\nControls: include=/\\/docs\\// noParent=true maxDepth=3 skipNonHtml=true headers=Cookie,Accept-Language keepRecords=false\n");
    expect(text).not.toContain("secret");
  });

  it("ends each URL line with the page that linked to it when verbose, for finding broken links", () => {
    const linked = [
      pageRecord("http://x.test/", html, 2, 2),
      pageRecord("http://x.test/missing", { status: 404, size: 5, contentType: "text/plain", encoding: "utf-8" }, 0, 0, "http://x.test/"),
      redirectRecord("http://x.test/old", 301, "http://x.test/new", "http://x.test/"),
      errorRecord("http://x.test/new", "Timeout", "http://x.test/old"),
    ];
    const lines = report(result(linked), { verbose: true }).split("\n");
    expect(lines.filter((line) => line.startsWith("http://"))).toEqual([
      "http://x.test/ 200 text/html utf-8 1000 2/2",
      "http://x.test/missing 404 text/plain utf-8 5 0/0 (from http://x.test/)",
      "http://x.test/new error Timeout (from http://x.test/old)",
      "http://x.test/old 301 -> http://x.test/new (from http://x.test/)",
    ]);
    expect(report(result(linked))).not.toContain("(from ");
    expect(report(result(linked), { quiet: true })).not.toContain("(from ");
  });

  it("shows no page limit as - when verbose", () => {
    expect(report(result([]), { verbose: true })).toContain(" maxPages=- ");
  });

  it("does not change the records it is given", () => {
    const given = [...records];
    report(result(given));
    expect(given).toEqual(records);
  });

  it("reports an empty crawl", () => {
    expect(report(result([], { finishedAt: STARTED }))).toBe(
      [
        "*** Report ***",
        "         0 bytes",
        "Finished 0 urls in 0.000 secs (max_tasks=2) (0.000 urls/sec/task)",
        "Todo: 0",
        "Done: 0",
        "",
      ].join("\n"),
    );
  });

  it("reports the URLs left in the queue as Todo", () => {
    const text = report(result(records.slice(0, 2), { todo: 5 }));
    expect(text).toContain("\nTodo: 5\nDone: 2\n");
  });

  it("says maxPages stopped the crawl, and how many pages that is, instead of Finished", () => {
    const text = report(result(records.slice(0, 3), { todo: 4, stoppedBy: "maxPages", options: resolveOptions({ maxTasks: 2, maxPages: 2 }) }));
    expect(text).toContain("\nStopped at maxPages (2 pages fetched) after 3 urls in 2.000 secs (max_tasks=2) (0.750 urls/sec/task)\nTodo: 4\n");
    expect(text).not.toContain("Finished");
  });

  it("computes urls/sec/task from the elapsed time and maxTasks", () => {
    const text = report(result(records.slice(0, 3), { finishedAt: STARTED + 500 }));
    expect(text).toContain("Finished 3 urls in 0.500 secs (max_tasks=2) (3.000 urls/sec/task)");
  });

  it("counts a redirect and an error by kind, not by content type", () => {
    const text = report(result([redirectRecord("http://x.test/r", 308, "http://x.test/"), errorRecord("http://x.test/z", "BadResponse")]));
    expect(text).toContain("         1 redirects\n         1 BadResponse\n         0 bytes\n");
    expect(text).not.toContain("html pages");
  });

  it("lists errors in the fixed FETCH_ERRORS order", () => {
    const text = report(
      result([
        errorRecord("http://x.test/1", "NetworkError"),
        errorRecord("http://x.test/2", "BodyTooLarge"),
        errorRecord("http://x.test/3", "HostNotFound"),
      ]),
    );
    expect(text).toContain("         1 HostNotFound\n         1 BodyTooLarge\n         1 NetworkError\n");
  });

  it("says why a TLS failure happened, and how to trust a private CA, in a URL line", () => {
    const record = errorRecord("https://x.test/", "TlsError", null, "SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain");
    expect(urlLine(record)).toBe(
      "https://x.test/ error TlsError (SELF_SIGNED_CERT_IN_CHAIN: self-signed certificate in certificate chain; to trust a private CA or a self-signed certificate use --ca FILE, or --insecure)",
    );
  });

  it("says an expired certificate is the server's, without --ca, in a URL line", () => {
    const record = errorRecord("https://x.test/", "TlsError", null, "CERT_HAS_EXPIRED: certificate has expired");
    expect(urlLine(record)).toBe(
      "https://x.test/ error TlsError (CERT_HAS_EXPIRED: certificate has expired; the server's certificate is out of its validity dates, which only its owner can fix; --insecure skips the check, as a last resort)",
    );
  });

  it("says what kept robots.txt from being read in the line of a page never requested", () => {
    const record = errorRecord("http://x.test/a", "ConnectionRefused", null, "robots.txt http://x.test/robots.txt could not be read (4 attempts): ConnectionRefused", { tries: 0 });
    expect(urlLine(record)).toBe(
      "http://x.test/a error ConnectionRefused (robots.txt http://x.test/robots.txt could not be read (4 attempts): ConnectionRefused; the origin cannot be reached, so its pages would fail the same way: robots.txt is only where that was met first)",
    );
    // robots.txt refused only what it disallowed or answered with a 5xx: a refused connection is the origin's.
    const unreachable = errorRecord("http://y.test/", "RobotsUnreachable", null, "robots.txt http://y.test/robots.txt could not be read (4 attempts): status 503");
    const refusedByRobots = [errorRecord("http://x.test/b", "RobotsDisallowed"), unreachable];
    expect(Stats.of([record, ...refusedByRobots, errorRecord("http://x.test/c", "ConnectionRefused")]).robotsRefused).toBe(2);
  });
});

describe("Stats", () => {
  it("counts each record once, by kind, and sums the sizes", () => {
    const stats = Stats.of(records);
    expect(stats).toMatchObject({ records: 8, failures: 3, htmlPages: 2, otherPages: 1, redirects: 1, bytes: 2025 });
    expect([...stats.statuses]).toEqual([[404, 1]]);
    expect([stats.errorCount("ConnectionRefused"), stats.errorCount("Timeout"), stats.errorCount("HostNotFound")]).toEqual([2, 1, 0]);
  });

  it("counts records added one at a time as it counts them all at once", () => {
    const stats = new Stats();
    for (const record of records) stats.add(record);
    expect(stats).toEqual(Stats.of(records));
  });
});

describe("report of a crawl that kept no records", () => {
  /** What a crawl with `keepRecords: false` resolves to, having made `made`. */
  function notKept(made: FetchStatistic[], overrides: Partial<CrawlResult> = {}): CrawlResult {
    return result([], { recorded: made.length, seen: made.map((record) => record.url), options: resolveOptions({ maxTasks: 2, keepRecords: false }), ...overrides });
  }

  it("prints the counters from the stats gathered as the records were made, in place of the URL lines", () => {
    const kept = report(result(records)).split("\n");
    const text = report(notKept(records), { stats: Stats.of(records), recordsIn: "records.jsonl" });
    expect(text.split("\n")).toEqual([kept[0], "8 records not listed here: see records.jsonl", ...kept.filter((line) => !line.startsWith("http://")).slice(1)]);
  });

  it("says the records were not kept when it is not told where they went", () => {
    const text = report(notKept(records.slice(0, 1)), { stats: Stats.of(records.slice(0, 1)), quiet: true });
    expect(text).toContain("\n1 record not listed here: they were not kept\n         1 html pages\n");
  });

  it("prints no counters without the stats, and says so", () => {
    expect(report(notKept(records))).toBe(
      [
        "*** Report ***",
        "8 records not kept: neither listed nor counted here",
        "Finished 8 urls in 2.000 secs (max_tasks=2) (2.000 urls/sec/task)",
        "Todo: 0",
        "Done: 8",
        "",
      ].join("\n"),
    );
  });

  it("counts the URLs robots.txt disallowed from the stats, or leaves the count out without them", () => {
    const made = [pageRecord("http://x.test/", html, 1, 1), errorRecord("http://x.test/private", "RobotsDisallowed", "http://x.test/")];
    const options = resolveOptions({ maxTasks: 2, robots: true, keepRecords: false });
    const crawl = notKept(made, { options, robots: [robotsFetch()] });
    expect(report(crawl, { stats: Stats.of(made) })).toContain("\n1 URL disallowed by robots.txt (read at 1 origin)\n");
    expect(report(crawl)).toContain("\nrobots.txt read at 1 origin\nFinished ");
  });

  it("ignores the stats it is given when the records were kept, and counts those", () => {
    expect(report(result(records), { stats: new Stats(), recordsIn: "records.jsonl" })).toBe(report(result(records)));
  });
});

/** A robots.txt fetch of origin `http://x.test`, read at the first attempt, rules and no Crawl-delay unless overridden. */
function robotsFetch(overrides: Partial<RobotsFetch> = {}): RobotsFetch {
  return {
    origin: "http://x.test",
    url: "http://x.test/robots.txt",
    status: 200,
    error: null,
    detail: null,
    verdict: "rules",
    crawlDelayMs: null,
    attempts: 1,
    ...overrides,
  };
}

describe("report with robots.txt", () => {
  const polite = resolveOptions({ maxTasks: 2, robots: true, maxPerHost: 2, delayMs: 1000 });
  const fetches: RobotsFetch[] = [
    robotsFetch({ origin: "http://z.test", url: "http://z.test/robots.txt", status: 503, verdict: "unreachable", attempts: 4 }),
    robotsFetch(),
    robotsFetch({ origin: "http://y.test", url: "http://y.test/robots.txt", status: 404, verdict: "allow-all" }),
  ];
  const robotsRecords = [
    pageRecord("http://x.test/", html, 3, 3),
    errorRecord("http://x.test/private/1", "RobotsDisallowed", "http://x.test/"),
    errorRecord("http://x.test/private/2", "RobotsDisallowed", "http://x.test/"),
    errorRecord("http://z.test/", "RobotsUnreachable", "http://x.test/"),
  ];

  it("prints the origins whose robots.txt was not simply read, then the URLs it disallowed, between the URL lines and the counters", () => {
    expect(report(result(robotsRecords, { options: polite, robots: fetches }))).toBe(
      [
        "*** Report ***",
        "http://x.test/ 200 text/html utf-8 1000 3/3",
        "http://x.test/private/1 error RobotsDisallowed",
        "http://x.test/private/2 error RobotsDisallowed",
        "http://z.test/ error RobotsUnreachable",
        "robots.txt http://y.test: 404; everything allowed",
        "robots.txt http://z.test: unreachable (503 after 4 attempts); nothing fetched there",
        "2 URLs disallowed by robots.txt (read at 3 origins)",
        "         1 html pages",
        "         2 RobotsDisallowed",
        "         1 RobotsUnreachable",
        "      1000 bytes",
        "Finished 4 urls in 2.000 secs (max_tasks=2) (1.000 urls/sec/task)",
        "Todo: 0",
        "Done: 4",
        "",
      ].join("\n"),
    );
  });

  it("lists every origin's robots.txt when verbose, and only the unreachable ones when quiet", () => {
    const robotsLines = (text: string): string[] => text.split("\n").filter((line) => line.startsWith("robots.txt "));
    expect(robotsLines(report(result(robotsRecords, { options: polite, robots: fetches }), { verbose: true }))).toEqual([
      "robots.txt http://x.test: 200; rules read",
      "robots.txt http://y.test: 404; everything allowed",
      "robots.txt http://z.test: unreachable (503 after 4 attempts); nothing fetched there",
    ]);
    const quiet = report(result(robotsRecords, { options: polite, robots: fetches }), { quiet: true });
    expect(robotsLines(quiet)).toEqual(["robots.txt http://z.test: unreachable (503 after 4 attempts); nothing fetched there"]);
    expect(quiet).toContain("\n2 URLs disallowed by robots.txt (read at 3 origins)\n");
  });

  it("shows the politeness options in force when verbose", () => {
    expect(report(result([], { options: polite }), { verbose: true })).toContain(
      "\nPoliteness: robots=true maxPerHost=2 delayMs=1000 delayJitter=0 maxCrawlDelayMs=30000 maxRetryAfterMs=60000\n",
    );
  });

  it("says nothing of robots.txt when the crawl did not read it", () => {
    expect(report(result(records))).not.toContain("robots.txt");
  });

  it("counts one origin and one URL in the singular", () => {
    const text = report(result([errorRecord("http://x.test/", "RobotsDisallowed")], { options: polite, robots: [robotsFetch()] }));
    expect(text).toContain("\n1 URL disallowed by robots.txt (read at 1 origin)\n");
  });
});

describe("robotsLine", () => {
  it("names the network error and the attempts of an unreachable robots.txt", () => {
    const fetch = robotsFetch({ status: null, error: "ConnectionRefused", verdict: "unreachable", attempts: 1 });
    expect(robotsLine(fetch, 30_000)).toBe("robots.txt http://x.test: unreachable (ConnectionRefused after 1 attempt); nothing fetched there");
  });

  it("says why a TLS failure kept robots.txt from being read, with the hint that fits", () => {
    const fetch = robotsFetch({ status: null, error: "TlsError", detail: "CERT_HAS_EXPIRED: certificate has expired", verdict: "unreachable", attempts: 1 });
    expect(robotsLine(fetch, 30_000)).toBe(
      "robots.txt http://x.test: unreachable (TlsError after 1 attempt: CERT_HAS_EXPIRED: certificate has expired; the server's certificate is out of its validity dates, which only its owner can fix; --insecure skips the check, as a last resort); nothing fetched there",
    );
  });

  it("shows a Crawl-delay, and the cap it was held to", () => {
    expect(robotsLine(robotsFetch({ crawlDelayMs: 2000 }), 30_000)).toBe("robots.txt http://x.test: 200; rules read, Crawl-delay 2000 ms");
    expect(robotsLine(robotsFetch({ crawlDelayMs: 60_000 }), 30_000)).toBe(
      "robots.txt http://x.test: 200; rules read, Crawl-delay 60000 ms, capped at 30000 ms",
    );
  });

  it("names where redirects led", () => {
    const fetch = robotsFetch({ url: "http://x.test/gone/robots.txt", status: 410, verdict: "allow-all" });
    expect(robotsLine(fetch, 30_000)).toBe("robots.txt http://x.test: 410 at http://x.test/gone/robots.txt; everything allowed");
  });
});

describe("report (the page hook's counters)", () => {
  it("counts the items the hook made and the pages it failed on", () => {
    const hooked: FetchStatistic[] = [
      { ...pageRecord("http://x.test/a", html, 1, 1), items: 3 },
      { ...pageRecord("http://x.test/b", html, 0, 0), items: 0 },
      errorRecord("http://x.test/c", "ExtractError", null, "no title"),
    ];
    const text = report(result(hooked));
    expect(text).toContain(`${"1".padStart(10)} ExtractError`);
    expect(text).toContain(`${"3".padStart(10)} items`);
    expect(report(result(records))).not.toContain(" items");
  });
});
