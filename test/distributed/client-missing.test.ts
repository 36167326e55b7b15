/**
 * The Redis client is an optional peer dependency: an install without
 * `@redis/client` crawls as ever, and `--frontier` says what to install.
 * The built command is copied to a directory whose node_modules links every
 * installed package but `@redis/*`, so Node really finds no client.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH, requireBuiltCli } from "../cli/cli-process.js";

describe("an install without @redis/client", () => {
  let dir = "";
  beforeAll(() => {
    requireBuiltCli();
    const root = resolve(dirname(CLI_PATH), "..");
    dir = mkdtempSync(join(tmpdir(), "cc-no-redis-"));
    cpSync(join(root, "dist"), join(dir, "dist"), { recursive: true });
    cpSync(join(root, "package.json"), join(dir, "package.json"));
    mkdirSync(join(dir, "node_modules"));
    for (const entry of readdirSync(join(root, "node_modules"))) {
      if (entry === "@redis" || entry === "redis" || entry.startsWith(".")) continue;
      symlinkSync(join(root, "node_modules", entry), join(dir, "node_modules", entry));
    }
  });
  afterAll(() => {
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
    const { status, stdout, stderr } = spawnSync(process.execPath, [join(dir, "dist", "cli.js"), ...args], { encoding: "utf8", timeout: 30_000 });
    return { status, stdout, stderr };
  }

  it("says in one line what to install when --frontier is given, and exits 1", () => {
    const { status, stdout, stderr } = run(["--frontier", "redis://127.0.0.1:1/0", "--crawl-name", "x", "--status"]);
    expect({ status, stdout, stderr }).toEqual({
      status: 1,
      stdout: "",
      stderr: "crawl: the Redis client is not installed; a crawl with --frontier needs it: npm install @redis/client@6\n",
    });
  });

  it("runs without --frontier as ever", () => {
    const { status, stdout } = run(["--help"]);
    expect(status).toBe(0);
    expect(stdout).toContain("--frontier URL");
  });
});
