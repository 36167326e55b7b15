/**
 * Where the code is: the call stack as {@link SourceLine}s (the TypeScript
 * lines, through tsx's source maps), and where a function starts or a
 * paused generator stands, read from V8 through `node:inspector`.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { Session } from "node:inspector";
import { findSourceMap } from "node:module";
import { relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { SourceLine } from "./recording.js";

/** The package root: the paths of a recording are relative to it. */
export const PACKAGE_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The frames a stack shows: a stage's and the library's files and Node's own, not the recorder's, not a package's. */
function shown(file: string): boolean {
  if (file.startsWith("node:")) return file !== "node:diagnostics_channel" && !file.startsWith("node:internal/modules");
  // A learner's folder may lie outside the package (LEARN_DIR): shown, relative to the root; a package's file never is.
  return !file.startsWith("stepper/") && !file.includes("node_modules/") && !file.startsWith("/");
}

/** A path relative to the package root, `/` separated; Node's own modules as they are. */
export function packagePath(path: string): string {
  if (path.startsWith("node:")) return path;
  const file = path.startsWith("file://") ? fileURLToPath(path) : path;
  return relative(PACKAGE_ROOT, file).split(sep).join("/");
}

const FRAME = /^\s*at (?:async )?(?:(.*?) \()?([^()]*?):(\d+):(\d+)\)?$/;

/**
 * Parses `error.stack` into frames, innermost first: each the file relative
 * to the package root, the 1-based line and the function. The recorder's
 * own frames, a package's (node_modules: fake-timers, undici) and
 * `node:diagnostics_channel`'s are left out; an `async` frame (stage 3's
 * awaiting callers) is kept, its function marked `async`.
 */
export function parseStack(stack: string): SourceLine[] {
  const lines: SourceLine[] = [];
  for (const text of stack.split("\n").slice(1)) {
    const match = FRAME.exec(text);
    if (match === null) continue;
    const file = packagePath(match[2] as string);
    if (!shown(file)) continue;
    const fn = match[1] ?? "<anonymous>";
    lines.push({ file, line: Number(match[3]), fn: text.includes(" at async ") ? `async ${fn}` : fn });
  }
  return lines;
}

/** The call stack here, innermost first (see {@link parseStack}). */
export function captureStack(): SourceLine[] {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  const stack = new Error("stack").stack ?? "";
  Error.stackTraceLimit = limit;
  return parseStack(stack);
}

interface Location {
  scriptId: string;
  lineNumber: number;
  columnNumber: number;
}

interface RemoteProperty {
  name: string;
  value?: { value?: unknown };
}

/**
 * V8, asked from inside the process (`node:inspector`, whose session
 * answers synchronously): where a function begins (`[[FunctionLocation]]`)
 * and where a paused generator stands (`[[GeneratorLocation]]`), mapped to
 * the TypeScript line by the module's source map.
 */
export class Inspector {
  private readonly session = new Session();
  private readonly urls = new Map<string, string>();
  private readonly looked = new Map<unknown, SourceLine | null>();

  constructor() {
    const urls = this.urls;
    this.session.connect();
    this.session.on("Debugger.scriptParsed", function scriptParsed(message) {
      urls.set(message.params.scriptId, message.params.url);
    });
    this.session.post("Debugger.enable");
  }

  /** Where `fn` is declared, or null (a native function, or a file outside the package). */
  functionAt(fn: (...args: never[]) => unknown): SourceLine | null {
    if (this.looked.has(fn)) return this.looked.get(fn) ?? null;
    const found = this.internal(fn, "[[FunctionLocation]]", fn.name || "<anonymous>");
    this.looked.set(fn, found);
    return found;
  }

  /** Where the generator is paused (its outermost frame: the coroutine a Task drives), or null once it has ended. */
  generatorAt(generator: object, name: string): SourceLine | null {
    return this.internal(generator, "[[GeneratorLocation]]", name);
  }

  close(): void {
    this.session.post("Debugger.disable");
    this.session.disconnect();
  }

  private internal(object: object, property: string, name: string): SourceLine | null {
    const holder = globalThis as { __stepperInspected?: object };
    holder.__stepperInspected = object;
    let location: Location | null = null;
    const session = this.session;
    session.post("Runtime.evaluate", { expression: "globalThis.__stepperInspected", objectGroup: "stepper" }, function evaluated(error, answer) {
      const objectId = answer?.result.objectId;
      if (error !== null || objectId === undefined) return;
      session.post("Runtime.getProperties", { objectId, ownProperties: true }, function gotProperties(failed, properties) {
        if (failed !== null) return;
        const found = (properties.internalProperties as RemoteProperty[] | undefined)?.find(function named(each) {
          return each.name === property;
        });
        location = (found?.value?.value as Location | undefined) ?? null;
      });
    });
    session.post("Runtime.releaseObjectGroup", { objectGroup: "stepper" });
    delete holder.__stepperInspected;
    return location === null ? null : this.mapped(location, name);
  }

  private mapped(location: Location, name: string): SourceLine | null {
    const url = this.urls.get(location.scriptId);
    if (url === undefined) return null;
    const entry = findSourceMap(url)?.findEntry(location.lineNumber, location.columnNumber);
    const original = entry !== undefined && "originalSource" in entry ? entry : null;
    const file = packagePath(original?.originalSource ?? url);
    if (!shown(file) || file.startsWith("node:")) return null;
    return { file, line: (original?.originalLine ?? location.lineNumber) + 1, fn: name };
  }
}

/** The lines of each file the snapshots name, for the page to show the line that runs. */
export function sourcesOf(files: Iterable<string>): Record<string, string[]> {
  const sources: Record<string, string[]> = {};
  for (const file of [...files].sort()) {
    if (file.startsWith("node:")) continue;
    try {
      sources[file] = readFileSync(resolve(PACKAGE_ROOT, file), "utf8").split("\n");
    } catch {
      // A file that is gone (a learner's renamed exercise): the page shows the frame without its line.
    }
  }
  return sources;
}
