/**
 * Crawler processes for the multi-process Redis frontier tests: each one a
 * `node dist/cli.js … --frontier …` child, as a user would start it, with
 * its pid at hand (a Redis lease's owner, `HOST:PID:RANDOM`, names it).
 *
 * A test file calls {@link killCrawlerProcesses} in its `afterEach`, so no
 * crawler outlives a failing test. Those the file forgets are killed when
 * the test process exits, and, through setpriv, when the vitest worker that
 * started them ends by a signal (as the redis-server helper does).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { CLI_PATH } from "../cli/cli-process.js";
import { findOnPath } from "../helpers/redis-server.js";

/** How a crawler process ended and what it printed. */
export interface CrawlerOutcome {
  /** The exit status, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (`SIGKILL`), or null when it exited. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Every crawler process started and not yet ended, across the test file. */
const running = new Set<CrawlerProcess>();
process.on("exit", function killLeftoverCrawlers() {
  for (const crawler of running) crawler.kill("SIGKILL");
});

/** `setpriv` (util-linux), if installed: it asks Linux to SIGKILL the child when the thread that spawned it ends. */
const SETPRIV = findOnPath("setpriv");

/** One running `crawl` command, whose output and exit can be awaited. */
export class CrawlerProcess {
  stdout = "";
  stderr = "";
  /** The process id: the middle part of the owner of every lease it holds. */
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly ended: Promise<CrawlerOutcome>;
  private done = false;

  /** Starts `node dist/cli.js ...args`. */
  constructor(args: readonly string[]) {
    const command = [process.execPath, CLI_PATH, ...args];
    // setpriv execs node, so the child's pid is the crawler's own.
    this.child = SETPRIV === null
      ? spawn(command[0] ?? "", command.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
      : spawn(SETPRIV, ["--pdeathsig", "KILL", ...command], { stdio: ["ignore", "pipe", "pipe"] });
    if (this.child.pid === undefined) throw new Error(`could not start ${command.join(" ")}`);
    this.pid = this.child.pid;
    running.add(this);
    this.child.stdout?.setEncoding("utf8").on("data", (text: string) => (this.stdout += text));
    this.child.stderr?.setEncoding("utf8").on("data", (text: string) => (this.stderr += text));
    // "close" comes after the exit and after both pipes have delivered everything.
    this.ended = new Promise((resolve) => {
      this.child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
        this.done = true;
        running.delete(this);
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  /** Whether the process has ended and its output is all in. */
  get exited(): boolean {
    return this.done;
  }

  /** Sends a signal: SIGINT as Ctrl-C does, SIGKILL as a crash. Does nothing once it has ended. */
  kill(signal: NodeJS.Signals): void {
    if (!this.done) this.child.kill(signal);
  }

  /** Resolves once the process has ended and its output is in. */
  outcome(): Promise<CrawlerOutcome> {
    return this.ended;
  }
}

/** SIGKILLs every crawler process still running and waits until each has ended. */
export async function killCrawlerProcesses(): Promise<void> {
  const left = [...running];
  for (const crawler of left) crawler.kill("SIGKILL");
  await Promise.all(left.map((crawler) => crawler.outcome()));
}

/** Whether a process with this id exists (signal 0 checks without sending anything). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

