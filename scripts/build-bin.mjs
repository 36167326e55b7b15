/**
 * Builds the `crawl` command (package.json's `bin`, dist/cli.js) as a bundle
 * that V8 loads from its code cache: esbuild joins the command's own
 * modules, htmlparser2's Tokenizer with the entity decoder, the DOM packages
 * `--extract` uses, and undici's `Client` with what it requires into a few
 * files, one per thing the command loads only when it runs it (a stage, the
 * demo site, the timeline, the Redis frontier, `--extract`), plus the chunks
 * they share, in dist/bin/; dist/cli.js is scripts/bin-loader.mjs, which
 * runs them. `npm run build` runs this after `tsc`, whose dist/cli.js it
 * replaces; the library's dist/ (what importers load) is left as tsc wrote it.
 *
 * Why: Node 20's module loader costs about as much per file as it costs per
 * kilobyte, and a one-page crawl loaded 66 files (stage 1) to 174 (stage 3)
 * before it fetched anything (docs/benchmarks.md, "Issue 39: start-up");
 * bundled, V8 still parsed and compiled the whole bundle at every start, as
 * Node 20 keeps no code cache for ES modules ("Issue 39: start-up, the code
 * cache"). So the bundle is built in three steps:
 *
 * 1. an ES bundle with code splitting (esbuild splits ES modules only), in
 *    a scratch folder;
 * 2. each of its files made a CommonJS module, dist/bin/NAME.cjs, on its own
 *    and without the whitespace and comments its source needs no longer (the
 *    names stay; the source maps lead back to src/):
 *    its imports of the other files become `require("./NAME.cjs")` (an
 *    `import()` of one a promise of that), `import.meta.url` a variable the
 *    loader gives; the modules of the ES file are listed at its end, one
 *    `// path` line each (test/startup/lazy-imports.test.ts reads them); and
 *    the whole wrapped, as written, in the function a CommonJS module runs
 *    in (so the file is a function expression, which only the loader runs),
 *    its `await import(` calls of the loader's `__crawl_import`;
 * 3. the command run once, `crawl --compare -q ROOT` with
 *    `CRAWL_BIN_WRITE_CACHE=1`, which writes each file's V8 code cache,
 *    dist/bin/NAME.cjs.cache, with the functions the run compiled (should
 *    that run fail, `crawl --version` writes caches of each file's top level).
 *    ROOT is a site of five pages this script serves: every stage crawls it
 *    as a crawl of a site does, and no server's code (the demo site's) is
 *    compiled into the caches, which V8 reads whole at every start.
 *
 * Six things are done to the bundled code, each checked here so that a
 * new release of a package fails the build rather than the command:
 *
 * - undici: the sources import `Client`, `buildConnector` and `util` from
 *   undici's index, its documented entry point, which also loads its fetch,
 *   WebSocket, cache and mock parts (110 files). The bundle takes each of
 *   those exports from the file that defines it, after checking that it is
 *   the very object the index exports; an import the list below lacks is an
 *   esbuild error naming it.
 * - undici's HTTP/2 client (lib/dispatcher/client-h2.js) requires
 *   `node:http2`, and with it `node:tls` and `node:crypto`, as it loads; the
 *   command speaks HTTP/1.1 over `http:` and never asks for h2, so the bundle
 *   loads that file the first time a connection would use it.
 * - undici checks its own invariants with `node:assert`, which loads four
 *   more of Node's modules; the bundle gives undici a stand-in that loads
 *   `node:assert` only when a check fails.
 * - llhttp, undici's HTTP parser: its WebAssembly comes as base64 in a
 *   JavaScript string (lib/llhttp/llhttp-wasm.js and llhttp_simd-wasm.js,
 *   72 KB each, 29 % of stage 3's file), which every start read, kept as the
 *   source's text and, for the one the build's run loaded, in the code cache
 *   too, then decoded. The bundle has stand-ins that read the bytes from
 *   dist/bin/llhttp.wasm and llhttp_simd.wasm, written by the build, when
 *   undici first asks for them (the first connection).
 * - htmlparser2: src/crawl/htmlparser2-parts.ts loads the Tokenizer from its
 *   file at run time (the package's `exports` map names only its index);
 *   the bundle imports that file, so it is bundled.
 * - entities: htmlparser2's entity decoder unpacks its HTML table (13,494
 *   numbers) from a packed string as it loads, a loop hot enough for V8 to
 *   optimise it meanwhile; the bundle holds the unpacked table instead, as
 *   base64, read with `Buffer.from`.
 *
 * Every other package (tldts, robots-parser, iconv-lite, encoding-sniffer,
 * tough-cookie, the optional Redis client…) stays outside, loaded from
 * node_modules when first needed, as the library loads it; css-select and
 * htmlparser2's DOM packages, which `--extract` imports, are bundled (ES
 * modules only, which a CommonJS bundle could load only through Node 20's
 * experimental `require()` of ES modules).
 *
 *   node scripts/build-bin.mjs                # writes dist/cli.js and dist/bin/
 *   node scripts/build-bin.mjs --outdir DIR   # writes DIR/cli.js, DIR/bin/ and DIR/package.json (the bench's
 *                                             # copy); DIR must be inside the project, to find node_modules
 *
 * @module
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const requireHere = createRequire(join(ROOT, "package.json"));

/**
 * The bundle's entry points, by output path under dist/: the command, and
 * each module it imports only when a command needs it (named, so that a
 * module log shows which one loaded).
 */
