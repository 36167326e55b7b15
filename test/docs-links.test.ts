/**
 * The guides point at the code: every relative link in README.md and
 * docs/*.md, every `src/…` path they mention, and every `*.ts` file they name
 * must exist, so a rename or a move cannot leave a reader at a dead end.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exercises } from "../learn/workshop/exercises.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const documents = ["README.md", "learn/README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** Every file name under the folders a guide may name a `.ts` file of. */
function tsFileNames(): Set<string> {
  const names = new Set<string>();
  function walk(folder: string): void {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name === "node_modules") continue;
      if (entry.isDirectory()) walk(join(folder, entry.name));
      else names.add(entry.name);
    }
  }
  for (const folder of ["src", "test", "examples", "bench", "scripts", "stepper", "learn/workshop", "learn/lessons"]) if (existsSync(join(root, folder))) walk(join(root, folder));
  // The workshop's files: `npm run learn` writes them under learn/, and moves one from its name before the renumbering.
  for (const exercise of exercises) for (const file of [exercise.file, exercise.formerFile]) if (file !== undefined) names.add(file);
  return names;
}

/** GitHub's anchor for a heading: lowercased, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const counts = new Map<string, number>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} +(.+)$/gm)) {
    const slug = heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    found.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  return found;
}

/** Where a document sends its reader: relative links, `src/` paths, `*.ts` names. */
function references(document: string): { links: string[]; srcPaths: string[]; tsNames: string[] } {
  const text = readFileSync(join(root, document), "utf8");
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/i.test(target));
  const srcPaths = [...text.matchAll(/(?<![\w./-])src\/[\w./-]*/g)].map((match) => match[0].replace(/[.,]+$/, ""));
  const tsNames = [...text.matchAll(/[\w.-]+\.ts\b/g)].map((match) => match[0]);
  return { links, srcPaths, tsNames };
}

/** A file, or a folder with something in it (git keeps no empty folder, so an empty one is a leftover). */
function present(path: string): boolean {
  if (!existsSync(path)) return false;
  return !statSync(path).isDirectory() || readdirSync(path).length > 0;
}

describe.each(documents)("%s", (document) => {
  const { links, srcPaths, tsNames } = references(document);

  it("links only to files and headings that exist", () => {
    const dead = links.filter((target) => {
      const [path, anchor] = target.split("#");
      const file = path === "" ? join(root, document) : join(root, dirname(document), path);
      if (!present(file)) return true;
      return anchor !== undefined && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor);
    });
    expect(dead).toEqual([]);
  });

  it("mentions only src/ paths that exist", () => {
    expect(srcPaths.filter((path) => !present(join(root, path)))).toEqual([]);
  });

  it("names only .ts files that exist", () => {
    const names = tsFileNames();
    expect(tsNames.filter((name) => !names.has(basename(name)))).toEqual([]);
  });
});

it("checks README.md and every guide in docs/", () => {
  expect(documents).toEqual(expect.arrayContaining(["README.md", "docs/guide-callbacks.md", "docs/guide-generators.md", "docs/guide-asyncawait.md"]));
});
