/**
 * The drawn diagrams of docs/diagrams/ in a real browser: Debian's headless
 * Chromium, driven by playwright-core, opens each SVG on its own, and we
 * check that it loads without an error or a request, is drawn at the size it
 * declares, that every label is drawn inside the picture (none cut off), and
 * that its screenshot, kept in test-output/diagrams/ (git-ignored) for a human
 * to look at, is a picture and not one flat colour. Apart from the browser,
 * the guides and the diagrams must point at each other: every SVG is shown by
 * some guide, and every `diagrams/*.svg` a guide shows exists.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../helpers/chromium.js";

const chromiumHere = hasChromium("test/browser/diagrams.test.ts");
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOCS = join(ROOT, "docs");
const DIAGRAMS = join(DOCS, "diagrams");
const OUTPUT = join(ROOT, "test-output", "diagrams");

const diagrams = readdirSync(DIAGRAMS).filter((name) => name.endsWith(".svg")).sort();
const guides = readdirSync(DOCS).filter((name) => name.endsWith(".md"));

/** The `diagrams/NAME.svg` paths a guide's Markdown shows or links to. */
function diagramReferences(guide: string): string[] {
  const text = readFileSync(join(DOCS, guide), "utf8");
  return [...text.matchAll(/\]\((diagrams\/[^)\s#]+\.svg)\)/g)].map((match) => match[1]);
}

/** The width, height and viewBox an SVG declares on its root element. */
function declaredSize(svg: string): { width: number; height: number; viewBox: number[] } {
  const root = /<svg\b[^>]*>/.exec(svg)?.[0] ?? "";
  const attribute = (name: string): string => new RegExp(`\\s${name}="([^"]*)"`).exec(root)?.[1] ?? "";
  return { width: Number(attribute("width")), height: Number(attribute("height")), viewBox: attribute("viewBox").split(/[\s,]+/).map(Number) };
}

describe("docs/diagrams", () => {
  it("holds the primer's six diagrams", () => {
    expect(diagrams).toEqual(expect.arrayContaining([
      "await-desugared.svg",
      "blocking-vs-selector.svg",
      "generator-frame.svg",
      "macro-vs-microtasks.svg",
      "node-loop-phases.svg",
      "selector-loop.svg",
    ]));
  });

  it("shows every diagram in some guide of docs/", () => {
    const shown = new Set(guides.flatMap(diagramReferences).map((path) => path.slice("diagrams/".length)));
    expect(diagrams.filter((name) => !shown.has(name))).toEqual([]);
  });

  it("shows only diagrams that exist", () => {
    const missing = guides.flatMap((guide) => diagramReferences(guide).filter((path) => !existsSync(join(DOCS, path))).map((path) => `${guide}: ${path}`));
    expect(missing).toEqual([]);
  });

  it.each(diagrams)("%s declares its size, has a title and real text, and loads nothing from outside", (name) => {
    const svg = readFileSync(join(DIAGRAMS, name), "utf8");
    const { width, height, viewBox } = declaredSize(svg);
    expect(width).toBeGreaterThanOrEqual(640);
    expect(width).toBeLessThanOrEqual(760);
    expect(height).toBeGreaterThan(0);
    expect(viewBox).toEqual([0, 0, width, height]); // One user unit is one pixel.
    expect(svg).toMatch(/<svg\b[^>]*>\s*<title\b[^>]*>[^<]+<\/title>/);
    expect((svg.match(/<text\b/g) ?? []).length).toBeGreaterThan(5);
    // Self-contained: no image, script, foreign HTML, web font or link out.
    expect(svg).not.toMatch(/<(image|script|foreignObject)\b|@import|@font-face|url\(\s*['"]?(https?:|\/\/)|href="(https?:)?\/\//);
  });
});

/** What the page says about the SVG it shows: its box and each label's box, in CSS pixels. */
interface Layout {
  tag: string;
  box: { left: number; top: number; width: number; height: number };
  texts: Array<{ text: string; left: number; top: number; right: number; bottom: number }>;
}

/** Runs in the page (a string: this project has no DOM types). */
const MEASURE = `(() => {
  const svg = document.documentElement;
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll("text")].map((text) => {
    const r = text.getBoundingClientRect();
    return { text: (text.textContent || "").trim(), left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  });
  return { tag: svg.tagName, box: { left: box.left, top: box.top, width: box.width, height: box.height }, texts };
})()`;

/** Decodes a PNG in the page and counts its colours, and the share of its most common one. */
function countColours(png: Buffer): string {
  return `(async () => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(png.toString("base64"))}), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
    const context = new OffscreenCanvas(bitmap.width, bitmap.height).getContext("2d");
    context.drawImage(bitmap, 0, 0);
    const data = new Uint32Array(context.getImageData(0, 0, bitmap.width, bitmap.height).data.buffer);
    const counts = new Map();
    for (const pixel of data) counts.set(pixel, (counts.get(pixel) || 0) + 1);
    return { colours: counts.size, topShare: Math.max(...counts.values()) / data.length };
  })()`;
}

describe.skipIf(!chromiumHere)("docs/diagrams in Chromium", () => {
  let directory: string;
  let context: BrowserContext;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), "crawl-diagrams-"));
    context = await launchChromium(directory, 1000, 1000);
    await mkdir(OUTPUT, { recursive: true });
  });

  afterAll(async () => {
    await context?.close();
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });

  it.each(diagrams)("%s renders at its declared size with every label inside it, and is not one flat colour", async (name) => {
    const file = join(DIAGRAMS, name);
    const { width, height } = declaredSize(readFileSync(file, "utf8"));
    const page = await context.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("pageerror", function pageError(error) {
      problems.push(`page error: ${error.message}`);
    });
    page.on("console", function consoleMessage(message) {
      if (message.type() === "error" || message.type() === "warning") problems.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on("request", function requested(request) {
      requests.push(request.url());
    });
    const url = pathToFileURL(file).href;
    const response = await page.goto(url);
    expect(response?.ok()).toBe(true);

    const layout = await page.evaluate<Layout>(MEASURE);
    expect(layout.tag).toBe("svg"); // Parsed as SVG: an XML error would give a parsererror page.
    expect(layout.box.width).toBeCloseTo(width, 1);
    expect(layout.box.height).toBeCloseTo(height, 1);
    expect(layout.texts.length).toBeGreaterThan(5);
    const right = layout.box.left + layout.box.width;
    const bottom = layout.box.top + layout.box.height;
    const slack = 0.5; // Sub-pixel rounding of glyph boxes.
    const misplaced = layout.texts.filter((text) =>
      text.text === "" ||
      text.right - text.left <= 0 ||
      text.bottom - text.top <= 0 ||
      text.left < layout.box.left - slack ||
      text.top < layout.box.top - slack ||
      text.right > right + slack ||
      text.bottom > bottom + slack,
    );
    expect(misplaced.map((text) => text.text)).toEqual([]);

    const png = await page.screenshot({ clip: { x: layout.box.left, y: layout.box.top, width: layout.box.width, height: layout.box.height } });
    await writeFile(join(OUTPUT, name.replace(/\.svg$/, ".png")), png);
    const { colours, topShare } = await page.evaluate<{ colours: number; topShare: number }>(countColours(png));
    expect(colours).toBeGreaterThan(10);
    expect(topShare).toBeLessThan(0.95); // The background is most of it, but not all.

    expect(problems).toEqual([]);
    expect(requests).toEqual([url]); // Self-contained: the browser fetched the file and nothing else.
    await page.close();
  });
});
