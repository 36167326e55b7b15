/**
 * The `crawl` command line: one table of its options, read both by Node's
 * `parseArgs` and by the `--help` text, and the checks that turn what
 * `parseArgs` returns into a {@link CommandLine} or a {@link UsageError}.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_OPTIONS, resolveOptions, VERSION } from "../crawl/options.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { StageName } from "../observe/events.js";
import { normalizeRoot } from "../crawl/urls.js";

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
  /** `--jsonl FILE`: where to write each record as a line of JSON as it is made (`-` for stdout), or null. */
  jsonl: string | null;
  /** How much to print. */
  verbosity: Verbosity;
  /** `--trace [FILE]`: where to write the trace events as lines (`-` for stderr), or null. */
  trace: string | null;
  /** `--trace-url REGEX`: trace only the URLs it matches (to `--trace`'s FILE, else stderr), or null. */
  traceUrl: RegExp | null;
  /** `--timeline FILE`: where to write the timeline page, or null. */
  timeline: string | null;
  /** `--frontier URL --crawl-name NAME [--lease SECONDS]`: crawl with a queue in Redis shared by processes, or null. */
  frontier: FrontierFlags | null;
  /** `--status`: print the state of the `--frontier` crawl and exit; no crawl, no ROOT. */
  status: boolean;
}

/**
 * The frontier the `--frontier` flags name, as `RedisFrontier.open` takes
 * it. Only its lease is checked by {@link parseCommandLine}; the URL and the
 * name by {@link readCommandLine}, with the frontier's own checks.
 */
export interface FrontierFlags {
  /** `--frontier URL`: `redis://HOST:PORT/DB`; may hold a password, so never print it as it is. */
  url: string;
  /** `--crawl-name NAME`: every process of one crawl gives the same. */
  name: string;
  /** `--lease SECONDS`, in ms. */
  leaseMs: number;
}

/** What the command line asks for: help, the version, or a crawl. */
export type Invocation =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "crawl"; commandLine: CommandLine };

/**
 * The command line cannot be run as given: an unknown option, a bad number or
 * regular expression, a missing root. Its message is a single line that names
 * the problem; the command prints it after `crawl: ` with a hint to run
 * `--help`, and exits with status 2, never with a stack trace.
 *
 * @remarks Python's argparse calls `parser.error()` for this, which also exits
 * with status 2.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** One option: `type`, `short`, `multiple` and `default` are `parseArgs`' own, the rest are for `--help`. */
interface OptionSpec {
  /** A flag (`boolean`) or an option with a value (`string`; numbers are checked below). */
  type: "boolean" | "string";
  /** The one-letter form: `-v`. */
  short?: string;
  /** Given more than once, each one counts (`-vv`). */
  multiple?: boolean;
  /**
   * The value when the option is left out; `--help` shows it. Set only where
   * the command's default is its own: the library applies its own defaults.
   */
  default?: string;
  /** The value's name in `--help`: `N`, `FILE`. */
  value?: string;
  /** What the option means when given without a value (`--json` alone: `-`); `--help` shows `[FILE]`. */
  bare?: string;
  /** The `--help` text; each line after the first is indented under it. */
  help: string;
  /** The `--help` section that lists it: named after crawl.py's options, what to crawl, how to crawl politely, many processes, or the rest. */
  group: "chapter" | "scope" | "politeness" | "distributed" | "more";
}

/**
 * Every option of the `crawl` command. `parseArgs` reads `type`, `short`,
 * `multiple` and `default`, and ignores the rest; {@link USAGE} is written from
 * the whole table, so the help cannot list an option the parser refuses.
 */
