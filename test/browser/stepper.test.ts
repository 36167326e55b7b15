/**
 * The stepper page in a real browser: Debian's headless Chromium, driven by
 * playwright-core, opens the one-file page from disk (file://), built here
 * by stepper/build.ts with the page's hand-made fixture recordings
 * (stepper/fixture-recording.ts) into a temp directory. We check that each
 * view renders, that Step changes the page and Back restores it exactly, that
 * 100 random Step/Back moves (the arrow keys) end on the same page as a fresh jump to that
 * step, that Run-to stops where it says, that a recording loads from a file,
 * and that nothing is logged as an error and nothing is fetched. The first
 * paint, one step's render time and the file's size are printed, not asserted.
 */
import { mulberry32 } from "../../src/crawl/random.js";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STEPPER_PAGE, writeStepperPage } from "../../stepper/build.js";
import { fixtureRecordings } from "../../stepper/fixture-recording.js";
import { fetchedUrls } from "../../stepper/page/model.js";
import type { Recording } from "../../stepper/recording.js";
import { hasChromium, launchChromium } from "../helpers/chromium.js";

const chromiumHere = hasChromium("test/browser/stepper.test.ts");
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TSX = join(REPO, "node_modules/tsx/dist/cli.mjs");
const run = promisify(execFile);

/** What the page shows: the counter, the step's heading and every view's body (a string: no DOM types in test/). */
const PAGE_STATE = `(() => ({
  counter: document.getElementById("counter").textContent,
  heading: document.getElementById("heading").innerHTML,
  stage: document.getElementById("stage").value,
  views: Array.from(document.querySelectorAll("section.view")).map((section) => section.dataset.view + ":" + section.querySelector(".body").innerHTML),
}))()`;

/** The page's state as PAGE_STATE reads it. */
interface PageState {
  counter: string;
  heading: string;
  stage: string;
  views: string[];
}


