/**
 * Makes the `crawl` command's process keep the memory V8's compiler threads
 * free, rather than hand it back to the system after every compilation and
 * fault it in again for the next one.
 *
 * Why: V8 optimises a crawl's hot functions on background threads (TurboFan),
 * each compilation in a zone of memory it takes from `malloc` and frees when
 * done. glibc's `malloc` returns the top of an arena to the system once more
 * than its trim threshold (128 KiB to start with) lies free there, so the next
 * compilation touches fresh pages, a page fault each. On a virtual machine
 * where a fault costs ~17 µs of CPU, that was 6,000 of the 14,000 faults of a
 * 2,000-page stage-3 crawl, about a tenth of its CPU (docs/benchmarks.md, "Issue 39:
 * the compiler's memory kept").
 *
 * How: glibc adjusts its thresholds as a program runs (mallopt(3), "dynamic
 * mmap threshold"): when a block that was allocated with `mmap` is freed, the
 * mmap threshold rises to that block's size and the trim threshold to twice
 * it, for the whole process. JavaScript has no `mallopt`, but an ArrayBuffer's
 * memory comes from `calloc`, with `mmap` at this size (untouched, so it costs
 * no fault), and is freed when V8 collects the buffer: one buffer of
 * {@link KEPT_BYTES}, dropped at once, raises the trim threshold to twice that
 * at the crawl's first scavenge. On another C library (musl, macOS) it is an
 * unused allocation and nothing more.
 *
 * @remarks Set by the command only, when its first crawl starts (beside
 * src/cli/v8-flags.ts), never by the library: how a process hands memory back
 * is the program's to choose, not a library's it imports.
 * @module
 */

/**
 * The block whose freeing sets glibc's thresholds: its mmap threshold rises
 * to 1 MiB and its trim threshold to 2 MiB. A 2,000-page crawl's peak RSS is
 * ~2.5 MB higher, a 300,000-page one's 2–5 MiB; 1, 2 and 4 MiB took the same
 * faults away.
 */
const KEPT_BYTES = 1024 * 1024;

/** Whether {@link keepFreedMemory} has run in this process. */
let kept = false;

/** Raises glibc's trim threshold for this process (see the module's comment), once; a later call does nothing. */
export function keepFreedMemory(): void {
  if (kept) return;
  kept = true;
  new ArrayBuffer(KEPT_BYTES); // dropped at once: the collector's free() of it is what sets the thresholds
}