const OPTIONS = {
  "max-redirect": {
    type: "string", value: "N", group: "chapter",
    help: `redirects followed from one URL (default ${DEFAULT_OPTIONS.maxRedirect})`,
  },
  "max-tries": {
    type: "string", value: "N", group: "chapter",
    help: `attempts per URL on network errors (default ${DEFAULT_OPTIONS.maxTries})`,
  },
  // The chapter's default, 100, where the library's is 10.
  "max-tasks": { type: "string", value: "N", default: "100", group: "chapter", help: "fetches in flight at once" },
  exclude: { type: "string", value: "REGEX", group: "chapter", help: "do not crawl URLs that REGEX matches" },
  strict: { type: "boolean", group: "chapter", help: `a link's host must equal a root's, "www." aside (default)` },
  lenient: { type: "boolean", group: "chapter", help: "a link's host need only end like a root's (last two labels)" },
  verbose: {
    type: "boolean", short: "v", multiple: true, group: "chapter",
    help: `also print a line per URL as it completes, with the page
that linked it: "404 URL (from PAGE)" (-vv: also a line per fetch attempt)`,
  },
  quiet: { type: "boolean", short: "q", group: "chapter", help: "print errors only" },
  timeout: {
    type: "string", value: "SECONDS", group: "more",
    help: `time allowed for one attempt, connect to last byte
(default ${DEFAULT_OPTIONS.timeoutMs / 1000}; fractions allowed: 0.5)`,
  },
  "idle-timeout": {
    type: "string", value: "SECONDS", group: "more",
    help: `longest wait for the connection, or for the next bytes
of a response, before the attempt is a Timeout (default ${DEFAULT_OPTIONS.idleTimeoutMs / 1000})`,
  },
  "retry-delay": {
    type: "string", value: "SECONDS", group: "more",
    help: `pause before the first retry, doubled before each next
one, at most 30 (default ${DEFAULT_OPTIONS.retryDelayMs / 1000}; 0: retry at once)`,
  },
  ca: {
    type: "string", value: "FILE", group: "more",
    help: `trust the PEM certificates in FILE for https (a private
CA, a self-signed server) instead of Node's default CAs`,
  },
  insecure: {
    type: "boolean", group: "more",
    help: `accept any TLS certificate, unchecked (expired,
self-signed, another host's): no protection at all`,
  },
  "max-pages": { type: "string", value: "N", group: "more", help: "take no more URLs from the queue after N" },
  include: {
    type: "string", value: "REGEX", group: "scope",
    help: `crawl only URLs that REGEX matches (the roots always)`,
  },
  "no-parent": {
    type: "boolean", group: "scope",
    help: `crawl only URLs under a root's directory: for the root
http://h/a/b.html (or http://h/a/), the paths under /a/`,
  },
  "max-depth": {
    type: "string", value: "N", group: "scope",
    help: `follow links at most N deep: the roots are at 0, their
links at 1; a redirect adds none (default: no limit)`,
  },
  "skip-non-html": {
    type: "boolean", group: "scope",
    help: `close a 200 response that is neither HTML nor XML once its
head says so, unread: its record has the type and the
Content-Length (0 when there is none)`,
  },
  header: {
    type: "string", value: "'NAME: VALUE'", multiple: true, group: "scope",
    help: `send this request header too (repeat for more); one
named like a default (Accept) replaces it`,
  },
  "ignore-robots": {
    type: "boolean", group: "politeness",
    help: `do not read robots.txt, and fetch what it forbids too
(by default each site's robots.txt is read and obeyed)`,
  },
  "max-per-host": {
    type: "string", value: "N", group: "politeness",
    help: `requests in flight to one host (scheme, name, port) at
most (default: no limit but --max-tasks)`,
  },
  delay: {
    type: "string", value: "SECONDS", group: "politeness",
    help: `pause between the starts of two requests to one host
(default ${DEFAULT_OPTIONS.delayMs / 1000}); a longer robots.txt Crawl-delay wins`,
  },
  "delay-jitter": {
    type: "string", value: "F", group: "politeness",
    help: `add up to this fraction (0 to 1) of --delay at random to
each delay (default ${DEFAULT_OPTIONS.delayJitter})`,
  },
  "max-crawl-delay": {
    type: "string", value: "SECONDS", group: "politeness",
    help: `the longest robots.txt Crawl-delay obeyed
(default ${DEFAULT_OPTIONS.maxCrawlDelayMs / 1000})`,
  },
  "max-retry-after": {
    type: "string", value: "SECONDS", group: "politeness",
    help: `a 429 or 503 whose Retry-After asks for at most this
long is tried again then; a longer one is recorded
as it is (default ${DEFAULT_OPTIONS.maxRetryAfterMs / 1000})`,
  },
  "user-agent": {
    type: "string", value: "TEXT", group: "politeness",
    help: `the User-Agent header, e.g. "mybot/1.0 (+https://you.example)";
its first word picks the robots.txt group (default
${DEFAULT_OPTIONS.userAgent})`,
  },
  frontier: {
    type: "string", value: "URL", group: "distributed",
    help: `keep the queue, the URLs seen and the records in the Redis
at URL (redis://HOST:PORT/DB), shared by every process
given the same URL and --crawl-name; stage 3 only`,
  },
  "crawl-name": {
    type: "string", value: "NAME", group: "distributed",
    help: `the crawl's name in Redis: run the same command again,
in as many processes as you like, to join or resume it`,
  },
  lease: {
    type: "string", value: "SECONDS", default: "30", group: "distributed",
    help: `how long a URL taken by a process that died waits
before another process may take it`,
  },
  status: {
    type: "boolean", group: "distributed",
    help: `print the crawl's state (queued, leased, records, each
process) and exit; give no ROOT`,
  },
  stage: { type: "string", value: "NAME", default: "asyncawait", group: "more", help: "callbacks, generators or asyncawait" },
  demo: { type: "boolean", group: "more", help: "start the built-in demo site and crawl it: no network needed" },
  compare: {
    type: "boolean", group: "more",
    help: `run all three stages on the same roots, one after another,
and check that they crawled identically`,
  },
  json: {
    type: "string", value: "FILE", bare: "-", group: "more",
    help: `write the result as JSON to FILE; to stdout when FILE is
"-" or missing (the report then goes to stderr)`,
  },
  jsonl: {
    type: "string", value: "FILE", bare: "-", group: "more",
    help: `write each record to FILE as a line of JSON as soon as
it is made, and keep none (for big crawls: the report
then counts the records but lists none); to stdout
when FILE is "-" or missing (the report goes to stderr)`,
  },
  trace: {
    type: "string", value: "FILE", bare: "-", group: "more",
    help: `print every trace event (select, step, take, fetch-start,
connect, read, ...) as a line to FILE; to stderr when FILE
is "-" or missing`,
  },
  "trace-url": {
    type: "string", value: "REGEX", group: "more",
    help: `trace only the URLs REGEX matches: each one's fetch-start,
connect, send, reads, fetch-end and record, with the loop
events of its socket or Task; to --trace's FILE if given,
else to stderr`,
  },
  timeline: {
    type: "string", value: "FILE", group: "more",
    help: `write an HTML page that draws the crawl: each fetch by
slot or worker, fetches in flight, the queue (with
--compare, one panel per stage on the same time axis)`,
  },
  help: { type: "boolean", short: "h", group: "more", help: "print this help" },
  version: { type: "boolean", group: "more", help: "print the version" },
} satisfies Record<string, OptionSpec>;

