/**
 * Runs the waiting-unit memory measurement of one stage in a child process
 * with `--expose-gc` (see `children/memory-child.ts`).
 *
 * @module
 */
import { execFile } from "node:child_process";
import type { KnownStage as StageName } from "../src/observe/events.js";
import { childScript } from "./build.js";
import type { MemoryReport, MemoryRequest } from "./children/memory-child.js";

/** The heap cost of one waiting unit of `stage`, measured over `units` of them; rejects if the child fails. */
export function measureWaitingUnits(stage: StageName, units: number): Promise<MemoryReport> {
  const request: MemoryRequest = { stage, units };
  return new Promise<MemoryReport>(function runChild(resolve, reject) {
    execFile(
      process.execPath,
      ["--expose-gc", childScript("memory-child"), JSON.stringify(request)],
      { timeout: 180_000, maxBuffer: 1024 * 1024 },
      function childExited(error, stdout, stderr) {
        if (error !== null) {
          reject(new Error(`memory measurement of ${stage} failed: ${error.message}\n${stderr}`));
          return;
        }
        resolve(JSON.parse(stdout) as MemoryReport); // the one line memory-child.ts prints
      },
    );
  });
}
