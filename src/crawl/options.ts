/**
 * Crawl options: the chapter's command-line flags as an object, their
 * defaults, and the validation every stage runs before it starts.
 *
 * @module
 */
import pkg from "../../package.json" with { type: "json" };
import { isHeaderName, isHeaderValue, RESERVED_HEADERS } from "../http/request.js";
import { proxiesFrom, noProxyList, type Proxies } from "../http/proxy.js";
import type { Network } from "../kernel/socket.js";
import type { FetchStatistic } from "./fetch-statistic.js";
import type { CrawlItem, OnPage, PageContext } from "./page-hook.js";
import type { TraceEvent } from "../observe/events.js";
import { resolveCookies, type CookieJarLike } from "./cookies.js";
import { drawSeed, SEED_LIMIT } from "./random.js";

/** Options every stage's `crawl()` and `Crawler` accept. All are optional. */
export interface CrawlOptions {
  /** Redirects followed from one URL. Default 10. */
  maxRedirect?: number;
  /** Attempts per URL, on network errors and on the statuses of `retryHttpCodes`. Default 4. */
  maxTries?: number;
  /** Concurrent fetches (workers). Default 10. */
  maxTasks?: number;
  /** URLs matching it are not crawled (a string is compiled as a RegExp). */
  exclude?: string | RegExp;
  /**
   * Only URLs matching it (anywhere in the string) are crawled; a string is
   * compiled as a RegExp. The roots are crawled whether or not it matches them.
   */
  include?: string | RegExp;
  /**
   * True: only URLs under a root's directory are crawled (wget's `--no-parent`):
   * for the root `http://h/a/b.html` (or `http://h/a/`), the paths that start
   * with `/a/`, on the hosts that root allows. Default false.
   */
  noParent?: boolean;
  /**
   * How many links deep the crawl goes: a root is at depth 0, a page's links
   * one deeper than the page, a redirect's target as deep as the redirect.
   * Links deeper than this are not queued. Default: no limit.
   */
  maxDepth?: number;
  /**
   * Default true: a link's host must equal a root's host, modulo a leading
   * "www.". False (lenient): the hosts must share their registrable domain
   * (the public suffix and one label more, by the Public Suffix List), so a
   * root on `example.co.uk` allows `a.example.co.uk` but not `other.co.uk`.
   */
  strict?: boolean;
  /**
   * Domains whose hosts are allowed besides the roots' (Scrapy's
   * `allowed_domains`): a URL whose host is one of them, or a subdomain of
   * one (`example.com` allows `www.example.com` and `a.b.example.com`), passes
   * the host check whatever `strict` says. `include`, `exclude` and
   * `maxDepth` still apply to it; `noParent` applies only on the roots' own
   * hosts (as wget's `--no-parent` with `--domains`). Host names or IPv4
   * addresses, not URLs; matched case-insensitively, IDNs as punycode.
   * Default: none, only the roots' hosts.
   */
  allowedDomains?: readonly string[];
  /**
   * Time allowed for one attempt: connect and the whole response. Default
   * 120,000 ms (the 10 MiB `maxBodyBytes` allows, at 100 KB/s, takes 105 s);
   * at most 2³¹−1 (a timer's limit).
   */
  timeoutMs?: number;
  /**
   * Time an attempt may wait for the connection to open, or for the next
   * bytes of the response, before it ends as a `Timeout`. Default 30,000 ms;
   * at most 2³¹−1. A slow server that keeps sending is given up on only by
   * `timeoutMs`; a stalled one, by this.
   */
  idleTimeoutMs?: number;
  /**
   * The pause before the first retry, in milliseconds; it doubles before
   * each next one, up to 30 s (or `retryDelayMs`, if larger). Default 500;
   * 0: retry at once.
   */
  retryDelayMs?: number;
  /**
   * HTTP statuses tried again (within `maxTries`), as Scrapy's
   * `RETRY_HTTP_CODES`: after the pause of `retryDelayMs`, or, for a `429`
   * or `503`, after its `Retry-After` if longer (with its host held back
   * meanwhile). The last attempt's response is recorded as it is. Integers
   * from 100 to 599; `[]`: no status is retried. Default
   * `[408, 429, 500, 502, 503, 504, 522, 524]`.
   */
  retryHttpCodes?: readonly number[];
  /** Start no more fetches once this many URLs were taken. Default: no limit. */
  maxPages?: number;
  /** A larger body (on the wire or once decoded) is a `BodyTooLarge` record. Default 10 MiB. */
  maxBodyBytes?: number;
  /**
   * True: a `200` response whose media type is neither `text/html` nor
   * `application/xml` (the types links are read from) is closed as soon as its
   * head says so, and its body is never read; its record has the type, and
   * as `size` the `Content-Length` (0 when the head gives none). Default false.
   */
  skipNonHtml?: boolean;
  /** The User-Agent header, printable ASCII. Default `coroutine-crawler/<version>`. */
  userAgent?: string;
  /**
   * More request headers, sent with every request of the crawl (`robots.txt`
   * included) in every stage, after the default ones; one named like a
   * default (`Accept`) replaces it, and `User-Agent` here is the same as
   * `userAgent`. Names are RFC 9110 tokens, values printable ASCII. The headers
   * the crawler controls (`Host`, `Connection`, `Content-Length`,
   * `Transfer-Encoding`, `Accept-Encoding` and the other hop-by-hop ones) are
   * refused. Default: none.
   */
  headers?: Record<string, string>;
  /**
   * Keep cookies: `true`, a new jar for the crawl (tough-cookie's `CookieJar`
   * in memory), or a tough-cookie `CookieJar` of your own with a synchronous
   * store, which the crawl fills and you can read afterwards. Every
   * response's `Set-Cookie` fields (redirects, `robots.txt` and sitemaps
   * included) go into the jar, in every stage; every request (`robots.txt`
   * included) carries the jar's cookies for its URL in a `Cookie` header, so
   * a cookie goes back only to the host that set it (its subdomains too with
   * `Domain`), under its `Path`, and a `Secure` one only over `https:`
   * (src/crawl/cookies.ts). Default false: no cookie is kept or sent, but a
   * `Cookie` of `headers`.
   */
  cookies?: boolean | CookieJarLike;
  /**
   * A Netscape cookie file (as curl's `-c` writes it) whose cookies the
   * crawl's jar starts with; implies `cookies`. Read when the options are
   * resolved: a file that cannot be read or is not a cookie file is a
   * `TypeError` naming `cookieFile`, before anything is fetched. The file
   * is only read, never written.
   */
  cookieFile?: string;
  /**
   * PEM certificates (a string or a Buffer) to trust for `https:`, instead of
   * Node's default CAs: a private CA, or a server's self-signed certificate.
   * Default: Node's CAs (plus any in `NODE_EXTRA_CA_CERTS`).
   */
  ca?: string | Buffer;
  /** False: accept any certificate, unchecked (expired, self-signed, another host's). Default true. */
  rejectUnauthorized?: boolean;
  /**
   * Read each origin's `robots.txt` before its first page, and fetch nothing
   * it forbids to our user agent's token (a `RobotsDisallowed` record).
   * Default false in the library (the chapter's crawler); the `crawl` command
   * turns it on unless given `--ignore-robots`.
   */
  robots?: boolean;
  /**
   * Also start from each root origin's sitemaps: its `/sitemap.xml`, and the
   * `Sitemap:` lines of its `robots.txt` (with `robots`). Sitemap indexes,
   * gzip and text sitemaps are read; the pages they list are queued like roots, within the URL
   * policy. Each sitemap gets a record. Default false.
   */
  sitemaps?: boolean;
  /** Requests in flight to one host (origin) at most, however large `maxTasks` is. Default: no limit but `maxTasks`. */
  maxPerHost?: number;
  /** Milliseconds between the starts of two requests to one host. Default 0. */
  delayMs?: number;
  /** Adds up to this fraction of `delayMs` at random to each delay (0 to 1), drawn from `seed`. Default 0: exact delays. */
  delayJitter?: number;
  /** A `robots.txt` `Crawl-delay` longer than `delayMs` is honoured up to this many milliseconds. Default 30,000. */
  maxCrawlDelayMs?: number;
  /**
   * A `429` or `503` (of `retryHttpCodes`) with a `Retry-After` of at most
   * this many milliseconds is tried again after that wait, or after the
   * pause of `retryDelayMs` if longer (within `maxTries`), its host held back
   * meanwhile; one with a longer wait is recorded as the response it is.
   * Default 60,000.
   */
  maxRetryAfterMs?: number;
  /**
   * More attributes to take a page's links from, on any element, besides
   * `<a href>` and `<area href>` (`["data-href"]`; the CLI's `--link-attr`):
   * names of HTML attributes, any case. Default none.
   */
  linkAttributes?: readonly string[];
  /** Called with each record as soon as it is made. */
  onRecord?: (record: FetchStatistic) => void;
  /**
   * The user's look at each page (a response that is neither a redirect nor
   * an error, whatever its status): called with a {@link PageContext} (URL,
   * status, headers, text, bytes, links, depth, and a parsed document on
   * demand), it may return items (plain objects), `{ items, links }` to
   * follow other links than the page's, or a promise of either; the crawl's
   * stage waits for a promise in its own way, the job counting against
   * `maxTasks` meanwhile. A hook that throws or rejects gives the page an
   * `ExtractError` record, and the crawl goes on. Absent: nothing of the
   * page is kept but its record, at no cost (docs/behaviour.md, "Page hook").
   */
  onPage?: OnPage;
  /**
   * Called with each item the `onPage` hook made, with its page's URL, once
   * it is stored with its page's record: right after that record goes to
   * `onRecord`.
   */
  onItem?: (item: CrawlItem) => void;
  /**
   * False: records are handed to `onRecord` and not kept, so a crawl's memory
   * is its seen set and its queue (`result.records` is then empty, and
   * `result.recorded` counts them); nor are the `onPage` hook's items, which
   * go to `onItem` only (`result.items` is empty). Default true.
   */
  keepRecords?: boolean;
  /** Aborting it stops the crawl: no new URLs, fetches in flight cancelled, partial result. */
  signal?: AbortSignal;
  /**
   * Aborting it stops the crawl gently: no new URLs, but the fetches in
   * flight go on and make their records (a retry they need is left to do);
   * the crawl then ends with a partial result, as with `signal`, which may
   * still cut them short (the CLI's SIGTERM: `signal` follows a few seconds later).
   */
  finishSignal?: AbortSignal;
  /**
   * A directory that keeps the crawl's queue, seen set and records in a
   * crash-safe log (src/crawl/state.ts), so the same crawl run again with it
   * resumes; the CLI's `--state DIR`. Absent: in memory.
   */
  state?: string;
  /** Called with every {@link TraceEvent} the stage emits; off (and free) when absent. */
  trace?: (event: TraceEvent) => void;
  /**
   * The seed of the crawl's random source (src/crawl/random.ts), an integer
   * from 0 to 2³²−1: the same seed draws the same `delayJitter`, so a crawl
   * can be replayed. Default: a seed drawn once per crawl, which the result
   * reports in `options.seed`.
   */
  seed?: number;
  /**
   * Advanced: the network every connection of the crawl is opened through,
   * in place of the machine's own: an object whose `connect({ host, port,
   * secure, servername })` returns a socket that behaves as Node's (see
   * {@link Network}). The bottle (src/bottle/, docs/the-bottle.md) passes a
   * simulated network here, so a crawl runs on simulated hosts and faults
   * without a real socket. Every stage connects through it below its own
   * code: stages 1 and 2 in kernel/socket.ts `connect`, stage 3 in its HTTP
   * client's connector. Default: the real network (null).
   */
  network?: Network | null;
  /**
   * The forward proxy every request goes through: an `http://[user:password@]host:port`
   * URL for both schemes, or `{ http, https }`, one per scheme (null: that
   * scheme goes direct). An `http:` URL is asked of the proxy in absolute-form,
   * an `https:` one through a `CONNECT` tunnel (docs/behaviour.md, "Proxies").
   * The password is never shown: `result.options` and every message mask it.
   * The library does not read `HTTP_PROXY` and the like: `proxyFromEnv(process.env)`
   * gives the options they ask for. Default null: no proxy.
   */
  proxy?: string | { http?: string | null; https?: string | null } | Proxies | null;
  /**
   * Hosts reached without the proxy, as `NO_PROXY` lists them: `example.com`
   * (and every name under it), `.example.com`, `host:port`, an IP address,
   * or `*` for all (curl's and undici's rules: {@link Proxies}). Default none.
   */
  noProxy?: string[];
}

