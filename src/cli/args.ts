/**
 * The `crawl` command line: its options, its help text, and the parser that
 * turns `process.argv` into a {@link CommandLine} or a {@link UsageError}.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { resolveOptions, VERSION } from "../crawl/options.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { StageName } from "../observe/events.js";
import { normalizeRoot } from "../crawl/urls.js";
import { UsageError } from "./usage-error.js";

/** The stages `--stage` accepts, in the order `--compare` runs them. */
export const STAGE_NAMES: readonly StageName[] = ["callbacks", "generators", "asyncawait"];

/**
 * How much the command prints: 0 (`-q`) errors only, 1 the report (default),
 * 2 (`-v`) also a line per URL as it completes, 3 (`-vv`) also a line per
 * fetch attempt.
 */
export type Verbosity = 0 | 1 | 2 | 3;

/** A command line that parsed: what to crawl, with which stage, and what to print. */
export interface CommandLine {
  /** The roots as given (checked, not yet normalised). Empty with `--demo`. */
  roots: string[];
  /** The crawl options the flags set; callbacks and signal are added by the runner. */
  crawlOptions: CrawlOptions;
  /** The stage to run (`--stage`); ignored with `--compare`. */
  stage: StageName;
  /** `--demo`: start the demo site in this process and crawl it. */
  demo: boolean;
  /** `--compare`: run all three stages and compare their records. */
  compare: boolean;
  /** `--json FILE`: where to write the result as JSON (`-` for stdout), or null. */
  json: string | null;
  /** How much to print. */
  verbosity: Verbosity;
  /** `--trace [FILE]`: where to write the trace events as lines (`-` for stderr), or null. */
  trace: string | null;
  /** `--timeline FILE`: where to write the timeline page, or null. */
  timeline: string | null;
}

/** What the command line asks for: help, the version, or a crawl. */
export type Invocation =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "crawl"; commandLine: CommandLine };

/** The `--help` text. */
export const USAGE = `Usage: crawl [options] ROOT...
       crawl --demo [options]

Crawls the sites at each ROOT (a URL; "http://" is added when it has no
scheme), following the links whose host matches a root's host, and prints a
report with one line per URL fetched.

Options named after the chapter's crawl.py:
  --max-redirect N   redirects followed from one URL (default 10)
  --max-tries N      attempts per URL on network errors (default 4)
  --max-tasks N      fetches in flight at once (default 100)
  --exclude REGEX    do not crawl URLs that REGEX matches
  --strict           a link's host must equal a root's, "www." aside (default)
  --lenient          a link's host need only end like a root's (last two labels)
  -v, --verbose      also print a line per URL as it completes
                     (-vv: also a line per fetch attempt)
  -q, --quiet        print errors only

More:
  --timeout SECONDS  time allowed for one attempt, connect to last byte
                     (default 10; fractions allowed: 0.5)
  --max-pages N      take no more URLs from the queue after N
  --stage NAME       callbacks, generators or asyncawait (default asyncawait)
  --demo             start the built-in demo site and crawl it: no network needed
  --compare          run all three stages on the same roots, one after another,
                     and check that they crawled identically
  --json [FILE]      write the result as JSON to FILE; to stdout when FILE is
                     "-" or missing (the report then goes to stderr)
  --trace [FILE]     print every trace event (select, step, take, fetch-start,
                     connect, read, ...) as a line to FILE; to stderr when FILE
                     is "-" or missing
  --timeline FILE    write an HTML page that draws the crawl: each fetch by
                     slot or worker, fetches in flight, the queue (with
                     --compare, one panel per stage on the same time axis)
  -h, --help         print this help
  --version          print the version

Exit status: 0 when the crawl finished (error records included), 1 when
--compare finds a difference, an output file could not be written or the
crawl itself failed, 2 on a usage error, 130 when interrupted by Ctrl-C.
`;

/** The hint printed under every usage error. */
export const USAGE_HINT = "Try 'crawl --help'.";

type OptionKind = "number" | "seconds" | "string" | "flag";

