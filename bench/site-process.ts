/**
 * The synthetic site, served by its own process (`src/site/cli.ts`), so the
 * server neither shares the crawler's event loop nor counts in its memory.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { FetchStatistic } from "../src/crawl/records.js";
import { SITE_SCRIPT } from "./build.js";
import type { Scenario } from "./scenarios.js";

/** What the site process prints once it listens (`records` only without `--count-only`). */
interface SiteLine {
  url: string;
  expected: { count: number; maxDepth: number; records?: FetchStatistic[] };
  bound: number;
}

/**
 * A running site process for one scenario: its root URL, the crawl it
 * expects, and the lower bound on a crawl's wall time that it computed.
 */
export class SiteProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** The root URL to crawl. */
    readonly url: string,
    /** How many records a correct crawl makes. */
    readonly expectedCount: number,
    /**
     * Every record a correct crawl makes (in breadth-first order); null for
     * a scenario that keeps no records (S5), whose site prints only how many.
     */
    readonly expectedRecords: readonly FetchStatistic[] | null,
    /** Breadth-first depth of the deepest page. */
    readonly maxDepth: number,
    /** `max(pages × delay / maxTasks, (maxDepth + 1) × delay)` in ms, for the scenario's maxTasks. */
    readonly bound: number,
  ) {}

  /**
   * Starts the site for `scenario` and resolves once it listens.
   *
   * @throws Error if the process exits or prints something else first.
   */
  static async start(scenario: Scenario): Promise<SiteProcess> {
    const args = [
      SITE_SCRIPT,
      ...["--pages", String(scenario.pages), "--links", String(scenario.links), "--seed", String(scenario.seed)],
      ...["--delay", String(scenario.delayMs), "--max-tasks", String(scenario.maxTasks)],
      // S5's check is a count, and its million records would make a line of about 225 MB.
      ...(scenario.keepRecords ? [] : ["--count-only"]),
    ];
    // stdin is a pipe: the site exits when it closes, so it cannot outlive the benchmark.
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>(function firstLine(resolve, reject) {
      lines.once("line", resolve);
      child.once("exit", function exited(code) {
        reject(new Error(`the site process exited with ${String(code)} before listening`));
      });
    });
    lines.close();
    const line = JSON.parse(first) as SiteLine; // the one line src/site/cli.ts documents
    const { count, maxDepth, records } = line.expected;
    return new SiteProcess(child, line.url, count, records ?? null, maxDepth, line.bound);
  }

  /** Stops the site process and waits for it to exit. */
  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/** Ends a site process by closing its stdin, and resolves when it has exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>(function waitForExit(resolve) {
    child.once("exit", function stopped() {
      resolve();
    });
  });
  child.stdin?.end();
  return exited;
}