/** The options in force during a crawl: every field filled in. */
export interface ResolvedCrawlOptions {
  /** Redirects that may still be followed from a root or a link. */
  maxRedirect: number;
  /** Attempts per URL while the error is a network error or a status of `retryHttpCodes`. */
  maxTries: number;
  /** Fetches in flight at once: workers, or stage 1's slots. */
  maxTasks: number;
  /** URLs matching it are not crawled (roots excepted); null: none excluded. */
  exclude: RegExp | null;
  /** Only URLs matching it are crawled (roots excepted); null: no such condition. */
  include: RegExp | null;
  /** Whether only URLs under a root's directory are crawled. */
  noParent: boolean;
  /** The deepest link followed (a root is at 0); `Infinity`: no limit (JSON shows it as null). */
  maxDepth: number;
  /** True: hosts must equal a root host (modulo `www.`); false: their registrable domains (Public Suffix List) must match. */
  strict: boolean;
  /** Domains whose hosts (and their subdomains') are allowed besides the roots', lowercased, IDNs in punycode; null: none. */
  allowedDomains: readonly string[] | null;
  /** Milliseconds one attempt may take: connecting and the whole response. */
  timeoutMs: number;
  /** Milliseconds an attempt may wait for the connection, or for the next bytes of the response. */
  idleTimeoutMs: number;
  /** Milliseconds before the first retry, doubling for each next one (see {@link retryDelay}); 0: at once. */
  retryDelayMs: number;
  /** The HTTP statuses tried again, within `maxTries`; empty: none. */
  retryHttpCodes: readonly number[];
  /** URLs taken from the queue at most; `Infinity` when there is no limit (JSON shows it as null). */
  maxPages: number;
  /** The longest body accepted, on the wire and decoded. */
  maxBodyBytes: number;
  /** Whether a `200` body links are not read from is left unread. */
  skipNonHtml: boolean;
  /** Sent as the `User-Agent` header. */
  userAgent: string;
  /** The request headers sent besides the defaults and `User-Agent` (which `userAgent` holds), names as given. */
  headers: Readonly<Record<string, string>>;
  /** The crawl's cookie jar (src/crawl/cookies.ts): a new one, the caller's own, loaded from `cookieFile` or not; null: no cookies kept. */
  cookies: CookieJarLike | null;
  /** The cookie file the jar was loaded from; null: none. */
  cookieFile: string | null;
  /** The certificates `https:` trusts; null: Node's default CAs. */
  ca: string | Buffer | null;
  /** Whether a TLS server's certificate is checked. */
  rejectUnauthorized: boolean;
  /** Whether each origin's `robots.txt` is read and obeyed. */
  robots: boolean;
  /** Whether the crawl also starts from each root origin's sitemaps. */
  sitemaps: boolean;
  /** Requests in flight to one host at most; `Infinity`: no limit but `maxTasks` (JSON shows it as null). */
  maxPerHost: number;
  /** Milliseconds between the starts of two requests to one host. */
  delayMs: number;
  /** The random part of each delay, as a fraction of `delayMs` added to it. */
  delayJitter: number;
  /** The longest `Crawl-delay` honoured, in milliseconds. */
  maxCrawlDelayMs: number;
  /** The longest `Retry-After` waited for, in milliseconds. */
  maxRetryAfterMs: number;
  /** The attributes besides `<a href>` and `<area href>` links are taken from, lowercased, each once; empty: none. */
  linkAttributes: readonly string[];
  /** Called with each record as it is made; null: nobody listens. */
  onRecord: ((record: FetchStatistic) => void) | null;
  /** The page hook; null: none, and pages are read as they always are. */
  onPage: OnPage | null;
  /** Called with each item as it is made; null: nobody listens. */
  onItem: ((item: CrawlItem) => void) | null;
  /** Whether the records are kept in `result.records`. */
  keepRecords: boolean;
  /** Aborting it stops the crawl early; null: the crawl runs to its end. */
  signal: AbortSignal | null;
  /** Aborting it stops the crawl once the fetches in flight are done; null: none. */
  finishSignal: AbortSignal | null;
  /** The state directory that keeps the crawl (a `StateStore`); null: in memory. */
  state: string | null;
  /** Called with each trace event; null: no tracing. */
  trace: ((event: TraceEvent) => void) | null;
  /** The seed of the crawl's random source: the one given, or the one drawn for this crawl. */
  seed: number;
  /** The network connections are opened through; null: the machine's own. */
  network: Network | null;
  /** The proxies and the `noProxy` rules, decided once (their URLs masked in JSON); null: no proxy. */
  proxy: Proxies | null;
  /** The `noProxy` entries as given. */
  noProxy: readonly string[];
}