/** Each option's kind, and the `CrawlOptions` field a value option sets. */
const OPTIONS: Record<string, { kind: OptionKind; field?: keyof CrawlOptions; short?: string }> = {
  "max-redirect": { kind: "number", field: "maxRedirect" },
  "max-tries": { kind: "number", field: "maxTries" },
  "max-tasks": { kind: "number", field: "maxTasks" },
  exclude: { kind: "string", field: "exclude" },
  strict: { kind: "flag" },
  lenient: { kind: "flag" },
  verbose: { kind: "flag", short: "v" },
  quiet: { kind: "flag", short: "q" },
  timeout: { kind: "seconds", field: "timeoutMs" },
  "max-pages": { kind: "number", field: "maxPages" },
  stage: { kind: "string" },
  demo: { kind: "flag" },
  compare: { kind: "flag" },
  json: { kind: "string" },
  trace: { kind: "string" },
  timeline: { kind: "string" },
  help: { kind: "flag", short: "h" },
  version: { kind: "flag" },
};

/** The chapter's default, 100, where the library's is 10. */
const DEFAULT_MAX_TASKS = 100;

/**
 * Parses the arguments after `node cli.js`.
 *
 * `parseArgs` runs in its lenient mode so that every mistake reaches the loop
 * below and gets a short message of ours; the crawl options are then checked by
 * the library's own `resolveOptions`, so a bad value is a usage error before
 * anything is fetched.
 *
 * @remarks crawl.py spells its options `--max_tasks`; a command line spells
 * them `--max-tasks`. Like argparse, the last of `--strict`/`--lenient` wins.
 * @throws {@link UsageError} for anything that cannot be run.
 */
export function parseCommandLine(argv: readonly string[]): Invocation {
  const { tokens } = parseArgs({
    args: withFileDefaults(argv),
    options: parseArgsOptions(),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });

  const roots: string[] = [];
  const crawlOptions: CrawlOptions = { maxTasks: DEFAULT_MAX_TASKS };
  const flags = new Set<string>();
  let verboseCount = 0;
  let stage: StageName = "asyncawait";
  let json: string | null = null;
  let trace: string | null = null;
  let timeline: string | null = null;

  for (const token of tokens) {
    if (token.kind === "positional") {
      roots.push(token.value);
      continue;
    }
    if (token.kind === "option-terminator") continue;
    const spec = OPTIONS[token.name];
    if (spec === undefined) {
      throw new UsageError(`unknown option '${token.rawName}'`);
    }
    if (spec.kind === "flag") {
      if (token.value !== undefined) throw new UsageError(`option '${token.rawName}' takes no value`);
      flags.add(token.name);
      if (token.name === "verbose") verboseCount += 1;
      if (token.name === "strict" || token.name === "lenient") crawlOptions.strict = token.name === "strict";
      continue;
    }
    const value = token.value;
    if (value === undefined) throw new UsageError(`option '${token.rawName}' needs a value`);
    if (token.name === "stage") stage = stageName(value);
    else if (token.name === "json") json = value;
    else if (token.name === "trace") trace = value;
    else if (token.name === "timeline") timeline = value;
    else if (spec.field !== undefined) setField(crawlOptions, spec.field, spec.kind, token.rawName, value);
  }

  if (flags.has("help")) return { kind: "help" };
  if (flags.has("version")) return { kind: "version" };
  if (flags.has("quiet") && verboseCount > 0) throw new UsageError("-q and -v cannot be used together");
  if (flags.has("compare") && tokens.some(isStageOption)) {
    throw new UsageError("--compare runs every stage; leave out --stage");
  }
  if (timeline === "-") throw new UsageError("--timeline writes an HTML file; give its name");
  const demo = flags.has("demo");
  if (demo && roots.length > 0) throw new UsageError("--demo crawls the demo site; give no ROOT with it");
  if (!demo && roots.length === 0) throw new UsageError("no ROOT given (or use --demo)");
  for (const root of roots) checkRoot(root);
  checkCrawlOptions(crawlOptions);

  const verbosity: Verbosity = flags.has("quiet") ? 0 : verboseCount === 0 ? 1 : verboseCount === 1 ? 2 : 3;
  return {
    kind: "crawl",
    commandLine: { roots, crawlOptions, stage, demo, compare: flags.has("compare"), json, verbosity, trace, timeline },
  };
}

