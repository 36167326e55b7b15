/**
 * `npm run simulate -- --seed N --stage S [--trace FILE] [--json FILE]`:
 * one crawl of one stage in the bottle, replayed from its seed.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resultJson } from "../cli/result-json.js";
import { report } from "../crawl/report.js";
import { simulate, STAGES, type CrawlFunction, type Simulation, type Stage } from "./simulate.js";

/** What `--help` prints. */
export const USAGE = `Usage: npm run simulate -- --seed N --stage S [--trace FILE] [--json FILE]

Runs one crawl of one stage in the bottle: the seed's random site on a
simulated network (latency, bandwidth, faults drawn from the seed), on a
virtual clock. The same seed and stage give the same records and the same
trace, byte for byte, on any machine: the conformance suite prints this
command for every seed that fails.

  --seed N        the seed: an integer from 0 up (required)
  --stage S       ${STAGES.map((stage) => stage.name).join(", ")}, or the path of a
                  module that exports a \`crawl()\` (a fourth stage) (required)
  --trace FILE    write the crawl's trace, one line per event, to FILE
  --json FILE     write the crawl's result as \`crawl --json\` does to FILE
  -h, --help      print this and exit
`;

/** A command line `simulate` cannot run. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** What the command line asks for. */
export interface SimulateCommand {
  seed: number;
  /** A stage's name, or the path of a module exporting `crawl` (ends in `.ts`, `.js` or `.mjs`). */
  stage: string;
  trace: string | null;
  json: string | null;
}

/**
 * Reads the command line; null when it asks for help.
 *
 * @throws UsageError naming the flag that is missing, unknown or bad.
 */
export function parseCommand(args: readonly string[]): SimulateCommand | null {
  let values: { seed?: string; stage?: string; trace?: string; json?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        seed: { type: "string" },
        stage: { type: "string" },
        trace: { type: "string" },
        json: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) return null;
  if (values.seed === undefined) throw new UsageError("--seed N is required");
  if (!/^\d+$/.test(values.seed) || !Number.isSafeInteger(Number(values.seed))) throw new UsageError(`--seed takes an integer from 0 up, got ${JSON.stringify(values.seed)}`);
  if (values.stage === undefined) throw new UsageError("--stage S is required");
  const stage = values.stage;
  if (!isModulePath(stage) && !STAGES.some((each) => each.name === stage)) {
    throw new UsageError(`--stage takes ${STAGES.map((each) => each.name).join(", ")} or a module's path, got ${JSON.stringify(stage)}`);
  }
  return { seed: Number(values.seed), stage, trace: values.trace ?? null, json: values.json ?? null };
}

function isModulePath(stage: string): boolean {
  return /\.(?:ts|js|mjs)$/.test(stage);
}

/**
 * The stage `--stage` names: one of {@link STAGES}, or the `crawl` export of
 * the module at that path, named by the path (so its replay line names it too).
 *
 * @throws UsageError when the module exports no `crawl` function.
 */
export async function loadStage(stage: string): Promise<Stage> {
  const builtIn = STAGES.find((each) => each.name === stage);
  if (builtIn !== undefined) return builtIn;
  const module: Record<string, unknown> = await import(pathToFileURL(resolve(stage)).href);
  const crawl = module.crawl;
  if (typeof crawl !== "function") throw new UsageError(`--stage ${stage}: the module exports no crawl() function`);
  return { name: stage, crawl: crawl as CrawlFunction }; // a function: the contract says it is a crawl()
}

/** The summary printed after the crawl's report. */
export function summary(simulation: Simulation): string {
  const faults = Object.entries(simulation.faults)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${kind} ${count}`);
  return [
    `bottle: seed ${simulation.seed}, stage ${simulation.stage}: ${simulation.result.records.length} records in ${simulation.virtualMs} virtual ms`,
    `bottle: ${simulation.connections} connections, faults: ${faults.length === 0 ? "none" : faults.join(", ")}; left open: ${simulation.leftOpen.sockets} sockets, ${simulation.leftOpen.timers} timers`,
    `bottle: replay with ${simulation.replay}`,
  ].join("\n");
}

/** Runs the command; returns the exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let command: SimulateCommand | null;
  try {
    command = parseCommand(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`simulate: ${error.message}\n(npm run simulate -- --help for usage)\n`);
    return 2;
  }
  if (command === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  let stage: Stage;
  try {
    stage = await loadStage(command.stage);
  } catch (error) {
    process.stderr.write(`simulate: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const simulation = await simulate({ seed: command.seed, stage, trace: command.trace !== null });
  process.stdout.write(`${report(simulation.result)}\n${summary(simulation)}\n`);
  if (command.trace !== null) writeFileSync(command.trace, simulation.trace.map((line) => `${line}\n`).join(""));
  if (command.json !== null) {
    // resultJson names the three stages; a fourth stage's name replaces it (StageName is a closed union until the core opens it).
    const json = { ...resultJson("asyncawait", simulation.result, false), stage: stage.name };
    writeFileSync(command.json, `${JSON.stringify(json, null, 2)}\n`);
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
