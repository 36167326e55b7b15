// @ts-check
/**
 * The chaos tables of docs/guide-distributed.md (section 6), measured: runs
 * the chaos tests of test/distributed/processes.test.ts several times and
 * gathers the `chaos-table |` line each prints (fault, record mode, faults
 * made, records, lost from the outputs, recorded twice in Redis, fetched
 * twice, URLs written twice, lines written twice), into one Markdown table
 * with a row per fault and mode, the runs' figures side by side (`a / b / c`).
 *
 * Usage: `npm run build && node scripts/chaos-table.mjs [RUNS] [PATTERN]`:
 * RUNS defaults to 3; PATTERN (a vitest `-t` name pattern) to every chaos
 * test (`SIGKILLed again|Redis dies|Redis paused`: crawlers SIGKILLed, Redis SIGKILLed with its
 * append-only file and restarted, Redis paused less than a lease and for
 * several leases, each in both record modes). The tests run the built CLI
 * (dist/cli.js), hence the build first. Each run is a whole vitest run of
 * those tests, a few minutes on two cores; a failing run is reported, and its
 * lines (those of the tests that passed) still count.
 */
import { spawnSync } from "node:child_process";

const runs = Number(process.argv[2] ?? "3");
const pattern = process.argv[3] ?? "SIGKILLed again|Redis dies|Redis paused";
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`chaos-table: RUNS must be a whole number from 1, got ${process.argv[2]}`);
  process.exit(2);
}

/** Row key (fault and mode) → the figures of each run, as printed. */
const rows = new Map();
for (let run = 1; run <= runs; run += 1) {
  const vitest = spawnSync("npx", ["vitest", "run", "--config", "vitest.workflows.config.ts", "test/distributed/processes.test.ts", "-t", pattern], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const output = `${vitest.stdout}${vitest.stderr}`;
  const lines = output.split("\n").map(function plain(line) {
    return line.replace(/\x1b\[[0-9;]*m/g, "");
  }).filter(function isRow(line) {
    return line.startsWith("chaos-table | ");
  });
  console.error(`chaos-table: run ${run} of ${runs}: ${lines.length} rows${vitest.status === 0 ? "" : `, vitest exited ${vitest.status} (see its output: a test failed)`}`);
  if (vitest.status !== 0) console.error(output.split("\n").filter((line) => /FAIL|Error|expected/.test(line)).slice(0, 20).join("\n"));
  for (const line of lines) {
    const [, fault, mode, ...figures] = line.split(" | ").map((cell) => cell.trim());
    const key = `${fault} | ${mode}`;
    rows.set(key, [...(rows.get(key) ?? []), figures]);
  }
}

console.log("| fault | mode | runs | faults a run | records | lost from the outputs | recorded twice in Redis | fetched twice | URLs written twice | lines written twice |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const [key, figures] of rows) {
  const columns = figures[0].map(function column(_, index) {
    return figures.map((run) => run[index]).join(" / ");
  });
  console.log(`| ${key} | ${figures.length} | ${columns.join(" | ")} |`);
}
