/**
 * The `crawl` command fixes how far V8 lets the old generation grow past what
 * survived a full collection (issue 39): 1.2 ×, set by the command itself
 * (`--heap-growing-percent=20`), so that a big crawl's peak RSS follows what
 * it keeps and not how fast the machine ran it. Counted, not timed: the
 * limits V8 set after each full collection, as `--trace-gc-verbose` prints
 * them, and the factor of each; a full collection is forced as the process
 * exits (gc-at-exit.mjs), so there is always one.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/index.js";
import { CLI_PATH, requireBuiltCli } from "./cli-process.js";

const PRELOAD = fileURLToPath(new URL("gc-at-exit.mjs", import.meta.url));

let site: FixtureSite;

beforeAll(async () => {
  requireBuiltCli();
  site = await FixtureSite.start();
  site.addPage("/", ["/a", "/b"]).addPage("/a", ["/"]).addPage("/b", []);
});

afterAll(async () => {
  await site?.close();
});

/** Runs the built command with `nodeOptions` before it; resolves with the factor of each old-generation limit V8 set. */
function limitFactors(nodeOptions: readonly string[]): Promise<number[]> {
  const argv = ["--expose-gc", "--trace-gc-verbose", "--import", PRELOAD, ...nodeOptions, CLI_PATH, "-q", "--jsonl", "-", `${site.url}/`];
  return new Promise(function run(resolve, reject) {
    execFile(process.execPath, argv, { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, function exited(error, stdout) {
      if (error !== null) {
        reject(error);
        return;
      }
      const factors = [...stdout.matchAll(/\[HeapController\] Limit: .* \((\d+(?:\.\d+)?)\)/g)].map(function factorOf(match) {
        return Number(match[1]);
      });
      resolve(factors);
    });
  });
}

describe("the crawl command's old generation", () => {
  it("grows by 1.2 × what survived each full collection", async () => {
    const factors = await limitFactors([]);
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.filter((factor) => factor !== 1.2)).toEqual([]);
  });

  it("grows as a --heap-growing-percent given to node says", async () => {
    const factors = await limitFactors(["--heap-growing-percent=50"]);
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.filter((factor) => factor !== 1.5)).toEqual([]);
  });
});
