/**
 * Runs the built `crawl` command (dist/cli.js) as a child process, as a user
 * would: `npm test` builds dist/ before the tests run.
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built command. */
export const CLI_PATH = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** How a run ended and what it printed. */
export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Fails with a clear message when dist/ was not built. */
export function requireBuiltCli(): void {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run \`npm run build\` first (npm test does)`);
}

/** Runs `node dist/cli.js ...args` to the end. */
export function runCli(args: readonly string[], timeoutMs = 45_000): Promise<CliOutcome> {
  return new Promise(function run(resolve, reject) {
    execFile(process.execPath, [CLI_PATH, ...args], { timeout: timeoutMs, encoding: "utf8" }, function exited(error, stdout, stderr) {
      if (error !== null && typeof error.code !== "number") {
        reject(new Error(`crawl ${args.join(" ")} did not exit by itself: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
    });
  });
}

/** A running `crawl`, whose output can be waited on while it runs. */
export class CliProcess {
  stdout = "";
  stderr = "";
  private code: number | null | undefined = undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly closed: Promise<void>;
  private readonly waiters = new Set<() => void>();

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [CLI_PATH, ...args]);
    this.child.stdout.setEncoding("utf8").on("data", (text: string) => this.changed(() => (this.stdout += text)));
    this.child.stderr.setEncoding("utf8").on("data", (text: string) => this.changed(() => (this.stderr += text)));
    // "close" comes after the exit and after both pipes have delivered everything.
    this.closed = new Promise((resolve) => {
      this.child.once("close", (code: number | null) => {
        this.changed(() => (this.code = code));
        resolve();
      });
    });
  }

  /** Resolves once stdout contains `text`; rejects if the process ends first. */
  async waitForStdout(text: string): Promise<void> {
    while (!this.stdout.includes(text)) {
      if (this.code !== undefined) {
        throw new Error(`crawl exited (${this.code}) before printing ${JSON.stringify(text)}:\n${this.stdout}\n${this.stderr}`);
      }
      await new Promise<void>((resolve) => this.waiters.add(resolve));
    }
  }

  /** Whether the process has exited (and its output is all in). */
  get exited(): boolean {
    return this.code !== undefined;
  }

  /** Sends a signal, as Ctrl-C in a terminal does. */
  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Resolves with the outcome once the process has exited and its output is in. */
  async outcome(): Promise<CliOutcome> {
    await this.closed;
    return { code: this.code ?? null, stdout: this.stdout, stderr: this.stderr };
  }

  private changed(update: () => void): void {
    update();
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }
}
