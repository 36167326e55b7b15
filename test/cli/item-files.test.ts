/**
 * The items' outputs, without a crawl: the CSV and JSON of `-o items.*`, the
 * item lines of `--jsonl`, and the schema they are described by.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isItemsFile, itemsCsv, itemsJson } from "../../src/cli/item-files.js";
import { itemLine, RecordLines } from "../../src/cli/record-lines.js";
import type { CrawlItem } from "../../src/crawl/page-hook.js";
import { pageRecord } from "../../src/crawl/records.js";
import { schemaErrors } from "./json-schema.js";

const schema = JSON.parse(readFileSync(new URL("../../schema/crawl-result.schema.json", import.meta.url), "utf8"));
const strict = { strict: true };
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ITEMS: CrawlItem[] = [
  { url: "http://shop.test/a", item: { name: "Lamp", price: "49.90" } },
  { url: "http://shop.test/b", item: { price: "=HYPERLINK(\"http://evil\")", tags: ["x", "y"], name: null, stock: 3, url: "http://elsewhere/" } },
];

describe("isItemsFile", () => {
  it("takes a file named items, or items and a -, _ or ., in any folder and case", () => {
    for (const file of ["items.csv", "out/items.jsonl", "ITEMS.json", "items-2026.csv", "items_shop.jl", "items.v2.json"]) expect(isItemsFile(file), file).toBe(true);
    for (const file of ["records.csv", "itemsets.csv", "my-items.csv", "items/records.csv"]) expect(isItemsFile(file), file).toBe(false);
  });
});

describe("itemsCsv", () => {
  it("has a column per key, in the order first seen, after the page's url; neutralises formulas and writes arrays as JSON", () => {
    expect(itemsCsv(ITEMS).split("\r\n")).toEqual([
      "url,name,price,tags,stock,item.url",
      "http://shop.test/a,Lamp,49.90,,,",
      'http://shop.test/b,,"\'=HYPERLINK(""http://evil"")","[""x"",""y""]",3,http://elsewhere/',
      "",
    ]);
  });

  it("is a header alone for no items", () => {
    expect(itemsCsv([])).toBe("url\r\n");
  });
});

describe("item lines and documents against the schema", () => {
  it("writes an item line with type item, which the schema's itemLine describes and recordLine does not", () => {
    const line = itemLine(ITEMS[0]);
    expect(JSON.stringify(line)).toBe('{"schemaVersion":1,"type":"item","url":"http://shop.test/a","item":{"name":"Lamp","price":"49.90"}}');
    expect(schemaErrors(line, schema.$defs.itemLine, strict, schema)).toEqual([]);
    expect(schemaErrors(line, schema.$defs.recordLine, strict, schema).length).toBeGreaterThan(0);
    expect(schemaErrors({ ...line, type: "record" }, schema.$defs.itemLine, strict, schema)).toEqual(['$/type: must be equal to constant']);
  });

  it("writes -o items.json as an array of crawlItem", () => {
    const parsed = JSON.parse(itemsJson(ITEMS)) as unknown[];
    expect(parsed).toEqual(ITEMS);
    for (const item of parsed) expect(schemaErrors(item, schema.$defs.crawlItem, strict, schema)).toEqual([]);
    expect(schemaErrors({ url: "http://x/" }, schema.$defs.crawlItem, strict, schema)).toEqual(["$: must have required property 'item'"]);
  });

  it("interleaves item lines with record lines in one --jsonl file, counting each kind", () => {
    const dir = mkdtempSync(join(tmpdir(), "item-lines-"));
    dirs.push(dir);
    const file = join(dir, "out.jsonl");
    const lines = RecordLines.open(file, "jsonl");
    lines.write(pageRecord("http://shop.test/a", { status: 200, size: 10, contentType: "text/html", encoding: "utf-8" }, 0, 0));
    lines.writeItem(ITEMS[0]);
    lines.close();
    const written = readFileSync(file, "utf8").trimEnd().split("\n").map((text) => JSON.parse(text));
    expect(written.map((line) => line.type ?? "record")).toEqual(["record", "item"]);
    expect([lines.written, lines.itemsWritten]).toEqual([1, 1]);
    expect(schemaErrors(written[0], schema.$defs.recordLine, strict, schema)).toEqual([]);
    expect(schemaErrors(written[1], schema.$defs.itemLine, strict, schema)).toEqual([]);
    expect(() => RecordLines.open(join(dir, "x.csv"), "csv").writeItem(ITEMS[0])).toThrow(TypeError);
  });
});
