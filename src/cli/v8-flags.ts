/**
 * The V8 flags the `crawl` command crawls under, set when its first crawl
 * starts: after the stage (every stage, with `--compare`), and every Node
 * module the command needs, has been loaded, and before the first fetch.
 *
 * Why then and not at the command's first line: V8 keys every code cache to
 * the flags it was made under (a hash of all of them), and Node keeps one for
 * each of its own modules (`node:net`, `node:os`, `node:fs/promises`,
 * `node:perf_hooks`, `node:http` in stage 3…), made under V8's defaults. A
 * flag set before those modules load made V8 refuse every one of their caches:
 * Node then compiled each from its source and serialised a new cache it never
 * used, 15 modules in every command and 30 in stage 3, ~25 M instructions a
 * start (docs/benchmarks.md, "Issue 39: start-up, the flags after the
 * loading"). The command's own bundle has its caches made under the same
 * defaults (scripts/build-bin.mjs), so everything loaded before the crawl
 * starts is compiled from a cache; `crawl --help` sets no flag at all.
 *
 * @remarks Neither flag changes what a JavaScript function compiles to: one
 * is read when WebAssembly is compiled (undici's parser, on the first
 * connection), the other when the old generation's limit is set (after a full
 * collection, which a crawl's start has none of). The build's run that writes
 * the bundle's caches (`CRAWL_BIN_WRITE_CACHE=1`, scripts/bin-loader.mjs) sets
 * neither, so that the caches it writes at its exit carry V8's defaults, the
 * flags every start loads under.
 * @see scripts/bin-loader.mjs
 * @module
 */
import { setFlagsFromString } from "node:v8";

/** How far the old generation may grow past what survived the last full collection, in percent. */
const HEAP_GROWING_PERCENT = 20;

/** Whether {@link setCrawlFlags} has run in this process. */
let flagsSet = false;

/**
 * Sets the command's V8 flags, once a process; a later call does nothing.
 *
 * - `--liftoff-only`: undici's HTTP parser (llhttp) is WebAssembly, which V8
 *   would compile again with its optimising tier once the crawl starts:
 *   about 0.1 s of CPU (0.45 G instructions) and 35 MB on a one-page crawl,
 *   for no gain a 30,000-page crawl could measure (docs/benchmarks.md,
 *   start-up). The baseline tier (Liftoff) alone is kept.
 * - `--heap-growing-percent=20`: after each full collection V8 lets the old
 *   generation grow to 1.1–4 × what survived before it collects again, the
 *   factor chosen from how fast the program allocated: the faster the
 *   crawl, the more dead requests pile up, so a 300,000-page crawl peaked
 *   anywhere from 206 to 289 MB. A fixed 1.2 × makes the peak follow what the
 *   crawl keeps, at any speed (docs/benchmarks.md, issue 39: memory).
 *   `node --heap-growing-percent=N` wins.
 */
export function setCrawlFlags(): void {
  if (flagsSet) return;
  flagsSet = true;
  if (process.env.CRAWL_BIN_WRITE_CACHE === "1") return; // the build's run: see @remarks
  setFlagsFromString("--liftoff-only");
  if (!process.execArgv.some(isHeapGrowingFlag)) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** Whether a node option sets the old generation's growth itself. */
function isHeapGrowingFlag(option: string): boolean {
  return /^--heap[-_]growing[-_]percent/.test(option);
}