/** The table by name, for looking up a word from the command line. */
const SPECS = new Map<string, OptionSpec>(Object.entries(OPTIONS));

/** The `--help` text, written from {@link OPTIONS}. */
export const USAGE = `Usage: crawl [options] ROOT...
       crawl --demo [options]
       crawl --frontier URL --crawl-name NAME [options] ROOT...
       crawl --frontier URL --crawl-name NAME --status

Crawls the sites at each ROOT (a URL; "http://" is added when it has no
scheme), following the links whose host matches a root's host, and prints a
report with one line per URL fetched.

Options named after the chapter's crawl.py:
${optionLines("chapter")}
What to crawl, and how to ask:
${optionLines("scope")}
Politeness (on a site that is not yours: --max-per-host 2 --delay 1):
${optionLines("politeness")}
Many processes, one crawl (its queue in Redis):
${optionLines("distributed")}
More:
${optionLines("more")}
Exit status: 0 when the crawl finished (error records included), 1 when
--compare finds a difference, an output file could not be written, Redis
could not be used or the crawl itself failed, 2 on a usage error, 3 when
nothing was fetched (no root got a response), 130 when interrupted by Ctrl-C.
`;

/** The hint printed under every usage error. */
export const USAGE_HINT = "Try 'crawl --help'.";

