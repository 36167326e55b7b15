/**
 * The `--json` output: a {@link CrawlResult} as plain JSON data, and the
 * document written for one crawl or for `--compare`'s three; the line
 * `--jsonl` writes per record. schema/crawl-result.schema.json describes
 * them as JSON Schema.
 *
 * @module
 */
import type { CrawlItem, Item } from "../crawl/page-hook.js";
import type { CrawlResult, FetchStatistic } from "../crawl/records.js";
import type { StageName } from "../observe/events.js";
import type { StageRun } from "./compare.js";

/**
 * The version of the `--json` and `--jsonl` formats, in every document and
 * every line as `schemaVersion`. It goes up when a field is removed, renamed
 * or changes meaning; a field added leaves it as it is, so a reader should
 * ignore fields it does not know.
 */
export const SCHEMA_VERSION = 1;

/**
 * One line of `crawl --jsonl` (and of `-o FILE.jsonl`): a record, the same
 * as in `--json`'s `records`, with the {@link SCHEMA_VERSION} first.
 */
export type RecordLine = { schemaVersion: typeof SCHEMA_VERSION } & FetchStatistic;

/**
 * One item line of `crawl --jsonl` (and each line of `-o items.jsonl`): an
 * item the page hook gave, with its page's URL. `type` tells it from a
 * record line, which has none.
 */
export interface ItemLine {
  schemaVersion: typeof SCHEMA_VERSION;
  type: "item";
  /** The URL of the page the item came from. */
  url: string;
  /** What the hook gave. */
  item: Item;
}

/**
 * The options in force, as JSON: the callbacks, the signal and the
 * certificates are left out, `exclude` and `include` are their patterns'
 * sources, "no limit" is null, the headers are named without their
 * values (which can hold cookies or tokens), and the cookie jar is only
 * said to be there.
 */
export interface OptionsJson {
  /** Redirects followed from one URL. */
  maxRedirect: number;
  /** Attempts per URL on network errors. */
  maxTries: number;
  /** Fetches in flight at once. */
  maxTasks: number;
  /** The regular expression's source (`\.pdf$`), or null. */
  exclude: string | null;
  /** The regular expression's source URLs had to match (roots aside), or null. */
  include: string | null;
  /** Whether only URLs under a root's directory were crawled. */
  noParent: boolean;
  /** The deepest link followed (a root is at 0); null when there is no limit. */
  maxDepth: number | null;
  /** Strict (true) or lenient (false) host matching. */
  strict: boolean;
  /** Time allowed for one attempt, in milliseconds. */
  timeoutMs: number;
  /** The longest wait for the connection or the next bytes, in milliseconds. */
  idleTimeoutMs: number;
  /** The pause before the first retry, in milliseconds. */
  retryDelayMs: number;
  /** Null when there is no limit (`Infinity` is not JSON). */
  maxPages: number | null;
  /** The largest body accepted, in bytes. */
  maxBodyBytes: number;
  /** Whether a `200` body that is neither HTML nor XML was left unread. */
  skipNonHtml: boolean;
  /** The User-Agent header sent; its product token picks the robots.txt group. */
  userAgent: string;
  /** The names of the extra request headers, as given; their values are left out. */
  headers: string[];
  /** False when certificates were not checked (`--insecure`). */
  rejectUnauthorized: boolean;
  /** Whether robots.txt was read and obeyed (off only with `--ignore-robots`). */
  robots: boolean;
  /** Whether the crawl also started from each root origin's sitemaps (`--sitemaps`). */
  sitemaps: boolean;
  /** Requests in flight to one host at most; null when there is no limit but `maxTasks`. */
  maxPerHost: number | null;
  /** Milliseconds between the starts of two requests to one host. */
  delayMs: number;
  /** The random part of each delay, as a fraction of `delayMs`. */
  delayJitter: number;
  /** The seed of the crawl's random source (`--seed`): the same seed draws the same jitter. */
  seed: number;
  /** The longest robots.txt `Crawl-delay` obeyed, in milliseconds. */
  maxCrawlDelayMs: number;
  /** The longest `Retry-After` waited for, in milliseconds. */
  maxRetryAfterMs: number;
  /** False with `--jsonl`: the records went there, one per line, and `records` is empty. */
  keepRecords: boolean;
  /** Domains whose hosts, and their subdomains', were allowed besides the roots' (`--allowed-domain`); null: none. */
  allowedDomains: string[] | null;
  /** Whether the crawl kept cookies (`--cookies`, `--cookie-file`); the cookies themselves are left out. */
  cookies: boolean;
  /** The forward proxy of each scheme, its password as `***` (null: direct), and the `noProxy` entries; null without a proxy. */
  proxy: { http: string | null; https: string | null; noProxy: readonly string[] } | null;
}

