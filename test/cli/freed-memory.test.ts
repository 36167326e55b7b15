/**
 * The `crawl` command keeps the memory its process frees instead of handing
 * it back to the system at once (src/cli/freed-memory.ts), by raising glibc's
 * trim threshold. Counted, not timed: the page faults of filling a 512 KiB
 * buffer a second time, in a fresh process (freed-memory-child.mjs). Where
 * glibc hands the first buffer back (it was allocated with `mmap`), the second
 * is fresh memory, a fault for each of its 128 pages; once the thresholds are
 * raised, both come from the heap glibc keeps, and the second is filled in
 * pages already there.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { requireBuiltCli } from "./cli-process.js";

const CHILD = fileURLToPath(new URL("freed-memory-child.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../../dist/cli/freed-memory.js", import.meta.url));

/** The C library's thresholds this is about are glibc's; another keeps or returns memory its own way. */
const GLIBC = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime !== undefined;

beforeAll(() => {
  requireBuiltCli();
});

/** The page faults of the child's second 512 KiB buffer, with `keepFreedMemory()` called first or not. */
function secondFillFaults(kept: boolean): Promise<number> {
  const argv = ["--expose-gc", CHILD, ...(kept ? ["kept", BUILT] : [])];
  return new Promise(function run(resolve, reject) {
    execFile(process.execPath, argv, { timeout: 30_000 }, function exited(error, stdout) {
      if (error !== null) reject(error);
      else resolve(Number(stdout.trim()));
    });
  });
}

describe.skipIf(!GLIBC)("the crawl command's freed memory (glibc)", () => {
  it("is handed back at once by default: a 512 KiB buffer made again faults its pages in again", async () => {
    expect(await secondFillFaults(false)).toBeGreaterThanOrEqual(100);
  });

  it("is kept once keepFreedMemory() ran: the same buffer made again takes almost no fault", async () => {
    expect(await secondFillFaults(true)).toBeLessThan(16);
  });
});
