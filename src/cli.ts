#!/usr/bin/env node
/**
 * The `crawl` command: `crawl [options] ROOT...`, or `crawl --demo --compare`.
 * Run `crawl --help` for the options; docs/cli.md has the details.
 *
 * This file only starts {@link main} and exits with its status; the command
 * lives in `src/cli/`, and loads each part (a stage, undici, the Redis
 * client, the demo site, the timeline) only when the command uses it.
 * Built, it is the bundle's first file, dist/bin/cli.cjs, a CommonJS module
 * (hence no top-level `await`) that dist/cli.js runs from V8's code cache
 * (scripts/bin-loader.mjs). The V8 flags the command crawls under are set
 * when its first crawl starts, not here (src/cli/v8-flags.ts: a flag set
 * before Node's own modules load makes V8 refuse their code caches).
 *
 * @module
 */
import { main } from "./cli/run.js";

process.stdout.on("error", stdoutFailed);
main(process.argv.slice(2)).catch(crashed).then(exitWhenFlushed);

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
