/**
 * The timeline page in a real browser: Debian's headless Chromium, driven by
 * playwright-core, loads the page `crawl --demo --compare --timeline` wrote,
 * and we count what it rendered, click a bar, and keep a screenshot in
 * test-output/ (git-ignored) for a human to look at.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../helpers/chromium.js";
import { requireBuiltCli, runCli } from "../cli/cli-process.js";

const chromiumHere = hasChromium("test/browser/timeline.test.ts");
const OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));

describe.skipIf(!chromiumHere)("timeline page in Chromium", () => {
  let directory: string;
  let context: BrowserContext;
  let fetchStarts: number;
  let pageUrl: string;

  beforeAll(async () => {
    requireBuiltCli();
    directory = await mkdtemp(join(tmpdir(), "crawl-timeline-"));
    const traceFile = join(directory, "trace.txt");
    const timelineFile = join(directory, "timeline.html");
    const outcome = await runCli(["--demo", "--compare", "-q", "--trace", traceFile, "--timeline", timelineFile]);
    expect(outcome.stderr).toBe("");
    const trace = await readFile(traceFile, "utf8");
    fetchStarts = trace.split("\n").filter((line) => / fetch-start /.test(line)).length;
    pageUrl = pathToFileURL(timelineFile).href;
    context = await launchChromium(directory, 1200, 900);
  });

  afterAll(async () => {
    await context?.close();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });

  it("renders three panels with one bar per fetch attempt, shows a clicked bar's URL, and makes a screenshot", async () => {
    const page = await context.newPage();
    const requests: string[] = [];
    page.on("request", function requested(request) {
      requests.push(request.url());
    });
    await page.goto(pageUrl);

    const panels = page.locator("section.panel");
    await expect(panels.count()).resolves.toBe(3);
    const stages = await panels.evaluateAll((sections) => sections.map((section) => section.getAttribute("data-stage")));
    expect(stages).toEqual(["callbacks", "generators", "asyncawait"]);
    expect(fetchStarts).toBeGreaterThanOrEqual(3 * 60);
    await expect(page.locator("g.bar").count()).resolves.toBe(fetchStarts);
    // Every bar is drawn: it has a box with a width and a height on the page.
    const drawn = await page.locator("g.bar").evaluateAll((bars) =>
      bars.filter((bar) => {
        const box = bar.getBoundingClientRect();
        return box.width > 0 && box.height > 0;
      }).length,
    );
    expect(drawn).toBe(fetchStarts);

    // Click the widest bar of the generators panel: the detail box shows its URL.
    const bars = page.locator('section[data-stage="generators"] g.bar');
    const widest = await bars.evaluateAll((elements) => {
      const widths = elements.map((element) => element.getBoundingClientRect().width);
      return widths.indexOf(Math.max(...widths));
    });
    const bar = bars.nth(widest);
    const url = await bar.getAttribute("data-url");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    await bar.click();
    const detail = await page.locator("#detail").textContent();
    expect(detail).toContain(`generators  ${url}\n`);
    expect(detail).toMatch(/try \d+\nstart \d+\.\d ms · connect/);

    await page.evaluate("window.scrollTo(0, 0)"); // the detail box is sticky: back to its place (a string: no DOM types here)
    await mkdir(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, "timeline.png"), fullPage: true });
    expect(existsSync(join(OUTPUT, "timeline.png"))).toBe(true);
    // The page is self-contained: the browser fetched nothing but the file itself.
    expect(requests).toEqual([pageUrl]);
  });
});
