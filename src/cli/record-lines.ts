/**
 * `crawl --jsonl` and `-o FILE.csv`: each record as one line of JSON, or
 * one row of CSV, written the moment the record is made.
 *
 * @module
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { CrawlItem } from "../crawl/page-hook.js";
import type { FetchStatistic } from "../crawl/records.js";
import { type ItemLine, type RecordLine, SCHEMA_VERSION } from "./result-json.js";

/** How {@link RecordLines} writes a record: a line of JSON, or a row of CSV (RFC 4180). */
export type RecordFormat = "jsonl" | "csv";

/**
 * The CSV columns, in order: the record's fields, the ones a spreadsheet is
 * read for first (`url`, `status`, `error`) leftmost.
 */
export const CSV_COLUMNS = [
  "url", "status", "error", "detail", "nextUrl", "contentType", "encoding", "size",
  "numUrls", "numNewUrls", "referrer", "depth", "tries", "fetchedAt",
] as const;

/**
 * Writes records as JSON Lines (one {@link RecordLine} and a newline each:
 * the shape a record has in `--json`, with the `schemaVersion` first) or as
 * CSV (a header row of {@link CSV_COLUMNS}, then a row per record, RFC 4180
 * quoting, CRLF line ends) to a file or to stdout.
 *
 * A file is written with one `write(2)` per line on its descriptor, nothing
 * buffered in the process: a line is in the file as soon as {@link write}
 * returns, so a crawl killed even with SIGKILL leaves every line it wrote
 * (the kernel holds them; a power cut is another matter, as no `fsync` is
 * made). Stdout goes through `process.stdout`, whose writes to a file or a
 * pipe are synchronous on Linux; a reader that falls behind leaves the lines
 * it has not taken yet waiting in memory, and one that goes away
 * (`crawl --jsonl - … | head`) ends the command quietly, as src/cli.ts does
 * for all of stdout.
 *
 * The first write to the file that fails (a full disk) is kept in
 * {@link failure}, nothing more is written, and {@link failed} aborts, so the
 * crawl can be stopped: its records would go nowhere.
 */
export class RecordLines {
  /** Record lines written. */
  written = 0;
  /** Item lines written ({@link writeItem}). */
  itemsWritten = 0;
  /** Why writing stopped, or null while every line was written. */
  failure: Error | null = null;
  private readonly controller = new AbortController();

  private constructor(
    /** The file name, or `-` for stdout. */
    readonly destination: string,
    /** The file's descriptor; null for stdout, and once closed. */
    private fd: number | null,
    /** A line of JSON, or a row of CSV, per record. */
    readonly format: RecordFormat,
  ) {}

  /**
   * Creates (or empties) the file, or takes stdout for `-`; for CSV, writes
   * the header row.
   *
   * @throws the `open(2)` error (`ENOENT`, `EACCES`, …) when the file cannot be created.
   */
  static open(destination: string, format: RecordFormat = "jsonl"): RecordLines {
    const lines = new RecordLines(destination, destination === "-" ? null : openSync(destination, "w"), format);
    if (format === "csv") lines.writeText(csvRow(CSV_COLUMNS));
    return lines;
  }

  /** Aborted, with the error as its reason, when a write fails. */
  get failed(): AbortSignal {
    return this.controller.signal;
  }

  /** Writes `record` as one line; false when it could not be (see {@link failure}). */
  write(record: FetchStatistic): boolean {
    if (!this.writeText(this.format === "csv" ? csvRow(csvFields(record)) : JSON.stringify(recordLine(record)) + "\n")) return false;
    this.written += 1;
    return true;
  }

  /**
   * Writes `item` as one {@link ItemLine} (JSON Lines only: a CSV of items
   * is written whole at the end, its columns being the items' keys); false
   * when it could not be. An item that JSON cannot write (a cycle, a BigInt)
   * throws its `TypeError`, and nothing is written.
   */
  writeItem(item: CrawlItem): boolean {
    if (this.format !== "jsonl") throw new TypeError("writeItem: item lines are JSON Lines");
    if (!this.writeText(JSON.stringify(itemLine(item)) + "\n")) return false;
    this.itemsWritten += 1;
    return true;
  }

  /** Writes `line` as it is; false when it could not be. */
  private writeText(line: string): boolean {
    if (this.failure !== null) return false;
    try {
      if (this.destination === "-") process.stdout.write(line);
      else if (this.fd !== null) writeAll(this.fd, Buffer.from(line));
      else throw new Error(`${this.destination} is closed`);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.controller.abort(this.failure);
      return false;
    }
    return true;
  }

  /** Closes the file (stdout stays open). Safe to call twice. */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    closeSync(fd);
  }
}

/** `writeSync` may write less than asked (a nearly full disk): write the rest until it is all out. */
function writeAll(fd: number, bytes: Buffer): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
}

/** A record as `--jsonl` writes it: the schema's version first, then the record's fields. */
export function recordLine(record: FetchStatistic): RecordLine {
  return { schemaVersion: SCHEMA_VERSION, ...record };
}

/** An item as `--jsonl` writes it: `type` first after the version, so a reader tells it from a record at a glance. */
export function itemLine({ url, item }: CrawlItem): ItemLine {
  return { schemaVersion: SCHEMA_VERSION, type: "item", url, item };
}

/** A record's {@link CSV_COLUMNS}: null fields empty, text fields {@link csvText neutralised}. */
export function csvFields(record: FetchStatistic): string[] {
  return CSV_COLUMNS.map(function field(column): string {
    const value = record[column];
    if (value === null) return "";
    return typeof value === "string" ? csvText(value) : String(value);
  });
}

/** What a spreadsheet reads as the start of a formula: `=`, `+`, `-`, `@`, a tab or a carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell as a spreadsheet will show it, never run it: one that starts
 * like a formula gets a `'` in front (`=HYPERLINK(…)` → `'=HYPERLINK(…)`),
 * which Excel, LibreOffice and Google Sheets read as "text follows".
 *
 * @remarks A record's text comes from the server: `contentType` and
 * `encoding` are its headers, `detail` may quote them. Without this, a
 * `Content-Type: =cmd|' /C calc'!A0` would be a live formula in whoever
 * opens the CSV (CSV injection). Numbers are written as they are: `-1`
 * stays a number.
 * @see OWASP, "CSV Injection"
 */
export function csvText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** One CSV row (RFC 4180): a field with a comma, a quote or a line break is quoted, its quotes doubled; CRLF ends the row. */
export function csvRow(fields: readonly string[]): string {
  return fields.map((field) => (/[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field)).join(",") + "\r\n";
}