/**
 * The package version, sent in the default User-Agent: package.json's, read
 * from two folders up, which is the package root from src/crawl/ and from
 * dist/crawl/ alike.
 */
export const VERSION: string = pkg.version;

/**
 * The defaults, as the chapter's `crawl.py` has them where it has them.
 * `seed` is null here: {@link resolveOptions} draws one for each crawl that gives none.
 */
export const DEFAULT_OPTIONS: Readonly<Omit<ResolvedCrawlOptions, "seed"> & { seed: null }> = Object.freeze({
  maxRedirect: 10,
  maxTries: 4,
  maxTasks: 10,
  exclude: null,
  include: null,
  noParent: false,
  maxDepth: Infinity,
  strict: true,
  allowedDomains: null,
  timeoutMs: 120_000,
  idleTimeoutMs: 30_000,
  retryDelayMs: 500,
  retryHttpCodes: Object.freeze([408, 429, 500, 502, 503, 504, 522, 524]),
  maxPages: Infinity,
  maxBodyBytes: 10 * 1024 * 1024,
  skipNonHtml: false,
  userAgent: `coroutine-crawler/${VERSION}`,
  headers: Object.freeze({}),
  cookies: null,
  cookieFile: null,
  ca: null,
  rejectUnauthorized: true,
  robots: false,
  sitemaps: false,
  maxPerHost: Infinity,
  delayMs: 0,
  delayJitter: 0,
  maxCrawlDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  linkAttributes: Object.freeze([]),
  onRecord: null,
  onPage: null,
  onItem: null,
  keepRecords: true,
  signal: null,
  finishSignal: null,
  trace: null,
  state: null,
  seed: null,
  network: null,
  proxy: null,
  noProxy: Object.freeze([]),
});