/** The `parseArgs` configuration: every value option is a string, checked below. */
function parseArgsOptions(): Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> {
  const config: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  for (const [name, spec] of Object.entries(OPTIONS)) {
    config[name] = { type: spec.kind === "flag" ? "boolean" : "string", multiple: name === "verbose" };
    if (spec.short !== undefined) config[name].short = spec.short;
  }
  return config;
}

/** The options whose FILE may be left out: `--json` (stdout) and `--trace` (stderr). */
const OPTIONAL_FILE = new Set(["--json", "--trace"]);

/**
 * `--json` may stand alone (stdout), and so may `--trace` (stderr).
 * `parseArgs` has no optional values, so a bare `--json` at the end, or
 * before another option, becomes `--json=-`. A word after it is its FILE, as
 * in `--json out.json`.
 */
function withFileDefaults(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--") {
      args.push(...argv.slice(i));
      break;
    }
    const next = argv[i + 1];
    const nextIsOption = next !== undefined && next.startsWith("-") && next !== "-";
    args.push(OPTIONAL_FILE.has(arg) && (next === undefined || nextIsOption) ? `${arg}=-` : arg);
  }
  return args;
}

function isStageOption(token: { kind: string; name?: string }): boolean {
  return token.kind === "option" && token.name === "stage";
}

function stageName(value: string): StageName {
  const stage = STAGE_NAMES.find((name) => name === value);
  if (stage === undefined) {
    throw new UsageError(`unknown stage '${value}' (choose ${STAGE_NAMES.join(", ")})`);
  }
  return stage;
}

function setField(
  options: CrawlOptions,
  field: keyof CrawlOptions,
  kind: OptionKind,
  flag: string,
  value: string,
): void {
  if (kind === "string") {
    if (field === "exclude") options.exclude = value;
    return;
  }
  if (kind === "seconds") {
    if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value)) {
      throw new UsageError(`${flag} expects a number of seconds, got '${value}'`);
    }
    options.timeoutMs = Number(value) * 1000;
    return;
  }
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} expects a whole number, got '${value}'`);
  if (field === "maxRedirect" || field === "maxTries" || field === "maxTasks" || field === "maxPages") {
    options[field] = Number(value);
  }
}

/** A root the crawl would refuse (not http(s), not a URL) is a usage error too. */
function checkRoot(root: string): void {
  try {
    normalizeRoot(root);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new UsageError(`cannot crawl ROOT '${root}': it is not an http(s) URL`);
  }
}

/** The flag that sets each option, to name it in the library's own message. */
const FLAG_FOR: Partial<Record<keyof CrawlOptions, string>> = {
  maxRedirect: "--max-redirect",
  maxTries: "--max-tries",
  maxTasks: "--max-tasks",
  exclude: "--exclude",
  timeoutMs: "--timeout",
  maxPages: "--max-pages",
};

/**
 * Runs the library's validation now, so a bad value stops the command before
 * a socket is opened. Its `TypeError` names the option (`maxTasks`); the usage
 * error names the flag as typed on the command line.
 */
function checkCrawlOptions(options: CrawlOptions): void {
  try {
    resolveOptions(options);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    const field = /`(\w+)`/.exec(error.message)?.[1];
    const flag = Object.entries(FLAG_FOR).find(([name]) => name === field)?.[1];
    const problem = error.message.replace(/^Expected/, "expected");
    throw new UsageError(flag === undefined ? problem : `bad ${flag}: ${problem}`);
  }
}

/** The text `--version` prints. */
export function versionText(): string {
  return `crawl (coroutine-crawler) ${VERSION}\n`;
}
