/**
 * The `crawl` command's flags: one table of them, with their values, their
 * defaults where the command's differ from the library's, and their `--help`
 * text. Node's `parseArgs` reads the table (`command-line.ts`) and
 * {@link usage} is written from it, so the help cannot list a flag the parser
 * refuses.
 *
 * @module
 */
import { DEFAULT_OPTIONS, VERSION } from "../crawl/options.js";
import type { StageName } from "../observe/events.js";

/**
 * The command's own defaults for a crawl whose roots are not all on this
 * machine (a root whose host is not `localhost` or a loopback address), when
 * `--max-per-host` and `--delay` are not given: at most 2 requests in flight
 * to one host, and half a second between the starts of two requests to it,
 * so at most 2 requests a second per host.
 *
 * @remarks Why these: Scrapy's own default is 8 requests per domain at once
 * with no delay, and the project its `startproject` makes (since Scrapy
 * 2.13.3) sets 1 per domain and a delay of 1 s; wget waits 0 unless told. 2 and 0.5 s sit between
 * them: a site owner sees a visitor no busier than a person clicking fast,
 * while a crawl of a few thousand pages of one site still ends within the
 * hour. A crawl of one's own server (loopback: the demo, the tests, the
 * benchmarks, which call the library) keeps the library's defaults, no limit
 * but `--max-tasks` and no delay.
 */
export const REMOTE_DEFAULTS = { maxPerHost: 2, delaySeconds: 0.5 } as const;

/** The stages `--stage` accepts, in the order `--compare` runs them. */
export const STAGE_NAMES: readonly StageName[] = ["callbacks", "generators", "asyncawait"];

/** One option: `type`, `short`, `multiple` and `default` are `parseArgs`' own, the rest are for `--help`. */
export interface OptionSpec {
  /** A flag (`boolean`) or an option with a value (`string`; numbers are checked by the parser). */
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
  group: "chapter" | "scope" | "data" | "politeness" | "distributed" | "more";
}

/**
 * Every option of the `crawl` command. `parseArgs` reads `type`, `short`,
 * `multiple` and `default`, and ignores the rest; {@link usage} is written from
 * the whole table, so the help cannot list an option the parser refuses.
 */
