/**
 * `crawl --max-pages N`, the built command on a fixture site whose
 * robots.txt refuses five of the root's links: it counts pages fetched, not
 * the URLs robots.txt refused; the report and `--json` say the limit
 * stopped the crawl; and with `--state DIR` the crawl goes on when run again
 * with a larger `--max-pages`. The site counts the requests it saw.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CrawlResultJson } from "../../src/cli/result-json.js";
import { FixtureSite } from "../../src/site/index.js";
import { requireBuiltCli, runCli } from "./cli-process.js";

const REFUSED = ["/private/1", "/private/2", "/private/3", "/private/4", "/private/5"];

let site: FixtureSite;
let directory: string;

beforeAll(async () => {
  requireBuiltCli();
  site = await FixtureSite.start();
  site.addRobots("User-agent: *\nDisallow: /private/\n");
  site.addPage("/", [...REFUSED, "/a", "/b", "/c"]).addPage("/a", []).addPage("/b", []).addPage("/c", []);
});

afterAll(async () => {
  await site?.close();
});

beforeEach(async () => {
  site.resetCounters();
  directory = await mkdtemp(join(tmpdir(), "crawl-max-pages-"));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** The pages the site was asked for, robots.txt left out, in order. */
function pagesRequested(): string[] {
  return site
    .requests()
    .map((request) => request.path)
    .filter((path) => path !== "/robots.txt");
}

describe("crawl --max-pages", () => {
  it("counts pages fetched, not URLs robots.txt refused, and says in the report and the JSON that it stopped the crawl", async () => {
    const file = join(directory, "result.json");
    const { code, stdout } = await runCli(["--max-pages", "2", "--max-tasks", "1", "--stage", "generators", "--json", file, `${site.url}/`]);
    expect(code).toBe(0);
    expect(pagesRequested()).toEqual(["/", "/a"]);
    expect(stdout).toMatch(/^Stopped at maxPages \(2 pages fetched\) after 7 urls in [\d.]+ secs \(max_tasks=1\)/m);
    expect(stdout).not.toMatch(/^Finished /m);
    expect(stdout).toContain("\nTodo: 2\n");
    const result = JSON.parse(await readFile(file, "utf8")) as CrawlResultJson;
    expect([result.recorded, result.todo, result.stoppedBy]).toEqual([7, 2, "maxPages"]);
  });

  it("says a crawl it did not stop finished, with stoppedBy null", async () => {
    const file = join(directory, "result.json");
    const { code, stdout } = await runCli(["--max-pages", "4", "--stage", "callbacks", "--json", file, `${site.url}/`]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Finished 9 urls in /m);
    const result = JSON.parse(await readFile(file, "utf8")) as CrawlResultJson;
    expect([result.todo, result.stoppedBy]).toEqual([0, null]);
  });

  it("goes on with --state when run again with a larger --max-pages, and fetches nothing with the same one", async () => {
    const state = join(directory, "state");
    const args = ["--state", state, "--max-tasks", "1", "--stage", "asyncawait", "-q"];
    const first = await runCli([...args, "--max-pages", "2", `${site.url}/`]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`state ${state}: 7 records, 2 URLs to do: stopped at --max-pages 2; run it again with a larger --max-pages to go on\n`);
    const same = await runCli([...args, "--max-pages", "2", `${site.url}/`]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain(`state ${state}: this crawl had already fetched 2 pages, --max-pages 2: nothing fetched; give a larger --max-pages to go on (2 URLs to do)\n`);
    const larger = await runCli([...args, "--max-pages", "3", `${site.url}/`]);
    expect(larger.stdout).toContain(`state ${state}: 8 records, 7 of them from before, 1 URLs to do: stopped at --max-pages 3; run it again with a larger --max-pages to go on\n`);
    const rest = await runCli([...args, `${site.url}/`]);
    expect(rest.stdout).toContain(`state ${state}: 9 records, 8 of them from before: the crawl is finished\n`);
    // Each page once over the four runs (the third run's may be /b or /c: a URL handed its turn after robots.txt goes to the queue's end).
    expect(pagesRequested().sort()).toEqual(["/", "/a", "/b", "/c"]);
  });
});
