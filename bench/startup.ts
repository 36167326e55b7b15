/**
 * Start-up CPU (issues 29 and 39), each subject in a fresh process, all of
 * them taking turns round by round: `node -e 0`, the command's `crawl --help`,
 * and a one-page crawl through the command in each stage against the same
 * crawl by the yardstick (bench/yardstick/ideal-crawler.mjs `--client http`,
 * the plainest `node:http` crawler), all of one page served by the
 * yardstick's site (`site-server.mjs --pages 1 --links 1`). A child's CPU
 * (user + system) is read with bash's `times`, as Node reports no child's
 * resource usage.
 *
 * The command measured is the bundle users run (package.json's `bin`,
 * dist/cli.js and dist/bin/), built from the sources into the bench's own
 * folder by bench/command-process.ts, once per bench process.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildCommand, CLI_SCRIPT } from "./command-process.js";
import { spread, type Spread } from "./stats.js";
import { YARDSTICK_DIR } from "./yardstick.js";

/** The three stages, as `--stage` names them. */
const STAGES = ["callbacks", "generators", "asyncawait"] as const;

/** One stage's one-page crawl against the yardstick's. */
export interface OnePageCrawl {
  stage: (typeof STAGES)[number];
  /** CPU of the whole `crawl` process, in ms. */
  cpuMs: Spread;
  /** Over the yardstick's CPU in the same round, one ratio per round. */
  overYardstick: Spread;
}

/** What {@link measureStartup} found. */
export interface StartupResult {
  /** Processes of each kind measured. */
  rounds: number;
  /** CPU of `node -e 0`, in ms. */
  nodeCpuMs: Spread;
  /** CPU of `node dist/cli.js --help`, in ms. */
  helpCpuMs: Spread;
  /** `crawl --help` over `node -e 0`, one ratio per round. */
  helpOverNode: Spread;
  /** CPU of the yardstick's one-page crawl, in ms; null when the yardstick was not found. */
  yardstickCpuMs: Spread | null;
  /** Each stage's one-page crawl; empty when the yardstick was not found. */
  onePage: OnePageCrawl[];
}

/** CPU in ms of `node ...args` run to its end, from bash's `times`; throws if it fails. */
function childCpuMs(args: readonly string[]): number {
  const command = `"$0" "$@" > /dev/null 2>&1 || exit 1; times`;
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

/** The yardstick's site serving one page, and its URL; stop it with `kill()`. */
async function startOnePageSite(): Promise<{ url: string; kill: () => void }> {
  const child = spawn(process.execPath, [join(YARDSTICK_DIR, "site-server.mjs"), "--port", "0", "--pages", "1", "--links", "1"], { stdio: ["ignore", "pipe", "ignore"] });
  const port = await new Promise<number>(function listening(resolve, reject) {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", function read(chunk: string) {
      text += chunk;
      const match = /listening (\d+)/.exec(text);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once("exit", function exited(code) {
      reject(new Error(`the yardstick's site-server.mjs exited (${code}) before listening`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    kill: function kill() {
      child.kill();
    },
  };
}

/** Measures `rounds` of each, in turn, and returns the medians and spreads. */
export async function measureStartup(rounds: number): Promise<StartupResult> {
  buildCommand();
  const withYardstick = existsSync(join(YARDSTICK_DIR, "ideal-crawler.mjs"));
  const site = withYardstick ? await startOnePageSite() : null;
  try {
    const node: number[] = [];
    const help: number[] = [];
    const helpRatios: number[] = [];
    const yardstick: number[] = [];
    const stageCpu = new Map(STAGES.map((stage) => [stage, [] as number[]]));
    const stageRatios = new Map(STAGES.map((stage) => [stage, [] as number[]]));
    const crawlArgs = (stage: string): string[] => [CLI_SCRIPT, "--stage", stage, "-q", "--max-tasks", "100", site?.url ?? ""];
    const yardstickArgs = (): string[] => [join(YARDSTICK_DIR, "ideal-crawler.mjs"), site?.url ?? "", "--tasks", "100", "--client", "http"];
    // Once untimed: the files into the page cache.
    childCpuMs([CLI_SCRIPT, "--help"]);
    if (site !== null) for (const stage of STAGES) childCpuMs(crawlArgs(stage));
    for (let round = 0; round < rounds; round++) {
      const nodeMs = childCpuMs(["-e", "0"]);
      const helpMs = childCpuMs([CLI_SCRIPT, "--help"]);
      node.push(nodeMs);
      help.push(helpMs);
      helpRatios.push(helpMs / nodeMs);
      if (site === null) continue;
      const yardstickMs = childCpuMs(yardstickArgs());
      yardstick.push(yardstickMs);
      for (const stage of STAGES) {
        const ms = childCpuMs(crawlArgs(stage));
        stageCpu.get(stage)?.push(ms);
        stageRatios.get(stage)?.push(ms / yardstickMs);
      }
    }
    const empty: Spread = { median: 0, min: 0, max: 0 };
    const onePage = site === null ? [] : STAGES.map(function crawlOf(stage): OnePageCrawl {
      return { stage, cpuMs: spread(stageCpu.get(stage) ?? []) ?? empty, overYardstick: spread(stageRatios.get(stage) ?? []) ?? empty };
    });
    return {
      rounds,
      nodeCpuMs: spread(node) ?? empty,
      helpCpuMs: spread(help) ?? empty,
      helpOverNode: spread(helpRatios) ?? empty,
      yardstickCpuMs: site === null ? null : (spread(yardstick) ?? empty),
      onePage,
    };
  } finally {
    site?.kill();
  }
}

/** The log line of {@link measureStartup}'s result. */
export function startupLine(startup: StartupResult): string {
  const help = `crawl --help ${startup.helpCpuMs.median.toFixed(0)} ms CPU, node -e 0 ${startup.nodeCpuMs.median.toFixed(0)} ms (${startup.helpOverNode.median.toFixed(2)} ×)`;
  if (startup.yardstickCpuMs === null) return `start-up: ${help}; the one-page crawls not measured (no yardstick in ${YARDSTICK_DIR}) (medians of ${startup.rounds})`;
  const crawls = startup.onePage.map(function shown(crawl) {
    return `${crawl.stage} ${crawl.cpuMs.median.toFixed(0)} ms (${crawl.overYardstick.median.toFixed(2)} ×)`;
  });
  return `start-up: ${help}; one-page crawl, yardstick ${startup.yardstickCpuMs.median.toFixed(0)} ms, ${crawls.join(", ")} (medians of ${startup.rounds})`;
}
