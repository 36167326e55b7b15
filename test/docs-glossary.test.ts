/**
 * A reader new to event loops meets no word unexplained: in the primer
 * (docs/start-here.md) and the three stage guides, each term below is, where
 * it is first used, either explained right there (written in *italics*, the
 * guides' mark of a definition) or linked to its entry in docs/glossary.md.
 * Code blocks, headings, quotations and diagrams' alt texts are not the
 * document's own prose and are skipped; a term
 * with two meanings ("heap") is checked once per meaning, from where that
 * meaning starts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** A term: how it is written, the glossary entry that explains it, and from where in a document to look (a heading). */
type Term = { name: string; pattern: RegExp; anchor: string; from?: string };

/** The terms of the primer, in the order it introduces them. */
const primerTerms: Term[] = [
  { name: "asyncio", pattern: /\basyncio\b/, anchor: "asyncio" },
  { name: "thread", pattern: /\bthreads?\b/, anchor: "thread" },
  { name: "call stack", pattern: /\bcall stack\b/, anchor: "call-stack" },
  { name: "kernel", pattern: /\bkernel\b/, anchor: "kernel" },
  { name: "busy loop", pattern: /\bbusy loop\b/, anchor: "event-loop" },
  { name: "selector", pattern: /\bselector\b/, anchor: "selector" },
  { name: "epoll or kqueue", pattern: /\b(epoll|kqueue)\b/, anchor: "epoll-and-kqueue" },
  { name: "the selector's key", pattern: /\bkeys?\b/, anchor: "selector-key" },
  { name: "level-triggered", pattern: /\blevel-triggered\b/, anchor: "level-triggered-and-edge-triggered" },
  { name: "event loop", pattern: /\bevent loop\b/, anchor: "event-loop", from: "## 3. Readiness and the selector" },
  { name: "heap (the timers')", pattern: /\bheap\b/, anchor: "timer-heap" },
  { name: "contract suite", pattern: /\bcontract suite\b/, anchor: "contract-suite" },
  { name: "libuv", pattern: /\blibuv\b/, anchor: "libuv" },
  { name: "macrotask", pattern: /\bmacrotasks?\b/, anchor: "macrotask" },
  { name: "microtask", pattern: /\bmicrotasks?\b/, anchor: "microtask-and-promise-job" },
  { name: "promise job", pattern: /\bpromise jobs?\b/, anchor: "microtask-and-promise-job" },
  { name: "generator", pattern: /\bgenerators?\b/, anchor: "generator", from: "## 6. A generator frame" },
  { name: "frame", pattern: /\bframes?\b/, anchor: "generator-frame" },
  { name: "heap (the memory)", pattern: /\bheap\b/, anchor: "heap-memory", from: "## 6. A generator frame" },
  { name: "done callback", pattern: /\bdone callbacks?\b/, anchor: "done-callback" },
  { name: "joinable queue", pattern: /\bjoinable queue\b/, anchor: "joinable-queue" },
  { name: "thenable", pattern: /\bthenables?\b/, anchor: "thenable" },
  { name: "V8", pattern: /\bV8\b/, anchor: "v8" },
  { name: "bytecode", pattern: /\bbytecode\b/, anchor: "bytecode" },
  { name: "CPython", pattern: /\bCPython\b/, anchor: "cpython" },
  { name: "continuation", pattern: /\bcontinuation\b/, anchor: "continuation" },
];

/** The jargon the stage guides use, which the primer explains but a reader may open a guide first. */
const guideTerms: Term[] = [
  { name: "asyncio", pattern: /\basyncio\b/, anchor: "asyncio" },
  { name: "epoll or kqueue", pattern: /\b(epoll|kqueue)\b/, anchor: "epoll-and-kqueue" },
  { name: "libuv", pattern: /\blibuv\b/, anchor: "libuv" },
  { name: "heap", pattern: /\bheap\b/, anchor: "timer-heap" },
  { name: "CPython", pattern: /\bCPython\b/, anchor: "cpython" },
  { name: "level-triggered", pattern: /\blevel-triggered\b/, anchor: "level-triggered-and-edge-triggered" },
];

const documents: Array<[string, Term[]]> = [
  ["docs/start-here.md", primerTerms],
  ["docs/guide-callbacks.md", guideTerms],
  ["docs/guide-generators.md", guideTerms],
  ["docs/guide-asyncawait.md", guideTerms],
];