const KNOWN = new Set<string>(Object.keys(DEFAULT_OPTIONS));

/**
 * Fills in defaults and checks every option.
 *
 * @throws TypeError naming the option and the value, for an unknown option or a bad value:
 * ``Expected `maxTasks` to be an integer from 1 and up, got 0``.
 */
export function resolveOptions(options: CrawlOptions = {}): ResolvedCrawlOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`Expected options to be an object, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`Unknown option \`${key}\``);
  }
  const { headers, userAgent } = requestHeaderOptions(options.headers, options.userAgent);
  return {
    maxRedirect: integer("maxRedirect", options.maxRedirect, 0, DEFAULT_OPTIONS.maxRedirect),
    maxTries: integer("maxTries", options.maxTries, 1, DEFAULT_OPTIONS.maxTries),
    maxTasks: integer("maxTasks", options.maxTasks, 1, DEFAULT_OPTIONS.maxTasks),
    exclude: regExp("exclude", options.exclude),
    include: regExp("include", options.include),
    noParent: boolean("noParent", options.noParent, DEFAULT_OPTIONS.noParent),
    maxDepth: integer("maxDepth", options.maxDepth, 0, DEFAULT_OPTIONS.maxDepth, true),
    strict: boolean("strict", options.strict, DEFAULT_OPTIONS.strict),
    allowedDomains: domainList("allowedDomains", options.allowedDomains),
    timeoutMs: positiveNumber("timeoutMs", options.timeoutMs, DEFAULT_OPTIONS.timeoutMs),
    idleTimeoutMs: positiveNumber("idleTimeoutMs", options.idleTimeoutMs, DEFAULT_OPTIONS.idleTimeoutMs),
    retryDelayMs: delay("retryDelayMs", options.retryDelayMs, DEFAULT_OPTIONS.retryDelayMs),
    retryHttpCodes: statusList("retryHttpCodes", options.retryHttpCodes, DEFAULT_OPTIONS.retryHttpCodes),
    maxPages: integer("maxPages", options.maxPages, 1, DEFAULT_OPTIONS.maxPages, true),
    maxBodyBytes: integer("maxBodyBytes", options.maxBodyBytes, 1, DEFAULT_OPTIONS.maxBodyBytes),
    skipNonHtml: boolean("skipNonHtml", options.skipNonHtml, DEFAULT_OPTIONS.skipNonHtml),
    userAgent,
    headers,
    cookies: resolveCookies(options.cookies, options.cookieFile),
    cookieFile: options.cookieFile ?? null,
    ca: certificates(options.ca),
    rejectUnauthorized: boolean("rejectUnauthorized", options.rejectUnauthorized, DEFAULT_OPTIONS.rejectUnauthorized),
    robots: boolean("robots", options.robots, DEFAULT_OPTIONS.robots),
    sitemaps: boolean("sitemaps", options.sitemaps, DEFAULT_OPTIONS.sitemaps),
    maxPerHost: integer("maxPerHost", options.maxPerHost, 1, DEFAULT_OPTIONS.maxPerHost, true),
    delayMs: delay("delayMs", options.delayMs, DEFAULT_OPTIONS.delayMs),
    delayJitter: fraction("delayJitter", options.delayJitter, DEFAULT_OPTIONS.delayJitter),
    maxCrawlDelayMs: delay("maxCrawlDelayMs", options.maxCrawlDelayMs, DEFAULT_OPTIONS.maxCrawlDelayMs),
    maxRetryAfterMs: delay("maxRetryAfterMs", options.maxRetryAfterMs, DEFAULT_OPTIONS.maxRetryAfterMs),
    linkAttributes: attributeNames("linkAttributes", options.linkAttributes),
    onRecord: callback("onRecord", options.onRecord),
    onPage: callback("onPage", options.onPage),
    onItem: callback("onItem", options.onItem),
    keepRecords: boolean("keepRecords", options.keepRecords, DEFAULT_OPTIONS.keepRecords),
    trace: callback("trace", options.trace),
    signal: abortSignal(options.signal),
    finishSignal: abortSignal(options.finishSignal, "finishSignal"),
    state: stateDirectory(options.state),
    seed: seed(options.seed),
    network: network(options.network),
    proxy: proxiesFrom(options.proxy, options.noProxy),
    noProxy: noProxyList(options.noProxy),
  };
}

