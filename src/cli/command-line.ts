/**
 * Reading the `crawl` command line: `parseArgs` on the table of flags
 * (`flags.ts`), then the checks that turn what it returns into a
 * {@link CommandLine} or a {@link UsageError}.
 *
 * @module
 */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { CrawlItem, OnPage } from "../crawl/page-hook.js";
import { resolveOptions } from "../crawl/options.js";
import type { CrawlOptions } from "../crawl/options.js";
import type { StageName } from "../observe/events.js";
import { normalizeRoot, rootProblem } from "../crawl/urls.js";
import { proxyFromEnv, ProxyServer } from "../http/proxy.js";
import { OPTIONS, REMOTE_DEFAULTS, SPECS, STAGE_NAMES } from "./flags.js";
import { isItemsFile } from "./item-files.js";
import { formatOf, looksLikeUrl, OUTPUT_EXTENSIONS, type OutputFormat } from "./outputs.js";

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
  /** `-o FILE.csv`: where to write each record as a row of CSV as it is made, or null. */
  csv: string | null;
  /** `--stats-interval SECONDS`, in ms: how often a plain progress line is printed when stderr is no terminal; 0 for never. */
  statsIntervalMs: number;
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
  /** `-o items.jsonl`, `-o items.csv`, `-o items.json`: where the page hook's items go, by format (null: nowhere). */
  itemFiles: Record<OutputFormat, string | null>;
  /** Whether a page hook gives items: `--extract` or `--script` given (`--links-in` alone gives none). */
  givesItems: boolean;
  /** `--extract NAME=SELECTOR` values, as given; read into the crawl's `onPage` by {@link readCommandLine}. */
  extract: string[];
  /** `--links-in SELECTOR` values, as given; read into the crawl's `onPage` by {@link readCommandLine}. */
  linksIn: string[];
  /** `--script FILE`, as given, or null; its module is loaded by {@link readCommandLine}. */
  script: string | null;
  /** The `onItem` the `--script` module exports, called with each item besides the outputs; null without one. */
  scriptOnItem: ((item: CrawlItem) => void) | null;
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
  /** False with `--no-redis-records`: Redis keeps which URLs have a record, not the records. */
  records?: boolean;
  /** True with `--override-politeness`: this process's `--max-per-host` and `--delay` become the crawl's, for every process. */
  overridePoliteness?: boolean;
  /** `--frontier-ca`, `--frontier-cert`, `--frontier-key`: PEM files for a `rediss://` URL. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
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
 * @param env - Where `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` are read (see {@link proxyFlags}).
 * @throws {@link UsageError} for anything that cannot be run.
 */