/**
 * What `crawl --json` writes for one crawl: the {@link CrawlResult}, with
 * its options as JSON can hold them, the stage, and whether Ctrl-C stopped
 * it. docs/cli.md describes every field.
 */
export interface CrawlResultJson extends Omit<CrawlResult, "options" | "items"> {
  /** The format's version: {@link SCHEMA_VERSION}. */
  schemaVersion: typeof SCHEMA_VERSION;
  /** The stage that crawled. */
  stage: StageName;
  /** True when a signal (Ctrl-C, SIGTERM, SIGHUP) stopped the crawl early. */
  interrupted: boolean;
  /** The options in force, defaults filled in, as JSON holds them. */
  options: OptionsJson;
  /** The items the page hook gave, with their pages' URLs (empty with `--jsonl`, where they went, and without a hook). */
  items: CrawlItem[];
}

/** What `crawl --compare --json` writes: every stage's result, and the verdict. */
export interface ComparisonJson {
  /** The format's version: {@link SCHEMA_VERSION}. */
  schemaVersion: typeof SCHEMA_VERSION;
  /** True when the three stages crawled identically. */
  identical: boolean;
  /** Each stage's result, in the order they ran. */
  stages: CrawlResultJson[];
}

/** Turns a crawl result into {@link CrawlResultJson}. */
export function resultJson(stage: StageName, result: CrawlResult, interrupted: boolean): CrawlResultJson {
  const options = result.options;
  return {
    schemaVersion: SCHEMA_VERSION,
    stage,
    interrupted,
    records: result.records,
    recorded: result.recorded,
    seen: result.seen,
    todo: result.todo,
    stoppedBy: result.stoppedBy,
    startedAt: result.startedAt,
    finishedAt: result.finishedAt,
    options: {
      maxRedirect: options.maxRedirect,
      maxTries: options.maxTries,
      maxTasks: options.maxTasks,
      exclude: options.exclude === null ? null : options.exclude.source,
      include: options.include === null ? null : options.include.source,
      noParent: options.noParent,
      maxDepth: Number.isFinite(options.maxDepth) ? options.maxDepth : null,
      strict: options.strict,
      timeoutMs: options.timeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      retryDelayMs: options.retryDelayMs,
      maxPages: Number.isFinite(options.maxPages) ? options.maxPages : null,
      maxBodyBytes: options.maxBodyBytes,
      skipNonHtml: options.skipNonHtml,
      userAgent: options.userAgent,
      headers: Object.keys(options.headers),
      rejectUnauthorized: options.rejectUnauthorized,
      robots: options.robots,
      sitemaps: options.sitemaps,
      maxPerHost: Number.isFinite(options.maxPerHost) ? options.maxPerHost : null,
      delayMs: options.delayMs,
      delayJitter: options.delayJitter,
      seed: options.seed,
      maxCrawlDelayMs: options.maxCrawlDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs,
      keepRecords: options.keepRecords,
      allowedDomains: options.allowedDomains === null ? null : [...options.allowedDomains],
      cookies: options.cookies !== null,
      proxy: options.proxy === null ? null : options.proxy.toJSON(), // passwords masked
    },
    robots: result.robots,
    items: result.items ?? [],
  };
}

/** The `--json` document: one result, or with `--compare` every stage's and the verdict. */
export function jsonDocument(
  compare: boolean,
  runs: readonly StageRun[],
  identical: boolean,
  interrupted: boolean,
): CrawlResultJson | ComparisonJson {
  const results = runs.map(function toJson(run, index) {
    // Only the stage running at the signal can have been cut short: it is the last.
    return resultJson(run.stage, run.result, interrupted && index === runs.length - 1);
  });
  if (compare) return { schemaVersion: SCHEMA_VERSION, identical: identical && !interrupted, stages: results };
  return results[0];
}
