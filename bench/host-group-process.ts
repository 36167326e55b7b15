/**
 * The site of a many-host scenario (P1), served by its own process
 * (`bench/children/host-group-child.ts`), which also counts the requests in
 * flight on its hosts while a crawl runs.
 *
 * @module
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface, type Interface } from "node:readline";
import type { FetchStatistic } from "../src/crawl/records.js";
import { childScript } from "./build.js";
import type { HostGroupLine, HostGroupRequest, InFlightReport } from "./children/host-group-child.js";
import type { Scenario } from "./scenarios.js";
import { stopChild } from "./site-process.js";

/**
 * A running host group for one scenario: its root URL, the crawl it
 * expects, its lower bound, and {@link HostGroupProcess.countInFlight}
 * around a crawl.
 */
export class HostGroupProcess {
  /** The commands sent and not answered yet, oldest first. */
  private readonly answers: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = [];

  private constructor(
    private readonly child: ChildProcess,
    lines: Interface,
    /** Host 0's root URL, which links to every host: what to crawl. */
    readonly url: string,
    /** Every record a correct crawl makes (in breadth-first order). */
    readonly expectedRecords: readonly FetchStatistic[],
    /** Breadth-first depth of the deepest page. */
    readonly maxDepth: number,
    /** The least wall time of a crawl, in ms, with the scenario's `maxTasks` and `maxPerHost`. */
    readonly bound: number,
  ) {
    const answers = this.answers;
    lines.on("line", function answered(line: string) {
      answers.shift()?.resolve(line);
    });
    child.once("exit", function exited(code) {
      for (const waiting of answers.splice(0)) waiting.reject(new Error(`the host group process exited with ${String(code)}`));
    });
  }

  /** How many records a correct crawl makes. */
  get expectedCount(): number {
    return this.expectedRecords.length;
  }

  /**
   * Starts the host group for `scenario` (which must set `maxPerHost`) and
   * resolves once every host listens.
   *
   * @throws Error if the process exits before it prints its first line.
   */
  static async start(scenario: Scenario): Promise<HostGroupProcess> {
    const request: HostGroupRequest = {
      hosts: scenario.hosts,
      pagesPerHost: Math.ceil(scenario.pages / scenario.hosts),
      linksPerPage: scenario.links,
      seed: scenario.seed,
      delayMs: scenario.delayMs,
      maxTasks: scenario.maxTasks,
      maxPerHost: scenario.maxPerHost ?? scenario.maxTasks,
    };
    // stdin is a pipe: the commands go there, and the group exits when it closes.
    const child = spawn(process.execPath, [childScript("host-group-child"), JSON.stringify(request)], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout });
    const first = await new Promise<string>(function firstLine(resolve, reject) {
      lines.once("line", resolve);
      child.once("exit", function exited(code) {
        reject(new Error(`the host group process exited with ${String(code)} before listening`));
      });
    });
    const line = JSON.parse(first) as HostGroupLine; // the line host-group-child.ts documents
    return new HostGroupProcess(child, lines, line.url, line.expected.records, line.expected.maxDepth, line.bound);
  }

  /**
   * Runs `crawl` with the hosts' counters zeroed before and read after:
   * its result, and the requests in flight the servers saw meanwhile.
   */
  async countInFlight<T>(crawl: () => Promise<T>): Promise<{ result: T; inFlight: InFlightReport }> {
    await this.command("start");
    const result = await crawl();
    const inFlight = JSON.parse(await this.command("stop")) as InFlightReport; // the answer host-group-child.ts documents
    return { result, inFlight };
  }

  /** Stops the host group and waits for its process to exit. */
  stop(): Promise<void> {
    return stopChild(this.child);
  }

  /** Sends one command line and resolves with the answer line. */
  private command(name: "start" | "stop"): Promise<string> {
    const answers = this.answers;
    const answer = new Promise<string>(function awaitAnswer(resolve, reject) {
      answers.push({ resolve, reject });
    });
    this.child.stdin?.write(`${name}\n`);
    return answer;
  }
}
