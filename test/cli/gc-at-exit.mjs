/**
 * Preloaded with `node --expose-gc --import` by heap-growth.test.ts: runs one
 * full collection as the process exits, after the crawl, so that V8 sets the
 * old generation's next limit once at least, and `--trace-gc-verbose` prints
 * the factor it used ("[HeapController] Limit: … (1.2)").
 */
process.on("exit", function collectOnce() {
  globalThis.gc();
});
