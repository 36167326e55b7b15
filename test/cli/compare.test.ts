import { describe, expect, it } from "vitest";
import { comparisonTable, firstDifference } from "../../src/cli/compare.js";
import type { StageRun } from "../../src/cli/compare.js";
import { errorRecord, pageRecord, redirectRecord } from "../../src/crawl/records.js";
import type { FetchStatistic } from "../../src/crawl/records.js";
import type { RobotsFetch } from "../../src/crawl/robots.js";
import { resolveOptions } from "../../src/crawl/options.js";
import { Stats } from "../../src/crawl/report.js";
import type { StageName } from "../../src/observe/events.js";

const html = { status: 200, size: 100, contentType: "text/html", encoding: "utf-8" };

function run(stage: StageName, records: FetchStatistic[], peakInFlight: number | null = null, robots: RobotsFetch[] = [], wallMs = 500): StageRun {
  const result = {
    records,
    items: [],
    recorded: records.length,
    seen: records.map((record) => record.url),
    todo: 0,
    stoppedBy: null,
    startedAt: 1_000,
    finishedAt: 1_000 + wallMs,
    options: resolveOptions(),
    robots,
  };
  return { stage, result, stats: Stats.of(records), peakInFlight, serverPeak: null };
}

const a = pageRecord("http://h/a", html, 2, 2);
const b = pageRecord("http://h/b", html, 1, 0);
const c = redirectRecord("http://h/c", 301, "http://h/a");
const d = errorRecord("http://h/d", "ConnectionReset");

/** Two origins' robots.txt: rules at h, a 404 at k. */
const hRobots: RobotsFetch = { origin: "http://h", url: "http://h/robots.txt", status: 200, error: null, detail: null, verdict: "rules", crawlDelayMs: null, attempts: 1 };
const kRobots: RobotsFetch = { ...hRobots, origin: "http://k", url: "http://k/robots.txt", status: 404, verdict: "allow-all" };

describe("firstDifference", () => {
  it("finds none between the same records in another order", () => {
    expect(firstDifference([run("callbacks", [a, b, c]), run("generators", [c, b, a])])).toBeNull();
  });

  it("names a stage that recorded a URL twice, which a comparison of sets keyed by URL would miss", () => {
    expect(firstDifference([run("callbacks", [a, b, c]), run("generators", [a, b, c, b])])).toBe(`generators recorded ${b.url} more than once: a URL has one record`);
  });

  it("ignores numNewUrls record by record when the sums agree", () => {
    const moved = [pageRecord("http://h/a", html, 2, 1), pageRecord("http://h/b", html, 1, 1)];
    expect(firstDifference([run("callbacks", [a, b]), run("asyncawait", moved)])).toBeNull();
  });

  it("ignores which page first linked a URL: with several fetches in flight that is timing", () => {
    const fromA = pageRecord("http://h/b", html, 1, 0, "http://h/a");
    const fromC = pageRecord("http://h/b", html, 1, 0, "http://h/c");
    expect(firstDifference([run("callbacks", [a, fromA]), run("generators", [a, fromC])])).toBeNull();
  });

  it("names the first URL whose records differ and shows both", () => {
    const other = pageRecord("http://h/b", { ...html, size: 99 }, 1, 0);
    const difference = firstDifference([run("callbacks", [a, b]), run("generators", [a, other])]);
    expect(difference).toContain("callbacks and generators differ at http://h/b:");
    expect(difference).toContain('"size":100');
    expect(difference).toContain('"size":99');
  });

  it("shows a record one stage lacks", () => {
    const difference = firstDifference([run("callbacks", [a]), run("generators", [a]), run("asyncawait", [a, d])]);
    expect(difference).toMatch(/callbacks and asyncawait differ at http:\/\/h\/d:\n {2}callbacks: +\(no record\)/);
  });

  it("reports a different sum of numNewUrls on a crawl without redirects", () => {
    const fewer = pageRecord("http://h/a", html, 2, 1);
    expect(firstDifference([run("callbacks", [a, b]), run("generators", [fewer, b])])).toBe(
      "callbacks and generators differ in the sum of numNewUrls: 2 and 1",
    );
  });

  it("accepts a different sum of numNewUrls when a redirect may have queued the URL first", () => {
    // /c redirects to /a's link target in one stage before /a's page is read, in the other after.
    const fewer = pageRecord("http://h/a", html, 2, 1);
    expect(firstDifference([run("callbacks", [a, b, c]), run("generators", [fewer, b, c])])).toBeNull();
  });
});

