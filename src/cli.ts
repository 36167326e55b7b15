#!/usr/bin/env node
/**
 * The `crawl` command: `crawl [options] ROOT...`, or `crawl --demo --compare`.
 * Run `crawl --help` for the options; docs/cli.md has the details.
 *
 * This file only starts {@link main} and exits with its status; the command
 * lives in `src/cli/`, and loads each part (a stage, undici, the Redis
 * client, the demo site, the timeline) only when the command uses it.
 * Built, it is the bundle's first file, dist/bin/cli.cjs, a CommonJS module
 * (hence no top-level `await`) that dist/cli.js runs from V8's code cache,
 * after setting the V8 flags below itself (scripts/bin-loader.mjs).
 *
 * @module
 */
import { setFlagsFromString } from "node:v8";
import { main } from "./cli/run.js";

/** How far the old generation may grow past what survived the last full collection, in percent. */
const HEAP_GROWING_PERCENT = 20;

// undici's HTTP parser (llhttp) is WebAssembly, which V8 would compile again
// with its optimising tier once the crawl starts: about 0.1 s of CPU and 35 MB
// on a one-page crawl, for no gain a 30,000-page crawl could measure
// (docs/benchmarks.md, start-up). The baseline tier (Liftoff) alone is kept;
// set before stage 3, and with it undici, is loaded.
setFlagsFromString("--liftoff-only");

// After each full collection V8 lets the old generation grow to 1.1–4 × what
// survived before it collects again, the factor chosen from how fast the
// program allocated: the faster the crawl, the more dead requests pile up,
// so a 300,000-page crawl peaked anywhere from 206 to 289 MB. A fixed 1.2 ×
// makes the peak follow what the crawl keeps, at any speed
// (docs/benchmarks.md, issue 39: memory). `node --heap-growing-percent=N` wins.
if (!process.execArgv.some(isHeapGrowingFlag)) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);

process.stdout.on("error", stdoutFailed);
main(process.argv.slice(2)).catch(crashed).then(exitWhenFlushed);

/** Whether a node option sets the old generation's growth itself. */
function isHeapGrowingFlag(option: string): boolean {
  return /^--heap[-_]growing[-_]percent/.test(option);
}

/** `crawl … | head`: the reader went away, so there is nobody left to tell. */
function stdoutFailed(error: NodeJS.ErrnoException): void {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
}

/** A bug, not a usage error: say so, with the stack, and fail. */
function crashed(error: unknown): number {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`crawl: unexpected error: ${detail}\n`);
  return 1;
}

/**
 * Exits once stdout and stderr have taken everything written to them. Exiting
 * (rather than waiting for the event loop to empty) means a stray timer or
 * socket can never keep a finished command alive.
 */
function exitWhenFlushed(code: number): void {
  process.stdout.write("", function stdoutFlushed() {
    process.stderr.write("", function stderrFlushed() {
      process.exit(code);
    });
  });
}