describe.skipIf(!chromiumHere)("stepper page in Chromium", () => {
  let directory: string;
  let context: BrowserContext;
  let pageUrl: string;
  let bytes: number;
  const recordings: Recording[] = fixtureRecordings();
  const requests: string[] = [];
  const errors: string[] = [];
  const learnerPages: string[] = [];

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "crawl-stepper-"));
    const file = join(directory, "index.html");
    bytes = await writeStepperPage(file, recordings);
    pageUrl = pathToFileURL(file).href;
    context = await launchChromium(directory, 1400, 1000);
  });

  afterAll(async () => {
    await context?.close();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    // Every test's page: no console error, no uncaught exception, and no request but the page itself.
    expect(errors).toEqual([]);
    const pages = [pageUrl, pathToFileURL(STEPPER_PAGE).href, ...learnerPages];
    expect(requests.filter(function notThePage(url) { return !pages.includes(url.split("#")[0] ?? ""); })).toEqual([]);
  });

  /** A new tab on the page (at `hash`), its errors and requests counted. */
  async function open(hash = "", url = pageUrl): Promise<Page> {
    const page = await context.newPage();
    page.on("console", function logged(message) {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", function thrown(error) {
      errors.push(error.message);
    });
    page.on("request", function requested(request) {
      requests.push(request.url());
    });
    await page.goto(url + hash);
    return page;
  }

  /** The page's state now. */
  function state(page: Page): Promise<PageState> {
    return page.evaluate<PageState>(PAGE_STATE);
  }

  it("opens from file:// and renders the six views of the first stage's first step", async () => {
    const page = await open();
    const shown = await state(page);
    expect(shown.counter).toBe(`step 0 of ${(recordings[0]?.steps.length ?? 0) - 1}`);
    expect(shown.views.map(function name(view) { return view.split(":")[0]; })).toEqual(["selector", "ready", "timers", "tasks", "core", "stack"]);
    for (const view of shown.views) expect(view.length, view.slice(0, 40)).toBeGreaterThan(60);
    await expect(page.locator("#view-selector table tbody tr").count()).resolves.toBe(1);
    await expect(page.locator("#view-stack pre.source span.here").count()).resolves.toBe(1);
    await expect(page.locator("#view-tasks .absent").count()).resolves.toBe(1);
    await expect(page.locator("#recordings").count()).resolves.toBe(1);
    expect(requests).toEqual([pageUrl]);
    const paint = await page.evaluate<{ name: string; startTime: number }[]>(`performance.getEntriesByType("paint").map((entry) => ({ name: entry.name, startTime: entry.startTime }))`);
    console.log(`stepper page: ${(bytes / 1024).toFixed(0)} KiB; ${paint.map(function shownAt(entry) { return `${entry.name} ${entry.startTime.toFixed(0)} ms`; }).join(", ")}`);
    await page.close();
  });

  it("changes the counter and the views at Step, and shows exactly the state before at Back", async () => {
    const page = await open("#stage=generators&step=2");
    const before = await state(page);
    expect(before.counter).toMatch(/^step 2 of /);
    const renderMs = await page.evaluate<number>(`(() => { const t0 = performance.now(); document.getElementById("step").click(); return performance.now() - t0; })()`);
    const after = await state(page);
    expect(after.counter).toMatch(/^step 3 of /);
    expect(after.views.filter(function changed(view, index) { return view !== before.views[index]; }).length).toBeGreaterThan(0);
    expect(after.views.join("")).toMatch(/class="(added|changed|removed)/);
    await page.click("#back");
    expect(await state(page)).toEqual(before);
    console.log(`stepper page: one step rendered in ${renderMs.toFixed(2)} ms`);
    await page.close();
  });

  it("steps with the arrow keys and follows the hash to a step", async () => {
    const page = await open("#step=1");
    expect((await state(page)).counter).toMatch(/^step 1 of /);
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    expect((await state(page)).counter).toMatch(/^step 3 of /);
    await page.keyboard.press("ArrowLeft");
    expect((await state(page)).counter).toMatch(/^step 2 of /);
    expect(await page.evaluate<string>("location.hash")).toBe("#stage=callbacks&step=2");
    await page.close();
  });

  it("shows after 100 random Step and Back moves, in every stage, the same page as a fresh jump to that step", async () => {
    const random = mulberry32(36);
    for (const recording of recordings) {
      const page = await open(`#stage=${recording.stage}&step=0`);
      let index = 0;
      const keys: string[] = [];
      for (let move = 0; move < 100; move++) {
        const forward = index === 0 || (index < recording.steps.length - 1 && random() < 0.6);
        keys.push(forward ? "ArrowRight" : "ArrowLeft");
        index += forward ? 1 : -1;
      }
      // The 100 key presses in one evaluate (one round trip, not 100), each through the page's own key handler.
      await page.evaluate(`${JSON.stringify(keys)}.forEach((key) => document.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true })))`);
      const walked = await state(page);
      expect(walked.counter).toBe(`step ${index} of ${recording.steps.length - 1}`);
      const fresh = await open(`#stage=${recording.stage}&step=${index}`);
      expect(await state(fresh)).toEqual(walked);
      await fresh.close();
      await page.close();
    }
  });

  it("runs to the step whose events say the chosen URL was fetched", async () => {
    const recording = recordings.find(function generators(candidate) { return candidate.stage === "generators"; });
    if (recording === undefined) throw new Error("no generators fixture");
    const url = fetchedUrls(recording).at(-1) ?? "";
    const expected = recording.steps.findIndex(function fetchedThere(step) { return (step.events.fetched ?? []).includes(url); });
    expect(expected).toBeGreaterThan(0);
    const page = await open("#stage=generators&step=0");
    await page.selectOption("#condition", "fetched");
    await page.selectOption("#url", url);
    await page.click("#run");
    expect((await state(page)).counter).toBe(`step ${expected} of ${recording.steps.length - 1}`);
    // Past the last step that fetched it, Run-to stays and says so.
    await page.click("#run");
    expect((await state(page)).counter).toBe(`step ${expected} of ${recording.steps.length - 1}`);
    await expect(page.locator("#status").textContent()).resolves.toMatch(/^no later step where a URL fetched/);
    await page.close();
  });

  it("loads a recording from a file and says so when a file is not one", async () => {
    const page = await open();
    const own = join(directory, "my-recording.json");
    const third = recordings[2];
    if (third === undefined) throw new Error("no third fixture");
    await writeFile(own, JSON.stringify({ ...third, stage: "mine" }));
    await page.setInputFiles("#file", own);
    // The page reads the file asynchronously: polled from here, as the page's Content-Security-Policy forbids
    // the eval that page.waitForFunction uses.
    await expect.poll(function stageShown() { return state(page).then(function stage(shown) { return shown.stage; }); }).toBe("3");
    await expect(page.locator("#stage option").count()).resolves.toBe(4);
    const shown = await state(page);
    expect(shown.counter).toBe(`step 0 of ${third.steps.length - 1}`);
    await expect(page.locator("#stage option:checked").textContent()).resolves.toBe("mine (my-recording.json)");
    const bad = join(directory, "not-a-recording.json");
    await writeFile(bad, JSON.stringify({ hello: "world" }));
    await page.setInputFiles("#file", bad);
    await expect.poll(function status() { return page.locator("#status").textContent(); }).toBe("not-a-recording.json is not a recording: `stage` is not a string");
    await page.close();
  });

  it("opens the page `npm run learn -- 3 --step` writes, the learner's recording selected and its failure shown", async () => {
    const learner = join(directory, "learn");
    const { stdout } = await run(process.execPath, [TSX, "learn/workshop/run.ts", "3", "--step", "--no-open"], { cwd: REPO, env: { ...process.env, LEARN_DIR: learner } });
    const file = join(learner, ".step", "index.html");
    expect(stdout).toContain(join(".step", "index.html"));
    learnerPages.push(pathToFileURL(file).href);
    const page = await open("", pathToFileURL(file).href);
    await expect(page.locator("#stage option:checked").textContent()).resolves.toBe("exercise 3, your parts (callbacks)");
    // The library's three follow when `npm run build` has written dist/stepper/index.html.
    await expect(page.locator("#stage option").count()).resolves.toBe(existsSync(STEPPER_PAGE) ? 4 : 1);
    const shown = await state(page);
    // exercise 3 not written yet: the crawl fails at once, and the one step is the end, with the learner's frame.
    expect(shown.counter).toBe("step 0 of 0");
    expect(shown.heading).toContain('<span class="kind">end</span>');
    await expect(page.locator("#view-stack .ended.failed").textContent()).resolves.toContain("Fetcher.fetch is not written yet");
    await expect(page.locator("#view-stack ol.stack li").first().textContent()).resolves.toContain("03-fetcher.ts");
    await page.close();
  }, 60_000);

  // The page `npm run build` wrote, with the recorder's real recordings of the demo site: every step of every
  // stage is drawn, one after the other, without an error. First paint, the mean step's render time and the
  // file's size are printed, not asserted. Skipped when dist/stepper/ has not been built.
  it.skipIf(!existsSync(STEPPER_PAGE))("draws every step of the built page's recordings without an error", async () => {
    const page = await open("", pathToFileURL(STEPPER_PAGE).href);
    const paint = await page.evaluate<{ name: string; startTime: number }[]>(`performance.getEntriesByType("paint").map((entry) => ({ name: entry.name, startTime: entry.startTime }))`);
    const stages = await page.locator("#stage option").count();
    expect(stages).toBeGreaterThanOrEqual(3);
    const walked: string[] = [];
    for (let stage = 0; stage < stages; stage++) {
      await page.selectOption("#stage", String(stage));
      const steps = Number(await page.locator("#slider").getAttribute("max"));
      const ms = await page.evaluate<number>(
        `(() => { const t0 = performance.now(); for (let i = 0; i < ${steps}; i++) document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true })); return performance.now() - t0; })()`,
      );
      const shown = await state(page);
      expect(shown.counter).toBe(`step ${steps} of ${steps}`);
      for (const view of shown.views) expect(view.length).toBeGreaterThan(60);
      expect(shown.heading).toContain('<span class="kind">end</span>');
      walked.push(`${shown.stage}: ${steps + 1} steps, ${(ms / steps).toFixed(2)} ms a step`);
    }
    // Back stays exact on the real recordings: 100 seeded random Step/Back moves in each stage end on the page a fresh jump draws.
    const random = mulberry32(3600);
    for (let stage = 0; stage < stages; stage++) {
      await page.selectOption("#stage", String(stage));
      const name = (await page.locator("#stage option:checked").textContent()) ?? "";
      await page.evaluate(`document.dispatchEvent(new KeyboardEvent("keydown", { key: "Home", bubbles: true }))`);
      const last = Number(await page.locator("#slider").getAttribute("max"));
      let index = 0;
      const keys: string[] = [];
      for (let move = 0; move < 100; move++) {
        const forward = index === 0 || (index < last && random() < 0.6);
        keys.push(forward ? "ArrowRight" : "ArrowLeft");
        index += forward ? 1 : -1;
      }
      await page.evaluate(`${JSON.stringify(keys)}.forEach((key) => document.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true })))`);
      const after = await state(page);
      expect(after.counter, name).toBe(`step ${index} of ${last}`);
      const fresh = await open(`#stage=${name}&step=${index}`, pathToFileURL(STEPPER_PAGE).href);
      expect(await state(fresh)).toEqual(after);
      await fresh.close();
    }
    const paints = paint.map(function shownAt(entry) { return `${entry.name} ${entry.startTime.toFixed(0)} ms`; }).join(", ");
    console.log(`built stepper page: ${(statSync(STEPPER_PAGE).size / 1024).toFixed(0)} KiB; ${paints}; ${walked.join("; ")}`);
    await page.close();
  });
});
