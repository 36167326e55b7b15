/**
 * The package as a consumer gets it from the registry: `npm pack` makes the
 * tarball, which is unpacked into a scratch project in the temp directory
 * (outside this repo, so nothing resolves through the repo's node_modules by
 * accident), and a CommonJS script and an ES module script load every subpath
 * of `exports` from it and crawl the demo site with each stage.
 *
 * No network: instead of `npm install`, the tarball is extracted into
 * scratch/node_modules/coroutine-crawler and each runtime dependency is a
 * symlink to this repo's copy. Node follows a symlink to its real path before
 * resolving, so a dependency's own dependencies are found beside it here; and
 * only `dependencies` are linked, so a module the build needs but does not
 * declare fails to load.
 *
 * `npm pack --ignore-scripts` packs the dist/ that `npm test` has built
 * (run `npm run build` first when calling vitest directly): packing with
 * scripts would run `prepack`, a rebuild that empties dist/ under the other
 * test files running beside this one.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

/** The fields of package.json this test reads. */
interface PackageJson {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  exports: Record<string, unknown>;
}

/** One entry of `npm pack --json`'s answer. */
interface PackEntry {
  filename: string;
  files: { path: string }[];
}

/** What each consumer script prints. */
interface ConsumerAnswer {
  /** Each subpath of `exports`: the file it resolved to. */
  resolved: Record<string, string>;
  /** Each subpath of `exports`: how many names its module has. */
  names: Record<string, number>;
  /** Each stage: how many records its crawl of the demo site made. */
  records: Record<string, number>;
}

const pkg: PackageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const subpaths = Object.keys(pkg.exports);

/** Loads every subpath with require(), then crawls the demo site with each stage. */
const commonJsConsumer = `
const subpaths = JSON.parse(process.argv[2]);
const resolved = {};
const names = {};
for (const subpath of subpaths) {
  const specifier = "coroutine-crawler" + subpath.slice(1);
  resolved[subpath] = require.resolve(specifier);
  names[subpath] = Object.keys(require(specifier)).length;
}
const { startDemoSite } = require("coroutine-crawler/site");
const stages = {
  callbacks: require("coroutine-crawler/callbacks"),
  generators: require("coroutine-crawler/generators"),
  asyncawait: require("coroutine-crawler/asyncawait"),
};
async function main() {
  const site = await startDemoSite();
  const records = {};
  for (const [name, stage] of Object.entries(stages)) {
    records[name] = (await stage.crawl(site.url, { maxTasks: 5 })).records.length;
  }
  await site.close();
  console.log(JSON.stringify({ resolved, names, records }));
}
main().catch(function fail(error) {
  console.error(error);
  process.exit(1);
});
`;

/** Loads every subpath with import, then crawls the demo site with each stage. */
const esModuleConsumer = `
import { fileURLToPath } from "node:url";
import { startDemoSite } from "coroutine-crawler/site";
import * as callbacks from "coroutine-crawler/callbacks";
import * as generators from "coroutine-crawler/generators";
import * as asyncawait from "coroutine-crawler/asyncawait";

const subpaths = JSON.parse(process.argv[2]);
const resolved = {};
const names = {};
for (const subpath of subpaths) {
  const specifier = "coroutine-crawler" + subpath.slice(1);
  resolved[subpath] = fileURLToPath(import.meta.resolve(specifier));
  const module = specifier.endsWith(".json")
    ? await import(specifier, { with: { type: "json" } })
    : await import(specifier);
  names[subpath] = Object.keys(module).length;
}
const site = await startDemoSite();
const records = {};
for (const [name, stage] of Object.entries({ callbacks, generators, asyncawait })) {
  records[name] = (await stage.crawl(site.url, { maxTasks: 5 })).records.length;
}
await site.close();
console.log(JSON.stringify({ resolved, names, records }));
`;