/** The seed given, or one drawn now: each crawl resolves its options once, so it draws one seed. */
function seed(value: unknown): number {
  if (value === undefined) return drawSeed();
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value >= SEED_LIMIT) {
    throw new TypeError(`Expected \`seed\` to be an integer from 0 to ${SEED_LIMIT - 1}, got ${show(value)}`);
  }
  return value;
}

/** The network given, or null: the machine's own. */
function network(value: unknown): Network | null {
  if (value === undefined || value === null) return null;
  if (!isNetwork(value)) throw new TypeError(`Expected \`network\` to be an object with a connect() method, got ${show(value)}`);
  return value;
}

/** Whether `value` has the one method a {@link Network} must: `connect`. */
function isNetwork(value: unknown): value is Network {
  return typeof value === "object" && value !== null && typeof Reflect.get(value, "connect") === "function";
}

function stateDirectory(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== "string" || value.length === 0) throw new TypeError(`Expected \`state\` to be a directory path, got ${show(value)}`);
  return value;
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (Buffer.isBuffer(value)) return `a Buffer of ${value.length} bytes`;
  if (typeof value === "function") return "a function";
  if (value instanceof RegExp) return String(value);
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}

function integer(name: string, value: unknown, min: number, fallback: number, allowInfinity = false): number {
  if (value === undefined) return fallback;
  const ok =
    typeof value === "number" &&
    value >= min &&
    (Number.isSafeInteger(value) || (allowInfinity && value === Infinity));
  if (!ok) {
    throw new TypeError(`Expected \`${name}\` to be an integer from ${min} and up, got ${show(value)}`);
  }
  return value;
}

