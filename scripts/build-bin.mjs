/**
 * Builds the `crawl` command (package.json's `bin`, dist/cli.js) as a bundle:
 * esbuild joins the command's own modules, htmlparser2's Tokenizer with the
 * entity decoder, and undici's `Client` with what it requires into a few
 * files, one per thing the command loads only when it runs it (a stage, the
 * demo site, the timeline, the Redis frontier, `--extract`), plus the chunks
 * they share, in dist/bin/. `npm run build` runs it after `tsc`, whose
 * dist/cli.js it replaces; the library's dist/ (what importers load) is
 * left as tsc wrote it.
 *
 * Why: Node 20's module loader costs about as much per file as it costs per
 * kilobyte, and a one-page crawl loaded 66 files (stage 1) to 174 (stage 3)
 * before it fetched anything (docs/benchmarks.md, "Issue 39: start-up").
 * Three things are done to the bundled code, each checked here so that a
 * new release of a package fails the build rather than the command:
 *
 * - undici: the sources import `Client`, `buildConnector` and `util` from
 *   undici's index, its documented entry point, which also loads its fetch,
 *   WebSocket, cache and mock parts (110 files). The bundle takes each of
 *   those exports from the file that defines it, after checking that it is
 *   the very object the index exports; an import the list below lacks is an
 *   esbuild error naming it.
 * - htmlparser2: src/crawl/htmlparser2-parts.ts loads the Tokenizer from its
 *   file at run time (the package's `exports` map names only its index);
 *   the bundle imports that file, so it is bundled.
 * - entities: htmlparser2's entity decoder unpacks its HTML table (13,494
 *   numbers) from a packed string as it loads, a loop hot enough for V8 to
 *   optimise it meanwhile; the bundle holds the unpacked table instead, as
 *   base64, read with `Buffer.from`.
 *
 * Every other package (tldts, robots-parser, iconv-lite, encoding-sniffer,
 * tough-cookie, css-select, the optional Redis client…) stays outside, loaded
 * from node_modules when first needed, as the library loads it.
 *
 *   node scripts/build-bin.mjs                # writes dist/cli.js and dist/bin/
 *   node scripts/build-bin.mjs --outdir DIR   # writes DIR/cli.js and DIR/bin/ (the bench's copy); DIR
 *                                             # must be inside the project, to find node_modules
 *
 * @module
 */
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
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
  cli: "src/cli.ts",
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
const BUNDLED = /^(?:undici|htmlparser2|entities)(?:\/|$)/;

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

/** The esbuild plugin that does the three things above and keeps every other package external. */
const bundling = {
  name: "crawl-bin",
  setup(builder) {
    builder.onResolve({ filter: /^undici$/ }, () => ({ path: "undici-parts", namespace: "crawl-bin" }));
    builder.onLoad({ filter: /^undici-parts$/, namespace: "crawl-bin" }, () => ({ contents: undiciParts(), loader: "js", resolveDir: ROOT }));
    builder.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:") || BUNDLED.test(args.path) || args.namespace === "crawl-bin") return undefined;
      return { path: args.path, external: true };
    });
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

const OUTDIR = outdir();
rmSync(join(OUTDIR, "bin"), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: ENTRIES,
  outdir: OUTDIR,
  chunkNames: "bin/chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: true,
  sourcesContent: false, // the package ships src/; the maps point into it
  // undici is CommonJS: its require()s of Node's modules need a `require` in the ES module.
  banner: { js: 'import { createRequire as createRequireForBundle } from "node:module";\nconst require = createRequireForBundle(import.meta.url);' },
  plugins: [bundling],
  logLevel: "warning",
});