describe("the packed tarball, installed in a scratch project", () => {
  // The real path: the consumers report where modules resolved, symlinks followed.
  const work = realpathSync(mkdtempSync(join(tmpdir(), "coroutine-crawler-tarball-")));
  const scratch = join(work, "scratch");
  const installed = join(scratch, "node_modules", pkg.name);
  let packed: PackEntry;

  beforeAll(async () => {
    const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: root,
    });
    const [entry]: PackEntry[] = JSON.parse(stdout);
    if (entry === undefined) throw new Error(`npm pack made no tarball: ${stdout}`);
    packed = entry;
    mkdirSync(installed, { recursive: true });
    // npm's tarballs hold everything under package/.
    await run("tar", ["-xzf", join(work, packed.filename), "-C", installed, "--strip-components=1"]);
    for (const name of Object.keys(pkg.dependencies)) {
      const link = join(scratch, "node_modules", name);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(join(root, "node_modules", name), link, "dir");
    }
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true }));
    writeFileSync(join(scratch, "consumer.cjs"), commonJsConsumer);
    writeFileSync(join(scratch, "consumer.mjs"), esModuleConsumer);
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("holds the build with its declarations, the source, the JSON Schema of the command's output, the README and the licence, and no tests", () => {
    const files = packed.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "LICENSE",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cli.js",
        "dist/bin/asyncawait.cjs", // the command's bundle (scripts/build-bin.mjs)
        "dist/bin/asyncawait.cjs.cache", // and its V8 code cache
        "src/index.ts",
        "schema/crawl-result.schema.json",
        // The notebook, for users of the package (README, "Notebook"; scripts/notebook-check.sh runs it from here).
        "examples/notebook.ipynb",
      ]),
    );
    expect(files.filter((file) => file.startsWith("test/"))).toEqual([]);
  });

  it("serves CommonJS: require() of every subpath, and a crawl of the demo site with every stage", async () => {
    expectEverySubpathAndCrawl(await runConsumer("consumer.cjs"));
  });

  it("serves an ES module: import of every subpath, and a crawl of the demo site with every stage", async () => {
    expectEverySubpathAndCrawl(await runConsumer("consumer.mjs"));
  });

  it("runs the crawl command, which reports package.json's version", async () => {
    const { stdout } = await run(process.execPath, [join(installed, "dist", "cli.js"), "--version"], { cwd: scratch });
    expect(stdout).toBe(`crawl (coroutine-crawler) ${pkg.version}\n`);
  });

  it("runs the bundled crawl command's every stage from the package (dist/bin/, scripts/build-bin.mjs), each file from its code cache", async () => {
    // NODE_DEBUG=crawl-bin: the loader (scripts/bin-loader.mjs) says of each file whether V8 took its cache;
    // npm's tarball gives every file the same date, which must not make a cache look older than its file.
    const env = { ...process.env, NODE_DEBUG: "crawl-bin" };
    const { stdout, stderr } = await run(process.execPath, [join(installed, "dist", "cli.js"), "--demo", "--compare"], { cwd: scratch, env });
    expect(stdout).toContain("identical: the 3 stages made the same records");
    const said = stderr.split("\n").filter((line) => line.startsWith("CRAWL-BIN"));
    expect(said.filter((line) => line.endsWith(": code cache accepted")).length).toBeGreaterThanOrEqual(4); // the command, its three stages
    expect(said.filter((line) => !line.endsWith(": code cache accepted"))).toEqual([]);
  });

  /** Runs one consumer script in the scratch project and reads what it prints. */
  async function runConsumer(script: string): Promise<ConsumerAnswer> {
    const { stdout } = await run(process.execPath, ["--no-warnings", script, JSON.stringify(subpaths)], {
      cwd: scratch,
    });
    return JSON.parse(stdout);
  }

  /** Every subpath loaded from the unpacked tarball, and the three stages crawled alike. */
  function expectEverySubpathAndCrawl(answer: ConsumerAnswer): void {
    expect(Object.keys(answer.names)).toEqual(subpaths);
    for (const subpath of subpaths) {
      expect(answer.resolved[subpath]?.slice(0, installed.length + 1), subpath).toBe(installed + sep);
      expect(answer.names[subpath], subpath).toBeGreaterThan(0);
    }
    expect(Object.keys(answer.records)).toEqual(["callbacks", "generators", "asyncawait"]);
    expect(new Set(Object.values(answer.records)).size).toBe(1);
    expect(answer.records.callbacks).toBeGreaterThan(50);
  }
});
