/**
 * Reading an origin's `robots.txt` (RFC 9309): what each attempt's outcome
 * means, and the rules a crawl then follows there. The stages make the
 * requests, each in its own style; the decisions are made here, so the three
 * stages cannot read a `robots.txt` differently.
 *
 * @module
 */
import { createRequire } from "node:module";
import type robotsParserModule from "robots-parser";
import type { FetchError } from "../kernel/errors.js";
import { errorDetail, errorName, isRetryable } from "../kernel/errors.js";
import type { HttpResponse } from "../http/parser.js";
import { decodeContent, decodeText } from "./body.js";
import type { ResolvedCrawlOptions } from "./options.js";
import { isRedirect, redirectTarget } from "./page.js";
import type { UrlPolicy } from "./urls.js";

/** The most of a `robots.txt` that is parsed: RFC 9309 §2.5 asks for at least 500 KiB. */
export const ROBOTS_MAX_BYTES = 500 * 1024;

/** Redirects followed to reach a `robots.txt`: RFC 9309 §2.3.1.2 asks for at least five. */
export const ROBOTS_MAX_REDIRECTS = 5;

/**
 * What a crawl does at an origin after reading its `robots.txt`:
 * - `rules`: the file was read; each URL is checked against the group for the crawler's user agent token;
 * - `allow-all`: no usable file (a 4xx, or too many redirects): everything is allowed (RFC 9309 §2.3.1.3);
 * - `unreachable`: a 5xx, a 429 or a network failure on every attempt: nothing is fetched there (§2.3.1.4).
 */
export type RobotsVerdict = "rules" | "allow-all" | "unreachable";

/** One origin's `robots.txt` as the crawl result reports it, apart from the page records. */
export interface RobotsFetch {
  /** The origin the file is for: `http://host:port`. */
  origin: string;
  /** The URL last requested: `/robots.txt`, or where its redirects led. */
  url: string;
  /** The last response's status, or null when the last attempt failed. */
  status: number | null;
  /** Why the last attempt failed (as in records), or null. */
  error: FetchError | null;
  /** What `errorDetail` says of that failure (Node's words for a `TlsError`, …), or null. */
  detail: string | null;
  /** What the crawl did at the origin because of it. */
  verdict: RobotsVerdict;
  /** The `Crawl-delay` of the crawler's group, in milliseconds, or null when none. */
  crawlDelayMs: number | null;
  /** Attempts made, over every URL of the redirect chain. */
  attempts: number;
}

/** The product token `robots.txt` groups are matched by: `coroutine-crawler/1.0 (+url)` → `coroutine-crawler`. */
export function userAgentToken(userAgent: string): string {
  return /^[A-Za-z_-]+/.exec(userAgent.trim())?.[0] ?? "*";
}

/** The rules of one origin: whether a URL there may be fetched. */
export interface RobotsRules {
  readonly verdict: RobotsVerdict;
  /**
   * For `unreachable`, what each page there is recorded with, since none is
   * requested: the failure's name (`RobotsUnreachable` for a 5xx or a 429,
   * else the network failure's own: `TlsError`, `ConnectionRefused`,
   * `HostNotFound`, …) and a `detail` that starts `robots.txt` and says what
   * happened. Null for the other verdicts.
   */
  readonly refusal: { readonly error: FetchError; readonly detail: string } | null;
  /** The `Crawl-delay` for our token, in milliseconds, or null. */
  readonly crawlDelayMs: number | null;
  /** Whether `url` (of this origin) may be fetched. */
  allows(url: string): boolean;
  /** The file's `Sitemap:` lines, as written, in order (none unless it was read). */
  readonly sitemaps: readonly string[];
  /** The file's text the rules were read from (verdict `rules`): what a store shared by processes keeps, for {@link storedRobotsRules}. */
  readonly text?: string;
}

/**
 * The rules of an origin as another process read them, from the verdict, the
 * file's text and, for `unreachable`, the refusal a shared store kept (see
 * {@link RobotsRules.text}).
 */
