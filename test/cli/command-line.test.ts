import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseCommandLine, readCommandLine, UsageError } from "../../src/cli/command-line.js";
import type { CommandLine } from "../../src/cli/command-line.js";
import { usage } from "../../src/cli/flags.js";

function commandLine(argv: string[]): CommandLine {
  const invocation = parseCommandLine(argv);
  if (invocation.kind !== "crawl") throw new Error(`expected a crawl, got ${invocation.kind}`);
  return invocation.commandLine;
}

/** The usage error of a command line that parses but that the frontier's own checks refuse. */
async function frontierUsageError(argv: string[]): Promise<string> {
  try {
    await readCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${argv.join(" ")}`);
}

describe("parseCommandLine", () => {
  it("takes the chapter's options in kebab case", () => {
    const parsed = commandLine([
      "--max-redirect", "3", "--max-tries", "2", "--max-tasks", "7",
      "--exclude", "\\.pdf$", "--lenient", "xkcd.com", "http://example.com/",
    ]);
    expect(parsed.roots).toEqual(["xkcd.com", "http://example.com/"]);
    expect(parsed.crawlOptions).toEqual({
      maxRedirect: 3, maxTries: 2, maxTasks: 7, exclude: "\\.pdf$", strict: false, robots: true, maxPerHost: 2, delayMs: 500,
    });
  });

  it("defaults to 100 tasks, robots.txt obeyed, the asyncawait stage and the plain report", () => {
    const parsed = commandLine(["http://127.0.0.1:8080/"]);
    expect(parsed.crawlOptions).toEqual({ maxTasks: 100, robots: true });
    expect(parsed).toMatchObject({ stage: "asyncawait", demo: false, compare: false, json: null, csv: null, verbosity: 1, statsIntervalMs: 60_000 });
  });

  it("sends at most 2 requests at once, half a second apart, to a host not on this machine, unless told otherwise", () => {
    expect(commandLine(["example.com"]).crawlOptions).toEqual({ maxTasks: 100, robots: true, maxPerHost: 2, delayMs: 500 });
    expect(commandLine(["http://127.0.0.1:1/", "https://example.com/"]).crawlOptions).toMatchObject({ maxPerHost: 2, delayMs: 500 });
    expect(commandLine(["--max-per-host", "8", "example.com"]).crawlOptions).toMatchObject({ maxPerHost: 8, delayMs: 500 });
    expect(commandLine(["--delay", "0", "example.com"]).crawlOptions).toMatchObject({ maxPerHost: 2, delayMs: 0 });
    for (const root of ["localhost:8080", "http://127.1.2.3/", "http://[::1]:8080/", "http://site.localhost/"]) {
      expect(commandLine([root]).crawlOptions).toEqual({ maxTasks: 100, robots: true });
    }
    expect(commandLine(["--demo"]).crawlOptions).toEqual({ maxTasks: 100, robots: true });
  });

  it("lets the last of --strict and --lenient win, as argparse does", () => {
    expect(commandLine(["--lenient", "--strict", "a.com"]).crawlOptions.strict).toBe(true);
    expect(commandLine(["--strict", "--lenient", "a.com"]).crawlOptions.strict).toBe(false);
  });

  it("reads --timeout in seconds and --max-pages as a count", () => {
    const parsed = commandLine(["--timeout", "0.5", "--max-pages", "20", "a.com"]);
    expect(parsed.crawlOptions).toMatchObject({ timeoutMs: 500, maxPages: 20 });
  });

  it("reads --idle-timeout and --retry-delay in seconds, 0 allowed for the delay", () => {
    const parsed = commandLine(["--idle-timeout", "2.5", "--retry-delay", "0", "a.com"]);
    expect(parsed.crawlOptions).toMatchObject({ idleTimeoutMs: 2500, retryDelayMs: 0 });
    expect(usageError(["--idle-timeout", "0", "a.com"])).toBe(
      "bad --idle-timeout: expected `idleTimeoutMs` to be a number above 0 and at most 2147483647, got 0",
    );
  });

  it("reads the certificates of --ca FILE, and turns certificate checks off with --insecure", () => {
    const file = fileURLToPath(new URL("../fixtures/tls/ca.pem", import.meta.url));
    const parsed = commandLine(["--ca", file, "--insecure", "https://a.com/"]);
    expect(parsed.crawlOptions.ca).toEqual(readFileSync(file));
    expect(parsed.crawlOptions.rejectUnauthorized).toBe(false);
    expect(commandLine(["a.com"]).crawlOptions).not.toHaveProperty("rejectUnauthorized");
  });

  it("reports a --ca FILE that cannot be read, or that holds no PEM certificate", () => {
    expect(usageError(["--ca", "/no/such/file.pem", "a.com"])).toBe("cannot read --ca FILE '/no/such/file.pem': ENOENT");
    const notPem = fileURLToPath(new URL("../fixtures/tls/README.md", import.meta.url));
    expect(usageError(["--ca", notPem, "a.com"])).toMatch(/^bad --ca: expected `ca` to be PEM certificates, as a string or a Buffer, got a Buffer of \d+ bytes$/);
  });

  it("turns robots.txt off with --ignore-robots", () => {
    expect(commandLine(["--ignore-robots", "a.com"]).crawlOptions.robots).toBe(false);
    expect(usageError(["--ignore-robots=yes", "a.com"])).toBe("option '--ignore-robots' takes no value");
  });

  it("reads the politeness options: a count, milliseconds and a fraction", () => {
    const parsed = commandLine([
      "--max-per-host", "2", "--delay", "1", "--delay-jitter", "0.5",
      "--max-crawl-delay", "5", "--max-retry-after", "0", "--user-agent", "mybot/1.0 (+mailto:me@example.org)", "a.com",
    ]);
    expect(parsed.crawlOptions).toEqual({
      maxTasks: 100, robots: true, maxPerHost: 2, delayMs: 1000, delayJitter: 0.5, maxCrawlDelayMs: 5000, maxRetryAfterMs: 0,
      userAgent: "mybot/1.0 (+mailto:me@example.org)",
    });
    expect(commandLine(["--delay-jitter", "1", "--delay-jitter", ".25", "a.com"]).crawlOptions.delayJitter).toBe(0.25);
    expect(commandLine(["--seed", "4294967295", "a.com"]).crawlOptions.seed).toBe(4294967295);
  });

  it.each([
    [["--max-per-host", "two"], "--max-per-host expects a whole number, got 'two'"],
    [["--max-per-host", "0"], "bad --max-per-host: expected `maxPerHost` to be an integer from 1 and up, got 0"],
    [["--delay", "1s"], "--delay expects a number of seconds, got '1s'"],
    [["--delay", "-5"], "--delay expects a number of seconds, got '-5'"],
    [["--delay", "9999999"], "bad --delay: expected `delayMs` to be a number from 0 to 2147483647, got 9999999000"],
    [["--user-agent", "bot\u00e9"], 'bad --user-agent: expected `userAgent` to be a non-empty line of printable ASCII, got "bot\u00e9"'],
    [["--delay-jitter", "half"], "--delay-jitter expects a number, got 'half'"],
    [["--delay-jitter", "1.5"], "bad --delay-jitter: expected `delayJitter` to be a number from 0 to 1, got 1.5"],
    [["--max-crawl-delay", "30s"], "--max-crawl-delay expects a number of seconds, got '30s'"],
    [["--max-crawl-delay", "2147484"], "bad --max-crawl-delay: expected `maxCrawlDelayMs` to be a number from 0 to 2147483647, got 2147484000"],
    [["--max-retry-after", "1e3"], "--max-retry-after expects a number of seconds, got '1e3'"],
    [["--max-retry-after", "2147484"], "bad --max-retry-after: expected `maxRetryAfterMs` to be a number from 0 to 2147483647, got 2147484000"],
    [["--delay"], "option '--delay' needs a value"],
    [["--seed", "-1"], "--seed expects a whole number, got '-1'"],
    [["--seed", "4294967296"], "bad --seed: expected `seed` to be an integer from 0 to 4294967295, got 4294967296"],
  ])("reports a bad politeness value naming its flag: %j", (args, message) => {
    expect(usageError(["a.com", ...args])).toBe(message);
  });

  it("reads the crawl controls: --include, --no-parent, --max-depth, --skip-non-html and repeated --header", () => {
    const parsed = commandLine([
      "--include", "/docs/", "--no-parent", "--max-depth", "0", "--skip-non-html",
      "--header", "X-Api-Key: k1", "--header", "Accept:text/html", "--header", "Cookie: a=1; b=2", "a.com",
    ]);
    expect(parsed.crawlOptions).toEqual({
      maxTasks: 100,
      robots: true,
      include: "/docs/",
      noParent: true,
      maxDepth: 0,
      skipNonHtml: true,
      headers: { "X-Api-Key": "k1", Accept: "text/html", Cookie: "a=1; b=2" },
      maxPerHost: 2,
      delayMs: 500,
    });
  });

  it("reads --sitemaps as option sitemaps, and leaves it out when not given", () => {
    expect(commandLine(["--sitemaps", "a.com"]).crawlOptions).toMatchObject({ sitemaps: true });
    expect(commandLine(["a.com"]).crawlOptions).not.toHaveProperty("sitemaps");
  });

  it("leaves the crawl controls out when their flags are not given", () => {
    expect(commandLine(["a.com"]).crawlOptions).not.toHaveProperty("headers");
    expect(commandLine(["a.com"]).crawlOptions).not.toHaveProperty("maxDepth");
  });

  it.each([
    [["--header", "X-Api-Key"], "--header expects 'NAME: VALUE', got 'X-Api-Key'"],
    [["--header", ": v"], "--header expects 'NAME: VALUE', got ': v'"],
    [["--header", "X-A: 1", "--header", "x-a: 2"], "--header gives x-a twice"],
    [["--header", "Host: elsewhere"], "bad --header: expected `headers` not to set Host, which the crawler sets itself"],
    [["--header", "X A: 1"], 'bad --header: expected `headers` to have names that are HTTP tokens, got "X A"'],
    [["--header", "User-Agent: a/1", "--user-agent", "b/1"], "bad --header: expected `headers` not to set User-Agent when `userAgent` is given: give it once"],
    [["--max-depth", "-1"], "--max-depth expects a whole number, got '-1'"],
    [["--max-depth", "two"], "--max-depth expects a whole number, got 'two'"],
    [["--include", "("], /^bad --include: expected `include` to be a valid regular expression/],
    [["--no-parent=yes"], "option '--no-parent' takes no value"],
  ])("reports a bad crawl control naming its flag: %j", (args, message) => {
    if (typeof message === "string") expect(usageError(["a.com", ...args])).toBe(message);
    else expect(usageError(["a.com", ...args])).toMatch(message);
  });

  it("counts repeated -v and maps -q to errors only", () => {
    expect(commandLine(["-v", "a.com"]).verbosity).toBe(2);
    expect(commandLine(["-vv", "a.com"]).verbosity).toBe(3);
    expect(commandLine(["--verbose", "-v", "a.com"]).verbosity).toBe(3);
    expect(commandLine(["-q", "a.com"]).verbosity).toBe(0);
  });

  it("takes --json with a file, with -, or alone for stdout", () => {
    expect(commandLine(["--json", "out.json", "a.com"]).json).toBe("out.json");
    expect(commandLine(["--json", "-", "a.com"]).json).toBe("-");
    expect(commandLine(["a.com", "--json"]).json).toBe("-");
    expect(commandLine(["--json", "--demo"]).json).toBe("-");
  });

  it("takes --jsonl with a file, with -, or alone for stdout, and then keeps no records", () => {
    expect(commandLine(["--jsonl", "records.jsonl", "a.com"])).toMatchObject({ jsonl: "records.jsonl", crawlOptions: { keepRecords: false } });
    expect(commandLine(["--jsonl", "-", "a.com"]).jsonl).toBe("-");
    expect(commandLine(["a.com", "--jsonl"]).jsonl).toBe("-");
    expect(commandLine(["a.com"])).toMatchObject({ jsonl: null });
    expect(commandLine(["a.com"]).crawlOptions).not.toHaveProperty("keepRecords");
  });

  it("takes --jsonl with --json when they write to different places", () => {
    expect(commandLine(["--jsonl", "-", "--json", "out.json", "a.com"])).toMatchObject({ jsonl: "-", json: "out.json" });
    expect(commandLine(["--jsonl", "records.jsonl", "--json", "-", "a.com"])).toMatchObject({ jsonl: "records.jsonl", json: "-" });
  });

  it("refuses --jsonl with --compare, and --json and --jsonl writing to one place", () => {
    expect(usageError(["--compare", "--jsonl", "r.jsonl", "a.com"])).toBe(
      "--compare and --jsonl cannot be used together: --compare keeps every stage's records to compare them",
    );
    expect(usageError(["--jsonl", "-", "--json", "-", "a.com"])).toBe("--json - and --jsonl - cannot both write to stdout; give one a FILE");
    expect(usageError(["--jsonl", "out", "--json", "./out", "a.com"])).toBe("two outputs cannot both write out");
    expect(usageError(["--compare", "-o", "r.csv", "a.com"])).toBe("--compare and -o FILE.csv cannot be used together: three crawls would take turns in one file");
  });

  it("picks each -o FILE's format from its extension, as Scrapy's feeds do", () => {
    expect(commandLine(["-o", "r.json", "--output", "r.JL", "-o", "rows.csv", "a.com"])).toMatchObject({ json: "r.json", jsonl: "r.JL", csv: "rows.csv" });
    expect(commandLine(["-o", "r.ndjson", "a.com"])).toMatchObject({ json: null, jsonl: "r.ndjson", csv: null });
    expect(commandLine(["--output=r.jsonl", "a.com"]).crawlOptions.keepRecords).toBe(false);
    expect(usageError(["-o", "r.txt", "a.com"])).toBe("-o 'r.txt': name a .json, .jsonl or .csv file (the extension picks the format: .json, .jsonl, .jl, .ndjson, .csv)");
    expect(usageError(["-o", "a.json", "--json", "b.json", "a.com"])).toBe("-o 'a.json': the JSON output is already 'b.json'; give one file per format");
    expect(usageError(["--json", "-", "-o", "a.json", "a.com"])).toBe("-o 'a.json': the JSON output is already stdout; give one file per format");
  });

  it("refuses an empty FILE, and a URL taken for a FILE, with a hint", () => {
    expect(usageError(["--json=", "a.com"])).toBe("--json needs a FILE name (or - for stdout), got an empty one");
    expect(usageError(["--trace=", "a.com"])).toBe("--trace needs a FILE name (or - for stderr), got an empty one");
    expect(usageError(["-o", "", "a.com"])).toBe("-o needs a FILE name, got an empty one");
    expect(usageError(["--json", "http://a.com/"])).toBe(
      "--json 'http://a.com/' is a URL, not a FILE; to write to stdout, put --json after the ROOTs or write --json -",
    );
    expect(usageError(["--jsonl", "https://a.com/", "b.com"])).toBe(
      "--jsonl 'https://a.com/' is a URL, not a FILE; to write to stdout, put --jsonl after the ROOTs or write --jsonl -",
    );
    expect(usageError(["--timeline", "http://a.com/", "b.com"])).toBe("--timeline 'http://a.com/' is a URL, not a FILE");
    expect(usageError(["-o", "http://a.com/"])).toBe("-o 'http://a.com/' is a URL, not a FILE");
    expect(commandLine(["http://a.com/", "--json"])).toMatchObject({ json: "-", roots: ["http://a.com/"] });
  });

  it("reads --stats-interval in seconds, fractions and 0 allowed", () => {
    expect(commandLine(["--stats-interval", "0.25", "a.com"]).statsIntervalMs).toBe(250);
    expect(commandLine(["--stats-interval", "0", "a.com"]).statsIntervalMs).toBe(0);
    expect(usageError(["--stats-interval", "-1", "a.com"])).toBe("--stats-interval expects a number of seconds, got '-1'");
  });

  it("accepts --demo without a root, and --compare", () => {
    expect(commandLine(["--demo", "--compare"])).toMatchObject({ roots: [], demo: true, compare: true });
  });

  it("answers --help and --version before checking roots and values", () => {
    expect(parseCommandLine(["--help", "--max-tasks", "0"]).kind).toBe("help");
    expect(parseCommandLine(["-h"]).kind).toBe("help");
    expect(parseCommandLine(["--version"]).kind).toBe("version");
  });

  it("takes --flag=value forms, values that start with a dash, and the last of a value option given twice", () => {
    expect(commandLine(["--max-tasks=3", "--stage=callbacks", "a.com"])).toMatchObject({ crawlOptions: { maxTasks: 3 }, stage: "callbacks" });
    expect(commandLine(["--exclude", "-draft", "a.com"]).crawlOptions.exclude).toBe("-draft");
    expect(usageError(["--max-tries=-1", "a.com"])).toBe("--max-tries expects a whole number, got '-1'");
    expect(commandLine(["--max-tasks", "3", "--max-tasks", "5", "a.com"]).crawlOptions.maxTasks).toBe(5);
  });

  it("treats everything after -- as roots", () => {
    expect(commandLine(["--", "-odd.example"]).roots).toEqual(["-odd.example"]);
  });

  it("reports an unknown option by the name typed", () => {
    expect(usageError(["--max_tasks", "5", "a.com"])).toBe("unknown option '--max_tasks'");
    expect(usageError(["-x", "a.com"])).toBe("unknown option '-x'");
  });

  it("reports a number that is not a whole number", () => {
    expect(usageError(["--max-tasks", "ten", "a.com"])).toBe("--max-tasks expects a whole number, got 'ten'");
    expect(usageError(["--max-tries", "-1", "a.com"])).toBe("--max-tries expects a whole number, got '-1'");
    expect(usageError(["--timeout", "1s", "a.com"])).toBe("--timeout expects a number of seconds, got '1s'");
  });

  it("turns the library's TypeError for a bad value into a usage error naming the flag", () => {
    expect(usageError(["--max-tasks", "0", "a.com"])).toMatch(/^bad --max-tasks: expected `maxTasks` to be an integer from 1/);
    expect(usageError(["--exclude", "(", "a.com"])).toMatch(/^bad --exclude: expected `exclude` to be a valid regular expression/);
  });

  it("reports a missing root, a missing value and a value given to a flag", () => {
    expect(usageError([])).toBe("no ROOT given (or use --demo)");
    expect(usageError(["a.com", "--max-tasks"])).toBe("option '--max-tasks' needs a value");
    expect(usageError(["--demo=yes"])).toBe("option '--demo' takes no value");
    expect(usageError(["--verbose=2", "a.com"])).toBe("option '--verbose' takes no value");
  });

  it("reports an unknown stage, a root that is not http(s), and conflicting options", () => {
    expect(usageError(["--stage", "threads", "a.com"])).toBe(
      "unknown stage 'threads' (choose callbacks, generators, asyncawait)",
    );
    expect(usageError(["ftp://a.com/"])).toBe("cannot crawl ROOT 'ftp://a.com/': its scheme is ftp: (only http and https are crawled)");
    expect(usageError(["http://127.0.0.1:99999/"])).toBe("cannot crawl ROOT 'http://127.0.0.1:99999/': its port 99999 is out of range (0 to 65535)");
    expect(usageError(["-q", "-v", "a.com"])).toBe("-q and -v cannot be used together");
    expect(usageError(["--demo", "a.com"])).toBe("--demo crawls the demo site; give no ROOT with it");
    expect(usageError(["--compare", "--stage", "callbacks", "a.com"])).toBe("--compare runs every stage; leave out --stage");
  });
});

describe("parseCommandLine with --frontier", () => {
  const REDIS = "redis://127.0.0.1:6379/0";

  it("reads --frontier, --crawl-name and --lease in seconds, 30 by default", () => {
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "a.com"])).toMatchObject({
      frontier: { url: REDIS, name: "site1", leaseMs: 30_000 },
      status: false,
      stage: "asyncawait",
    });
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "--lease", "2.5", "a.com"]).frontier?.leaseMs).toBe(2500);
    expect(commandLine(["a.com"])).toMatchObject({ frontier: null, status: false });
  });

  it("reads --override-politeness into the frontier's overridePoliteness, off unless given", () => {
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "--override-politeness", "a.com"]).frontier?.overridePoliteness).toBe(true);
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "a.com"]).frontier?.overridePoliteness).toBeUndefined();
  });

  it("takes --status without a ROOT, and --stage asyncawait with --frontier", () => {
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "--status"])).toMatchObject({ roots: [], status: true });
    expect(commandLine(["--frontier", REDIS, "--crawl-name", "site1", "--stage", "asyncawait", "a.com"]).stage).toBe("asyncawait");
  });

  it.each([
    [["--crawl-name", "site1", "a.com"], "--crawl-name needs --frontier URL: it is about a crawl whose queue is in Redis"],
    [["--status"], "--status needs --frontier URL: it is about a crawl whose queue is in Redis"],
    [["--lease", "10", "a.com"], "--lease needs --frontier URL: it is about a crawl whose queue is in Redis"],
    [["--override-politeness", "a.com"], "--override-politeness needs --frontier URL: it is about a crawl whose queue is in Redis"],
    [["--frontier", REDIS, "a.com"], "--frontier needs --crawl-name NAME: the crawl's name in Redis, the same in every process"],
    [["--frontier", REDIS, "--status"], "--frontier needs --crawl-name NAME: the crawl's name in Redis, the same in every process"],
    [["--frontier", REDIS, "--crawl-name", "n", "--stage", "callbacks", "a.com"], "--frontier crawls with stage 3 only (asyncawait), not callbacks"],
    [["--frontier", REDIS, "--crawl-name", "n", "--stage", "generators", "a.com"], "--frontier crawls with stage 3 only (asyncawait), not generators"],
    [["--frontier", REDIS, "--crawl-name", "n", "--compare", "a.com"], "--frontier and --compare cannot be used together: --compare runs every stage, --frontier stage 3 only"],
    [["--frontier", REDIS, "--crawl-name", "n", "--demo"], "--frontier and --demo cannot be used together: the demo site lives in this process, where other processes cannot crawl it"],
    [["--frontier", REDIS, "--crawl-name", "n", "--status", "a.com"], "--status prints the crawl's state; give no ROOT with it"],
    [["--frontier", REDIS, "--crawl-name", "n", "--lease", "10s", "a.com"], "--lease expects a number of seconds, got '10s'"],
    [["--frontier", REDIS, "--crawl-name", "n", "--lease", "0.05", "a.com"], "--lease: expected a number of seconds from 0.1 to 2147483, got 0.05"],
    [["--frontier", REDIS, "--crawl-name", "n", "--lease", "3000000", "a.com"], "--lease: expected a number of seconds from 0.1 to 2147483, got 3000000"],
    [["a.com", "--frontier"], "option '--frontier' needs a value"],
    [["--frontier", REDIS, "--crawl-name", "n"], "no ROOT given (or use --demo)"],
  ])("refuses the frontier flags where they cannot work: %j", (args, message) => {
    expect(usageError(args)).toBe(message);
  });

  it("takes --state DIR as the state option, with any stage", () => {
    expect(commandLine(["--state", "st", "--stage", "generators", "a.com"]).crawlOptions.state).toBe("st");
    expect(commandLine(["a.com"]).crawlOptions.state).toBeUndefined();
  });

  it.each([
    [["--state", "st", "--frontier", REDIS, "--crawl-name", "n", "a.com"], "--state and --frontier cannot be used together: --frontier keeps the crawl in Redis"],
    [["--state", "st", "--compare", "a.com"], "--state and --compare cannot be used together: --compare runs every stage, and each would resume the one before"],
    [["--state", "st", "--demo"], "--state and --demo cannot be used together: the demo site gets another port each run, which makes it another crawl"],
    [["--state=", "a.com"], 'bad --state: expected `state` to be a directory path, got ""'],
  ])("refuses --state where it cannot work: %j", (args, message) => {
    expect(usageError(args)).toBe(message);
  });

  it.each([
    [["--frontier", "127.0.0.1:6379", "--crawl-name", "n", "a.com"], '--frontier: "127.0.0.1:6379" is not a URL; expected redis://HOST:PORT/DB'],
    // A host name and a port without a scheme read as a URL of the scheme "localhost:".
    [["--frontier", "localhost:6379", "--crawl-name", "n", "a.com"], '--frontier: "localhost:6379" is not a redis:// or rediss:// URL'],
    [["--frontier", "http://127.0.0.1:6379/", "--crawl-name", "n", "a.com"], '--frontier: "http://127.0.0.1:6379/" is not a redis:// or rediss:// URL'],
    [["--frontier", "redis://", "--crawl-name", "n", "a.com"], '--frontier: "redis://" has no host; expected redis://HOST:PORT/DB'],
    [["--frontier", "redis://h:6379/crawls", "--crawl-name", "n", "a.com"], '--frontier: "redis://h:6379/crawls": the path must be a database number, as in redis://HOST:PORT/0'],
    [["--frontier", "not a url", "--crawl-name", "n", "--status"], '--frontier: "not a url" is not a URL; expected redis://HOST:PORT/DB'],
    [["--frontier", REDIS, "--crawl-name", "my crawl", "a.com"], '--crawl-name: "my crawl" must be a non-empty name without braces or spaces'],
    [["--frontier", REDIS, "--crawl-name", "a{b}", "a.com"], '--crawl-name: "a{b}" must be a non-empty name without braces or spaces'],
    [["--frontier", REDIS, "--crawl-name", "", "a.com"], '--crawl-name: "" must be a non-empty name without braces or spaces'],
  ])("refuses a --frontier URL or --crawl-name that the frontier's own checks refuse: %j", async (args, message) => {
    expect(() => parseCommandLine(args)).not.toThrow();
    expect(await frontierUsageError(args)).toBe(message);
  });

  it("reads a command line without --frontier as parseCommandLine does", async () => {
    expect(await readCommandLine(["--max-tasks", "3", "a.com"])).toEqual(parseCommandLine(["--max-tasks", "3", "a.com"]));
    expect(await readCommandLine(["--frontier", REDIS, "--crawl-name", "n", "a.com"])).toEqual(
      parseCommandLine(["--frontier", REDIS, "--crawl-name", "n", "a.com"]),
    );
  });
});

describe("--retry-http-codes", () => {
  it("reads a comma-separated list of statuses, spaces allowed", () => {
    expect(commandLine(["--retry-http-codes", "500,503", "a.com"]).crawlOptions.retryHttpCodes).toEqual([500, 503]);
    expect(commandLine(["--retry-http-codes=429, 500", "a.com"]).crawlOptions.retryHttpCodes).toEqual([429, 500]);
  });

  it("turns status retries off when empty", () => {
    expect(commandLine(["--retry-http-codes", "", "a.com"]).crawlOptions.retryHttpCodes).toEqual([]);
    expect(commandLine(["--retry-http-codes=", "a.com"]).crawlOptions.retryHttpCodes).toEqual([]);
  });

  it("leaves the library's default when not given", () => {
    expect(commandLine(["a.com"]).crawlOptions.retryHttpCodes).toBeUndefined();
  });

  it("refuses what is not a list of statuses, naming the flag", () => {
    expect(usageError(["--retry-http-codes", "500,abc", "a.com"])).toBe("--retry-http-codes expects HTTP statuses separated by commas, got '500,abc'");
    expect(usageError(["--retry-http-codes", "500,,503", "a.com"])).toBe("--retry-http-codes expects HTTP statuses separated by commas, got '500,,503'");
    expect(usageError(["--retry-http-codes", "500,700", "a.com"])).toBe(
      "bad --retry-http-codes: expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 500,700",
    );
  });

  it("is in --help with its default", () => {
    expect(usage()).toContain("--retry-http-codes LIST");
    expect(usage()).toContain("(default 408,429,500,502,503,504,522,524)");
  });
});

describe("readCommandLine: data from the pages (--extract, --links-in, --link-attr, --script, items files)", () => {
  const ROOT = "http://127.0.0.1:8000/";

  async function read(argv: string[]): Promise<CommandLine> {
    const invocation = await readCommandLine(argv);
    if (invocation.kind !== "crawl") throw new Error(`expected a crawl, got ${invocation.kind}`);
    return invocation.commandLine;
  }

  async function readError(argv: string[]): Promise<string> {
    try {
      await readCommandLine(argv);
    } catch (error) {
      if (error instanceof UsageError) return error.message;
      throw error;
    }
    throw new Error(`no usage error for ${argv.join(" ")}`);
  }

  it("makes one onPage from --extract and --links-in, and takes --link-attr as linkAttributes", async () => {
    const parsed = await read(["--extract", "title=h1", "--extract", "links=a@href[]", "--links-in", "nav", "--link-attr", "data-href", ROOT]);
    expect(typeof parsed.crawlOptions.onPage).toBe("function");
    expect(parsed.crawlOptions.linkAttributes).toEqual(["data-href"]);
    expect(parsed.givesItems).toBe(true);
    expect((await read(["--links-in", "nav", ROOT])).givesItems).toBe(false);
    expect((await read([ROOT])).crawlOptions.onPage).toBeUndefined();
  });

  it("refuses a bad --extract, naming the flag and the value", async () => {
    expect(await readError(["--extract", "h1", ROOT])).toBe('bad --extract: "h1" is not NAME=SELECTOR: no "="');
    expect(await readError(["--extract", "=h1", ROOT])).toMatch(/^bad --extract: "=h1": the NAME before "=" must be/);
    expect(await readError(["--extract", "title=", ROOT])).toBe('bad --extract: "title=": the SELECTOR is empty');
    expect(await readError(["--extract", "title=h1[", ROOT])).toMatch(/^bad --extract: "title=h1\[": bad CSS selector "h1\["/);
    expect(await readError(["--extract", "a=h1", "--extract", "a=h2", ROOT])).toBe('bad --extract: the name "a" is given twice: each field needs its own');
  });

  it("refuses a bad --links-in selector and a bad --link-attr, naming the flag", async () => {
    expect(await readError(["--links-in", "nav >>", ROOT])).toMatch(/^bad --links-in: "nav >>": bad CSS selector/);
    expect(usageError(["--link-attr", "a b", ROOT])).toMatch(/^bad --link-attr: expected `linkAttributes`/);
  });

  it("refuses a script that does not exist, naming the flag, the file and the errno", async () => {
    expect(await readError(["--script", "/nonexistent/hook.mjs", ROOT])).toBe("--script /nonexistent/hook.mjs cannot be read: ENOENT");
  });

  it("sends -o items.* to the items and every other -o file to the records", () => {
    const parsed = commandLine(["--extract", "t=h1", "-o", "out/items.csv", "-o", "ITEMS-x.jsonl", "-o", "items_all.json", "-o", "itemsets.csv", ROOT]);
    expect(parsed.itemFiles).toEqual({ csv: "out/items.csv", jsonl: "ITEMS-x.jsonl", json: "items_all.json" });
    expect(parsed.csv).toBe("itemsets.csv");
  });

  it("refuses an items file without --extract or --script, with --compare, twice for a format, or where another output writes", () => {
    expect(usageError(["-o", "items.csv", ROOT])).toMatch(/^-o 'items.csv' writes the items of --extract or --script, and neither is given/);
    expect(usageError(["--links-in", "nav", "-o", "items.json", ROOT])).toMatch(/writes the items of --extract or --script/);
    expect(usageError(["--extract", "t=h1", "--compare", "-o", "items.csv", ROOT])).toMatch(/^--compare and -o 'items.csv' cannot be used together/);
    expect(usageError(["--extract", "t=h1", "-o", "items.csv", "-o", "items-2.csv", ROOT])).toBe("-o 'items-2.csv': the items' CSV file is already 'items.csv'; give one file per format");
    expect(usageError(["--extract", "t=h1", "--jsonl", "items.jsonl", "-o", "items.jsonl", ROOT])).toBe("two outputs cannot both write items.jsonl");
  });
});