/** The longest delay `setTimeout` honours; a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0 && value <= MAX_TIMER_MS)) {
    throw new TypeError(`Expected \`${name}\` to be a number above 0 and at most ${MAX_TIMER_MS}, got ${show(value)}`);
  }
  return value;
}

function delay(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 0 && value <= MAX_TIMER_MS)) {
    throw new TypeError(`Expected \`${name}\` to be a number from 0 to ${MAX_TIMER_MS}, got ${show(value)}`);
  }
  return value;
}

/** A list of HTTP statuses (integers from 100 to 599), duplicates dropped, frozen. */
function statusList(name: string, value: unknown, fallback: readonly number[]): readonly number[] {
  if (value === undefined) return fallback;
  const ok = Array.isArray(value) && value.every((code) => Number.isInteger(code) && code >= 100 && code <= 599);
  if (!ok) throw new TypeError(`Expected \`${name}\` to be an array of HTTP statuses (integers from 100 to 599), got ${show(value)}`);
  return Object.freeze([...new Set(value as number[])]);
}

function fraction(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
    throw new TypeError(`Expected \`${name}\` to be a number from 0 to 1, got ${show(value)}`);
  }
  return value;
}

/** The longest pause between two attempts, unless `retryDelayMs` itself is longer. */
const MAX_RETRY_DELAY_MS = 30_000;

