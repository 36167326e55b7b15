/**
 * Start-up CPU (issue 29): the built `crawl --help` against `node -e 0`,
 * each in a fresh process, the two taking turns. A child's CPU is read with
 * bash's `times` (user + system of the finished children, to the
 * millisecond), as Node reports no child's resource usage.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { BUILD_DIR } from "./build.js";
import { spread, type Spread } from "./stats.js";

/** What {@link measureStartup} found. */
export interface StartupResult {
  /** Processes of each kind measured. */
  rounds: number;
  /** CPU of `node -e 0`, in ms. */
  nodeCpuMs: Spread;
  /** CPU of `node <build>/src/cli.js --help`, in ms. */
  helpCpuMs: Spread;
  /** `crawl --help` over `node -e 0`, one ratio per round. */
  helpOverNode: Spread;
}

/** The crawl command as the bench compiled it (the same files `npm run build` writes to dist/). */
const CLI_SCRIPT = join(BUILD_DIR, "src", "cli.js");

/** CPU in ms of `node ...args` run to its end, from bash's `times`; throws if it fails. */
function childCpuMs(args: readonly string[]): number {
  const command = `"$0" "$@" > /dev/null || exit 1; times`;
  const result = spawnSync("bash", ["-c", command, process.execPath, ...args], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr}`);
  // times prints the shell's own user and system times, then its children's: "0m0.052s 0m0.012s".
  const children = result.stdout.trim().split("\n").at(-1) ?? "";
  const seconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map(function toSeconds(match) {
    return Number(match[1]) * 60 + Number(match[2]);
  });
  if (seconds.length !== 2) throw new Error(`unexpected output of times: ${JSON.stringify(result.stdout)}`);
  return ((seconds[0] ?? 0) + (seconds[1] ?? 0)) * 1000;
}

/** Measures `rounds` of each, alternating, and returns the medians and spreads. */
export function measureStartup(rounds: number): StartupResult {
  const node: number[] = [];
  const help: number[] = [];
  const ratios: number[] = [];
  childCpuMs([CLI_SCRIPT, "--help"]); // once untimed: the files into the page cache
  for (let round = 0; round < rounds; round++) {
    const nodeMs = childCpuMs(["-e", "0"]);
    const helpMs = childCpuMs([CLI_SCRIPT, "--help"]);
    node.push(nodeMs);
    help.push(helpMs);
    ratios.push(helpMs / nodeMs);
  }
  const empty: Spread = { median: 0, min: 0, max: 0 };
  return { rounds, nodeCpuMs: spread(node) ?? empty, helpCpuMs: spread(help) ?? empty, helpOverNode: spread(ratios) ?? empty };
}