describe("firstDifference with robots.txt", () => {
  it("finds none between the same robots.txt fetches read in another order", () => {
    expect(firstDifference([run("callbacks", [a], null, [hRobots, kRobots]), run("generators", [a], null, [kRobots, hRobots])])).toBeNull();
  });

  it("names the origin whose robots.txt fetches differ and shows both", () => {
    const retried: RobotsFetch = { ...kRobots, status: 503, verdict: "unreachable", attempts: 4 };
    const difference = firstDifference([run("callbacks", [a], null, [hRobots, kRobots]), run("asyncawait", [a], null, [hRobots, retried])]);
    expect(difference).toContain("callbacks and asyncawait differ at http://k/robots.txt:");
    expect(difference).toContain('"verdict":"allow-all"');
    expect(difference).toContain('"verdict":"unreachable"');
  });

  it("shows a robots.txt one stage did not read", () => {
    const difference = firstDifference([run("callbacks", [a], null, [hRobots]), run("generators", [a], null, [hRobots, kRobots])]);
    expect(difference).toMatch(/differ at http:\/\/k\/robots\.txt:\n {2}callbacks: +\(not read\)/);
  });
});

describe("comparisonTable", () => {
  it("prints a column per stage and a row per figure", () => {
    const table = comparisonTable([run("callbacks", [a, b, c, d], 3), run("generators", [a, b, c, d])]);
    const rows = table.trimEnd().split("\n");
    expect(rows[0].split(/\s+/).filter(Boolean)).toEqual(["callbacks", "generators"]);
    const cells = (label: string): string[] =>
      rows.find((row) => row.startsWith(label))?.slice(label.length).trim().split(/\s{2,}/) ?? [];
    expect(cells("records")).toEqual(["4", "4"]);
    expect(cells("html pages")).toEqual(["2", "2"]);
    expect(cells("redirects")).toEqual(["1", "1"]);
    expect(cells("errors")).toEqual(["1", "1"]);
    expect(cells("  ConnectionReset")).toEqual(["1", "1"]);
    expect(cells("wall time")).toEqual(["0.500 s", "0.500 s"]);
    expect(cells("pages/s")).toEqual(["8", "8"]);
    expect(cells("peak concurrency")).toEqual(["3", "-"]);
    expect(table).not.toContain("seen by server");
    expect(table).not.toMatch(/^robots\.txt read/m);
  });

  it("adds a row for other pages and for each other status, so the rows add up to the records", () => {
    const pdf = pageRecord("http://h/e.pdf", { ...html, contentType: "application/pdf" }, 0, 0);
    const missing = pageRecord("http://h/gone", { ...html, status: 404 }, 0, 0);
    const table = tableOf(comparisonTable([run("callbacks", [a, pdf, missing, c]), run("asyncawait", [a, pdf, missing, c])]));
    expect(table).toMatch(/^records +4 +4$/m);
    expect(table).toMatch(/^html pages +1 +1$/m);
    expect(table).toMatch(/^other pages +1 +1$/m);
    expect(table).toMatch(/^redirects +1 +1$/m);
    expect(table).toMatch(/^status 404 +1 +1$/m);
    expect(table).toMatch(/^errors +0 +0$/m);
  });

  it("counts the origins whose robots.txt was read, and the URLs it refused", () => {
    const refused = errorRecord("http://h/private", "RobotsDisallowed");
    const table = comparisonTable([run("callbacks", [a, refused], null, [hRobots, kRobots]), run("generators", [a, refused], null, [hRobots, kRobots])]);
    expect(table).toMatch(/^robots\.txt read +2 +2$/m);
    expect(table).toMatch(/^ {2}RobotsDisallowed +1 +1$/m);
  });
});

/** The table alone: the lines before the first blank one. */
function tableOf(text: string): string {
  return text.split("\n\n")[0];
}