export function parseCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Invocation {
  const { values, positionals: roots, tokens } = parse(withValuesAttached(argv));
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };
  // Before the roots are counted: `crawl --json http://h/` took the root as its FILE.
  for (const name of ["json", "jsonl", "trace", "timeline"] as const) checkFileValue(`--${name}`, values[name]);
  for (const file of values.output ?? []) checkFileValue("-o", file);

  // robots.txt is obeyed unless --ignore-robots: the library's default is off (the chapter's crawler), the command's on.
  const crawlOptions: CrawlOptions = { maxTasks: wholeNumber("max-tasks", values["max-tasks"]), robots: values["ignore-robots"] !== true };
  if (values["max-redirect"] !== undefined) crawlOptions.maxRedirect = wholeNumber("max-redirect", values["max-redirect"]);
  if (values["max-tries"] !== undefined) crawlOptions.maxTries = wholeNumber("max-tries", values["max-tries"]);
  if (values["max-pages"] !== undefined) crawlOptions.maxPages = wholeNumber("max-pages", values["max-pages"]);
  if (values.timeout !== undefined) crawlOptions.timeoutMs = seconds("timeout", values.timeout) * 1000;
  if (values["idle-timeout"] !== undefined) crawlOptions.idleTimeoutMs = seconds("idle-timeout", values["idle-timeout"]) * 1000;
  if (values["retry-delay"] !== undefined) crawlOptions.retryDelayMs = seconds("retry-delay", values["retry-delay"]) * 1000;
  if (values["retry-http-codes"] !== undefined) crawlOptions.retryHttpCodes = statusCodes("retry-http-codes", values["retry-http-codes"]);
  if (values.ca !== undefined) crawlOptions.ca = certificatesIn(values.ca);
  if (values.insecure === true) crawlOptions.rejectUnauthorized = false;
  if (values.exclude !== undefined) crawlOptions.exclude = values.exclude;
  if (values["max-per-host"] !== undefined) crawlOptions.maxPerHost = wholeNumber("max-per-host", values["max-per-host"]);
  if (values.delay !== undefined) crawlOptions.delayMs = seconds("delay", values.delay) * 1000;
  if (values["delay-jitter"] !== undefined) crawlOptions.delayJitter = decimal("delay-jitter", values["delay-jitter"]);
  if (values.seed !== undefined) crawlOptions.seed = wholeNumber("seed", values.seed);
  if (values["max-crawl-delay"] !== undefined) crawlOptions.maxCrawlDelayMs = seconds("max-crawl-delay", values["max-crawl-delay"]) * 1000;
  if (values["max-retry-after"] !== undefined) crawlOptions.maxRetryAfterMs = seconds("max-retry-after", values["max-retry-after"]) * 1000;
  if (values["user-agent"] !== undefined) crawlOptions.userAgent = values["user-agent"];
  if (values.include !== undefined) crawlOptions.include = values.include;
  if (values["no-parent"] === true) crawlOptions.noParent = true;
  if (values["max-depth"] !== undefined) crawlOptions.maxDepth = wholeNumber("max-depth", values["max-depth"]);
  if (values["skip-non-html"] === true) crawlOptions.skipNonHtml = true;
  if (values.sitemaps === true) crawlOptions.sitemaps = true;
  if (values.header !== undefined) crawlOptions.headers = headerFlags(values.header);
  if (values.cookies === true) crawlOptions.cookies = true;
  if (values["cookie-file"] !== undefined) crawlOptions.cookieFile = values["cookie-file"]; // Read and checked with the other options, below.
  const domains = [...(values["allowed-domain"] ?? []), ...(values["allowed-domains"]?.split(",").map((domain) => domain.trim()) ?? [])];
  if (values["allowed-domain"] !== undefined || values["allowed-domains"] !== undefined) crawlOptions.allowedDomains = domains;
  if (values["link-attr"] !== undefined) crawlOptions.linkAttributes = values["link-attr"];
  const script = values.script ?? null;
  if (script === "") throw new UsageError("--script needs a FILE name, got an empty one");
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
  proxyFlags(crawlOptions, values.proxy, values["no-proxy"], demo ? {} : env);
  const frontier = frontierFlags(values, tokens, { stage, compare, demo });
  if (values.state !== undefined) crawlOptions.state = stateFlag(values.state, frontier !== null ? "--frontier" : compare ? "--compare" : demo ? "--demo" : null);
  const status = values.status === true;
  if (status && roots.length > 0) throw new UsageError("--status prints the crawl's state; give no ROOT with it");
  if (demo && roots.length > 0) throw new UsageError("--demo crawls the demo site; give no ROOT with it");
  if (!demo && !status && roots.length === 0) throw new UsageError("no ROOT given (or use --demo)");
  for (const root of roots) checkRoot(root);
  if (!demo && roots.some(isRemote)) {
    // Someone else's site: the command's gentler defaults, unless given (flags.ts says why these).
    crawlOptions.maxPerHost ??= REMOTE_DEFAULTS.maxPerHost;
    crawlOptions.delayMs ??= REMOTE_DEFAULTS.delaySeconds * 1000;
  }
  checkCrawlOptions(crawlOptions);

  const { json, jsonl, csv, itemFiles } = outputFiles(values.json ?? null, values.jsonl ?? null, values.output ?? []);
  const givesItems = (values.extract ?? []).length > 0 || script !== null;
  checkOutputs(json, jsonl, csv, compare);
  checkItemFiles(itemFiles, [json, jsonl, csv], compare, givesItems);
  // The records go to the --jsonl lines as they are made: none is kept.
  if (jsonl !== null) crawlOptions.keepRecords = false;

  const verbosity: Verbosity = values.quiet === true ? 0 : verboseCount === 0 ? 1 : verboseCount === 1 ? 2 : 3;
  const trace = values.trace ?? null;
  const traceUrl = values["trace-url"] === undefined ? null : regularExpression("trace-url", values["trace-url"]);
  const timeline = values.timeline ?? null;
  const statsIntervalMs = seconds("stats-interval", values["stats-interval"]) * 1000;
  return {
    kind: "crawl",
    commandLine: {
      roots, crawlOptions, stage, demo, compare, json, jsonl, csv, statsIntervalMs, verbosity, trace, traceUrl, timeline, frontier, status,
      itemFiles, givesItems, extract: values.extract ?? [], linksIn: values["links-in"] ?? [], script, scriptOnItem: null,
    },
  };
}