export function storedRobotsRules(
  origin: string,
  verdict: RobotsVerdict,
  text: string,
  userAgent: string,
  refusal: RobotsRules["refusal"] = null,
): RobotsRules {
  if (verdict === "allow-all") return ALLOW_ALL;
  if (verdict === "unreachable") {
    const kept = refusal ?? { error: "RobotsUnreachable", detail: `robots.txt of ${origin} could not be read` };
    return { verdict, crawlDelayMs: null, refusal: kept, allows: () => false, sitemaps: [] };
  }
  return parsedRules(origin, text, userAgentToken(userAgent));
}

/**
 * One origin's `robots.txt`, read over one or more attempts: a stage asks
 * for {@link RobotsReading.url}, hands each outcome to
 * {@link RobotsReading.next}, and does what it says (wait and try again,
 * request the new `url`, or stop), then gives the reading to the host lines.
 *
 * @example
 * ```ts
 * const reading = new RobotsReading("http://127.0.0.1:8080", options, policy);
 * let step;
 * do step = reading.next(await client.get(reading.url).catch(errorName));
 * while (step !== "done");
 * ```
 */
export class RobotsReading {
  /** The URL to request next. */
  url: string;
  /** Attempts at the current URL (a redirect starts the count again). */
  attempts = 0;
  private totalAttempts = 0;
  private hops = 0;
  private result: { rules: RobotsRules; fetch: RobotsFetch } | null = null;

  constructor(
    /** The origin whose file is read. */
    readonly origin: string,
    private readonly options: Pick<ResolvedCrawlOptions, "maxTries" | "maxBodyBytes" | "userAgent">,
    private readonly policy: UrlPolicy,
  ) {
    this.url = `${origin}/robots.txt`;
  }

  /**
   * What the outcome of the attempt at `url` means: `"retry"` (the same URL,
   * after the stage's pause before a retry), `"follow"` (`url` is now the
   * redirect's target) or `"done"` ({@link RobotsReading.rules} and
   * {@link RobotsReading.report} are ready). A failed attempt's `detail` is
   * `errorDetail`'s. With `mayRetry` false the attempt is the last whatever
   * `maxTries` says: the crawl core passes it for a `429` or `503` whose
   * `Retry-After` asks for longer than `maxRetryAfterMs`.
   */
  next(outcome: HttpResponse | FetchError, detail: string | null = null, mayRetry = true): "retry" | "follow" | "done" {
    this.attempts += 1;
    this.totalAttempts += 1;
    const triesLeft = mayRetry && this.attempts < this.options.maxTries;
    if (typeof outcome === "string") {
      if (isRetryable(outcome, detail) && triesLeft) return "retry";
      return this.finish(outcome, null, this.unreachable(outcome, detail ?? outcome), detail);
    }
    const { status } = outcome;
    if (status >= 500 || status === 429) return triesLeft ? "retry" : this.finish(null, status, this.unreachable("RobotsUnreachable", `status ${status}`));
    if (isRedirect(status)) {
      const target = redirectTarget(this.url, outcome.headers["location"]);
      if (target !== null && this.hops < ROBOTS_MAX_REDIRECTS && this.policy.urlAllowed(target)) {
        this.hops += 1;
        this.attempts = 0;
        this.url = target;
        return "follow";
      }
      return this.finish(null, status, ALLOW_ALL);
    }
    if (status < 200 || status >= 300) return this.finish(null, status, ALLOW_ALL);
    let text: string;
    try {
      text = readRobotsText(outcome, this.options.maxBodyBytes);
    } catch (error) {
      // A body that cannot be decoded, or decodes past maxBodyBytes: safer to fetch nothing.
      const name = errorName(error) === "BodyTooLarge" ? "BodyTooLarge" : "BadResponse";
      const why = errorDetail(error) ?? (error instanceof Error && error.message !== "" ? error.message : "its body could not be decoded");
      return this.finish(name, status, this.unreachable(name, why), why);
    }
    return this.finish(null, status, parsedRules(this.origin, text, userAgentToken(this.options.userAgent)));
  }

