// @ts-check
/**
 * Compares the outputs of a notebook as committed with the outputs of a fresh
 * run of it (scripts/notebook-check.sh makes the run), cell by cell, and exits
 * 1 naming the first cells that differ, so the outputs a reader sees where the
 * notebook is browsed cannot rot.
 *
 * What changes from run to run is masked on both sides first (MASKS below);
 * everything else must be the same, text for text.
 *
 *   node scripts/notebook-compare.mjs COMMITTED.ipynb FRESH.ipynb
 *   node scripts/notebook-compare.mjs --write COMMITTED.ipynb FRESH.ipynb   # COMMITTED takes FRESH's outputs
 */
import { readFileSync, writeFileSync } from "node:fs";

/** What changes from run to run, and what it reads as once masked. */
export const MASKS = [
  // The demo site listens on a port the kernel picks.
  [/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT"],
  // How many iterations a fetch stepped by hand takes depends on when its socket events arrive.
  [/after \d+ iterations/g, "after N iterations"],
  // The chapter's report says how long the crawl took.
  [/in \d+(\.\d+)? secs/g, "in S secs"],
  [/\(\d+(\.\d+)? urls\/sec\/task\)/g, "(R urls/sec/task)"],
  // A Future's id counts the Futures made before it, and how many a crawl makes depends on its reads.
  [/\bid: \d+/g, "id: N"],
];

/** @typedef {{ cell_type: string; source: string | string[]; outputs?: Output[] }} Cell */
/** @typedef {{ output_type: string; name?: string; text?: string | string[]; data?: Record<string, string | string[]>; ename?: string; evalue?: string }} Output */

/** @param {string | string[] | undefined} text */
function joined(text) {
  return Array.isArray(text) ? text.join("") : (text ?? "");
}

/** @param {string} text */
function masked(text) {
  return MASKS.reduce((result, [pattern, replacement]) => result.replace(pattern, /** @type {string} */ (replacement)), text);
}

/** One cell's outputs as one text: each output's kind, then its text, masked. */
function shown(/** @type {Cell} */ cell) {
  return (cell.outputs ?? [])
    .map((output) => {
      if (output.output_type === "stream") return `[${output.name}]\n${masked(joined(output.text))}`;
      if (output.output_type === "error") return `[error]\n${output.ename}: ${masked(output.evalue ?? "")}`;
      return `[${output.output_type}]\n${masked(joined(output.data?.["text/plain"]))}`;
    })
    .join("\n");
}

function main() {
  const args = process.argv.slice(2);
  const write = args[0] === "--write";
  const [committedPath, freshPath] = write ? args.slice(1) : args;
  if (committedPath === undefined || freshPath === undefined) {
    console.error("usage: node scripts/notebook-compare.mjs [--write] COMMITTED.ipynb FRESH.ipynb");
    process.exit(2);
  }
  /** @type {{ cells: Cell[] }} */
  const committed = JSON.parse(readFileSync(committedPath, "utf8"));
  /** @type {{ cells: Cell[] }} */
  const fresh = JSON.parse(readFileSync(freshPath, "utf8"));
  if (committed.cells.length !== fresh.cells.length) {
    console.error(`notebook-compare: ${committedPath} has ${committed.cells.length} cells, the fresh run ${fresh.cells.length}`);
    process.exit(1);
  }
  if (write) {
    writeFileSync(committedPath, readFileSync(freshPath, "utf8"));
    return;
  }
  const differences = [];
  committed.cells.forEach((cell, index) => {
    if (cell.cell_type !== "code") return;
    const before = shown(cell);
    const after = shown(fresh.cells[index]);
    if (before === after) return;
    const source = joined(cell.source).split("\n")[0];
    differences.push(`cell ${index + 1} (${source}):\n--- committed\n${before || "(no output)"}\n--- fresh run\n${after || "(no output)"}`);
  });
  if (differences.length > 0) {
    console.error(`notebook-compare: ${differences.length} cell(s) of ${committedPath} show other outputs than a fresh run (after masking ports and counts):\n\n${differences.join("\n\n")}`);
    console.error("\nIf the change is meant, run `npm run notebook:check -- --update` and commit the notebook.");
    process.exit(1);
  }
  const count = committed.cells.filter((cell) => cell.cell_type === "code").length;
  console.log(`notebook-compare: the ${count} code cells of ${committedPath} show what a fresh run printed`);
}

main();