export const OPTIONS = {
  "max-redirect": {
    type: "string", value: "N", group: "chapter",
    help: `redirects followed from one URL (default ${DEFAULT_OPTIONS.maxRedirect})`,
  },
  "max-tries": {
    type: "string", value: "N", group: "chapter",
    help: `attempts per URL on network errors and the statuses
of --retry-http-codes (default ${DEFAULT_OPTIONS.maxTries})`,
  },
  // The chapter's default, 100, where the library's is 10.
  "max-tasks": { type: "string", value: "N", default: "100", group: "chapter", help: "fetches in flight at once" },
  exclude: { type: "string", value: "REGEX", group: "chapter", help: "do not crawl URLs that REGEX matches" },
  strict: { type: "boolean", group: "chapter", help: `a link's host must equal a root's, "www." aside (default)` },
  lenient: { type: "boolean", group: "chapter", help: "a link's host need only share a root's registrable domain\n(by the Public Suffix List: a.example.co.uk for example.co.uk)" },
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
  "retry-http-codes": {
    type: "string", value: "LIST", group: "more",
    help: `HTTP statuses tried again after the --retry-delay
pause (a 429 or 503 holds its host back), comma-separated;
empty: none (default ${DEFAULT_OPTIONS.retryHttpCodes.join(",")})`,
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
  proxy: {
    type: "string", value: "URL", group: "more",
    help: `send every request through the forward proxy at URL,
http://[USER:PASSWORD@]HOST:PORT (https URLs through a CONNECT
tunnel); '' for none. Default: $HTTP_PROXY for http URLs,
$HTTPS_PROXY for https URLs, $ALL_PROXY for both (not with --demo)`,
  },
  "no-proxy": {
    type: "string", value: "LIST", group: "more",
    help: `hosts reached without the proxy, comma-separated, as
NO_PROXY lists them: example.com (and its subdomains),
HOST:PORT, an IP address, * for all (default: $NO_PROXY)`,
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
  sitemaps: {
    type: "boolean", group: "scope",
    help: `also start from each root site's sitemaps: /sitemap.xml
and robots.txt's Sitemap: lines (indexes, gzip, text too);
the pages they list are crawled like roots; each sitemap
gets a record (a missing one: its 404)`,
  },
  header: {
    type: "string", value: "'NAME: VALUE'", multiple: true, group: "scope",
    help: `send this request header too (repeat for more); one
named like a default (Accept) replaces it`,
  },
  "allowed-domain": {
    type: "string", value: "DOMAIN", multiple: true, group: "scope",
    help: `also crawl the hosts of DOMAIN and its subdomains
(example.com: www.example.com, a.example.com), whatever
--strict or --lenient say (repeat for more)`,
  },
  "allowed-domains": {
    type: "string", value: "LIST", group: "scope",
    help: "--allowed-domain for each, comma-separated",
  },
  cookies: {
    type: "boolean", group: "scope",
    help: `keep the cookies servers set (a jar per crawl, in memory)
and send each back only to the hosts it is for`,
  },
  "cookie-file": {
    type: "string", value: "FILE", group: "scope",
    help: `start the jar with the cookies of FILE, a Netscape
cookie file as curl -c writes it (implies --cookies)`,
  },
  extract: {
    type: "string", value: "NAME=SELECTOR", multiple: true, group: "data",
    help: `take data from each HTML page by CSS selector: the text
of the first match (SELECTOR@attr: an attribute of it;
SELECTOR[]: of every match), as the field NAME of one
item per page where a selector matched; repeat for
more fields (docs/extract-data.md)`,
  },
  script: {
    type: "string", value: "FILE", group: "data",
    help: `an ES module exporting onPage(page): called with each
page (URL, status, headers, text, links, document()), it
returns items, or { items, links } to choose the links
followed; loaded before the first request`,
  },
  "links-in": {
    type: "string", value: "SELECTOR", multiple: true, group: "data",
    help: `follow only the links inside the elements SELECTOR matches
(Scrapy's restrict_css); repeat for more areas`,
  },
  "link-attr": {
    type: "string", value: "NAME", multiple: true, group: "data",
    help: `also take links from the attribute NAME on any element
(data-href), besides <a href> and <area href>; repeat
for more`,
  },
  "ignore-robots": {
    type: "boolean", group: "politeness",
    help: `do not read robots.txt, and fetch what it forbids too
(by default each site's robots.txt is read and obeyed)`,
  },
  "max-per-host": {
    type: "string", value: "N", group: "politeness",
    help: `requests in flight to one host (scheme, name, port) at
most (default ${REMOTE_DEFAULTS.maxPerHost} when a root is not on this machine,
else no limit but --max-tasks)`,
  },
  delay: {
    type: "string", value: "SECONDS", group: "politeness",
    help: `pause between the starts of two requests to one host;
a longer robots.txt Crawl-delay wins (default ${REMOTE_DEFAULTS.delaySeconds}
when a root is not on this machine, else ${DEFAULT_OPTIONS.delayMs / 1000})`,
  },
  "delay-jitter": {
    type: "string", value: "F", group: "politeness",
    help: `add up to this fraction (0 to 1) of --delay at random to
each delay (default ${DEFAULT_OPTIONS.delayJitter})`,
  },
  seed: {
    type: "string", value: "N", group: "politeness",
    help: `seed the crawl's random source (--delay-jitter) with N,
0 to 4294967295, so a crawl can be replayed; the --json
output names the seed a crawl drew (default: drawn anew)`,
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
given the same URL and --crawl-name, with politeness
(--max-per-host, --delay, robots.txt) over them all;
stage 3 only. Without it, --crawl-name uses $REDIS_URL
(a password there stays out of ps)`,
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
  "no-redis-records": {
    type: "boolean", group: "distributed",
    help: `keep in Redis only which URLs have a record, not the
records: each process writes its own (needs --jsonl)`,
  },
  "override-politeness": {
    type: "boolean", group: "distributed",
    help: `join a crawl started with another --max-per-host or
--delay, and make this process's the crawl's, for every
process (the other options must still be the same)`,
  },
  "frontier-ca": {
    type: "string", value: "FILE", group: "distributed",
    help: `with a rediss:// --frontier: the PEM file of the certificate
authority to trust (default: Node's own list)`,
  },
  "frontier-cert": {
    type: "string", value: "FILE", group: "distributed",
    help: "with a rediss:// --frontier: this client's PEM certificate",
  },
  "frontier-key": {
    type: "string", value: "FILE", group: "distributed",
    help: "the --frontier-cert's PEM private key",
  },
  status: {
    type: "boolean", group: "distributed",
    help: `print the crawl's state (queued, leased, records, each
process) and exit; give no ROOT`,
  },
  state: {
    type: "string", value: "DIR", group: "more",
    help: `keep the queue, the URLs seen and the records in DIR (made
if missing): after Ctrl-C, a kill or a crash, the same
command again resumes, fetching no recorded page again;
a DIR written by another crawl (other roots or options
that shape it) is refused`,
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
  output: {
    type: "string", short: "o", value: "FILE", multiple: true, group: "more",
    help: `write the results to FILE in the format its extension
names: .json (as --json), .jsonl, .jl or .ndjson (as
--jsonl), .csv (a header row, then a row per record as
it is made); repeat for more. A FILE named items.*
(items-shop.csv...) gets the items of --extract or
--script instead: .jsonl as they come, .csv and .json
at the end`,
  },
  "stats-interval": {
    type: "string", value: "SECONDS", default: "60", group: "more",
    help: `when stderr is not a terminal (a log, a pipe) or TERM is
dumb, print a progress line there every SECONDS: pages,
errors, queued, rate, elapsed (0: never)`,
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
export const SPECS: ReadonlyMap<string, OptionSpec> = new Map<string, OptionSpec>(Object.entries(OPTIONS));

/**
 * The `--help` text, written from {@link OPTIONS} when asked for: a crawl
 * never prints it, and writing it walks the table six times, some 170 KB of
 * strings made before the first fetch and dropped (docs/benchmarks.md,
 * "Issue 39: start-up, what the first fetch waits for").
 */
export function usage(): string {
  return `Usage: crawl [options] ROOT...
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
Data from the pages (items go to --json, --jsonl and -o items.csv/.jsonl/.json):
${optionLines("data")}
Politeness (a root not on this machine gets --max-per-host ${REMOTE_DEFAULTS.maxPerHost} --delay ${REMOTE_DEFAULTS.delaySeconds}
unless given: at most ${1 / REMOTE_DEFAULTS.delaySeconds} requests a second to one host, between Scrapy's default
of 8 at once with no delay and the 1 a second its new projects set):
${optionLines("politeness")}
Many processes, one crawl (its queue in Redis):
${optionLines("distributed")}
More:
${optionLines("more")}
Exit status: 0 when the crawl finished (error records included), 1 when
--compare finds a difference, an output file could not be written, Redis
could not be used or the crawl itself failed, 2 on a usage error, 3 when
nothing was fetched (no root got a response), 130, 143 or 129 when stopped
by Ctrl-C, SIGTERM or SIGHUP (128 + the signal's number; the report and the
outputs are still written, and a second signal ends the command at once).
`;
}

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

/** The text `--version` prints. */
export function versionText(): string {
  return `crawl (coroutine-crawler) ${VERSION}\n`;
}