/** One group's options as `--help` lists them: the flag in a column, then the text (below a flag too wide for the column). */
function optionLines(group: OptionSpec["group"]): string {
  let text = "";
  for (const [name, spec] of SPECS) {
    if (spec.group !== group) continue;
    const value = spec.value === undefined ? "" : spec.bare === undefined ? ` ${spec.value}` : ` [${spec.value}]`;
    const flag = `${spec.short === undefined ? "" : `-${spec.short}, `}--${name}${value}`;
    const help = spec.default === undefined ? spec.help : `${spec.help} (default ${spec.default})`;
    // A flag too wide for its column gets its text on the lines below, as argparse does.
    const lines = flag.length < 19 ? help.split("\n") : ["", ...help.split("\n")];
    const [first, ...more] = lines;
    text += `  ${flag.padEnd(19)}${first}`.trimEnd() + "\n";
    for (const line of more) text += `${" ".repeat(21)}${line}\n`;
  }
  return text;
}

/**
 * Parses the arguments after `node cli.js`.
 *
 * `parseArgs` in strict mode refuses an unknown option, a flag given a value
 * and an option missing its value; the checks here refuse the rest (numbers,
 * the stage, options that contradict each other), and the crawl options are
 * then checked by the library's own `resolveOptions`, so a bad value is a
 * usage error before anything is fetched.
 *
 * @remarks crawl.py spells its options `--max_tasks`; a command line spells
 * them `--max-tasks`. Like argparse, the last of `--strict`/`--lenient` wins,
 * and so does the last of a value option given twice.
 * @throws {@link UsageError} for anything that cannot be run.
 */