const ENTRIES = {
  "bin/cli": "src/cli.ts",
  "bin/callbacks": "src/callbacks/index.ts",
  "bin/generators": "src/generators/index.ts",
  "bin/asyncawait": "src/asyncawait/index.ts",
  "bin/site": "src/site/index.ts",
  "bin/timeline": "src/observe/timeline/index.ts",
  "bin/timeline-page": "src/observe/timeline/timeline-page.ts",
  "bin/redis-frontier": "src/distributed/redis-frontier.ts",
  "bin/extract": "src/crawl/extract.ts",
};

/** Packages bundled into the command; every other bare import stays external. */
const BUNDLED = /^(?:undici|htmlparser2|entities|css-select|css-what|nth-check|boolbase|domhandler|domutils|dom-serializer|domelementtype)(?:\/|$)/;

/** The command's arguments for the run that makes the code cache (step 3), but for the root: every stage, compared. */
const CACHE_RUN = ["--compare", "-q"];

/** The pages of the site the cache run crawls. */
const CACHE_RUN_PATHS = ["/", "/p/1", "/p/2", "/p/3", "/p/4"];

/**
 * The site the cache run crawls, served by this script on a free loopback
 * port: five pages of HTML, each linking to the other four, and nothing
 * else (`/robots.txt` is not found); `null` when it cannot listen.
 */
