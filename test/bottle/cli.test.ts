/**
 * `npm run simulate`'s command line, read without running a crawl, and one
 * run of a fourth stage given by its module's path.
 */
import { describe, expect, it } from "vitest";
import { loadStage, parseCommand, UsageError } from "../../src/bottle/cli.js";

describe("parseCommand", () => {
  it("reads --seed, --stage, --trace and --json", () => {
    expect(parseCommand(["--seed", "12", "--stage", "generators", "--trace", "t.txt", "--json", "r.json"])).toEqual({ seed: 12, stage: "generators", trace: "t.txt", json: "r.json" });
  });

  it("asks for help with -h", () => {
    expect(parseCommand(["-h"])).toBeNull();
  });

  it.each([
    [[], /--seed N is required/],
    [["--seed", "1"], /--stage S is required/],
    [["--seed", "1.5", "--stage", "callbacks"], /--seed takes an integer/],
    [["--seed", "1", "--stage", "threads"], /--stage takes callbacks, generators, asyncawait or a module's path/],
    [["--seed", "1", "--stage", "callbacks", "--fast"], /Unknown option '--fast'/],
  ])("refuses %j with a UsageError naming the flag", (args, message) => {
    expect(() => parseCommand(args)).toThrow(UsageError);
    expect(() => parseCommand(args)).toThrow(message);
  });
});

describe("loadStage", () => {
  it("takes a stage's name, or a module's path whose crawl() it runs, named by the path", async () => {
    expect((await loadStage("callbacks")).name).toBe("callbacks");
    const fourth = await loadStage("src/asyncawait/index.ts");
    expect(fourth.name).toBe("src/asyncawait/index.ts");
    expect(typeof fourth.crawl).toBe("function");
    await expect(loadStage("src/bottle/random.ts")).rejects.toThrow(/exports no crawl\(\) function/);
  });
});
