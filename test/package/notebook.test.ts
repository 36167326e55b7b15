/**
 * examples/notebook.ipynb is read where it is browsed (GitHub, nbviewer), so it
 * is committed with its outputs, and it imports the package as a project that
 * depends on it does. CI executes it (scripts/notebook-check.sh, in .ci/run)
 * and compares the fresh outputs with the committed ones through
 * scripts/notebook-compare.mjs; these tests check the committed file and that
 * the comparison catches a changed output but not a changed port.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));
const notebookPath = join(root, "examples/notebook.ipynb");

type Output = { output_type: string; name?: string; text?: string[] };
type Cell = { cell_type: string; source: string[]; outputs?: Output[] };
type Notebook = { cells: Cell[] };

const notebook = JSON.parse(readFileSync(notebookPath, "utf8")) as Notebook;
const codeCells = notebook.cells.filter((cell) => cell.cell_type === "code");
const work = mkdtempSync(join(tmpdir(), "notebook-compare-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs scripts/notebook-compare.mjs on the committed notebook and `fresh`; its exit status and what it printed. */
function compare(fresh: Notebook): { status: number; output: string } {
  const freshPath = join(work, `fresh-${Math.random().toString(36).slice(2)}.ipynb`);
  writeFileSync(freshPath, JSON.stringify(fresh));
  try {
    const output = execFileSync(process.execPath, [join(root, "scripts/notebook-compare.mjs"), notebookPath, freshPath], { encoding: "utf8", stdio: "pipe" });
    return { status: 0, output };
  } catch (error) {
    const failed = error as { status: number; stderr: string };
    return { status: failed.status, output: failed.stderr };
  }
}

/** A copy of the committed notebook with `edit` applied to the text of every stdout output. */
function withOutputs(edit: (text: string) => string): Notebook {
  const copy = structuredClone(notebook);
  for (const cell of copy.cells) {
    for (const output of cell.outputs ?? []) if (output.text !== undefined) output.text = output.text.map(edit);
  }
  return copy;
}

describe("examples/notebook.ipynb", () => {
  it("is committed with an output in every code cell that prints", () => {
    const silent = codeCells.filter((cell) => (cell.outputs ?? []).length === 0).map((cell) => cell.source[0]);
    // The first cell only imports.
    expect(silent).toEqual([codeCells[0]?.source[0]]);
    expect(codeCells.length).toBeGreaterThan(5);
  });

  it("imports the package by its name, never by a path into the repository", () => {
    const imports = codeCells.flatMap((cell) => [...cell.source.join("").matchAll(/from\s+"([^"]+)"/g)].map((match) => match[1]));
    expect(imports.length).toBeGreaterThan(3);
    expect(imports.filter((specifier) => !/^coroutine-crawler(\/[a-z]+)?$/.test(specifier))).toEqual([]);
  });

  it("finds the types of every subpath it may import under tslab's node10 resolution (package.json typesVersions)", () => {
    type Pkg = { exports: Record<string, string | { types?: string }>; typesVersions: { "*": Record<string, string[]> } };
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Pkg;
    const subpaths = Object.entries(pkg.exports).filter(([subpath, target]) => subpath !== "." && typeof target === "object");
    expect(subpaths.length).toBeGreaterThan(5);
    for (const [subpath, target] of subpaths) {
      expect(pkg.typesVersions["*"][subpath.replace(/^\.\//, "")], subpath).toEqual([(target as { types: string }).types]);
    }
  });

  it("shows no error output", () => {
    const errors = codeCells.flatMap((cell) => (cell.outputs ?? []).filter((output) => output.output_type === "error" || output.name === "stderr"));
    expect(errors).toEqual([]);
  });
});

describe("the README's notebook set-up", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const mark = readme.indexOf("<!-- scripts/notebook-check.sh runs these lines -->");
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(mark))?.[1] ?? "";
  const lines = block.split("\n").filter((line) => line.trim() !== "");

  it("needs only the installed package: the notebook it ships, the kernel from the project's node_modules/.bin", () => {
    // scripts/notebook-check.sh runs these lines in a project outside the repository, against the packed tarball.
    expect(mark).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/^npm install coroutine-crawler @types\/node tslab@\d+\.\d+\.\d+$/);
    expect(lines).toContain('npx tslab install --python=python3 --binary="$PWD/node_modules/.bin/tslab"');
    expect(lines).toContain("cp node_modules/coroutine-crawler/examples/notebook.ipynb .");
    expect(lines.at(-1)).toMatch(/^jupyter notebook notebook\.ipynb\b/);
    // Nothing from a clone of the repository.
    expect(lines.filter((line) => /\$repo|scripts\//.test(line))).toEqual([]);
  });

  it("is shipped: package.json's files has the notebook", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] };
    expect(pkg.files).toContain("examples/notebook.ipynb");
  });
});

describe("scripts/notebook-compare.mjs", () => {
  it("accepts a fresh run whose outputs are the committed ones", () => {
    const result = compare(structuredClone(notebook));
    expect(result.output).toContain(`the ${codeCells.length} code cells`);
    expect(result.status).toBe(0);
  });

  it("accepts another port, another iteration count and another duration", () => {
    const fresh = withOutputs((text) =>
      text
        .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:1")
        .replace(/after \d+ iterations/, "after 1 iterations")
        .replace(/in \d+(\.\d+)? secs/, "in 9.5 secs"),
    );
    expect(JSON.stringify(fresh)).not.toBe(JSON.stringify(notebook));
    expect(compare(fresh).status).toBe(0);
  });

  it("rejects a fresh run whose record count differs, naming the cell", () => {
    const fresh = withOutputs((text) => text.replace(/^(\d+) records/, (_all, count: string) => `${Number(count) + 1} records`));
    expect(JSON.stringify(fresh)).not.toBe(JSON.stringify(notebook));
    const result = compare(fresh);
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/cell \d+ \(function table/);
  });

  it("rejects a fresh run that printed nothing", () => {
    const fresh = structuredClone(notebook);
    for (const cell of fresh.cells) cell.outputs = cell.cell_type === "code" ? [] : cell.outputs;
    const result = compare(fresh);
    expect(result.status).toBe(1);
    expect(result.output).toContain("(no output)");
  });
});