async function cacheRunSite() {
  const server = createServer(function serve(request, response) {
    if (!CACHE_RUN_PATHS.includes(request.url ?? "")) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const links = CACHE_RUN_PATHS.filter((path) => path !== request.url).map((path) => `<li><a href="${path}">${path}</a></li>`);
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html>\n<title>${request.url}</title>\n<ul>\n${links.join("\n")}\n</ul>\n`);
  });
  const port = await new Promise(function listen(resolve) {
    server.once("error", () => resolve(null));
    server.listen(0, "127.0.0.1", () => resolve(server.address().port));
  });
  if (port === null) return null;
  return {
    url: `http://127.0.0.1:${port}/`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Runs the command just built with `args`; resolves to how it ended and what it wrote to stderr. */
function runCommand(args, childEnv) {
  return new Promise(function run(resolve) {
    const child = spawn(process.execPath, [join(OUTDIR, "cli.js"), ...args], { env: childEnv, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    child.once("error", (error) => resolve({ status: null, signal: null, stderr: String(error) }));
    child.once("close", (status, signal) => resolve({ status, signal, stderr }));
  });
}

/** undici's exports the sources may import, each from the file that defines it (under undici/). */
const UNDICI_PARTS = {
  Client: { file: "lib/dispatcher/client.js" },
  buildConnector: { file: "lib/core/connect.js" },
  errors: { file: "lib/core/errors.js" },
  util: { file: "lib/core/util.js", pick: ["parseHeaders", "headerNameToString"] },
};

/** undici's index replaced by its parts, after checking each is what the index exports. */
function undiciParts() {
  const index = requireHere("undici");
  const folder = dirname(requireHere.resolve("undici"));
  const lines = [];
  for (const [name, { file, pick }] of Object.entries(UNDICI_PARTS)) {
    const path = join(folder, file);
    const part = requireHere(path);
    const exported = index[name];
    const same = pick === undefined ? part === exported : pick.every((key) => part[key] === exported?.[key]);
    if (!same) throw new Error(`build-bin: undici's ${name} is not ${file}'s export any more (undici ${requireHere("undici/package.json").version}): update UNDICI_PARTS`);
    const source = JSON.stringify(path);
    if (pick === undefined) lines.push(`import ${name}Part from ${source};`, `export { ${name}Part as ${name} };`);
    else lines.push(`import ${name}Part from ${source};`, `export const ${name} = { ${pick.map((key) => `${key}: ${name}Part.${key}`).join(", ")} };`);
  }
  return lines.join("\n");
}

/** entities' HTML decode table, unpacked, as a module that reads it from base64 (byte order checked where it runs). */
function htmlDecodeTable() {
  const { htmlDecodeTree } = requireHere("entities/decode");
  if (!(htmlDecodeTree instanceof Uint16Array)) throw new Error("build-bin: entities' htmlDecodeTree is not a Uint16Array any more");
  const bytes = Buffer.from(htmlDecodeTree.buffer, htmlDecodeTree.byteOffset, htmlDecodeTree.byteLength);
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const base64 = (littleEndian ? bytes : Buffer.from(bytes).swap16()).toString("base64");
  return [
    "// entities' htmlDecodeTree, unpacked when the command was built (scripts/build-bin.mjs): little-endian bytes.",
    `const bytes = Buffer.from(${JSON.stringify(base64)}, "base64");`,
    "if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) bytes.swap16();",
    "export const htmlDecodeTree = new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));",
  ].join("\n");
}

/** src/crawl/htmlparser2-parts.ts with the Tokenizer imported from its file, so that it is bundled. */
function htmlparser2Parts(source) {
  const runtimeLoad = /^export const Tokenizer = .*requireFile\(join\(folder\(\), "Tokenizer\.js"\)\).*$/m;
  if (!runtimeLoad.test(source)) throw new Error("build-bin: src/crawl/htmlparser2-parts.ts no longer loads the Tokenizer as this script expects");
  const file = JSON.stringify(join(dirname(requireHere.resolve("htmlparser2")), "Tokenizer.js"));
  return source.replace(runtimeLoad, `import TokenizerClass from ${file};\nexport const Tokenizer = TokenizerClass;`);
}

/** The suffix by which the stand-in requires the file it stands for (esbuild resolves the path without it, and keeps the two apart). */
const EAGER = "?eager";

/** undici's HTTP/2 client, and how undici's Client calls it (the one use the lazy stand-in serves). */
const CLIENT_H2 = { file: "lib/dispatcher/client-h2.js", requiredBy: "lib/dispatcher/client.js", require: "const connectH2 = require('./client-h2.js')", call: /connectH2\(client, socket\)/g };

/**
 * A stand-in for undici's client-h2.js that requires it on the first call:
 * checked to be a function of (client, socket) that client.js requires once
 * and calls in one place, with those two arguments.
 */
function lazyClientH2() {
  const folder = dirname(requireHere.resolve("undici"));
  const real = join(folder, CLIENT_H2.file);
  const client = readFileSync(join(folder, CLIENT_H2.requiredBy), "utf8");
  const connectH2 = requireHere(real);
  const ok = typeof connectH2 === "function" && connectH2.length === 2 && client.split(CLIENT_H2.require).length === 2 && client.match(CLIENT_H2.call)?.length === 1 && client.split("connectH2").length === 3;
  if (!ok) throw new Error(`build-bin: undici's ${CLIENT_H2.requiredBy} no longer uses ${CLIENT_H2.file} as this script expects (undici ${requireHere("undici/package.json").version}): update CLIENT_H2`);
  return [
    "// undici's HTTP/2 client, required when a connection first negotiates h2 (scripts/build-bin.mjs):",
    "// node:http2, node:tls and node:crypto are not loaded by a crawl of http: URLs.",
    "let connect;",
    "module.exports = function connectH2(client, socket) {",
    `  connect ??= require(${JSON.stringify(real + EAGER)});`,
    "  return connect(client, socket);",
    "};",
  ].join("\n");
}

/** How each file of undici requires `node:assert`. */
const UNDICI_ASSERT = "const assert = require('node:assert')";

/**
 * Checks that undici's `file` requires `node:assert` as {@link UNDICI_ASSERT}
 * and uses it only by calling it, `assert(value[, message])`, all that
 * {@link lazyAssert} serves: a build of a release that uses more of it fails.
 */
function checkUndiciAssert(file) {
  const text = readFileSync(file, "utf8");
  const rest = text.split(UNDICI_ASSERT);
  const other = /(?<![\w$.'"])assert\b(?!\s*\()/.exec(rest.join(""));
  if (rest.length !== 2 || other !== null) throw new Error(`build-bin: undici's ${relative(ROOT, file)} uses node:assert otherwise than \`assert(value, message)\` (undici ${requireHere("undici/package.json").version}): update lazyAssert`);
}

/**
 * A stand-in for `node:assert` in undici's files: undici calls it to check
 * its own invariants, and a crawl whose invariants hold never needs
 * `node:assert` itself, five of Node's modules with those it loads (some
 * 5 M instructions at every start of stage 3). The first assertion
 * that fails loads it and fails as it would have (its message, if undici gave
 * none, is made from this call rather than undici's).
 */
function lazyAssert() {
  return [
    "// node:assert for undici's own checks, loaded when one fails (scripts/build-bin.mjs).",
    "module.exports = function assert(value, message) {",
    '  if (!value) require("node:assert")(value, message);',
    "};",
  ].join("\n");
}

/** llhttp's two builds of WebAssembly in undici (lib/llhttp/), each the bytes its module exports, and the file of dist/bin/ they go to. */
const LLHTTP_WASM = { "llhttp-wasm.js": "llhttp.wasm", "llhttp_simd-wasm.js": "llhttp_simd.wasm" };

/** llhttp's WebAssembly, by the file of dist/bin/ it is written to: checked to be WebAssembly (its magic number). */
function llhttpWasm() {
  const folder = join(dirname(requireHere.resolve("undici")), "lib", "llhttp");
  const files = new Map();
  for (const [module, file] of Object.entries(LLHTTP_WASM)) {
    const bytes = requireHere(join(folder, module));
    if (!Buffer.isBuffer(bytes) || bytes.subarray(0, 4).toString("latin1") !== "\0asm") throw new Error(`build-bin: undici's lib/llhttp/${module} no longer exports WebAssembly's bytes (undici ${requireHere("undici/package.json").version}): update LLHTTP_WASM`);
    files.set(file, bytes);
  }
  return files;
}

/** A stand-in for one of undici's lib/llhttp/*-wasm.js: exports the bytes of its file of dist/bin/, read when first asked for, as the original decodes them. */
function llhttpWasmModule(module) {
  return [
    "// llhttp's WebAssembly, read from the file the build wrote beside the bundle (scripts/build-bin.mjs)",
    "// rather than decoded from base64 kept in the bundle's source.",
    'const { readFileSync } = require("node:fs");',
    'const { join } = require("node:path");',
    "let bytes;",
    'Object.defineProperty(module, "exports", {',
    "  get: function wasmBytes() {",
    `    bytes ??= readFileSync(join(__dirname, ${JSON.stringify(LLHTTP_WASM[module])}));`,
    "    return bytes;",
    "  },",
    "});",
  ].join("\n");
}

/** The esbuild plugin that does the six things above and keeps every other package external. */
const bundling = {
  name: "crawl-bin",
  setup(builder) {
    builder.onResolve({ filter: /^undici$/ }, () => ({ path: "undici-parts", namespace: "crawl-bin" }));
    builder.onLoad({ filter: /^undici-parts$/, namespace: "crawl-bin" }, () => ({ contents: undiciParts(), loader: "js", resolveDir: ROOT }));
    builder.onResolve({ filter: /^node:assert$/ }, (args) => {
      if (!/[/\\]node_modules[/\\]undici[/\\]/.test(args.importer)) return undefined;
      checkUndiciAssert(args.importer);
      return { path: "lazy-assert", namespace: "crawl-bin" };
    });
    builder.onLoad({ filter: /^lazy-assert$/, namespace: "crawl-bin" }, () => ({ contents: lazyAssert(), loader: "js" }));
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:") || BUNDLED.test(args.path) || args.namespace === "crawl-bin") return undefined;
      return { path: args.path, external: true };
    });
    builder.onLoad({ filter: /[/\\]undici[/\\]lib[/\\]dispatcher[/\\]client-h2\.js$/ }, (args) => (args.suffix === EAGER ? undefined : { contents: lazyClientH2(), loader: "js", resolveDir: dirname(args.path) }));
    builder.onLoad({ filter: /[/\\]undici[/\\]lib[/\\]llhttp[/\\]llhttp(?:_simd)?-wasm\.js$/ }, (args) => ({ contents: llhttpWasmModule(basename(args.path)), loader: "js" }));
    builder.onLoad({ filter: /[/\\]entities[/\\]dist[/\\]generated[/\\]decode-data-html\.js$/ }, () => ({ contents: htmlDecodeTable(), loader: "js" }));
    builder.onLoad({ filter: /[/\\]src[/\\]crawl[/\\]htmlparser2-parts\.ts$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      return { contents: htmlparser2Parts(await readFile(args.path, "utf8")), loader: "ts" };
    });
  },
};

/** Where to write: dist/, or the folder after `--outdir`. */
function outdir() {
  const at = process.argv.indexOf("--outdir");
  if (at === -1) return join(ROOT, "dist");
  const dir = process.argv[at + 1];
  if (dir === undefined) throw new Error("build-bin: --outdir needs a folder");
  return dir;
}

/**
 * Step 2's esbuild plugin: every import but the entry stays outside; an
 * import of another file of the ES bundle becomes a `require()` of its
 * CommonJS file, an `import()` of one a module that requires it (which
 * esbuild turns into a promise of its exports).
 */
const filesApart = {
  name: "crawl-bin-files",
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === "entry-point") return undefined;
      if (args.namespace === "crawl-bin-import" || !args.path.startsWith("./")) return { path: args.path, external: true };
      const file = args.path.replace(/\.js$/, ".cjs");
      return args.kind === "dynamic-import" ? { path: file, namespace: "crawl-bin-import" } : { path: file, external: true };
    });
    builder.onLoad({ filter: /.*/, namespace: "crawl-bin-import" }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: "js" }));
  },
};

