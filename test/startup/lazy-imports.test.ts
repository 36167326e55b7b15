/**
 * The built `crawl` command loads only what the command it runs needs
 * (docs/benchmarks.md, start-up): each run is a child process preloaded
 * with module-log.mjs, which lists every file it loaded, ES and CommonJS.
 * The command is a bundle (scripts/build-bin.mjs): dist/cli.js loads the
 * files of dist/bin/, each a CommonJS module that it puts in Node's CommonJS
 * cache as `require()` would; a file holds several modules, listed at its end
 * one `// path` line each, so the modules of every bundle file loaded are read
 * from those lines (all of a loaded file's modules count as loaded, evaluated
 * or not).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/index.js";
import { CLI_PATH, requireBuiltCli } from "../cli/cli-process.js";

const PRELOAD = fileURLToPath(new URL("module-log.mjs", import.meta.url));

/** What a module's path shows it to be part of (a bundled module's path is its source's, as esbuild names it). */
const PARTS = {
  undici: /(?:^|\/)node_modules\/undici\/(?!lib\/web\/)/,
  "undici's index": /(?:^|\/)node_modules\/undici\/index\.js$/,
  "undici's WebSocket": /(?:^|\/)node_modules\/undici\/lib\/web\/(?:websocket|eventsource|cache|cookies)\//,
  redis: /(?:^|\/)node_modules\/(?:redis|@redis\/[^/]+)\//,
  "encoding-sniffer": /(?:^|\/)node_modules\/encoding-sniffer\//,
  "iconv-lite": /(?:^|\/)node_modules\/iconv-lite\//,
  htmlparser2: /(?:^|\/)node_modules\/htmlparser2\//,
  "htmlparser2's DOM": /(?:^|\/)node_modules\/(?:domhandler|domutils|dom-serializer)\//,
  "robots-parser": /(?:^|\/)node_modules\/robots-parser\//,
  tldts: /(?:^|\/)node_modules\/tldts\//,
  callbacks: /(?:^|\/)src\/callbacks\//,
  generators: /(?:^|\/)src\/generators\//,
  asyncawait: /(?:^|\/)src\/asyncawait\//,
  timeline: /(?:^|\/)src\/observe\/timeline\//,
  site: /(?:^|\/)src\/site\//,
  distributed: /(?:^|\/)src\/distributed\//,
} as const;
type Part = keyof typeof PARTS;

/** The folder of the bundle's files: dist/cli.js and dist/bin/. */
const BUNDLE = fileURLToPath(new URL("../../dist/", import.meta.url));

/** Whether a loaded file is one of the bundle's (whose modules are read from its `// path` lines). */
function isBundleFile(path: string): boolean {
  return path === CLI_PATH || path.startsWith(join(BUNDLE, "bin") + "/");
}

let site: FixtureSite;
let folder: string;

beforeAll(async () => {
  requireBuiltCli();
  folder = await mkdtemp(join(tmpdir(), "lazy-imports-"));
  site = await FixtureSite.start();
  site.addPage("/", ["/a", "/b"]).addPage("/a", ["/"]).addPage("/b", []);
  site.addPage("/unnamed", "<p>No charset in the header: the body is prescanned</p>", "text/html");
  site.addPage("/outside", '<a href="http://elsewhere.example/">a host no root has</a>', "text/html; charset=utf-8");
  site.addPage("/latin-1", Buffer.from("<p>caf\xe9</p>", "latin1"), "text/html; charset=windows-1252");
});

