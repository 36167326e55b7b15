/**
 * Where the `crawl` command's text goes, so the progress line never garbles it.
 *
 * @module
 */
import type { ProgressLine, StatusStream } from "./progress-line.js";

/**
 * Sends the report to one stream and diagnostics to another, wiping the
 * progress line before each write.
 *
 * The report stream is stdout, except with `--json -` or `--jsonl -`, when
 * stdout carries only JSON and the report moves to stderr. Diagnostics ("Interrupted", the
 * `-v` lines in that case) always go to stderr.
 */
export class Printer {
  /** The progress line of the crawl running now, if any. */
  progress: ProgressLine | null = null;

  constructor(
    private readonly reportStream: StatusStream,
    private readonly diagnosticStream: StatusStream,
  ) {}

  /** Writes report text (the report, the table, `-v` lines). */
  print(text: string): void {
    this.progress?.clear();
    this.reportStream.write(text);
  }

  /** Writes a diagnostic to stderr. */
  warn(text: string): void {
    this.progress?.clear();
    this.diagnosticStream.write(text);
  }
}
