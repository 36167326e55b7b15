/**
 * The built command runs its bundle from V8's code cache (scripts/build-bin.mjs
 * makes it, scripts/bin-loader.mjs reads it), and runs without it when V8
 * refuses it. Each run is the built `crawl` with `NODE_DEBUG=crawl-bin`, under
 * which the loader says, of each bundle file it loads, whether V8 took its
 * cache (`cachedDataRejected`), or that it had none to give.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FixtureSite } from "../../src/site/index.js";
import { CLI_PATH, requireBuiltCli } from "./cli-process.js";

let site: FixtureSite;
let folder: string;

beforeAll(async () => {
  requireBuiltCli();
  folder = mkdtempSync(join(tmpdir(), "code-cache-"));
  site = await FixtureSite.start();
  site.addPage("/", ["/a", "/b"]).addPage("/a", ["/"]).addPage("/b", []);
});

afterAll(async () => {
  await site?.close();
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

/** How a run ended, and what the loader said of each file: `["cli.cjs", "code cache accepted"]`. */
interface Run {
  code: number;
  stdout: string;
  stderr: string;
  loads: [file: string, outcome: string][];
}

/** Runs `node ...nodeArgs CLI ...args` with the loader's debug lines on (and Node's own, `NODE_DEBUG_NATIVE`, when given). */
function runWithDebug(nodeArgs: readonly string[], cli: string, args: readonly string[], nativeDebug?: string): Promise<Run> {
  const env = { ...process.env, NODE_DEBUG: "crawl-bin", ...(nativeDebug === undefined ? {} : { NODE_DEBUG_NATIVE: nativeDebug }) };
  return new Promise(function run(resolve, reject) {
    execFile(process.execPath, [...nodeArgs, cli, ...args], { env, timeout: 30_000, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 }, function exited(error, stdout, stderr) {
      if (error !== null && typeof error.code !== "number") {
        reject(error);
        return;
      }
      const loads = [...stderr.matchAll(/^CRAWL-BIN \d+: (\S+\.cjs): (.*)$/gm)].map(function load(match): [string, string] {
        return [match[1] as string, match[2] as string];
      });
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr, loads });
    });
  });
}

/**
 * What Node said (`NODE_DEBUG_NATIVE=CODE_CACHE`) of the code cache of each of
 * its own modules it compiled: `["net", "accepted"]`.
 */
function nodeModuleCaches(stderr: string): [module: string, outcome: string][] {
  return [...stderr.matchAll(/^Code cache of (\S+) \(\w+\) is (accepted|rejected)$/gm)].map(function cache(match): [string, string] {
    return [match[1] as string, match[2] as string];
  });
}

/** The URLs of a `--jsonl` file's records, sorted. */
function urlsIn(file: string): string[] {
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  return lines.map((line) => (JSON.parse(line) as { url: string }).url).sort();
}

describe("the command's code cache", () => {
  it.each(["callbacks", "generators", "asyncawait"] as const)("is taken by V8 for every bundle file a one-page crawl loads in stage %s", async (stage) => {
    const { code, loads } = await runWithDebug([], CLI_PATH, ["--stage", stage, "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    expect(loads.map(([file]) => file)).toEqual(expect.arrayContaining(["cli.cjs", `${stage}.cjs`]));
    expect(loads.filter(([, outcome]) => outcome !== "code cache accepted")).toEqual([]);
  });

  it("is refused under V8 flags it was not made with, and the command compiles the bundle and crawls alike", async () => {
    const cached = join(folder, "cached.jsonl");
    const refused = join(folder, "refused.jsonl");
    const withCache = await runWithDebug([], CLI_PATH, ["--stage", "asyncawait", "-q", "--jsonl", cached, site.urlFor("/")]);
    // Any V8 flag that changes nothing the crawl does: V8 keys a cache to the flags it was made under.
    const withFlag = await runWithDebug(["--no-lazy-feedback-allocation"], CLI_PATH, ["--stage", "asyncawait", "-q", "--jsonl", refused, site.urlFor("/")]);
    expect([withCache.code, withFlag.code]).toEqual([0, 0]);
    expect(withFlag.loads.length).toBeGreaterThanOrEqual(2);
    expect(withFlag.loads.filter(([, outcome]) => outcome !== "code cache rejected")).toEqual([]);
    expect(urlsIn(refused)).toEqual(urlsIn(cached));
    expect(urlsIn(cached)).toEqual([site.urlFor("/"), site.urlFor("/a"), site.urlFor("/b")].sort());
  });

  it("is not given to V8 for a bundle file changed after the build", async () => {
    // A copy of the command, whose cli.cjs is then dated after its cache, as an edit would leave it.
    const copy = join(folder, "command");
    cpSync(CLI_PATH, join(copy, "cli.js"));
    cpSync(join(dirname(CLI_PATH), "bin"), join(copy, "bin"), { recursive: true, preserveTimestamps: true });
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(copy, "bin", "cli.cjs"), later, later);
    const { code, stdout, loads } = await runWithDebug([], join(copy, "cli.js"), ["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--stage");
    expect(loads).toContainEqual(["cli.cjs", "compiled without a code cache"]);
    expect(loads.filter(([file]) => file !== "cli.cjs").every(([, outcome]) => outcome === "code cache accepted")).toBe(true);
  });
});

describe("the command's V8 flags", () => {
  // Node's own modules have code caches made under V8's default flags: a flag
  // the command set before they load would make V8 refuse every one.
  it.each([
    ["a one-page crawl in stage callbacks", ["--stage", "callbacks", "-q"]],
    ["a one-page crawl in stage generators", ["--stage", "generators", "-q"]],
    ["a one-page crawl in stage asyncawait", ["--stage", "asyncawait", "-q"]],
    ["a crawl of --compare (the three stages)", ["--compare", "-q"]],
    ["--help", ["--help"]],
  ])("leave V8 taking the code cache of every Node module loaded by %s", async (_name, args) => {
    const crawls = args[0] !== "--help";
    const { code, stderr, loads } = await runWithDebug([], CLI_PATH, crawls ? [...args, site.urlFor("/")] : args, "CODE_CACHE");
    expect(code).toBe(0);
    // The bundle's files too: with --compare, the second and third stages load before the first crawl sets the flags.
    expect(loads.filter(([, outcome]) => outcome !== "code cache accepted")).toEqual([]);
    const caches = nodeModuleCaches(stderr);
    // node:fs/promises and node:net load in every command; node:http with undici.
    expect(caches).toContainEqual(["fs/promises", "accepted"]);
    if (args[1] === "asyncawait") expect(caches).toContainEqual(["http", "accepted"]);
    expect(caches.filter(([, outcome]) => outcome !== "accepted")).toEqual([]);
  });

  it("keep undici's WebAssembly parser on V8's baseline tier through a stage-3 crawl", async () => {
    // V8 prints a line for each WebAssembly function it compiles, naming the tier, on stdout.
    const { code, stdout } = await runWithDebug(["--trace-wasm-compilation-times"], CLI_PATH, ["--stage", "asyncawait", "-q", site.urlFor("/")]);
    expect(code).toBe(0);
    const tiers = [...stdout.matchAll(/^Compiled function \S+ using (\w+)/gm)].map((match) => match[1]);
    expect(tiers).toContain("Liftoff");
    expect(tiers.filter((tier) => tier !== "Liftoff")).toEqual([]);
  });
});
