/**
 * Run by freed-memory.test.ts (`node --expose-gc`): prints how many page
 * faults it takes to fill a 512 KiB buffer the second time, after one was
 * made, filled and collected; with `kept FILE`, after calling
 * `keepFreedMemory()` from the built src/cli/freed-memory.ts, FILE.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** Two full collections, each given time for V8 to free the buffers it swept. */
async function collect() {
  for (let i = 0; i < 2; i += 1) {
    globalThis.gc();
    await sleep(20);
  }
}

/** Makes a 512 KiB buffer (its memory from calloc) and writes every page of it. */
function fillBuffer() {
  new Uint8Array(512 * 1024).fill(1);
}

if (process.argv[2] === "kept") {
  const { keepFreedMemory } = await import(process.argv[3]);
  keepFreedMemory();
}
await collect();
fillBuffer();
await collect();
const before = process.resourceUsage().minorPageFault;
fillBuffer();
console.log(process.resourceUsage().minorPageFault - before);