  /** The rules to crawl the origin by, once `next()` said `"done"`. */
  get rules(): RobotsRules {
    if (this.result === null) throw new Error("robots.txt has not been read yet");
    return this.result.rules;
  }

  /** The fetch as the crawl result reports it, once `next()` said `"done"`. */
  get report(): RobotsFetch {
    if (this.result === null) throw new Error("robots.txt has not been read yet");
    return this.result.fetch;
  }

  /** Ends the reading with an error nobody expected (a bug, or the crawl stopping): nothing is fetched there. */
  fail(): void {
    if (this.result === null) this.finish("NetworkError", null, this.unreachable("NetworkError", "the reading was cut short"));
  }

  /**
   * The rules of an origin whose file could not be read: nothing there is
   * fetched, and its pages are recorded with `error` and a detail naming the
   * file, what went wrong (`why`) and the attempts made.
   */
  private unreachable(error: FetchError, why: string): RobotsRules {
    const attempts = `${this.totalAttempts} attempt${this.totalAttempts === 1 ? "" : "s"}`;
    const detail = `robots.txt ${this.url} could not be read (${attempts}): ${why}`;
    return { verdict: "unreachable", crawlDelayMs: null, refusal: { error, detail }, allows: () => false, sitemaps: [] };
  }

  private finish(error: FetchError | null, status: number | null, rules: RobotsRules, detail: string | null = null): "done" {
    const fetch = { origin: this.origin, url: this.url, status, error, detail, verdict: rules.verdict, crawlDelayMs: rules.crawlDelayMs, attempts: this.totalAttempts };
    this.result = { rules, fetch };
    return "done";
  }
}

/** robots-parser's function, as its types see it: one level down from the module they declare. */
type RobotsParser = typeof robotsParserModule.default;

/**
 * robots-parser's function, required the first time a `robots.txt` is read:
 * a crawl whose hosts have none never loads it. Required rather than
 * imported: the package is CommonJS (its `module.exports` is the function),
 * and an `import` would have Node's ES loader scan it for export names first,
 * which cost more than loading it (docs/benchmarks.md, start-up).
 */
let robotsParser: RobotsParser | null = null;
const requireWhenNeeded = createRequire(import.meta.url);

const ALLOW_ALL: RobotsRules = { verdict: "allow-all", crawlDelayMs: null, refusal: null, allows: () => true, sitemaps: [] };

/**
 * The first {@link ROBOTS_MAX_BYTES} of the body, decoded (gzip, deflate) and
 * read as UTF-8 (RFC 9309 §2.3), cut after its last whole line. A line ends
 * with LF, CR or CRLF (RFC 9309 §2.2), as robots-parser splits them.
 */
function readRobotsText(response: HttpResponse, maxBodyBytes: number): string {
  const body = decodeContent(response.headers, response.body, maxBodyBytes);
  if (body.length <= ROBOTS_MAX_BYTES) return decodeText(body, "utf-8");
  const head = body.subarray(0, ROBOTS_MAX_BYTES);
  const lastLineEnd = Math.max(head.lastIndexOf(0x0a), head.lastIndexOf(0x0d));
  return decodeText(lastLineEnd < 0 ? head : head.subarray(0, lastLineEnd + 1), "utf-8");
}

/** The rules robots-parser reads from `text`, for the group of `token`. */
function parsedRules(origin: string, text: string, token: string): RobotsRules {
  robotsParser ??= requireWhenNeeded("robots-parser") as RobotsParser;
  const robot = robotsParser(`${origin}/robots.txt`, text);
  const delay = robot.getCrawlDelay(token);
  return {
    verdict: "rules",
    refusal: null,
    crawlDelayMs: typeof delay === "number" && Number.isFinite(delay) && delay > 0 ? delay * 1000 : null,
    // undefined: the URL is not of this origin, which a crawl never asks; allowed, like robots-parser's other answers.
    allows: (url) => robot.isAllowed(url, token) !== false,
    sitemaps: robot.getSitemaps(),
    text,
  };
}
