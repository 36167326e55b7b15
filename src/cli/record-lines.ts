/**
 * `crawl --jsonl`: each record as one line of JSON, written the moment the
 * record is made.
 *
 * @module
 */
import { closeSync, openSync, writeSync } from "node:fs";
import type { FetchStatistic } from "../crawl/records.js";

/**
 * Writes records as JSON Lines (one `JSON.stringify(record)` and a newline
 * each, the shape a record has in `--json`) to a file or to stdout.
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
  /** Lines written. */
  written = 0;
  /** Why writing stopped, or null while every line was written. */
  failure: Error | null = null;
  private readonly controller = new AbortController();

  private constructor(
    /** The file name, or `-` for stdout. */
    readonly destination: string,
    /** The file's descriptor; null for stdout, and once closed. */
    private fd: number | null,
  ) {}

  /**
   * Creates (or empties) the file, or takes stdout for `-`.
   *
   * @throws the `open(2)` error (`ENOENT`, `EACCES`, …) when the file cannot be created.
   */
  static open(destination: string): RecordLines {
    return new RecordLines(destination, destination === "-" ? null : openSync(destination, "w"));
  }

  /** Aborted, with the error as its reason, when a write fails. */
  get failed(): AbortSignal {
    return this.controller.signal;
  }

  /** Writes `record` as one line; false when it could not be (see {@link failure}). */
  write(record: FetchStatistic): boolean {
    if (this.failure !== null) return false;
    const line = JSON.stringify(record) + "\n";
    try {
      if (this.destination === "-") process.stdout.write(line);
      else if (this.fd !== null) writeAll(this.fd, Buffer.from(line));
      else throw new Error(`${this.destination} is closed`);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      this.controller.abort(this.failure);
      return false;
    }
    this.written += 1;
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