export function parseCommandLine(argv: readonly string[]): Invocation {
  const { values, positionals: roots, tokens } = parse(withValuesAttached(argv));
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };

  // robots.txt is obeyed unless --ignore-robots: the library's default is off (the chapter's crawler), the command's on.
  const crawlOptions: CrawlOptions = { maxTasks: wholeNumber("max-tasks", values["max-tasks"]), robots: values["ignore-robots"] !== true };
  if (values["max-redirect"] !== undefined) crawlOptions.maxRedirect = wholeNumber("max-redirect", values["max-redirect"]);
  if (values["max-tries"] !== undefined) crawlOptions.maxTries = wholeNumber("max-tries", values["max-tries"]);
  if (values["max-pages"] !== undefined) crawlOptions.maxPages = wholeNumber("max-pages", values["max-pages"]);
  if (values.timeout !== undefined) crawlOptions.timeoutMs = seconds("timeout", values.timeout) * 1000;
  if (values["idle-timeout"] !== undefined) crawlOptions.idleTimeoutMs = seconds("idle-timeout", values["idle-timeout"]) * 1000;
  if (values["retry-delay"] !== undefined) crawlOptions.retryDelayMs = seconds("retry-delay", values["retry-delay"]) * 1000;
  if (values.ca !== undefined) crawlOptions.ca = certificatesIn(values.ca);
  if (values.insecure === true) crawlOptions.rejectUnauthorized = false;
  if (values.exclude !== undefined) crawlOptions.exclude = values.exclude;
  if (values["max-per-host"] !== undefined) crawlOptions.maxPerHost = wholeNumber("max-per-host", values["max-per-host"]);
  if (values.delay !== undefined) crawlOptions.delayMs = seconds("delay", values.delay) * 1000;
  if (values["delay-jitter"] !== undefined) crawlOptions.delayJitter = decimal("delay-jitter", values["delay-jitter"]);
  if (values["max-crawl-delay"] !== undefined) crawlOptions.maxCrawlDelayMs = seconds("max-crawl-delay", values["max-crawl-delay"]) * 1000;
  if (values["max-retry-after"] !== undefined) crawlOptions.maxRetryAfterMs = seconds("max-retry-after", values["max-retry-after"]) * 1000;
  if (values["user-agent"] !== undefined) crawlOptions.userAgent = values["user-agent"];
  if (values.include !== undefined) crawlOptions.include = values.include;
  if (values["no-parent"] === true) crawlOptions.noParent = true;
  if (values["max-depth"] !== undefined) crawlOptions.maxDepth = wholeNumber("max-depth", values["max-depth"]);
  if (values["skip-non-html"] === true) crawlOptions.skipNonHtml = true;
  if (values.header !== undefined) crawlOptions.headers = headerFlags(values.header);
  for (const token of tokens) {
    if (token.kind === "option" && (token.name === "strict" || token.name === "lenient")) {
      crawlOptions.strict = token.name === "strict";
    }
  }
  const stage = stageName(values.stage);

  const verboseCount = values.verbose?.length ?? 0;
  if (values.quiet === true && verboseCount > 0) throw new UsageError("-q and -v cannot be used together");
  const compare = values.compare === true;
  if (compare && tokens.some(isStageOption)) throw new UsageError("--compare runs every stage; leave out --stage");
  if (values.timeline === "-") throw new UsageError("--timeline writes an HTML file; give its name");
  const demo = values.demo === true;
  const frontier = frontierFlags(values, tokens, { stage, compare, demo });
  const status = values.status === true;
  if (status && roots.length > 0) throw new UsageError("--status prints the crawl's state; give no ROOT with it");
  if (demo && roots.length > 0) throw new UsageError("--demo crawls the demo site; give no ROOT with it");
  if (!demo && !status && roots.length === 0) throw new UsageError("no ROOT given (or use --demo)");
  for (const root of roots) checkRoot(root);
  checkCrawlOptions(crawlOptions);

  const json = values.json ?? null;
  const jsonl = values.jsonl ?? null;
  checkOutputs(json, jsonl, compare);
  // The records go to the --jsonl lines as they are made: none is kept.
  if (jsonl !== null) crawlOptions.keepRecords = false;

  const verbosity: Verbosity = values.quiet === true ? 0 : verboseCount === 0 ? 1 : verboseCount === 1 ? 2 : 3;
  const trace = values.trace ?? null;
  const traceUrl = values["trace-url"] === undefined ? null : regularExpression("trace-url", values["trace-url"]);
  const timeline = values.timeline ?? null;
  return { kind: "crawl", commandLine: { roots, crawlOptions, stage, demo, compare, json, jsonl, verbosity, trace, traceUrl, timeline, frontier, status } };
}

/**
 * {@link parseCommandLine}, then, with `--frontier`, the frontier's own
 * checks of its URL and name (`resolveFrontierOptions`), whose `TypeError`
 * becomes a usage error naming the flag: `--frontier: "http://h/" is not a
 * redis:// or rediss:// URL`.
 *
 * @remarks The checks live with the Redis frontier, which loads the Redis
 * client: it is imported only when `--frontier` is given, so a plain crawl
 * starts without it.
 * @throws {@link UsageError} for anything that cannot be run.
 */
export async function readCommandLine(argv: readonly string[]): Promise<Invocation> {
  const invocation = parseCommandLine(argv);
  const frontier = invocation.kind === "crawl" ? invocation.commandLine.frontier : null;
  if (frontier === null) return invocation;
  const { resolveFrontierOptions } = await import("../distributed/redis-frontier.js");
  try {
    resolveFrontierOptions(frontier);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    // The frontier's messages start with the option's name: url, name (the lease was checked here already).
    const option = /^(\w+): /.exec(error.message)?.[1];
    const flag = option === "url" ? "--frontier" : option === "name" ? "--crawl-name" : option === "leaseMs" ? "--lease" : null;
    throw new UsageError(flag === null ? error.message : `${flag}: ${error.message.slice(`${option}: `.length)}`);
  }
  return invocation;
}

