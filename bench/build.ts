/**
 * Compiles the crawlers and the benchmark's child scripts to plain
 * JavaScript, so each measured process runs on bare `node`.
 *
 * Running a child through tsx would put its TypeScript loader (a second
 * V8 isolate on its own thread) into the crawler's memory: about 40 MB of
 * peak RSS that is not the crawler's. So the benchmark transpiles once, with
 * `tsc --noCheck` (type checking is `npm run typecheck`'s job), into
 * `node_modules/.cache/coroutine-crawler-bench/`, and the children import
 * `htmlparser2` and `undici` from the project's own `node_modules`.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The project's root directory. */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Where the compiled JavaScript goes (git-ignored with `node_modules/`), or
 * the folder `BENCH_BUILD_DIR` names, which must be inside the project (the
 * compiled files find their packages in its node_modules/): for git worktrees
 * that share one node_modules/, which would otherwise share one build.
 */
export const BUILD_DIR = resolve(process.env.BENCH_BUILD_DIR ?? join(PROJECT_ROOT, "node_modules", ".cache", "coroutine-crawler-bench"));

/** The compiled path of a child script, e.g. `childScript("crawl-child")`. */
export function childScript(name: string): string {
  return join(BUILD_DIR, "bench", "children", `${name}.js`);
}

/** The compiled site CLI (`src/site/cli.ts`). */
export const SITE_SCRIPT = join(BUILD_DIR, "src", "site", "cli.js");

/**
 * Transpiles `src/` and `bench/children/` into {@link BUILD_DIR}.
 *
 * @throws Error with tsc's output if a child script was not written.
 */
export function buildChildren(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(PROJECT_ROOT, "bench", "tsconfig.build.json"), "--outDir", BUILD_DIR], {
    encoding: "utf8",
  });
  mkdirSync(BUILD_DIR, { recursive: true });
  // The compiled files are ES modules, but node_modules/ hides the project's "type": "module".
  writeFileSync(join(BUILD_DIR, "package.json"), '{ "type": "module" }\n');
  const output = `${result.stdout}${result.stderr}`.trim();
  for (const name of ["crawl-child", "memory-child", "host-group-child", "redis-crawl-child", "frontier-memory-child", "usage-probe"]) {
    if (!existsSync(childScript(name))) throw new Error(`tsc did not write ${childScript(name)}:\n${output}`);
  }
  if (result.status !== 0) process.stderr.write(`bench: tsc reported (the build went on):\n${output}\n`);
}
