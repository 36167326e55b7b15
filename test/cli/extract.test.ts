/**
 * Data from the pages on the command line (issue 37): `--extract`,
 * `--script`, `--links-in` and `--link-attr` against a real fixture site,
 * in each stage, with the items in every output, and each refusal before
 * the first request.
 *
 * The crawls need the core's page hook (helper "hook"'s `onPage`, `onItem`
 * and `CrawlResult.items`); the refusals need only the command line.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CrawlItem } from "../../src/crawl/page-hook.js";
import { FixtureSite } from "../../src/site/index.js";
import { requireBuiltCli, runCli } from "./cli-process.js";
import { schemaErrors } from "./json-schema.js";

const STAGES = ["callbacks", "generators", "asyncawait"] as const;
const schema = JSON.parse(readFileSync(new URL("../../schema/crawl-result.schema.json", import.meta.url), "utf8")) as Record<string, unknown> & {
  $defs: Record<string, Record<string, unknown>>;
};
const strict = { strict: true };

let site: FixtureSite;
let directory: string;
let root: string;

/**
 * "/" has a title, a nav (to /about), a main (to /p/1 and /p/2) and a
 * `data-href` to /hidden; the products have a title and a price (/p/2's
 * starts like a formula); /about matches no selector.
 */
beforeAll(async () => {
  requireBuiltCli();
  site = await FixtureSite.start();
  site
    .addPage("/", '<html><body><h1>Shop</h1><nav><a href="/about">About</a></nav><main><a href="/p/1">1</a> <a href="/p/2#top">2</a></main><div data-href="/hidden"></div></body></html>')
    .addPage("/p/1", '<h1> Brass\n lamp </h1><p class="price">49.90</p><span class="tag">brass</span><span class="tag">desk</span>')
    .addPage("/p/2", '<h1>Shade</h1><p class="price">=1+1</p>')
    .addPage("/about", "<p>About us</p>")
    .addPage("/hidden", "<h1>Hidden</h1>");
  root = `${site.url}/`;
  directory = await mkdtemp(join(tmpdir(), "crawl-extract-"));
});