/**
 * The pause before the next attempt, after `failedAttempts` attempts failed:
 * `retryDelayMs`, doubled for each failure after the first, at most 30 s (or
 * `retryDelayMs` itself, if larger). No jitter, so a crawl's pauses can be
 * counted on.
 *
 * @example retryDelay(500, 1) === 500; retryDelay(500, 3) === 2000; retryDelay(500, 10) === 30_000
 */
export function retryDelay(retryDelayMs: number, failedAttempts: number): number {
  // The exponent stops growing long after the cap is reached: 0 × 2^2000 would be 0 × Infinity, NaN.
  return Math.min(retryDelayMs * 2 ** Math.min(failedAttempts - 1, 31), Math.max(retryDelayMs, MAX_RETRY_DELAY_MS));
}

function boolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new TypeError(`Expected \`${name}\` to be a boolean, got ${show(value)}`);
  return value;
}

function regExp(name: string, value: unknown): RegExp | null {
  if (value === undefined) return null;
  if (value instanceof RegExp) {
    // Without g and y, test() keeps no lastIndex between URLs.
    return new RegExp(value.source, value.flags.replace(/[gy]/g, ""));
  }
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`${name}\` to be a string or RegExp, got ${show(value)}`);
  }
  try {
    return new RegExp(value);
  } catch (error) {
    throw new TypeError(`Expected \`${name}\` to be a valid regular expression, got ${show(value)}`, { cause: error });
  }
}

function userAgent(name: string, value: unknown): string {
  if (value === undefined) return DEFAULT_OPTIONS.userAgent;
  // Printable ASCII only: every stage then sends the same bytes, and no header can be injected.
  if (typeof value !== "string" || value.trim() === "" || !/^[\t\x20-\x7e]+$/.test(value)) {
    throw new TypeError(`Expected \`${name}\` to be a non-empty line of printable ASCII, got ${show(value)}`);
  }
  return value;
}

/**
 * Checks `headers` and `userAgent` together: a `User-Agent` in `headers`
 * becomes `userAgent` (robots.txt groups are picked by it, so it is kept in
 * one place), unless `userAgent` is given too.
 */
function requestHeaderOptions(headersValue: unknown, userAgentValue: unknown): { headers: Readonly<Record<string, string>>; userAgent: string } {
  if (headersValue === undefined) return { headers: DEFAULT_OPTIONS.headers, userAgent: userAgent("userAgent", userAgentValue) };
  if (typeof headersValue !== "object" || headersValue === null || Array.isArray(headersValue)) {
    throw new TypeError(`Expected \`headers\` to be an object of header names and values, got ${show(headersValue)}`);
  }
  const headers: Record<string, string> = {};
  const names = new Map<string, string>(); // lowercased → as given
  let agentHeader: string | undefined;
  for (const [name, value] of Object.entries(headersValue)) {
    const lower = name.toLowerCase();
    if (!isHeaderName(name)) throw new TypeError(`Expected \`headers\` to have names that are HTTP tokens, got ${show(name)}`);
    if (RESERVED_HEADERS.has(lower)) throw new TypeError(`Expected \`headers\` not to set ${name}, which the crawler sets itself`);
    const twice = names.get(lower);
    if (twice !== undefined) throw new TypeError(`Expected \`headers\` to name each header once, got ${show(twice)} and ${show(name)}`);
    names.set(lower, name);
    if (typeof value !== "string" || !isHeaderValue(value)) {
      throw new TypeError(`Expected \`headers\` to have values of printable ASCII on one line, got ${show(value)} for ${name}`);
    }
    // Spaces around a field value are not part of it (RFC 9110 §5.5).
    if (lower === "user-agent") agentHeader = value.trim();
    else headers[name] = value.trim();
  }
  if (agentHeader === undefined) return { headers: Object.freeze(headers), userAgent: userAgent("userAgent", userAgentValue) };
  if (userAgentValue !== undefined) {
    throw new TypeError("Expected `headers` not to set User-Agent when `userAgent` is given: give it once");
  }
  return { headers: Object.freeze(headers), userAgent: userAgent("headers", agentHeader) };
}