/** The shortest and longest leases: the frontier renews a lease every third of it, and Node's timers go up to 2^31 - 1 ms. */
const LEASE_MS = { min: 100, max: 2_147_483_647 } as const;

/**
 * The `--frontier`, `--crawl-name` and `--lease` flags as one
 * {@link FrontierFlags}, or null without `--frontier`; refuses them where they
 * cannot work: the others without `--frontier`, `--frontier` without a name,
 * or with a stage other than stage 3, `--compare` or `--demo`.
 */
function frontierFlags(
  values: ReturnType<typeof parse>["values"],
  tokens: ReturnType<typeof parse>["tokens"],
  given: { stage: StageName; compare: boolean; demo: boolean },
): FrontierFlags | null {
  const url = values.frontier;
  // --lease has a default, so whether it was typed is in the tokens.
  const lease = tokens.some((token) => token.kind === "option" && token.name === "lease");
  if (url === undefined) {
    for (const [flag, typed] of [["--crawl-name", values["crawl-name"] !== undefined], ["--status", values.status === true], ["--lease", lease]] as const) {
      if (typed) throw new UsageError(`${flag} needs --frontier URL: it is about a crawl whose queue is in Redis`);
    }
    return null;
  }
  const name = values["crawl-name"];
  if (name === undefined) throw new UsageError("--frontier needs --crawl-name NAME: the crawl's name in Redis, the same in every process");
  if (given.stage !== "asyncawait") throw new UsageError(`--frontier crawls with stage 3 only (asyncawait), not ${given.stage}`);
  if (given.compare) throw new UsageError("--frontier and --compare cannot be used together: --compare runs every stage, --frontier stage 3 only");
  if (given.demo) {
    throw new UsageError("--frontier and --demo cannot be used together: the demo site lives in this process, where other processes cannot crawl it");
  }
  const leaseMs = seconds("lease", values.lease) * 1000;
  if (leaseMs < LEASE_MS.min || leaseMs > LEASE_MS.max) {
    throw new UsageError(`--lease: expected a number of seconds from ${LEASE_MS.min / 1000} to ${Math.floor(LEASE_MS.max / 1000)}, got ${values.lease}`);
  }
  return { url, name, leaseMs };
}

/**
 * Runs `parseArgs` on {@link OPTIONS}; its errors become usage errors that
 * name the option as typed.
 */
function parse(args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true, tokens: true });
  } catch (error) {
    // The user's mistakes only; any other error is ours (a bad table), not a usage error.
    if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS_")) {
      throw usageError(String(error.code), error.message);
    }
    throw error;
  }
}

/**
 * Words a `parseArgs` error as one line of ours. Node's message quotes the
 * option (`Unknown option '--max_tasks'. To specify…`, `Option '-v, --verbose'
 * does not take an argument`); when it no longer does, its own message is used.
 */
function usageError(code: string, message: string): UsageError {
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && quoted !== "") return new UsageError(`unknown option '${quoted}'`);
  // Only long options take a value, so the long name is the one typed.
  const flag = /--[\w-]+/.exec(quoted)?.[0] ?? "";
  const spec = SPECS.get(flag.slice(2));
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && spec !== undefined) {
    return new UsageError(`option '${flag}' ${spec.type === "boolean" ? "takes no value" : "needs a value"}`);
  }
  return new UsageError(message.split("\n")[0]);
}

/**
 * Writes `--name value` as `--name=value` where strict `parseArgs` would read
 * it otherwise than the command does:
 * - `--json` and `--trace` may stand alone (stdout, stderr): before another
 *   option or at the end they become `--json=-`; a word after them is their
 *   FILE, as in `--json out.json`.
 * - A value that starts with a dash is still the value: `--max-tries -1` is a
 *   bad number, not (as `parseArgs` would have it) an ambiguous option.
 * Words after `--` are roots and stay as they are.
 */