/** GitHub's anchors of the glossary's headings. */
function glossaryAnchors(): Set<string> {
  const text = readFileSync(join(root, "docs/glossary.md"), "utf8");
  return new Set([...text.matchAll(/^#{2,3} +(.+)$/gm)].map(([, heading]) => heading.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-")));
}

/** The text with what is not prose (fenced code, images) blanked out, so that positions stay those of the text. */
function prose(text: string): string {
  const blank = (part: string) => part.replace(/[^\n]/g, " ");
  return text
    .replace(/^```[\s\S]*?^```/gm, blank)
    .replace(/^#+ .*$/gm, blank)
    .replace(/!\[[^\]]*\]\([^)]*\)/g, blank)
    .replace(/<[^>\n]+>/g, blank)
    .replace(/"[^"\n]*(\n[^"\n]*)?"/g, blank);
}

/** Whether position `at` of `text` is inside a link to the glossary entry, or inside *italics*. */
function explainedAt(text: string, at: number, anchor: string): "linked" | "defined" | "neither" | "wrong link" {
  for (const link of text.matchAll(/\[([^\]]+)\]\(([^)\s]+)\)/g)) {
    const start = link.index ?? 0;
    if (at < start || at >= start + 1 + link[1].length) continue;
    return link[2] === `glossary.md#${anchor}` ? "linked" : "wrong link";
  }
  const paragraphStart = Math.max(text.lastIndexOf("\n\n", at), 0);
  const before = text.slice(paragraphStart, at).replace(/\*\*/g, "");
  const italicsOpen = (before.match(/(?<![\w*])\*(?!\s)/g) ?? []).length - (before.match(/(?<!\s)\*(?![\w*])/g) ?? []).length;
  return italicsOpen > 0 ? "defined" : "neither";
}

/** For each term, where it is first used from its heading on, and how. */
function firstUses(document: string, terms: Term[]): Array<{ term: string; line: number; how: string }> {
  const text = readFileSync(join(root, document), "utf8");
  const plain = prose(text);
  return terms.map((term) => {
    const from = term.from === undefined ? 0 : text.indexOf(term.from);
    if (from < 0) return { term: term.name, line: 0, how: `heading "${term.from}" not found` };
    const match = term.pattern.exec(plain.slice(from));
    if (match === null) return { term: term.name, line: 0, how: "not used" };
    const at = from + match.index;
    const line = text.slice(0, at).split("\n").length;
    return { term: term.name, line, how: explainedAt(text, at, term.anchor) };
  });
}

describe.each(documents)("%s", (document, terms) => {
  it("explains each term where it is first used, or links it to the glossary there", () => {
    const uses = firstUses(document, terms).filter((use) => use.how !== "not used" || document === "docs/start-here.md");
    const unexplained = uses.filter((use) => use.how !== "linked" && use.how !== "defined");
    expect(unexplained.map((use) => `${use.term} (line ${use.line}): ${use.how}`)).toEqual([]);
  });
});

describe("docs/glossary.md", () => {
  it("has an entry for every term the primer and the guides link to", () => {
    const anchors = glossaryAnchors();
    const wanted = [...new Set([...primerTerms, ...guideTerms].map((term) => term.anchor))];
    expect(wanted.filter((anchor) => !anchors.has(anchor))).toEqual([]);
  });

  it("tells the two meanings of heap apart, each entry pointing at the other", () => {
    const text = readFileSync(join(root, "docs/glossary.md"), "utf8");
    const entry = (heading: string) => text.slice(text.indexOf(`### ${heading}\n`), text.indexOf("\n### ", text.indexOf(`### ${heading}\n`) + 4));
    expect(entry("Heap (memory)")).toContain("](#timer-heap)");
    expect(entry("Timer heap")).toContain("](#heap-memory)");
  });
});

describe("the check itself", () => {
  it("finds an unexplained first use, and accepts a linked or an italic one", () => {
    const text = "Intro.\n\nThe *kernel* owns sockets. See [libuv](glossary.md#libuv). Then epoll waits.\n";
    expect(explainedAt(text, text.indexOf("kernel"), "kernel")).toBe("defined");
    expect(explainedAt(text, text.indexOf("libuv"), "libuv")).toBe("linked");
    expect(explainedAt(text, text.indexOf("libuv"), "kernel")).toBe("wrong link");
    expect(explainedAt(text, text.indexOf("epoll"), "epoll-and-kqueue")).toBe("neither");
  });
});