/**
 * A list of domains (`allowedDomains`): each a host name or IPv4 address,
 * lowercased and in punycode as WHATWG `URL` writes a host, a leading `.`
 * dropped, duplicates dropped, frozen.
 */
function domainList(name: string, value: unknown): readonly string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.length === 0) throw new TypeError(`Expected \`${name}\` to be a non-empty array of domains, got ${Array.isArray(value) ? "an empty array" : show(value)}`);
  const domains = new Set<string>();
  for (const each of value) {
    if (typeof each !== "string") throw new TypeError(`Expected \`${name}\` to hold domains as strings, got ${show(each)}`);
    const domain = each.startsWith(".") ? each.slice(1) : each;
    // A URL, a port, a path or credentials are not a domain (Scrapy warns about the first two and ignores the entry).
    const host = domain === "" || /[/:@?#\\\s]/.test(domain) ? null : hostOf(domain);
    if (host === null) throw new TypeError(`Expected \`${name}\` to hold domains such as example.com (no scheme, port or path), got ${show(each)}`);
    domains.add(host);
  }
  return Object.freeze([...domains]);
}

/** The host WHATWG `URL` makes of `domain` (lowercased, punycode), or null when it is none. */
function hostOf(domain: string): string | null {
  try {
    return new URL(`http://${domain}/`).hostname;
  } catch {
    return null;
  }
}

function certificates(value: unknown): string | Buffer | null {
  if (value === undefined) return null;
  if ((typeof value === "string" || Buffer.isBuffer(value)) && isPemCertificate(value)) return value;
  throw new TypeError(`Expected \`ca\` to be PEM certificates, as a string or a Buffer, got ${show(value)}`);
}

/** Whether `pem` holds at least one certificate in PEM form, the first of which parses. */
function isPemCertificate(pem: string | Buffer): boolean {
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) return false;
  try {
    new (process.getBuiltinModule("node:crypto").X509Certificate)(pem); // Reads the first certificate only; enough to catch a wrong file.
    return true;
  } catch {
    return false;
  }
}

/** An attribute's name as markup writes one: a letter, `_` or `:`, then letters, digits, `-`, `_`, `:` and `.` (`data-href`, `xlink:href`). */
const ATTRIBUTE_NAME = /^[A-Za-z_:][\w:.-]*$/;

/** A list of HTML attribute names, lowercased (HTML's are case-insensitive), duplicates dropped, frozen. */
function attributeNames(name: string, value: unknown): readonly string[] {
  if (value === undefined) return DEFAULT_OPTIONS.linkAttributes;
  const ok = Array.isArray(value) && value.every((attribute) => typeof attribute === "string" && ATTRIBUTE_NAME.test(attribute));
  if (!ok) throw new TypeError(`Expected \`${name}\` to be an array of HTML attribute names (data-href), got ${show(value)}`);
  return Object.freeze([...new Set((value as string[]).map((attribute) => attribute.toLowerCase()))]);
}

function callback<F>(name: string, value: F | undefined): F | null {
  if (value === undefined) return null;
  if (typeof value !== "function") throw new TypeError(`Expected \`${name}\` to be a function, got ${show(value)}`);
  return value;
}

function abortSignal(value: unknown, name = "signal"): AbortSignal | null {
  if (value === undefined) return null;
  if (!(value instanceof AbortSignal)) throw new TypeError(`Expected \`${name}\` to be an AbortSignal, got ${show(value)}`);
  return value;
}
