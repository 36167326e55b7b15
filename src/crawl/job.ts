/**
 * The contract between the crawl core and a stage, as types: the job the
 * core hands out and its states, the request a job asks for, the outcome a
 * stage hands back, and the step that says what it meant
 * (docs/crawl-core.md, "The contract").
 *
 * @module
 */
import type { HttpResponse } from "../http/parser.js";
import type { AttemptError } from "../kernel/errors.js";
import type { ResolvedCrawlOptions } from "./options.js";
import type { RobotsReading } from "./robots.js";
import type { PendingHook } from "./page-context.js";
import type { PendingVisit, QueueItem } from "./visit.js";

/**
 * Where a job is in its life, which the core checks at every call about it:
 * - `handed`: `next()` handed it out; for a page, a `robots.txt` or a sitemap,
 *   the stage calls `started()` before each attempt (after a `retry` step too);
 * - `attempting`: an attempt runs; the stage calls `settle()` with its outcome;
 * - `hooking`: `settle()` said `hook`: the crawl's `onPage` hook returned a
 *   promise; the stage waits for it, then calls `hooked()` with how it settled;
 * - `settled`: `settle()` said `done` (or `hooked()` was called); only `finish()` is left;
 * - `finished`: the stage handed it back; no call about it is allowed any more.
 *
 * A job may be finished from any state but `finished`: before its first
 * attempt, during one or between two, it was cut short.
 */
export type JobState = "handed" | "attempting" | "hooking" | "settled" | "finished";

/**
 * Something for a stage to do, handed out by `CrawlCore.next()`:
 * - `page`: fetch `url`, a page whose host has given it its turn;
 * - `robots`: fetch `url`, an origin's `robots.txt` (read whole, whatever `skipNonHtml` says);
 * - `sitemap`: fetch `url`, a sitemap (option `sitemaps`) whose host has given it its turn (read whole, as a `robots.txt`);
 * - `wait`: wait `delayMs`, then `finish(job)`: URLs wait for a host's delay, and nothing else can run now.
 *
 * Fetch a page, a `robots.txt` or a sitemap the same way: `started(job)`, one attempt,
 * `settle(job, outcome)`, as often as `settle` says; then `finish(job)`.
 */
export class Job {
  /** Where the job is in its life ({@link JobState}); the core moves it, and refuses a call out of order. */
  state: JobState = "handed";
  /** Attempts started at `url` (a `robots.txt` redirect starts the count again). */
  attempt: number;
  /** While `hooking`: the page's visit, waiting for its hook's promise. */
  pending: PendingVisit | null = null;
  /**
   * For a wait on a store that says when it has news (`CrawlStore.onChange`):
   * aborted when it does, so a stage that gives it to its sleep ends the wait
   * then, and asks `next()` again; null for every other job. A stage that
   * ignores it waits `delayMs`, as for any wait.
   */
  woken: AbortSignal | null = null;

  constructor(
    readonly kind: "page" | "robots" | "sitemap" | "wait",
    /** The URL to fetch; a `robots.txt` redirect changes it. Empty for a wait. */
    public url: string,
    /** For a wait, when it is over (on the stage's clock, ms); else 0. */
    readonly until: number,
    /** For a page or a sitemap, the URL as it was queued. */
    readonly item: QueueItem | null,
    /** For a `robots.txt`, its reading. */
    readonly reading: RobotsReading | null,
    /** The stage's clock, which a wait's `delayMs` reads. */
    private readonly clock: () => number,
  ) {
    this.attempt = item?.tries ?? 0; // After a Retry-After, the attempts go on from where they were.
  }

  /** For a wait, how long from now, in ms (on the stage's clock, read when asked: a worker may take the job late). */
  get delayMs(): number {
    return Math.max(0, this.until - this.clock());
  }
}

/**
 * What an attempt's outcome means for its job (`CrawlCore.settle()`):
 * `retry` after `delayMs`, for a `robots.txt` only (a 5xx, a 429 or a
 * network error, after the backoff or a `Retry-After` hold; a redirect, at
 * once); `hook`, for a page whose `onPage` hook returned a promise: wait for
 * `hook` in the stage's own style (a callback with `hook.whenSettled`, a
 * Future fed by it, or `await hook.settled()`), then hand how it settled to
 * `CrawlCore.hooked()`, the job still out (counting against `maxTasks`); or
 * `done` (a page to try again is put back, and comes out as a new job).
 */
export type Step = { readonly kind: "retry"; readonly delayMs: number } | { readonly kind: "hook"; readonly hook: PendingHook } | { readonly kind: "done" };

/**
 * How an attempt ended, as a stage hands it to `settle()`: the response
 * (status, headers, body as received: still content-encoded, or empty when
 * a page's body was skipped), or the name of what went wrong
 * ({@link AttemptError}: its names steer the retries), with `detail` beside it.
 */
export type Outcome = HttpResponse | AttemptError;

/** The options that shape every request of a crawl, in every stage: headers, timeouts and limits. */
export type CrawlRequestOptions = Pick<ResolvedCrawlOptions, "userAgent" | "headers" | "timeoutMs" | "idleTimeoutMs" | "maxBodyBytes" | "skipNonHtml" | "ca" | "rejectUnauthorized">;

/**
 * What a stage sends for a job's attempt (`CrawlCore.request()`): a GET
 * of `url` with the crawl's headers (`requestHeaders(userAgent, headers)`,
 * src/http/request.ts), no redirect followed, and:
 * - `body: "skippable"` (a page): with `skipNonHtml`, a `200` whose media
 *   type is neither `text/html` nor `application/xml` may be closed after its
 *   head (`skippableBody`, src/crawl/page.ts), its body handed back empty;
 * - `body: "whole"` (a `robots.txt`, a sitemap): read to its end, always;
 * - at most `maxBodyBytes` of body (else `BodyTooLarge`), `timeoutMs` for the
 *   whole attempt and `idleTimeoutMs` for each wait on the socket (else
 *   `Timeout`), TLS checked against `ca` unless `rejectUnauthorized` is false.
 */
export interface JobRequest extends CrawlRequestOptions {
  /** The URL to GET. */
  readonly url: string;
  /** Whether the body may be left unread (a page) or is read whole. */
  readonly body: "skippable" | "whole";
}
