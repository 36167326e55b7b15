/**
 * `-o items.csv` and `-o items.json`: the items of a crawl's page hook
 * (`--extract`, `--script`) as one file, written when the crawl ends. (`-o
 * items.jsonl` and `--jsonl` write each item as it comes: record-lines.ts.)
 *
 * @module
 */
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import type { CrawlItem } from "../crawl/page-hook.js";
import { csvRow, csvText } from "./record-lines.js";

/**
 * Whether `-o FILE` names an items file: its name without the extension is
 * `items`, or starts with `items` and a `-`, `_` or `.` (`items.csv`,
 * `out/items-2026.jsonl`, `ITEMS_shop.json`); any other `-o` file gets the
 * records. `itemsets.csv` is a records file.
 */
export function isItemsFile(file: string): boolean {
  const name = basename(file, extname(file));
  return /^items(?:[-_.].*)?$/i.test(name);
}

/**
 * The items as CSV (RFC 4180, CRLF): a header row of `url` (the page's) and
 * every key the items have, in the order first seen; then a row per item.
 * A string cell goes through {@link csvText} (a cell that would start a
 * formula gets a `'`); a number or a boolean is written as it is; null or a
 * missing key, an empty cell; an array or an object, its JSON (`["a","b"]`).
 * An item's own `url` key goes in a column `item.url`, next to the page's.
 */
export function itemsCsv(items: readonly CrawlItem[]): string {
  const keys = new Set<string>();
  for (const { item } of items) for (const key of Object.keys(item)) keys.add(key);
  const columns = [...keys];
  let text = csvRow(["url", ...columns.map(function header(key) {
    return key === "url" ? "item.url" : csvText(key);
  })]);
  for (const { url, item } of items) {
    text += csvRow([csvText(url), ...columns.map(function cell(key) {
      return csvCell(item[key]);
    })]);
  }
  return text;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return csvText(value);
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return csvText(JSON.stringify(value) ?? "");
}

/** The items as `-o items.json` writes them: a JSON array of `{ "url", "item" }` (schema: `#/$defs/crawlItem`), two-space indented. */
export function itemsJson(items: readonly CrawlItem[]): string {
  return JSON.stringify(items, null, 2) + "\n";
}

/**
 * Writes `text` to `file` under a temporary name beside it, then renames it:
 * a crawl that dies while writing leaves the earlier file, or none, never
 * half a file.
 *
 * @throws the file system's error; the temporary file is removed.
 */
export async function writeWhole(file: string, text: string): Promise<void> {
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  try {
    await writeFile(partial, text);
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}
