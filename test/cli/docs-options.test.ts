/**
 * The docs' option tables against the command's own table of flags
 * (src/cli/flags.ts): every flag listed, with the value `--help` names
 * (`SECONDS`, not `MS`), so the docs cannot drift from the command.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPTIONS, SPECS } from "../../src/cli/flags.js";
import type { OptionSpec } from "../../src/cli/flags.js";

function doc(name: string): string {
  return readFileSync(new URL(`../../docs/${name}`, import.meta.url), "utf8");
}

/** The rows of the first table under `## heading`, each as its cells. */
function tableUnder(text: string, heading: string): string[][] {
  const section = text.slice(text.indexOf(`\n## ${heading}\n`));
  const start = section.indexOf("\n|");
  const rows: string[][] = [];
  for (const line of section.slice(start + 1).split("\n")) {
    if (!line.startsWith("|")) break;
    rows.push(line.slice(1, -1).split(" | ").map((cell) => cell.trim()));
  }
  return rows.slice(2); // the header and the |---| line
}

/** How a flag is written in the docs' first column: `--delay SECONDS`, `--json [FILE]`, `-o`, `--output FILE`. */
function written(name: string, spec: OptionSpec): string {
  const value = spec.value === undefined ? "" : spec.bare === undefined ? ` ${spec.value}` : ` [${spec.value}]`;
  const long = `\`--${name}${value}\``;
  return spec.short === undefined ? long : `\`-${spec.short}\`, ${long}`;
}

/** Every `--flag VALUE` written in backticks in a text, with VALUE in capitals (`--delay SECONDS`, `--header 'NAME: VALUE'`). */
function flagsWithValues(text: string): [string, string][] {
  return [...text.matchAll(/`--([a-z][a-z-]*)[ =](\[?[A-Z][A-Z_]*\]?|'[A-Z]+: [A-Z]+')`/g)].map((match) => [match[1], match[2]]);
}

describe("docs/cli.md's table of options", () => {
  const rows = tableUnder(doc("cli.md"), "Options");

  it("lists every flag of the command, once, as --help writes it", () => {
    const listed = rows.map((row) => row[0]);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(Object.entries(OPTIONS).map(([name, spec]) => written(name, spec)).sort());
  });

  it("gives each default the command sets itself", () => {
    for (const [flagCell, , defaultCell] of rows) {
      const name = /--([a-z-]+)/.exec(flagCell)?.[1] ?? "";
      const spec = SPECS.get(name);
      if (spec?.default !== undefined) expect(`${name}: ${defaultCell}`).toMatch(new RegExp(`^${name}: \`?${spec.default}\\b`));
    }
  });

  it("says nothing in milliseconds of a flag that takes seconds", () => {
    for (const [flagCell, meaning, defaultCell] of rows) {
      if (!flagCell.includes("SECONDS")) continue;
      expect(`${flagCell} ${meaning} ${defaultCell}`).not.toMatch(/\d ?ms\b|millisecond/i);
    }
  });
});

describe.each(["cli.md", "behaviour.md", "task-crawl-politely.md"])("docs/%s", (name) => {
  it("writes every --flag VALUE with the value --help names", () => {
    const found = flagsWithValues(doc(name));
    expect(found.length).toBeGreaterThan(0);
    for (const [flag, value] of found) {
      const spec = SPECS.get(flag);
      expect(spec, `--${flag} is not a flag of the command`).toBeDefined();
      const expected = spec?.bare === undefined ? spec?.value : `[${spec.value}]`;
      expect(`--${flag} ${value.startsWith("[") || spec?.bare === undefined ? value : `[${value}]`}`).toBe(`--${flag} ${expected}`);
    }
  });
});

describe("docs/behaviour.md's tables of options", () => {
  it("pair each library option in milliseconds with a flag in seconds", () => {
    const text = doc("behaviour.md");
    const rows = [...text.matchAll(/^\| `(\w+)` \| [^|]+ \| `(--[a-z-]+)(?: ([^`]+))?`/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(8);
    for (const [, option, flag, value] of rows) {
      expect(SPECS.has(flag.slice(2)), `${flag} is not a flag of the command`).toBe(true);
      if (option.endsWith("Ms")) expect(`${option} ${flag} ${value}`).toBe(`${option} ${flag} SECONDS`);
    }
  });
});