/**
 * {@link parseCommandLine}, then the page hooks of `--extract`,
 * `--links-in` and `--script` made ({@link addPageHooks}), then, with `--frontier`, the frontier's own
 * checks of its URL and name (`resolveFrontierOptions`), whose `TypeError`
 * becomes a usage error naming the flag: `--frontier: "http://h/" is not a
 * redis:// or rediss:// URL`.
 *
 * @remarks The checks live with the Redis frontier, which loads the Redis
 * client: it is imported only when `--frontier` is given, so a plain crawl
 * starts without it.
 * @throws {@link UsageError} for anything that cannot be run.
 */
export async function readCommandLine(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<Invocation> {
  const invocation = parseCommandLine(argv, env);
  if (invocation.kind === "crawl") await addPageHooks(invocation.commandLine);
  const frontier = invocation.kind === "crawl" ? invocation.commandLine.frontier : null;
  if (frontier === null) return invocation;
  const { resolveFrontierOptions } = await import("../distributed/redis-frontier.js");
  try {
    resolveFrontierOptions(frontier);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    // The frontier's messages start with the option's name: url, name (the lease was checked here already).
    const option = /^(\w+): /.exec(error.message)?.[1];
    const flag = option === "url" ? "--frontier" : option === "name" ? "--crawl-name" : option === "leaseMs" ? "--lease" : option === "tls" ? "--frontier-cert" : null;
    throw new UsageError(flag === null ? error.message : `${flag}: ${error.message.slice(`${option}: `.length)}`);
  }
  return invocation;
}

/**
 * Sets the crawl's `onPage` from `--extract`, `--links-in` and `--script`,
 * called in that order on each page (src/crawl/extract.ts `composeHooks`);
 * none of them: no hook, and nothing more is loaded.
 *
 * @remarks css-select and the script are imported only when asked for, so
 * `--help` and a plain crawl load neither (test/startup/lazy-imports.test.ts).
 * @throws {@link UsageError} naming the flag and its value or file.
 */
async function addPageHooks(commandLine: CommandLine): Promise<void> {
  const { extract, linksIn, script } = commandLine;
  if (extract.length === 0 && linksIn.length === 0 && script === null) return;
  const hooks = await import("../crawl/extract.js");
  const made = pageHooks(hooks, extract, linksIn, commandLine.crawlOptions.linkAttributes ?? []);
  if (script !== null) made.push(await loadScript(commandLine));
  commandLine.crawlOptions.onPage = hooks.composeHooks(...made);
}

/**
 * The page hooks `--extract` and `--links-in` make, in that order: none
 * when neither is given.
 *
 * @throws {@link UsageError} naming the flag and its value: a spec with no
 * `=`, a bad or repeated NAME, an empty or bad selector.
 */
function pageHooks(
  { extractHook, linksInHook, parseExtractSpec }: typeof import("../crawl/extract.js"),
  extracts: readonly string[],
  linksIn: readonly string[],
  linkAttributes: readonly string[],
): OnPage[] {
  const hooks: OnPage[] = [];
  if (extracts.length > 0) {
    const specs = extracts.map(function spec(value) {
      try {
        return parseExtractSpec(value);
      } catch (error) {
        throw new UsageError(`bad --extract: ${(error as Error).message}`);
      }
    });
    try {
      hooks.push(extractHook(specs));
    } catch (error) {
      throw new UsageError(`bad --extract: ${(error as Error).message}`);
    }
  }
  if (linksIn.length > 0) {
    try {
      hooks.push(linksInHook(linksIn, linkAttributes));
    } catch (error) {
      throw new UsageError(`bad --links-in: ${(error as Error).message}`);
    }
  }
  return hooks;
}

/**
 * Loads the `--script FILE` module (a dynamic `import()`, so an ES module:
 * `.mjs`, or `.js` that Node reads as one) and gives its `onPage`, to be
 * called after those of `--extract` and `--links-in`; its `onItem`, if it
 * exports one, is kept to be called with each item. Done before any output
 * is opened or request sent.
 *
 * @throws {@link UsageError} naming the flag and the file: missing (or a
 * directory), failing to load (its error's name and message: a
 * `SyntaxError`, or what its top level threw), or without an `onPage`
 * function (or with an `onItem` that is not one).
 */
async function loadScript(commandLine: CommandLine): Promise<OnPage> {
  const file = commandLine.script as string;
  const path = resolve(file);
  try {
    if (statSync(path).isDirectory()) throw new UsageError(`--script ${file} is a directory, not a module`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--script ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    const cause = error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
    // Node 20 reads a .js file outside a "type": "module" package as CommonJS, where `export` is a syntax error.
    const hint = /^SyntaxError: .*\b(export|import)\b/.test(cause) && !file.endsWith(".mjs") ? " (an ES module: name it .mjs, or put it in a package with \"type\": \"module\")" : "";
    throw new UsageError(`--script ${file} does not load: ${cause}${hint}`);
  }
  const { onPage, onItem } = module;
  if (typeof onPage !== "function") {
    const exported = Object.keys(module);
    throw new UsageError(`--script ${file} exports no onPage function (${exported.length === 0 ? "it exports nothing" : `it exports ${exported.join(", ")}`}): write export function onPage(page) { … }`);
  }
  if (onItem !== undefined && typeof onItem !== "function") throw new UsageError(`--script ${file} exports an onItem that is not a function`);
  commandLine.scriptOnItem = (onItem as ((item: CrawlItem) => void) | undefined) ?? null;
  return onPage as OnPage;
}

/** Why `--state` cannot go with each flag. */
const STATE_CONFLICTS = {
  "--frontier": "--frontier keeps the crawl in Redis",
  "--compare": "--compare runs every stage, and each would resume the one before",
  "--demo": "the demo site gets another port each run, which makes it another crawl",
} as const;

/** `--state DIR`, refused with a flag it cannot go with. */
function stateFlag(dir: string, conflict: keyof typeof STATE_CONFLICTS | null): string {
  if (conflict !== null) throw new UsageError(`--state and ${conflict} cannot be used together: ${STATE_CONFLICTS[conflict]}`);
  return dir;
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
  // Without --frontier, a --crawl-name crawls in the Redis of $REDIS_URL: a password there is not on the command line, which ps shows.
  const fromEnvironment = values["crawl-name"] !== undefined ? process.env["REDIS_URL"] : undefined;
  const url = values.frontier ?? (fromEnvironment === "" ? undefined : fromEnvironment);
  // --lease has a default, so whether it was typed is in the tokens.
  const lease = tokens.some((token) => token.kind === "option" && token.name === "lease");
  const tls = { caFile: values["frontier-ca"], certFile: values["frontier-cert"], keyFile: values["frontier-key"] };
  if (url === undefined) {
    const typedTls = [["--frontier-ca", tls.caFile], ["--frontier-cert", tls.certFile], ["--frontier-key", tls.keyFile]].map(([flag, file]) => [flag, file !== undefined] as const);
    const noRecords = ["--no-redis-records", values["no-redis-records"] === true] as const;
    const override = ["--override-politeness", values["override-politeness"] === true] as const;
    for (const [flag, typed] of [["--crawl-name", values["crawl-name"] !== undefined], ["--status", values.status === true], ["--lease", lease], noRecords, override, ...typedTls] as const) {
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
  const records = values["no-redis-records"] !== true;
  if (!records && values.jsonl === undefined) throw new UsageError("--no-redis-records needs --jsonl FILE: the records are written there, by each process, and nowhere else");
  const overridePoliteness = values["override-politeness"] === true;
  return { url, name, leaseMs, tls, records, ...(overridePoliteness ? { overridePoliteness } : {}) };
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
 * Refuses a FILE that cannot be one: empty (`--json=`), or a URL, which is a
 * ROOT that the optional FILE of `--json` took (`crawl --json http://h/`).
 */
function checkFileValue(flag: string, value: string | undefined): void {
  if (value === "") {
    const dash = flag === "--trace" ? " (or - for stderr)" : flag === "--json" || flag === "--jsonl" ? " (or - for stdout)" : "";
    throw new UsageError(`${flag} needs a FILE name${dash}, got an empty one`);
  }
  if (value !== undefined && looksLikeUrl(value)) {
    const bare = flag === "--json" || flag === "--jsonl" || flag === "--trace";
    const hint = bare ? `; to write to ${flag === "--trace" ? "stderr" : "stdout"}, put ${flag} after the ROOTs or write ${flag} -` : "";
    throw new UsageError(`${flag} '${value}' is a URL, not a FILE${hint}`);
  }
}

/**
 * `--json`, `--jsonl` and each `-o FILE` as the one file (or stdout) each
 * format goes to: `-o` picks the format from FILE's extension, as Scrapy's
 * feed exports do. A FILE named `items.*` ({@link isItemsFile}) gets the
 * items instead of the records. Two files for one format are refused.
 */
function outputFiles(
  json: string | null,
  jsonl: string | null,
  outputs: readonly string[],
): { json: string | null; jsonl: string | null; csv: string | null; itemFiles: Record<OutputFormat, string | null> } {
  const files = { json, jsonl, csv: null as string | null };
  const itemFiles: Record<OutputFormat, string | null> = { json: null, jsonl: null, csv: null };
  for (const file of outputs) {
    checkFileValue("-o", file);
    const format = formatOf(file);
    if (format === null) {
      throw new UsageError(`-o '${file}': name a .json, .jsonl or .csv file (the extension picks the format: ${Object.keys(OUTPUT_EXTENSIONS).join(", ")})`);
    }
    if (isItemsFile(file)) {
      const given = itemFiles[format];
      if (given !== null) throw new UsageError(`-o '${file}': the items' ${format.toUpperCase()} file is already '${given}'; give one file per format`);
      itemFiles[format] = file;
      continue;
    }
    const given = files[format];
    if (given !== null) throw new UsageError(`-o '${file}': the ${format.toUpperCase()} output is already ${given === "-" ? "stdout" : `'${given}'`}; give one file per format`);
    files[format] = file;
  }
  return { ...files, itemFiles };
}

/**
 * Refuses an items file (`-o items.*`) with no hook to give items (neither
 * `--extract` nor `--script`: the file would stay empty, or the records were
 * meant), with `--compare` (three crawls' items in one file), or writing
 * where another output does.
 */
function checkItemFiles(itemFiles: Record<OutputFormat, string | null>, recordFiles: readonly (string | null)[], compare: boolean, givesItems: boolean): void {
  const files = Object.values(itemFiles).filter((file): file is string => file !== null);
  if (files.length === 0) return;
  if (!givesItems) {
    throw new UsageError(`-o '${files[0]}' writes the items of --extract or --script, and neither is given; to write the records, name the file otherwise (a name starting with "items" is for items)`);
  }
  if (compare) throw new UsageError(`--compare and -o '${files[0]}' cannot be used together: three crawls' items would share one file`);
  const others = recordFiles.filter((file): file is string => file !== null && file !== "-");
  for (const file of files) {
    if (others.some((other) => resolve(other) === resolve(file))) throw new UsageError(`two outputs cannot both write ${file}`);
  }
}

/**
 * Refuses `--jsonl` or a CSV file with `--compare` (three crawls, one after
 * another, would take turns in one file, and the comparison needs the
 * records kept), and two outputs writing to one place: stdout or the same
 * file.
 */
function checkOutputs(json: string | null, jsonl: string | null, csv: string | null, compare: boolean): void {
  if (compare && jsonl !== null) throw new UsageError("--compare and --jsonl cannot be used together: --compare keeps every stage's records to compare them");
  if (compare && csv !== null) throw new UsageError("--compare and -o FILE.csv cannot be used together: three crawls would take turns in one file");
  if (json === "-" && jsonl === "-") throw new UsageError("--json - and --jsonl - cannot both write to stdout; give one a FILE");
  const files = [json, jsonl, csv].filter((file): file is string => file !== null && file !== "-");
  for (const [index, file] of files.entries()) {
    if (files.slice(0, index).some((other) => resolve(other) === resolve(file))) throw new UsageError(`two outputs cannot both write ${file}`);
  }
}

/**
 * Whether a root's host is someone else's: neither `localhost` (nor a name
 * under `.localhost`) nor a loopback address (127.0.0.0/8, ::1).
 */
export function isRemote(root: string): boolean {
  const host = new URL(normalizeRoot(root)).hostname.toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "[::1]") return false;
  return !/^127\.\d+\.\d+\.\d+$/.test(host);
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

/** A comma-separated list of HTTP statuses (`500,503`); empty: none. Their range is the library's check. */
function statusCodes(name: string, value: string): number[] {
  if (value.trim() === "") return [];
  const codes = value.split(",").map((code) => code.trim());
  const bad = codes.find((code) => !/^\d+$/.test(code));
  if (bad !== undefined) throw new UsageError(`--${name} expects HTTP statuses separated by commas, got '${value}'`);
  return codes.map(Number);
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

/** A root the crawl would refuse (not http(s), a port out of range, not a URL) is a usage error too, saying why. */
function checkRoot(root: string): void {
  const problem = rootProblem(root);
  if (problem !== null) throw new UsageError(`cannot crawl ROOT '${root}': ${problem}`);
}

/**
 * Sets the crawl's `proxy` and `noProxy` from `--proxy URL` (both schemes;
 * `--proxy ''`: none, the environment ignored, as in curl) and `--no-proxy
 * LIST`, or, where they are not given, from the environment's `HTTP_PROXY`,
 * `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (lowercase first:
 * `proxyFromEnv`). `--demo` passes an empty environment: the demo site, in
 * this process, is never reached through a proxy the shell happens to set.
 *
 * @throws {@link UsageError} naming the variable for a bad proxy URL in the
 * environment (`--proxy` is named by {@link checkCrawlOptions}); its password is never shown.
 */
function proxyFlags(crawlOptions: CrawlOptions, proxy: string | undefined, noProxy: string | undefined, env: Readonly<Record<string, string | undefined>>): void {
  if (noProxy !== undefined) crawlOptions.noProxy = [noProxy];
  if (proxy !== undefined) {
    if (proxy !== "") crawlOptions.proxy = proxy;
    return;
  }
  const fromEnv = proxyFromEnv(env);
  if (noProxy === undefined && fromEnv.noProxy.length > 0) crawlOptions.noProxy = fromEnv.noProxy;
  if (fromEnv.proxy === null) return;
  for (const scheme of ["http", "https", "all"] as const) {
    const name = [`${scheme}_proxy`, `${scheme.toUpperCase()}_PROXY`].find((variable) => (env[variable] ?? "").trim() !== "");
    if (name === undefined) continue;
    try {
      new ProxyServer((env[name] ?? "").trim(), name);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      throw new UsageError(`bad ${name} in the environment: ${error.message.replace(/^Expected/, "expected")}`);
    }
  }
  crawlOptions.proxy = fromEnv.proxy;
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
  retryHttpCodes: "--retry-http-codes",
  maxPages: "--max-pages",
  state: "--state",
  ca: "--ca",
  maxPerHost: "--max-per-host",
  delayMs: "--delay",
  delayJitter: "--delay-jitter",
  seed: "--seed",
  maxCrawlDelayMs: "--max-crawl-delay",
  maxRetryAfterMs: "--max-retry-after",
  userAgent: "--user-agent",
  include: "--include",
  maxDepth: "--max-depth",
  headers: "--header",
  allowedDomains: "--allowed-domain",
  cookies: "--cookies",
  cookieFile: "--cookie-file",
  linkAttributes: "--link-attr",
  proxy: "--proxy",
  noProxy: "--no-proxy",
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
