/**
 * The published build, imported the way a notebook or a plain `node` script
 * imports it: by the package name, through package.json's `exports`, from
 * dist/ (which `npm test` builds before vitest runs: run `npm run build`
 * first when calling vitest directly).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../..", import.meta.url));

const script = `
import * as pkg from "coroutine-crawler";
import * as callbacks from "coroutine-crawler/callbacks";
import * as generators from "coroutine-crawler/generators";
import * as asyncawait from "coroutine-crawler/asyncawait";
import { startDemoSite } from "coroutine-crawler/site";
const site = await startDemoSite();
const counts = {};
for (const [name, stage] of Object.entries({ callbacks, generators, asyncawait })) {
  counts[name] = (await stage.crawl(site.url, { maxTasks: 5 })).records.length;
}
await site.close();
console.log(JSON.stringify({ root: Object.keys(pkg).sort(), counts, same: pkg.asyncawait.crawl === asyncawait.crawl }));
`;

describe("the built package", () => {
  it("is importable by name from plain node, every entry point", async () => {
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const answer = JSON.parse(stdout) as { root: string[]; counts: Record<string, number>; same: boolean };
    expect(answer.root).toEqual(expect.arrayContaining(["asyncawait", "callbacks", "generators", "shared", "report"]));
    expect(answer.same).toBe(true);
    expect(new Set(Object.values(answer.counts)).size).toBe(1);
    expect(answer.counts.callbacks).toBeGreaterThan(50);
  });

  it("is loadable with require() from CommonJS, every entry point, and crawls the demo site", async () => {
    // Node 20.19+ loads ES modules through require(): the exports need a "default" condition for it.
    const commonJs = `
const names = ["", "/callbacks", "/generators", "/asyncawait", "/shared", "/site", "/timeline", "/redis"];
const loaded = names.map((name) => Object.keys(require("coroutine-crawler" + name)).length > 0);
const { startDemoSite } = require("coroutine-crawler/site");
const { crawl } = require("coroutine-crawler/callbacks");
startDemoSite().then(async (site) => {
  const result = await crawl(site.url, { maxTasks: 5 });
  await site.close();
  console.log(JSON.stringify({ loaded, records: result.records.length }));
});
`;
    const { stdout } = await run(process.execPath, ["--no-warnings", "-e", commonJs], { cwd: root });
    const answer = JSON.parse(stdout) as { loaded: boolean[]; records: number };
    expect(answer.loaded).toEqual([true, true, true, true, true, true, true, true]);
    expect(answer.records).toBeGreaterThan(50);
  });

  it("gives the options and record types from each stage's entry point, not only the root", async () => {
    const dir = mkdtempSync(join(root, ".subpath-types-"));
    try {
      const lines = ["callbacks", "generators", "asyncawait"].map(function typesOf(stage) {
        return `import type * as ${stage} from "coroutine-crawler/${stage}";
export const ${stage}Options: ${stage}.CrawlOptions = { maxTasks: 2 };
export type ${stage}Types = [${stage}.CrawlResult, ${stage}.FetchError, ${stage}.FetchStatistic, ${stage}.RobotsFetch, ${stage}.RobotsVerdict];`;
      });
      writeFileSync(join(dir, "check.mts"), `${lines.join("\n")}\n`);
      const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
      const flags = ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
      const checked = await run(process.execPath, [tsc, ...flags, join(dir, "check.mts")], { cwd: root }).catch(function failed(error: { stdout: string }) {
        return { stdout: error.stdout };
      });
      expect(checked.stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("ships declarations and source maps beside the JavaScript", () => {
    for (const entry of ["index", "callbacks/index", "generators/index", "asyncawait/index", "distributed/index", "site/index"]) {
      expect(existsSync(`${root}/dist/${entry}.js`), `${entry}.js`).toBe(true);
      expect(existsSync(`${root}/dist/${entry}.d.ts`), `${entry}.d.ts`).toBe(true);
      expect(existsSync(`${root}/dist/${entry}.js.map`), `${entry}.js.map`).toBe(true);
    }
    // The command: dist/cli.js is the bundle's loader, and the bundle's files have the maps (scripts/build-bin.mjs).
    expect(existsSync(`${root}/dist/cli.js`)).toBe(true);
    expect(existsSync(`${root}/dist/bin/cli.cjs.map`)).toBe(true);
  });
});