afterAll(async () => {
  await site?.close();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

let runs = 0;

/** What one run of the command loaded: the files, and the modules in them (a bundle file's modules named by their source paths). */
interface Loaded {
  code: number;
  parts: Set<Part>;
  /** Files read from disk: the bundle's and node_modules' (Node's own modules not counted). */
  files: string[];
  /** Modules: the bundle's by source path, and every other file loaded. */
  modules: string[];
  /** Node's own modules loaded, public and internal: `http2`, `internal/http2/core`. */
  builtins: Set<string>;
}

/** Runs `node dist/cli.js ...args` with the module log, and resolves with what it loaded. */
async function partsLoaded(args: readonly string[]): Promise<Loaded> {
  runs += 1;
  const log = join(folder, `modules-${runs}.log`);
  const code = await new Promise<number>(function run(resolve, reject) {
    const env = { ...process.env, MODULE_LOG: log };
    execFile(process.execPath, ["--import", PRELOAD, CLI_PATH, ...args], { env, timeout: 30_000 }, function exited(error) {
      if (error !== null && typeof error.code !== "number") reject(error);
      else resolve(error === null ? 0 : Number(error.code));
    });
  });
  const entries = new Set((await readFile(log, "utf8")).split("\n").filter(Boolean));
  const files = [...entries].filter(isFile).map(pathOf).filter(notThePreload);
  const modules: string[] = [];
  for (const file of files) {
    if (!isBundleFile(file)) modules.push(file);
    else modules.push(...bundledModules(await readFile(file, "utf8")));
  }
  const parts = new Set<Part>();
  for (const module of modules) {
    for (const [part, marker] of Object.entries(PARTS) as [Part, RegExp][]) if (marker.test(module)) parts.add(part);
  }
  const builtins = new Set([...entries].filter((entry) => entry.startsWith("builtin:")).map((entry) => entry.slice("builtin:".length)));
  return { code, parts, files, modules, builtins };
}

/** The modules esbuild put in a bundle file: its `// path` lines, e.g. `// src/crawl/core.ts`. */
function bundledModules(text: string): string[] {
  return [...text.matchAll(/^\/\/ ((?:\.\.\/)*[\w@.-]+\/\S+\.[cm]?[jt]s)$/gm)].map(function path(match) {
    return match[1] as string;
  });
}

/** Whether a log entry is a file (not one of Node's own modules). */
function isFile(entry: string): boolean {
  return entry.startsWith("file:") || entry.startsWith("/");
}

/** Whether a file is not the module log itself. */
function notThePreload(path: string): boolean {
  return !path.includes("/test/startup/module-log");
}

/** A module's path, from a file: URL (an ES module) or a path (the CommonJS cache). */
function pathOf(entry: string): string {
  return entry.startsWith("file:") ? fileURLToPath(entry) : entry;
}

describe("crawl --help and --version", () => {
  it("load no stage, no package of node_modules, no site and no timeline", async () => {
    for (const flag of ["--help", "--version"]) {
      const { code, parts, modules } = await partsLoaded([flag]);
      expect(code).toBe(0);
      expect([...parts]).toEqual([]);
      expect(modules.length).toBeGreaterThan(5); // the log works: the command's own modules are in it
    }
  });
});

describe("a crawl of UTF-8 pages that name their charset", () => {
  it.each(["callbacks", "generators"] as const)("in stage %s loads its stage and htmlparser2, and no undici, tldts, Redis client, timeline, site, encoding-sniffer or iconv-lite", async (stage) => {
    const { code, parts } = await partsLoaded(["--stage", stage, "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect([...parts].sort()).toEqual([stage, "htmlparser2"].sort());
  });

  it("in stage 3 loads undici's Client without its index, its WebSocket, EventSource or cache, and no tldts, Redis client, timeline, site, encoding-sniffer or iconv-lite", async () => {
    const { code, parts, modules } = await partsLoaded(["--stage", "asyncawait", "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    // The bundle takes Client, buildConnector and util from the files the index takes them from (scripts/build-bin.mjs).
    expect([...parts].sort()).toEqual(["asyncawait", "htmlparser2", "undici"]);
    expect(modules.filter((module) => module.includes("node_modules/undici/")).length).toBeLessThan(40); // the index brings 110
  });

  it("in stage 3 loads node:http, and not node:http2, node:tls or node:crypto, which undici's HTTP/2 client would bring", async () => {
    const { code, builtins } = await partsLoaded(["--stage", "asyncawait", "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(builtins.has("http")).toBe(true); // the log works: undici's Client requires it
    expect(["http2", "tls", "crypto"].filter((name) => builtins.has(name))).toEqual([]);
  });

  it("in stage 3 does not load node:assert, which undici loads only when one of its checks fails", async () => {
    const { code, builtins } = await partsLoaded(["--stage", "asyncawait", "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(builtins.has("net")).toBe(true); // the log works
    expect(builtins.has("assert")).toBe(false);
  });
});

describe("the bundled command (scripts/build-bin.mjs)", () => {
  // Counts, not times: a file costs Node 20's loader about as much as a kilobyte of code, and
  // the unbundled command loaded 32 files for --help and 66 / 70 / 174 for a one-page crawl.
  it("loads 10 files or fewer for --help", async () => {
    const { code, files } = await partsLoaded(["--help"]);
    expect(code).toBe(0);
    expect(files.length).toBeLessThanOrEqual(10);
    expect(files.every(isBundleFile)).toBe(true);
  });

  it("takes Node's modules as they are, so that a crawl loads no file streams (an ES module's import of node:fs reads its ReadStream getter)", async () => {
    const { code, builtins } = await partsLoaded(["--stage", "callbacks", "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(builtins.has("vm")).toBe(true); // the log works: the loader compiles the bundle with node:vm
    expect(builtins.has("internal/fs/streams")).toBe(false);
  });

  it.each(["callbacks", "generators", "asyncawait"] as const)("loads 16 files or fewer, none of node_modules, for a crawl of UTF-8 pages in stage %s", async (stage) => {
    const { code, files } = await partsLoaded(["--stage", stage, "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(files.length).toBeLessThanOrEqual(16);
    expect(files.filter((file) => file.includes("/node_modules/"))).toEqual([]);
  });
});

describe("llhttp's WebAssembly in the bundled command (scripts/build-bin.mjs)", () => {
  const bin = join(dirname(CLI_PATH), "bin");

  it("is two files beside the bundle, not base64 in stage 3's source", async () => {
    // "AGFzbQ" is base64 for WebAssembly's magic number, "\0asm", which undici's llhttp-wasm.js files hold.
    expect(await readFile(join(bin, "asyncawait.cjs"), "latin1")).not.toContain("AGFzbQ");
    for (const file of ["llhttp.wasm", "llhttp_simd.wasm"]) expect((await readFile(join(bin, file))).subarray(0, 4).toString("latin1")).toBe("\0asm");
  });

  it.each(["1", "0"])("is read by a stage-3 crawl, UNDICI_NO_WASM_SIMD=%s", async (noSimd) => {
    // undici picks the build: UNDICI_NO_WASM_SIMD=1 the plain one, llhttp.wasm; 0 the SIMD one.
    const env = { ...process.env, UNDICI_NO_WASM_SIMD: noSimd };
    const stdout = await new Promise<string>(function run(resolve, reject) {
      execFile(process.execPath, [CLI_PATH, "--stage", "asyncawait", "-q", "--jsonl", "-", site.urlFor("/")], { env, timeout: 30_000, encoding: "utf8" }, function exited(error, out) {
        if (error !== null) reject(error);
        else resolve(out);
      });
    });
    const records = stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { url: string; status: number });
    expect(records.find((record) => record.url === site.urlFor("/"))?.status).toBe(200);
  });
});

describe("what a crawl loads only when it needs it", () => {
  it("loads encoding-sniffer for a page whose header names no charset, and not iconv-lite", async () => {
    const { code, parts } = await partsLoaded(["--stage", "callbacks", "-q", site.urlFor("/unnamed")]);
    expect(code).toBe(0);
    expect(parts.has("encoding-sniffer")).toBe(true);
    expect(parts.has("iconv-lite")).toBe(false);
  });

  it("loads iconv-lite for a windows-1252 page, and not encoding-sniffer", async () => {
    const { code, parts } = await partsLoaded(["--stage", "generators", "-q", site.urlFor("/latin-1")]);
    expect(code).toBe(0);
    expect(parts.has("iconv-lite")).toBe(true);
    expect(parts.has("encoding-sniffer")).toBe(false);
  });

  it("loads tldts (the Public Suffix List) when a --lenient crawl meets a link to another host", async () => {
    const { code, parts } = await partsLoaded(["--stage", "callbacks", "-q", "--lenient", site.urlFor("/outside")]);
    expect(code).toBe(0);
    expect(parts.has("tldts")).toBe(true);
  });

  it("loads robots-parser when a host serves a robots.txt, and htmlparser2's DOM never", async () => {
    const withRobots = await FixtureSite.start();
    try {
      withRobots.addPage("/", ["/a"]).addPage("/a", []);
      withRobots.addPage("/robots.txt", "User-agent: *\nDisallow: /private\n", "text/plain");
      const { code, parts } = await partsLoaded(["--stage", "generators", "-q", withRobots.urlFor("/")]);
      expect(code).toBe(0);
      expect(parts.has("robots-parser")).toBe(true);
      expect(parts.has("htmlparser2's DOM")).toBe(false);
    } finally {
      await withRobots.close();
    }
  });

  it("loads the timeline with --timeline, and every stage with --compare", async () => {
    const timeline = join(folder, "timeline.html");
    const { code, parts } = await partsLoaded(["--compare", "-q", "--timeline", timeline, site.urlFor("/")]);
    expect(code).toBe(0);
    for (const part of ["callbacks", "generators", "asyncawait", "undici", "timeline"] as const) expect(parts.has(part)).toBe(true);
    expect(parts.has("redis")).toBe(false);
    expect(parts.has("site")).toBe(false);
  });
});