function withValuesAttached(argv: readonly string[]): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--") return [...args, ...argv.slice(i)];
    const spec = arg.startsWith("--") ? SPECS.get(arg.slice(2)) : undefined;
    const next = argv[i + 1];
    if (spec?.type !== "string" || next === undefined) {
      args.push(spec?.bare === undefined ? arg : `${arg}=${spec.bare}`);
    } else if (spec.bare !== undefined && next.startsWith("-") && next !== "-") {
      args.push(`${arg}=${spec.bare}`);
    } else if (next.startsWith("-")) {
      args.push(`${arg}=${next}`);
      i += 1;
    } else {
      args.push(arg);
    }
  }
  return args;
}

/**
 * Refuses `--jsonl` with `--compare` (three crawls, one after another, would
 * take turns in one file, and the comparison needs the records kept), and
 * `--json` and `--jsonl` writing to one place: stdout or the same file.
 */
function checkOutputs(json: string | null, jsonl: string | null, compare: boolean): void {
  if (jsonl === null) return;
  if (compare) throw new UsageError("--compare and --jsonl cannot be used together: --compare keeps every stage's records to compare them");
  if (json === "-" && jsonl === "-") throw new UsageError("--json - and --jsonl - cannot both write to stdout; give one a FILE");
  if (json !== null && json !== "-" && jsonl !== "-" && resolve(json) === resolve(jsonl)) {
    throw new UsageError(`--json and --jsonl cannot both write ${json}`);
  }
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

function wholeNumber(name: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} expects a whole number, got '${value}'`);
  return Number(value);
}

/** A flag's regular expression, compiled; worded as the library words `--include`'s. */
function regularExpression(name: string, value: string): RegExp {
  try {
    return new RegExp(value);
  } catch {
    throw new UsageError(`bad --${name}: expected a valid regular expression, got ${JSON.stringify(value)}`);
  }
}

/** A decimal number without sign or exponent: `2`, `0.5`, `.5`, `2.`. */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

function seconds(name: string, value: string): number {
  if (!DECIMAL.test(value)) throw new UsageError(`--${name} expects a number of seconds, got '${value}'`);
  return Number(value);
}

/** A plain decimal; its range is the library's check. */
function decimal(name: string, value: string): number {
  if (!DECIMAL.test(value)) throw new UsageError(`--${name} expects a number, got '${value}'`);
  return Number(value);
}

/** The bytes of `--ca FILE`; whether they are PEM certificates is the library's check. */
function certificatesIn(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new UsageError(`cannot read --ca FILE '${file}': ${reason}`);
  }
}

/**
 * The `--header 'Name: value'` flags as the `headers` option: the name is
 * what comes before the first colon, the value what follows, spaces around
 * both dropped. Whether they can be sent is the library's check.
 */
function headerFlags(flags: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const given = new Set<string>();
  for (const flag of flags) {
    const colon = flag.indexOf(":");
    const name = flag.slice(0, colon).trim();
    if (colon === -1 || name === "") throw new UsageError(`--header expects 'NAME: VALUE', got '${flag}'`);
    if (given.has(name.toLowerCase())) throw new UsageError(`--header gives ${name} twice`);
    given.add(name.toLowerCase());
    headers[name] = flag.slice(colon + 1).trim();
  }
  return headers;
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
  idleTimeoutMs: "--idle-timeout",
  retryDelayMs: "--retry-delay",
  maxPages: "--max-pages",
  ca: "--ca",
  maxPerHost: "--max-per-host",
  delayMs: "--delay",
  delayJitter: "--delay-jitter",
  maxCrawlDelayMs: "--max-crawl-delay",
  maxRetryAfterMs: "--max-retry-after",
  userAgent: "--user-agent",
  include: "--include",
  maxDepth: "--max-depth",
  headers: "--header",
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
