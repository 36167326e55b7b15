import { spawn, spawnSync } from "node:child_process";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { get } from "./helpers.js";

describe("site cli", () => {
  it("prints the URL and expected crawl as one JSON line, serves the site, and exits when stdin closes", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/site/cli.ts", "--pages", "12", "--links", "3", "--seed", "9", "--redirects", "2"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>((resolve) => lines.once("line", resolve));
    const line = JSON.parse(first) as { url: string; expected: { count: number; maxDepth: number; records: { url: string; status: number }[] } };
    expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(line.expected.count).toBe(line.expected.records.length);
    expect(line.expected.records[0]?.url).toBe(line.url);
    expect((await get(line.url)).status).toBe(200);
    child.stdin.end();
    expect(await exited).toBe(0);
  });

  it("prints the expected count and depth without the records with --count-only", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/site/cli.ts", "--pages", "12", "--links", "3", "--seed", "9", "--count-only"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>((resolve) => lines.once("line", resolve));
    const line = JSON.parse(first) as { url: string; expected: Record<string, unknown> };
    expect(line.expected).toEqual({ count: 12, maxDepth: expect.any(Number) });
    expect((await get(line.url)).status).toBe(200);
    child.stdin.end();
    expect(await exited).toBe(0);
  });

  it("prints its usage with --help, and refuses an unknown option or a value that is not a count with status 2, naming it", () => {
    const run = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "src/site/cli.ts", ...args], { encoding: "utf8", input: "" });
    const help = run("--help");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: npm run site --");
    const unknown = run("--pagse", "10");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^site: Unknown option '--pagse'/);
    for (const [option, value] of [["--pages", "many"], ["--links", "-1"], ["--seed", "1.5"], ["--delay", ""]]) {
      const refused = run(`${option}=${value}`);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(new RegExp(`^site: ${option} must be`));
      expect(refused.stdout).toBe("");
    }
  });
});
