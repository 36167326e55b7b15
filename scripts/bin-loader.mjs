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
// Node's modules taken with `process.getBuiltinModule` (Node 20.16 and
// later), not imported: an ES module's `import` of one builds an ES module
// over its exports, reading each of them, and node:fs's `ReadStream` is a
// getter that loads Node's file streams, which no crawl uses
// (docs/benchmarks.md, "Issue 39: start-up, what the first fetch waits for").
const { closeSync, fstatSync, openSync, readdirSync, readSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { createRequire, Module } = process.getBuiltinModule("node:module");
const { dirname, join } = process.getBuiltinModule("node:path");
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule("node:url");
const { debuglog } = process.getBuiltinModule("node:util");
const { Script } = process.getBuiltinModule("node:vm");

/** This file's URL (dist/cli.js): the bundle's folder is beside it. */
const HERE = import.meta.url;

/** The bundle's folder. */
const BIN = join(dirname(fileURLToPath(HERE)), "bin");

/** The bundle's folder as a `file:` URL, ending in `/`: a file's `import.meta.url` is this and its name (ASCII, nothing to escape). */
const BIN_URL = `${pathToFileURL(BIN).href}/`;

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

/** When the file {@link readWhole} read last was last written, in ms (from the `fstat` that gave its size). */
let readMtimeMs = 0;

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
  const script = compile(filename, name);
  const module = new Module(filename, undefined);
  module.filename = filename;
  requireFromBin.cache[filename] = module;
  try {
    // The parameters scripts/build-bin.mjs wrapped the module in, in its order.
    script.runInThisContext().call(module.exports, module.exports, requireForBundle, module, filename, BIN, BIN_URL + name, importForBundle);
  } catch (error) {
    delete requireFromBin.cache[filename];
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

/** A file's bytes, in {@link scratch}: valid until the next read; `null` if there is no such file and it is `optional`. */
function readWhole(path, optional) {
  let fd;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if (optional && error.code === "ENOENT") return null;
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    readMtimeMs = stats.mtimeMs;
    if (scratch.length < stats.size) scratch = Buffer.allocUnsafeSlow(stats.size);
    let read = 0;
    while (read < stats.size) {
      const count = readSync(fd, scratch, read, stats.size - read, read);
      if (count === 0) break;
      read += count;
    }
    return scratch.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/**
 * Compiles a bundle file, wrapped, with its cache if it has one no older
 * than itself (read after the source: see {@link scratch}); the build's run
 * compiles without, to write them.
 */
function compile(filename, name) {
  const source = readWhole(filename, false).toString("latin1");
  const sourceMtimeMs = readMtimeMs;
  const cache = WRITE_CACHE ? null : readWhole(`${filename}.cache`, true);
  const cachedData = cache !== null && readMtimeMs >= sourceMtimeMs ? cache : undefined;
  const script = new Script(source, { filename, cachedData });
  compiled.set(filename, script);
  if (cachedData === undefined) debug("%s: compiled without a code cache", name);
  else debug("%s: code cache %s", name, script.cachedDataRejected ? "rejected" : "accepted");
  return script;
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
    const script = compiled.get(filename) ?? compile(filename, name);
    writeFileSync(`${filename}.cache`, script.createCachedData());
  }
}
