/**
 * `crawl --trace`: each trace event as one readable line, so a learner can
 * follow one URL through fetch-start → connect → send → read* → fetch-end,
 * and see between those lines what the stage's loop was doing.
 *
 * @module
 */
import { createWriteStream } from "node:fs";
import type { WriteStream } from "node:fs";
import type { StageName, TraceEvent } from "./events.js";

/**
 * Formats one event: the time, the stage, the event's name, then its fields
 * in words.
 *
 * @example
 * ```text
 *     22.4ms  callbacks   dispatch connected http://127.0.0.1:8080/ socket#1
 *     50.7ms  callbacks   fetch-start http://127.0.0.1:8080/p/1 slot 0 try 1 queued 5 in-flight 1
 * ```
 */
export function traceLine(event: TraceEvent): string {
  return `${timeAndStage(event.t, event.stage)}${event.type} ${details(event)}`;
}

/** A trace line's first two columns, `t` and the stage, as {@link traceLine} writes them (the lines `UrlTrace` adds use them too). */
export function timeAndStage(t: number, stage: StageName): string {
  return `${t.toFixed(1).padStart(9)}ms  ${stage.padEnd(10)}  `;
}

/** The words after the event's name. */
function details(event: TraceEvent): string {
  switch (event.type) {
    case "fetch-start":
      return `${event.url} slot ${event.slot} try ${event.attempt} ${counters(event)}`;
    case "fetch-end": {
      const outcome = event.error === null ? String(event.status) : event.detail ? `${event.error} (${event.detail})` : event.error;
      return `${event.url} slot ${event.slot} try ${event.attempt} ${outcome} ${counters(event)}`;
    }
    case "connect":
    case "send":
    case "first-byte":
      return `${event.url} slot ${event.slot}`;
    case "read":
      return `${event.url} slot ${event.slot} ${event.bytes} bytes`;
    case "select":
      return `${event.ready} ready`;
    case "dispatch":
      return `${event.callback} ${event.url ?? "-"} socket#${event.socket}`;
    case "timer":
      return event.callback === "" ? "(anonymous)" : event.callback;
    case "step":
      return `task#${event.task} ${event.coroutine} ${event.yielded === null ? "returned" : `yielded ${event.yielded}`}`;
    case "resolve":
      return `future#${event.future} ${event.label}`;
    case "cancel":
      return `task#${event.task}`;
    case "take":
    case "resume":
    case "done":
      return `worker ${event.worker} ${event.url}`;
    case "await":
      return `worker ${event.worker} ${event.what} ${event.url}`;
  }
}

function counters(event: { queued: number; unfinished: number; inFlight: number }): string {
  return `queued ${event.queued} unfinished ${event.unfinished} in-flight ${event.inFlight}`;
}

/**
 * Where `crawl --trace` (and `--trace-url`) sends its lines: stderr (through the CLI's printer,
 * so the progress line stays readable) or a file, written as a stream.
 */
export class TraceLines {
  private readonly file: WriteStream | null;
  private failure: Error | null = null;
  private closing: Promise<boolean> | null = null;

  constructor(
    /** The file to write, or `-` for stderr. */
    readonly destination: string,
    private readonly printer: { warn(text: string): void },
  ) {
    if (destination === "-") {
      this.file = null;
      return;
    }
    this.file = createWriteStream(destination);
    const lines = this;
    this.file.on("error", function writeFailed(error: Error) {
      lines.failure ??= error;
    });
  }

  /** Writes the line for `event`. */
  write(event: TraceEvent): void {
    this.writeLine(traceLine(event));
  }

  /** Writes a line made already (`line` has no newline): one of `UrlTrace`'s. */
  writeLine(line: string): void {
    if (this.file === null) this.printer.warn(`${line}\n`);
    else if (this.failure === null) this.file.write(`${line}\n`);
  }

  /**
   * Flushes and closes the file; false, after a message, when it could not be
   * written. Later calls return the first call's answer.
   */
  close(): Promise<boolean> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<boolean> {
    const file = this.file;
    if (file === null) return true;
    await new Promise<void>(function ended(resolve) {
      if (file.closed) resolve();
      else file.end(resolve);
    });
    if (this.failure === null) return true;
    this.printer.warn(`crawl: cannot write ${this.destination}: ${this.failure.message}\n`);
    return false;
  }
}