afterAll(async () => {
  await site?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

beforeEach(() => {
  site.resetCounters();
});

/** The `--json` document a run wrote to stdout. */
function documentOf(stdout: string): { items: CrawlItem[]; seen: string[]; records: { url: string }[] } {
  return JSON.parse(stdout);
}

/** Items by their page's path, for comparing crawls whose order varies. */
function byPath(items: readonly CrawlItem[]): Record<string, unknown> {
  return Object.fromEntries(items.map(({ url, item }) => [new URL(url).pathname, item]));
}

const EXTRACTED = {
  "/": { title: "Shop", price: null, tags: [] },
  "/p/1": { title: "Brass lamp", price: "49.90", tags: ["brass", "desk"] },
  "/p/2": { title: "Shade", price: "=1+1", tags: [] },
};
const EXTRACT_FLAGS = ["--extract", "title=h1", "--extract", "price=.price", "--extract", "tags=.tag[]"];

describe("crawl --extract", () => {
  it.each(STAGES)("gives one item per page where a selector matched, in --json's items (stage %s)", async (stage) => {
    const { code, stdout, stderr } = await runCli(["--stage", stage, ...EXTRACT_FLAGS, "--json", "-", root]);
    expect(stderr).toContain("3 items extracted");
    expect(code).toBe(0);
    const document = documentOf(stdout);
    expect(byPath(document.items)).toEqual(EXTRACTED);
    expect(document.items).toHaveLength(3); // /about matched nothing, /hidden is not linked by an <a>.
    expect(schemaErrors(document, schema, strict)).toEqual([]);
  });

  it("writes each item as a line of --jsonl among the records, told apart by its type", async () => {
    const file = join(directory, "all.jsonl");
    const { code } = await runCli([...EXTRACT_FLAGS, "--jsonl", file, root]);
    expect(code).toBe(0);
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const itemLines = lines.filter((line) => line.type === "item");
    const recordLines = lines.filter((line) => line.type === undefined);
    expect(recordLines).toHaveLength(4); // /, /about, /p/1, /p/2 (robots.txt is no record)
    expect(byPath(itemLines as unknown as CrawlItem[])).toEqual(EXTRACTED);
    for (const line of itemLines) expect(schemaErrors(line, schema.$defs.itemLine, strict, schema)).toEqual([]);
    for (const line of recordLines) expect(schemaErrors(line, schema.$defs.recordLine, strict, schema)).toEqual([]);
    // Each item line comes after its page's record line.
    for (const line of itemLines) expect(lines.findIndex((other) => other.type === undefined && other.url === line.url)).toBeLessThan(lines.indexOf(line));
  });

  it("writes -o items.csv, items.jsonl and items.json beside the records' -o file", async () => {
    const [csv, jsonl, json, records] = ["items.csv", "items.jsonl", "items.json", "pages.csv"].map((name) => join(directory, name));
    const { code } = await runCli([...EXTRACT_FLAGS, "-o", csv, "-o", jsonl, "-o", json, "-o", records, "--max-tasks", "1", root]);
    expect(code).toBe(0);
    const rows = (await readFile(csv, "utf8")).split("\r\n");
    expect(rows[0]).toBe("url,title,price,tags");
    expect(rows.slice(1, -1).sort()).toEqual([`${root},Shop,,[]`, `${site.url}/p/1,Brass lamp,49.90,"[""brass"",""desk""]"`, `${site.url}/p/2,Shade,'=1+1,[]`].sort());
    const lines = (await readFile(jsonl, "utf8")).trimEnd().split("\n").map((line) => JSON.parse(line) as CrawlItem & { type: string });
    expect(lines.every((line) => line.type === "item")).toBe(true);
    expect(byPath(lines)).toEqual(EXTRACTED);
    const array = JSON.parse(await readFile(json, "utf8")) as CrawlItem[];
    expect(byPath(array)).toEqual(EXTRACTED);
    for (const item of array) expect(schemaErrors(item, schema.$defs.crawlItem, strict, schema)).toEqual([]);
    expect((await readFile(records, "utf8")).split("\r\n")[0]).toMatch(/^url,status,error,/);
  });
});

describe("crawl --links-in and --link-attr", () => {
  it.each(STAGES)("follows only the links inside the matching elements (stage %s)", async (stage) => {
    const { code, stdout } = await runCli(["--stage", stage, "--links-in", "main", "--json", "-", root]);
    expect(code).toBe(0);
    const document = documentOf(stdout);
    expect(document.seen.map((url) => new URL(url).pathname)).toEqual(["/", "/p/1", "/p/2"]);
    expect(document.items).toEqual([]);
  });

  it.each(STAGES)("also follows the links the named attributes hold (stage %s)", async (stage) => {
    const { code, stdout } = await runCli(["--stage", stage, "--link-attr", "data-href", "--json", "-", root]);
    expect(code).toBe(0);
    expect(documentOf(stdout).seen.map((url) => new URL(url).pathname)).toEqual(["/", "/about", "/p/1", "/p/2", "/hidden"]);
  });

  it("combines them: inside the areas, the named attributes too", async () => {
    const { code, stdout } = await runCli(["--links-in", "div", "--link-attr", "data-href", "--json", "-", root]);
    expect(code).toBe(0);
    expect(documentOf(stdout).seen.map((url) => new URL(url).pathname)).toEqual(["/", "/hidden"]);
  });
});

describe("crawl --script", () => {
  it.each(STAGES)("calls the module's onPage with each page, its items in the outputs, its links followed (stage %s)", async (stage) => {
    const script = join(directory, `hook-${stage}.mjs`);
    await writeFile(
      script,
      `// Follows only the products, and gives an item per page: its path, status, link count and title.
export async function onPage(page) {
  const title = /<h1>([^<]*)<\\/h1>/.exec(page.text)?.[1] ?? null;
  const item = { path: new URL(page.url).pathname, status: page.status, links: page.links.length, depth: page.depth, title, hasDocument: typeof page.document().children };
  return { items: [item], links: page.links.filter((link) => link.includes("/p/")) };
}
`,
    );
    const { code, stdout } = await runCli(["--stage", stage, "--script", script, "--json", "-", root]);
    expect(code).toBe(0);
    const document = documentOf(stdout);
    expect(document.seen.map((url) => new URL(url).pathname)).toEqual(["/", "/p/1", "/p/2"]);
    expect(byPath(document.items)).toEqual({
      "/": { path: "/", status: 200, links: 3, depth: 0, title: "Shop", hasDocument: "object" },
      "/p/1": { path: "/p/1", status: 200, links: 0, depth: 1, title: " Brass\n lamp ", hasDocument: "object" },
      "/p/2": { path: "/p/2", status: 200, links: 0, depth: 1, title: "Shade", hasDocument: "object" },
    });
  });

  it("runs after --extract on each page, and calls the module's onItem with every item", async () => {
    const script = join(directory, "with-on-item.mjs");
    const seen = join(directory, "on-item.txt");
    await writeFile(
      script,
      `import { appendFileSync } from "node:fs";
export function onPage(page) { return page.url.endsWith("/p/1") ? [{ extra: true }] : []; }
export function onItem(item) { appendFileSync(${JSON.stringify(seen)}, JSON.stringify(item.item) + "\\n"); }
`,
    );
    const { code, stdout } = await runCli(["--extract", "title=h1", "--script", script, "--max-tasks", "1", "--json", "-", root]);
    expect(code).toBe(0);
    const items = documentOf(stdout).items.filter((item) => item.url.endsWith("/p/1")).map((item) => item.item);
    expect(items).toEqual([{ title: "Brass lamp" }, { extra: true }]);
    expect((await readFile(seen, "utf8")).trimEnd().split("\n")).toHaveLength(4); // 3 titles and the extra item
  });

  it("gives a page whose onPage throws an ExtractError record, and goes on", async () => {
    const script = join(directory, "throws.mjs");
    await writeFile(script, `export function onPage(page) { if (page.url.endsWith("/about")) throw new Error("no about"); return [{ ok: 1 }]; }\n`);
    const { code, stdout } = await runCli(["--script", script, "--json", "-", root]);
    expect(code).toBe(0);
    const document = JSON.parse(stdout) as { records: { url: string; error: string | null; detail: string | null }[]; items: CrawlItem[] };
    expect(document.records.find((record) => record.url.endsWith("/about"))).toMatchObject({ error: "ExtractError", detail: expect.stringContaining("no about") });
    expect(document.items).toHaveLength(3);
  });
});

describe("crawl --state with a page hook", () => {
  it("keeps the items of every run: a resumed crawl's --json has each item once", async () => {
    const state = join(directory, "state");
    const first = await runCli([...EXTRACT_FLAGS, "--state", state, "--max-pages", "2", "--max-tasks", "1", "--json", "-", root]);
    expect(first.code).toBe(0);
    const before = documentOf(first.stdout).items.length;
    expect(before).toBeGreaterThan(0);
    const second = await runCli([...EXTRACT_FLAGS, "--state", state, "--max-tasks", "1", "--json", "-", root]);
    expect(second.code).toBe(0);
    const items = documentOf(second.stdout).items;
    expect(byPath(items)).toEqual(EXTRACTED);
    expect(items).toHaveLength(3);
    expect(site.requestsFor("/")).toBe(1); // The root's page, with its item, was not fetched again.
  });
});

describe("crawl with bad data flags", () => {
  const refusals: [string, string[], RegExp][] = [
    ["--extract without =", ["--extract", "h1"], /^crawl: bad --extract: "h1" is not NAME=SELECTOR: no "="\n/],
    ["--extract with an empty name", ["--extract", "=h1"], /^crawl: bad --extract: "=h1": the NAME before "=" must be/],
    ["--extract with a name twice", ["--extract", "t=h1", "--extract", "t=h2"], /^crawl: bad --extract: the name "t" is given twice/],
    ["--extract with a bad selector", ["--extract", "t=h1["], /^crawl: bad --extract: "t=h1\[": bad CSS selector "h1\[" \(/],
    ["--links-in with a bad selector", ["--links-in", "main:nope"], /^crawl: bad --links-in: "main:nope": bad CSS selector "main:nope" \(Unknown pseudo-class :nope\)\n/],
    ["--link-attr with a bad name", ["--link-attr", "a=b"], /^crawl: bad --link-attr: expected `linkAttributes` to be an array of HTML attribute names/],
    ["-o items.csv without a hook", ["-o", "items.csv"], /^crawl: -o 'items.csv' writes the items of --extract or --script, and neither is given/],
    ["a missing --script", ["--script", "/nonexistent/hook.mjs"], /^crawl: --script \/nonexistent\/hook.mjs cannot be read: ENOENT\n/],
  ];

  it.each(refusals)("refuses %s with status 2 before any request, naming it", async (_name, flags, message) => {
    const { code, stdout, stderr } = await runCli([...flags, root]);
    expect(stderr).toMatch(message);
    expect(stderr).toContain("Try 'crawl --help'.");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(site.totalRequests).toBe(0);
  });

  it.each([
    ["a syntax error", "syntax.mjs", "export function onPage(page) { return [; }\n", /^crawl: --script .*syntax\.mjs does not load: SyntaxError: /],
    ["a throwing top level", "throws-on-load.mjs", 'throw new RangeError("not configured");\n', /^crawl: --script .*throws-on-load\.mjs does not load: RangeError: not configured\n/],
    ["no onPage", "no-hook.mjs", "export const onpage = 1;\nexport function parse() {}\n", /^crawl: --script .*no-hook\.mjs exports no onPage function \(it exports onpage, parse\)/],
    ["a directory", "folder.mjs", null, /^crawl: --script .*folder\.mjs is a directory, not a module\n/],
  ] as const)("refuses a --script with %s, status 2, before any request", async (_name, file, text, message) => {
    const path = join(directory, file);
    if (text === null) await (await import("node:fs/promises")).mkdir(path, { recursive: true });
    else await writeFile(path, text);
    const { code, stdout, stderr } = await runCli(["--script", path, root]);
    expect(stderr).toMatch(message);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(site.totalRequests).toBe(0);
  });
});
