import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

const stage = new URL("../../src/generators/", import.meta.url);
const modules = readdirSync(stage).filter((name) => name.endsWith(".ts"));

describe("stage 2's modules", () => {
  // A circle of imports can make `class Task extends Future` run before Future
  // exists, but only when a program happens to import one file first.
  it.each(modules)("load when %s is the first one a program imports", (name) => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", `await import(${JSON.stringify(new URL(name, stage).href)}); console.log("ok");`], {
      encoding: "utf8",
    });
    expect(out.trim()).toBe("ok");
  });
});
