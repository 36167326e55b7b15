/**
 * `npx tsx stepper/record-cli.ts --stage S --seed N [--out FILE]`: records
 * one crawl of the demo site in the bottle (stepper/record.ts) and writes
 * the recording as JSON, for the stepper page (dist/stepper/index.html).
 * With `--swap LIBRARY=LEARNER` (repeated), the learner's files are loaded in
 * place of the library's (`npm run learn -- N --step` passes them).
 *
 * Exit codes: 0 written, 2 bad usage (the message names the flag), 1 the
 * recorder failed.
 *
 * @module
 */
import { writeFileSync } from "node:fs";
import { register } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { LearnerModulesData } from "./learner-modules.js";

export const USAGE = `Usage: npx tsx stepper/record-cli.ts --stage S --seed N [--scenario] [--out FILE] [--max-steps N]

Records one crawl of the demo site by a stage, in the bottle (simulated
network, virtual clock), a whole snapshot per step, as JSON for the stepper
page (dist/stepper/index.html). The same stage and seed give the same file.

  --stage S         callbacks, generators or asyncawait (required)
  --seed N          the seed: an integer from 0 up (required)
  --scenario        crawl the seed's random scenario (as npm run simulate does), not the demo site
  --out FILE        where to write the recording (default: standard output)
  --max-steps N     steps recorded at most (default 2000)
  --swap A=B        load file B in place of the library's file A (repeatable)
  -h, --help        print this and exit
`;

/** What the command line asks for. */
export interface RecordCommand {
  stage: "callbacks" | "generators" | "asyncawait";
  seed: number;
  scenario: boolean;
  out: string | null;
  maxSteps: number;
  swaps: Array<[string, string]>;
}

/** Bad usage: exit 2 with its message, which names the flag. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * Reads the arguments; null for `--help`.
 *
 * @throws UsageError naming the flag that is missing or wrong.
 */
export function parseCommand(args: readonly string[]): RecordCommand | null {
  let values: { stage?: string; seed?: string; scenario?: boolean; out?: string; "max-steps"?: string; swap?: string[]; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        stage: { type: "string" },
        seed: { type: "string" },
        scenario: { type: "boolean" },
        out: { type: "string" },
        "max-steps": { type: "string" },
        swap: { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help === true) return null;
  const stage = values.stage;
  if (stage === undefined) throw new UsageError("--stage S is required");
  if (stage !== "callbacks" && stage !== "generators" && stage !== "asyncawait") throw new UsageError(`--stage takes callbacks, generators or asyncawait, got ${JSON.stringify(stage)}`);
  if (values.seed === undefined) throw new UsageError("--seed N is required");
  if (!/^\d+$/.test(values.seed) || !Number.isSafeInteger(Number(values.seed))) throw new UsageError(`--seed takes an integer from 0 up, got ${JSON.stringify(values.seed)}`);
  const maxSteps = values["max-steps"] ?? "2000";
  if (!/^\d+$/.test(maxSteps) || Number(maxSteps) < 1) throw new UsageError(`--max-steps takes an integer from 1 up, got ${JSON.stringify(maxSteps)}`);
  const swaps = (values.swap ?? []).map(function swapOf(swap): [string, string] {
    const [library, learner, ...rest] = swap.split("=");
    if (library === undefined || learner === undefined || library === "" || learner === "" || rest.length > 0) throw new UsageError(`--swap takes LIBRARY_FILE=LEARNER_FILE, got ${JSON.stringify(swap)}`);
    return [pathToFileURL(resolve(library)).href, pathToFileURL(resolve(learner)).href];
  });
  return { stage, seed: Number(values.seed), scenario: values.scenario === true, out: values.out ?? null, maxSteps: Number(maxSteps), swaps };
}

async function main(args: readonly string[]): Promise<number> {
  let command: RecordCommand | null;
  try {
    command = parseCommand(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`record-cli: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command.swaps.length > 0) {
    const data: LearnerModulesData = { swaps: command.swaps };
    register("./learner-modules.ts", { parentURL: import.meta.url, data });
  }
  // Imported only now, so that the learner's files, if any, are the ones loaded.
  const { recordCrawl } = await import("./record.js");
  const recording = await recordCrawl({ stage: command.stage, seed: command.seed, scenario: command.scenario, maxSteps: command.maxSteps });
  const json = JSON.stringify(recording);
  if (command.out === null) process.stdout.write(`${json}\n`);
  else {
    writeFileSync(command.out, json);
    const last = recording.steps.at(-1);
    process.stderr.write(`Recorded ${recording.steps.length} steps of the ${command.stage} stage (seed ${command.seed}${recording.truncated ? `, cut at --max-steps ${command.maxSteps}` : ""}) to ${command.out}: ${json.length} bytes. Last: ${last?.label ?? "nothing"}\n`);
  }
  return 0;
}

main(process.argv.slice(2)).then(
  function exit(code) {
    // A learner's loop that never stops may keep the process alive: the recording is written, so leave.
    process.exit(code);
  },
  function failed(error: unknown) {
    process.stderr.write(`record-cli: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
