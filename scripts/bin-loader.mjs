#!/usr/bin/env node
/**
 * The `crawl` command (package.json's `bin`, dist/cli.js): a loader that
 * runs the command's bundle, dist/bin/*.cjs, compiled from V8's code cache.
 * scripts/build-bin.mjs copies this file to dist/cli.js, writes the bundle
 * beside it, and makes the cache (dist/bin/NAME.cjs.cache) by running the
 * command once with `CRAWL_BIN_WRITE_CACHE=1`.
 *
 * Why: Node 20 keeps no code cache for ES modules (`module.enableCompileCache`
 * came in 22.1), so every start parsed and compiled the whole bundle again,
 * and decoded each file through the ES loader's `TextDecoder`: the largest
 * share of what a one-page crawl cost above the yardstick's
 * (docs/benchmarks.md, "Issue 39: start-up, the code cache"). A
 * `vm.Script` given `cachedData` skips both.
 *
 * How: each bundle file is a CommonJS module (esbuild's output, one per
 * file of the ES bundle it was made from) written inside the function
 * CommonJS wraps a module in (plus `__crawl_import_meta_url`, the file's URL,
 * which the bundle reads for `import.meta.url`), all ASCII: read whole, with
 * its cache, into one buffer reused for every file, made a Latin-1 string (a
 * byte a character, nothing to decode and nothing copied to wrap it),
 * compiled with its cache, and the function run once
 * with the module's arguments; its `require("./NAME.cjs")` of another bundle file
 * comes back here, every other `require()` goes to Node's, from dist/bin/.
 * Each file loaded is put in Node's CommonJS cache (`require.cache`) under its
 * path, as `require()` would, so a second `require()` of it, here or
 * anywhere, gets the same module. The bundle's `import()`s (the optional
 * Redis client, a `--script` module) were made calls of
 * `__crawl_import`, {@link importForBundle} here: an `import()` in a
 * `vm.Script` needs `importModuleDynamically`, which in Node 20 wants
 * `--experimental-vm-modules` and is not found at all from code that came
 * from the cache.
 *
 * @remarks V8 takes a cache only if it was made from the same source, by the
 * same V8, under the same V8 flags; otherwise it sets `cachedDataRejected`
 * and compiles the source as if there were no cache, so another Node version
 * or `node --some-v8-flag dist/cli.js` still runs, only without the saving.
 * Nothing here sets a flag: the command sets its own when its crawl starts,
 * after its files are loaded (src/cli/v8-flags.ts), and not at all in the
 * build's run, so the caches, written at that run's exit, carry V8's
 * defaults, the flags every file is compiled under (Node's own modules'
 * caches too, made under the same defaults). A cache older than its
 * file (the file edited after the build) is not used. `NODE_DEBUG=crawl-bin`
 * prints, for each file loaded, whether its cache was accepted.
 * @see scripts/build-bin.mjs
 * @module
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { debuglog } from "node:util";
import { Script } from "node:vm";

/** The bundle's folder. */
const BIN = join(dirname(fileURLToPath(import.meta.url)), "bin");

/** The build's run (scripts/build-bin.mjs): write every bundle file's cache at exit. */
const WRITE_CACHE = process.env.CRAWL_BIN_WRITE_CACHE === "1";

/** `NODE_DEBUG=crawl-bin`: what was loaded, and whether its cache was taken. */
const debug = debuglog("crawl-bin");

/** Node's `require()` as seen from the bundle's folder, and its module cache. */
const requireFromBin = createRequire(join(BIN, "cli.cjs"));

/** The scripts compiled, by file, for the cache writer. */
const compiled = new Map();

/**
 * The one buffer every bundle file and cache is read into, in turn, grown to
 * the largest: each file is read into memory already touched, not into a
 * buffer of its own (of fresh pages, one page fault each, mapped and unmapped
 * again for a file over 128 KiB), and what is kept is copied out of it (the
 * source, as a string) or used before the next read (the cache, which V8
 * reads as it compiles).
 */
let scratch = Buffer.allocUnsafeSlow(0);

if (WRITE_CACHE) process.on("exit", writeCaches);
load("cli.cjs");

/**
 * Runs the bundle file `name` (of dist/bin/) once, and returns its exports.
 * @throws what the module throws as it runs; it is then not cached.
 */
function load(name) {
  const filename = join(BIN, name);
  const known = requireFromBin.cache[filename];
  if (known !== undefined) return known.exports;
  const withCache = !WRITE_CACHE && hasCache(filename);
  const script = compile(filename, withCache);
  if (!withCache) debug("%s: compiled without a code cache", name);
  else debug("%s: code cache %s", name, script.cachedDataRejected ? "rejected" : "accepted");
  const module = new Module(filename, undefined);
  module.filename = filename;
  requireFromBin.cache[filename] = module;
  try {
    // The parameters scripts/build-bin.mjs wrapped the module in, in its order.
    script.runInThisContext().call(module.exports, module.exports, requireForBundle, module, filename, BIN, pathToFileURL(filename).href, importForBundle);
  } catch (error) {
    delete requireFromBin.cache[filename];
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

/** A file's bytes, in {@link scratch}: valid until the next read. */
function readWhole(path) {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(size);
    let read = 0;
    while (read < size) {
      const count = readSync(fd, scratch, read, size - read, read);
      if (count === 0) break;
      read += count;
    }
    return scratch.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** Compiles a bundle file, wrapped, with its cache if there is one (read after the source: see {@link scratch}). */
function compile(filename, withCache) {
  const source = readWhole(filename).toString("latin1");
  const script = new Script(source, { filename, cachedData: withCache ? readWhole(`${filename}.cache`) : undefined });
  compiled.set(filename, script);
  return script;
}

/** Whether a bundle file has a code cache no older than itself. */
function hasCache(filename) {
  const made = statSync(`${filename}.cache`, { throwIfNoEntry: false });
  return made !== undefined && made.mtimeMs >= statSync(filename).mtimeMs;
}

/** The bundle's `require()`: another bundle file from here, anything else from Node. */
function requireForBundle(specifier) {
  return specifier.startsWith("./") ? load(specifier.slice(2)) : requireFromBin(specifier);
}

/** The bundle's `import()`: Node's, from this file (an ES module). */
function importForBundle(specifier) {
  return import(specifier);
}

/**
 * The build's run, at exit: writes each bundle file's cache, from the script
 * as it stands after the run (with the functions it compiled) for a file the
 * run loaded, from a fresh compile for any other.
 */
function writeCaches() {
  for (const name of readdirSync(BIN)) {
    if (!name.endsWith(".cjs")) continue;
    const filename = join(BIN, name);
    const script = compiled.get(filename) ?? compile(filename, false);
    writeFileSync(`${filename}.cache`, script.createCachedData());
  }
}