/** The label that starts a table or legend line: words one space apart, indented by 2 or not at all. */
function labelOf(line: string): string {
  return /^(?: {2})?\S+(?: \S+)*/.exec(line)?.[0] ?? "";
}

/** The legend's rows, label to meaning, each meaning's lines joined with spaces. */
function legendRows(text: string): Map<string, string> {
  const rows = new Map<string, string>();
  let label = "";
  for (const line of text.split("\n\n")[1].split("\n")) {
    if (/^ {3}/.test(line)) {
      rows.set(label, `${rows.get(label)} ${line.trim()}`); // a meaning's next line
    } else {
      label = labelOf(line);
      rows.set(label, line.slice(label.length).trim());
    }
  }
  return rows;
}

describe("comparisonTable's legend", () => {
  it("explains each row the table shows, in the table's order, and no other", () => {
    const refused = errorRecord("http://h/private", "RobotsDisallowed");
    const runs = [run("callbacks", [a, c, d, refused], 3, [hRobots]), run("generators", [a, c, d, refused], 4, [hRobots])];
    const text = comparisonTable(runs);
    const tableLabels = tableOf(text).split("\n").slice(1).map(labelOf); // after the header
    expect(tableLabels).toEqual(["records", "html pages", "redirects", "errors", "  ConnectionReset", "  RobotsDisallowed", "robots.txt read", "wall time", "pages/s", "peak concurrency"]);
    const legend = legendRows(text);
    expect([...legend.keys()]).toEqual(tableLabels);
    expect(legend.get("  ConnectionReset")).toBe("the connection closed before any byte of a response");
    expect(legend.get("errors")).toBe("URLs that got no response at all, by kind below");
    expect(legend.get("peak concurrency")).toMatch(/^the most URLs in flight at once, .* Never above maxTasks/);
  });

  it("explains the server's peak only when the demo site counted one", () => {
    const counted = { ...run("callbacks", [a]), serverPeak: 2 };
    expect(legendRows(comparisonTable([counted, run("generators", [a])])).get("  seen by server")).toMatch(/^the most requests the demo site answered at once/);
    expect(legendRows(comparisonTable([run("callbacks", [a]), run("generators", [a])])).has("  seen by server")).toBe(false);
  });

  it("calls the timings noise when a crawl took under a second, and not when every crawl took longer", () => {
    const quick = legendRows(comparisonTable([run("callbacks", [a], null, [], 1_500), run("generators", [a], null, [], 900)]));
    expect(quick.get("wall time")).toMatch(/^from crawl\(\) to its result\. A crawl under 1 s, as here, makes this row and the next noise .* see npm run bench\.$/);
    const slow = comparisonTable([run("callbacks", [a], null, [], 1_500), run("generators", [a], null, [], 1_000)]);
    expect(legendRows(slow).get("wall time")).toBe("from crawl() to its result");
    expect(slow).not.toContain("noise");
  });

  it("wraps its lines at 100 columns, under the meanings' column, and never breaks a command", () => {
    const text = comparisonTable([run("callbacks", [a, d], 3), run("generators", [a, d], 3)]);
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    const lines = text.split("\n\n")[1].split("\n");
    const wallTime = lines.findIndex((line) => line.startsWith("wall time"));
    expect(lines[wallTime + 1].search(/\S/)).toBe(lines[wallTime].indexOf("from crawl()"));
    expect(text).toMatch(/\(npm run site -- --pages 20000\) or see npm run bench\./);
  });

  it("says what the verdict compares and what it leaves out because it depends on timing", () => {
    const verdict = comparisonTable([run("callbacks", [a]), run("generators", [a])]).split("\n\n")[2].replaceAll("\n", " ");
    expect(verdict).toMatch(/^The verdict below checks that no stage recorded a URL twice, then compares the records as sets matched by URL, field by field \(status, redirect target, error, size, content type, encoding, links found\)/);
    expect(verdict).toContain("It leaves out numNewUrls");
    expect(verdict).toContain("and referrer");
    expect(verdict).toContain("depends on timing");
    expect(verdict).toContain("Timings and peaks are not compared.");
  });
});
