/**
 * docs/debugging.md, run as written: the `node inspect` session it prints
 * (the block after the `<!-- tested: test/docs-debugging.test.ts -->` mark)
 * is replayed. Its first line is the command, each `debug> ` line is typed on
 * the debugger's stdin once the lines printed before it in the doc have come
 * out, in order, and every other line must come out, in order (a printed line
 * may hold more, such as a prompt; the frames of `bt` below the first are
 * compared by name and file). The demo site's port is written `…` in the
 * doc. So the doc's breakpoint must land on the TypeScript line it shows, and
 * `list()` and `bt` must show that line's text and number, not tsx's one line
 * of compiled JavaScript (the session fails on `--import tsx`).
 *
 * Its two REPL sessions (`npx tsx`, then `> ` lines) are typed in too, and
 * each value a line's `//` comment shows must be the one printed.
 *
 * And scripts/debug/blank-types.mjs, which puts the debugger on those lines, keeps every line
 * and column of a file that uses each construct it blanks, and the result runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { blankTypes } from "../scripts/debug/blank-types.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const doc = readFileSync(join(root, "docs/debugging.md"), "utf8");

/** One step of the session: what to type (none for the command line), then the lines to wait for. */
interface Step {
  input: string | null;
  expect: string[];
}

/** The tested session of docs/debugging.md: its command and steps. */
function session(): { command: string; steps: Step[] } {
  const mark = doc.indexOf("<!-- tested: test/docs-debugging.test.ts -->");
  const block = /```text\n([\s\S]*?)```/.exec(doc.slice(mark));
  if (mark < 0 || block === null) throw new Error("docs/debugging.md has no tested session");
  const [first, ...lines] = block[1].trimEnd().split("\n");
  const steps: Step[] = [{ input: null, expect: [] }];
  for (const line of lines) {
    if (line.startsWith("debug> ")) steps.push({ input: line.slice("debug> ".length), expect: [] });
    else steps.at(-1)?.expect.push(line.trimEnd());
  }
  return { command: first.replace(/^\$ /, ""), steps };
}

/**
 * Ports as the doc writes them, and the positions of the stack's frames below
 * the first left out: the session checks the line it stopped on, and the
 * callers by name and file, so an edit elsewhere in the loop's files does not
 * make the doc wrong.
 */
function masked(text: string): string {
  return text.replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:…").replace(/^(#[1-9]\d* \S+ \S+?):\d+:\d+$/gm, "$1:…");
}

/**
 * Runs `command` in a shell at the repository's root and plays `steps` on its stdin.
 * @returns everything it printed, and the first expected line that never came (null if all did)
 */