/** A file's text with the modules it holds listed before its source map comment, a `// path` line each. */
function withModuleList(text, modules) {
  const list = ["", "// The modules of this file (scripts/build-bin.mjs):", ...modules.filter(isModulePath).map((path) => `// ${path}`)].join("\n");
  const at = text.lastIndexOf("\n//# sourceMappingURL=");
  return at === -1 ? text + list + "\n" : text.slice(0, at) + list + text.slice(at);
}

/**
 * A CommonJS module's text as the loader compiles it: inside the function
 * CommonJS wraps a module in, whose parameters scripts/bin-loader.mjs passes
 * in this order, on a line of its own (so the source map gains one line);
 * every character ASCII (esbuild escapes them in code, not in the comments it
 * keeps), so that the loader reads it as Latin-1, a string of a byte a
 * character. The command's `#!` line would be a syntax error inside the
 * function: a comment keeps its line and columns.
 */
function wrapped(text) {
  const ascii = text.replace(/^#!/, "//").replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `(function (exports, require, module, __filename, __dirname, __crawl_import_meta_url, __crawl_import) {\n${withoutImport(ascii)}\n})`;
}

/**
 * A file's text with each `await import(` made `await __crawl_import(`, the
 * loader's `import()` (see scripts/bin-loader.mjs: an `import()` in a
 * `vm.Script` fails in Node 20). Every `import()` of the sources is awaited
 * where it is written; one that is not, in code rather than a comment, fails
 * the build here.
 */
function withoutImport(text) {
  const replaced = text.replace(/\bawait import\(/g, "await __crawl_import(");
  const left = replaced.split("\n").filter((line) => /(?<![\w$.])import\(/.test(line) && !/^\s*(?:\*|\/\/|\/\*)/.test(line));
  if (left.length > 0) throw new Error(`build-bin: an import() the loader cannot serve (not right after \`await\`): ${left[0].trim()}`);
  return replaced;
}

/** A source map of a file made by {@link wrapped}: its lines one further down. */
function wrappedMap(text) {
  const map = JSON.parse(text);
  map.mappings = `;${map.mappings}`;
  return JSON.stringify(map);
}

/** Whether an esbuild input is a file (not one of the plugin's made-up modules). */
function isModulePath(path) {
  return !path.includes(":") && /\.[cm]?[jt]s$/.test(path);
}

const OUTDIR = resolve(outdir());
const ESM_DIR = join(OUTDIR, ".bin-esm");
rmSync(join(OUTDIR, "bin"), { recursive: true, force: true });
rmSync(ESM_DIR, { recursive: true, force: true });
rmSync(join(OUTDIR, "cli.js.map"), { force: true }); // tsc's, or an older build's: the loader has none

// Step 1: the ES bundle, split, in the scratch folder.
const esm = await build({
  absWorkingDir: ROOT,
  entryPoints: ENTRIES,
  outdir: ESM_DIR,
  chunkNames: "bin/chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  sourcesContent: false, // the package ships src/; the maps point into it
  metafile: true,
  plugins: [bundling],
  logLevel: "warning",
});

// Step 2: each of its files a CommonJS module of dist/bin/, with its modules listed.
const modulesOf = new Map();
const entryPoints = {};
for (const [output, { inputs }] of Object.entries(esm.metafile.outputs)) {
  if (!output.endsWith(".js")) continue;
  const path = resolve(ROOT, output);
  const name = relative(ESM_DIR, path).replace(/\.js$/, "");
  entryPoints[name] = path;
  modulesOf.set(`${name}.cjs`, Object.keys(inputs));
}
const cjs = await build({
  absWorkingDir: ROOT,
  entryPoints,
  outdir: OUTDIR,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  define: { "import.meta.url": "__crawl_import_meta_url" }, // given by scripts/bin-loader.mjs
  // Whitespace and comments out (names kept): stage 3's file 349 -> 230 KB, cli.cjs 112 -> 89 KB, each
  // read and kept as source text at every start; a one-page crawl takes 130 fewer page faults in stage 3
  // (about 1 % of its CPU), 17 in stages 1 and 2 (docs/benchmarks.md, "Issue 39: start-up, whitespace
  // and node:assert").
  minifyWhitespace: true,
  sourcemap: true, // through step 1's maps, into src/
  sourcesContent: false,
  plugins: [filesApart],
  write: false,
  logLevel: "warning",
});
mkdirSync(join(OUTDIR, "bin"), { recursive: true });
for (const file of cjs.outputFiles) {
  const name = relative(OUTDIR, file.path);
  const modules = modulesOf.get(name);
  if (modules === undefined) writeFileSync(file.path, name.endsWith(".map") ? wrappedMap(file.text) : file.contents);
  else writeFileSync(file.path, wrapped(withModuleList(file.text, modules)));
}
rmSync(ESM_DIR, { recursive: true, force: true });
for (const [file, bytes] of llhttpWasm()) writeFileSync(join(OUTDIR, "bin", file), bytes);
copyFileSync(join(ROOT, "scripts", "bin-loader.mjs"), join(OUTDIR, "cli.js"));
// A folder of --outdir's gets the package.json an installed package has above dist/: without one
// (node_modules/ hides the project's, and the bench builds under node_modules/.cache), Node has no
// package scope to say that cli.js is an ES module, compiles it as CommonJS first, fails, and then
// detects an ES module: ~9 M instructions at every start that the command as installed never pays.
if (OUTDIR !== join(ROOT, "dist")) writeFileSync(join(OUTDIR, "package.json"), `${JSON.stringify({ type: "module" })}\n`);

// Step 3: the code cache, from a run of the command (no NODE_OPTIONS: the caches are made under V8's default flags, src/cli/v8-flags.ts).
// Should that crawl fail here (no loopback, say), `--version` still makes every file's cache of its top level.
const { NODE_OPTIONS: _ignored, ...env } = process.env;
const site = await cacheRunSite();
try {
  const crawled = site === null ? { status: null, signal: null, stderr: "no loopback port to serve its site on" } : await runCommand([...CACHE_RUN, site.url], { ...env, CRAWL_BIN_WRITE_CACHE: "1" });
  if (crawled.status !== 0) {
    console.warn(`build-bin: crawl ${CACHE_RUN.join(" ")} failed (${crawled.status ?? crawled.signal}) as it made the code cache: ${crawled.stderr}`);
    console.warn("build-bin: making the cache with crawl --version instead (each file's top level only)");
    const version = await runCommand(["--version"], { ...env, CRAWL_BIN_WRITE_CACHE: "1" });
    if (version.status !== 0) throw new Error(`build-bin: crawl --version failed (${version.status ?? version.signal}) as it made the code cache: ${version.stderr}`);
  }
} finally {
  site?.close();
}
const uncached = readdirSync(join(OUTDIR, "bin")).filter((name) => name.endsWith(".cjs") && !existsSync(join(OUTDIR, "bin", `${name}.cache`)));
if (uncached.length > 0) throw new Error(`build-bin: no code cache was made for ${uncached.join(", ")}`);