function play(command: string, steps: Step[], hangGuardMs: number): Promise<{ output: string; missing: string | null }> {
  return new Promise(function playing(resolve) {
    // detached: its own process group, so the hang guard ends `node inspect` and the program it debugs together.
    const child: ChildProcess = spawn("sh", ["-c", command], { cwd: root, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    let searchFrom = 0;
    let step = 0;
    let line = 0;
    let ended = false;
    function end(missing: string | null): void {
      if (ended) return;
      ended = true;
      clearTimeout(guard);
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      resolve({ output, missing });
    }
    function advance(): void {
      while (step < steps.length) {
        const wanted = steps[step].expect.map(masked);
        while (line < wanted.length) {
          const found = masked(output).indexOf(wanted[line], searchFrom);
          if (found < 0) return;
          searchFrom = found + wanted[line].length;
          line += 1;
        }
        step += 1;
        line = 0;
        const next = steps[step];
        if (next === undefined) break;
        child.stdin?.write(`${next.input}\n`);
      }
    }
    const guard = setTimeout(function hung() {
      const wanted = steps[step]?.expect[line];
      end(wanted ?? "(the debugger's exit)");
    }, hangGuardMs);
    function heard(chunk: Buffer): void {
      output += chunk.toString("utf8");
      advance();
    }
    child.stdout?.on("data", heard);
    child.stderr?.on("data", heard);
    child.on("close", function closed() {
      end(step < steps.length ? (steps[step]?.expect[line] ?? null) : null);
    });
  });
}

describe("docs/debugging.md", () => {
  it("has a session that starts the debug script, sets a breakpoint by line, lists and prints the stack", () => {
    const { command, steps } = session();
    expect(command).toMatch(/^npm run debug -- examples\/\S+\.ts$/);
    const inputs = steps.map((step) => step.input);
    expect(inputs).toEqual(expect.arrayContaining([expect.stringMatching(/^sb\('src\//), "cont", expect.stringMatching(/^list\(/), "bt"]));
  });

  it("prints what the session shows: the TypeScript lines, by their numbers in the .ts file", async () => {
    const { command, steps } = session();
    // A hang guard only: the session takes a few seconds.
    const { output, missing } = await play(command, steps, 90_000);
    expect(missing, output).toBeNull();
    // The line the breakpoint stopped on, as the debugger listed it, is the .ts file's line.
    const stop = /break in (src\/\S+\.ts):(\d+)/.exec(output);
    expect(stop).not.toBeNull();
    const [, file, number] = stop as RegExpExecArray;
    const source = readFileSync(join(root, file), "utf8").split("\n");
    const listed = new RegExp(`>${number} (.*)`).exec(output);
    expect(listed?.[1]).toBe(source[Number(number) - 1]);
  }, 120_000);
});

/** The REPL sessions of docs/debugging.md: each ```sh block that starts with `npx tsx`, its `> ` lines, each with the comment after `//` (or null). */
function replSessions(): Array<Array<{ input: string; shows: string | null }>> {
  const blocks = [...doc.matchAll(/```sh\n\s*npx tsx\n([\s\S]*?)```/g)];
  return blocks.map((block) =>
    block[1]
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.startsWith("> "))
      .map((line) => {
        const [input, shows] = line.slice(2).split(/\s+\/\/\s+/);
        return { input: input.trim(), shows: shows ?? null };
      }),
  );
}

/**
 * Types `lines` into Node's REPL with tsx's loader, each once the REPL has
 * prompted again (the previous line done, awaits included).
 * @returns what the REPL printed for each line
 */
function typeIntoRepl(lines: string[], hangGuardMs: number): Promise<string[]> {
  return new Promise(function typing(resolve, reject) {
    // `npx tsx` starts its REPL only on a terminal (on a pipe it runs stdin as a script): Node's own REPL,
    // forced with -i, under tsx's loader, is the same REPL for these lines, which are JavaScript.
    const child = spawn(process.execPath, ["--import", "tsx", "-i"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    let sent = 0;
    const guard = setTimeout(function hung() {
      child.kill("SIGKILL");
      reject(new Error(`the REPL did not answer line ${sent}: ${output}`));
    }, hangGuardMs);
    function heard(chunk: Buffer): void {
      output += chunk.toString("utf8");
      const prompts = output.split("\n> ").length - 1 + (output.startsWith("> ") ? 1 : 0);
      if (prompts < sent + 1) return;
      if (sent < lines.length) {
        child.stdin.write(`${lines[sent]}\n`);
        sent += 1;
      } else if (sent === lines.length) {
        sent += 1;
        clearTimeout(guard);
        child.stdin.end(".exit\n");
        // Between the prompts: what each line printed.
        const answers = output.split("\n> ").slice(1, lines.length + 1).map((answer) => answer.trim());
        resolve(answers);
      }
    }
    child.stdout.on("data", heard);
    child.stderr.on("data", heard);
  });
}

describe("docs/debugging.md's REPL sessions", () => {
  it("has two, each looking at a Task between iterations", () => {
    const sessions = replSessions();
    expect(sessions.length).toBe(2);
    for (const session of sessions) expect(session.filter((line) => line.shows !== null).length).toBeGreaterThan(1);
  });

  it("prints what each line's comment says, in order", async () => {
    for (const session of replSessions()) {
      // A hang guard only: a session takes a few seconds.
      const answers = await typeIntoRepl(
        session.map((line) => line.input),
        60_000,
      );
      const said = session.flatMap((line, index) => (line.shows === null ? [] : [{ input: line.input, shows: line.shows, printed: answers[index] }]));
      // The comment starts with the value printed, and may go on to say what it means ("false: parked on the gate").
      expect(said.filter((line) => !line.shows.startsWith(line.printed ?? "(nothing)"))).toEqual([]);
    }
  }, 120_000);
});

describe("scripts/debug/blank-types.mjs", () => {
  const typescript = [
    'import { type Server, createServer } from "node:http";',
    'import type { Socket } from "node:net";',
    "interface Shape {",
    "  size: number;",
    "}",
    "type Maybe<T> = T | undefined;",
    "export abstract class Base<T> implements Shape {",
    "  abstract name(): string;",
    "  declare hidden: number;",
    "  size = 0;",
    "}",
    "export class Box<T> extends Base<T> {",
    "  private count?: number;",
    "  constructor(private readonly item: T, public label = \"box\") {",
    "    super();",
    "    this.count = 1;",
    "  }",
    "  override name(): string {",
    '    return this.label + ":" + String(this.item) + ":" + this.count!;',
    "  }",
    "  take(this: Box<T>, socket?: Socket): Maybe<Server> {",
    "    return socket === undefined ? (createServer as unknown as () => Server)() satisfies Server : undefined;",
    "  }",
    "}",
    "export const made = new Box<number>(7).name();",
  ].join("\n");

  it("keeps every line, and the column of every word that stays", () => {
    const javascript = blankTypes(typescript, "box.ts");
    const before = typescript.split("\n");
    const after = javascript.split("\n");
    expect(after.length).toBe(before.length);
    for (const [index, written] of after.entries()) {
      // The one text added: the parameter properties' assignments, after super() here.
      const line = written.replace(/ this\.(\w+) = \1;/g, "");
      for (const word of line.matchAll(/\S+/g)) expect(before[index].slice(word.index, word.index + word[0].length), `line ${index + 1}`).toBe(word[0]);
    }
    expect(after[3]).toMatch(/^\s*$/);
    expect(after[12]).toBe("          count         ;");
    expect(after[14]).toBe("    super(); this.item = item; this.label = label;");
  });

  it("runs: parameter properties are assigned after super()", async () => {
    const javascript = blankTypes(typescript, "box.ts");
    const module = (await import(`data:text/javascript,${encodeURIComponent(javascript)}`)) as { made: string };
    expect(module.made).toBe("box:7:1");
  });

  it("throws a BlankTypesError naming the file and line of an enum", () => {
    expect(() => blankTypes("const a = 1;\nenum Colour { Red }\n", "colour.ts")).toThrow(expect.objectContaining({ name: "BlankTypesError", message: expect.stringContaining("colour.ts:2") }));
  });
});
