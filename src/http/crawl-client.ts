/**
 * Stage 3's HTTP client as one crawl uses it: built from the crawl's options,
 * one call per attempt, and pauses that end with the crawl.
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { withCookies, type CookieJarLike } from "../crawl/cookies.js";
import { errorDetail, errorName, type AttemptError } from "../kernel/errors.js";
import { crawlChannel } from "../observe/channels.js";
import { HttpClient, type HttpClientOptions } from "./http-client.js";
import type { HttpResponse, SkipBody } from "./parser.js";

/** How a `robots.txt` or a sitemap is read: whole, whatever the crawl skips. */
const READ_WHOLE = { skipBody: null };

/** What a {@link CrawlClient} is built from: a crawl's resolved options. */
export type CrawlClientOptions = Omit<HttpClientOptions, "connections" | "skipBody"> & { readonly maxTasks: number; readonly skipNonHtml: boolean; readonly cookies?: CookieJarLike | null };

/** What one attempt gave: the response, or its error's name with Node's words for a `TlsError` (else null). */
export type AttemptOutcome = readonly [outcome: HttpResponse | AttemptError, detail: string | null];

/**
 * An {@link HttpClient} set up from a crawl's options (as many connections
 * per host as `maxTasks`; with `skipNonHtml`, bodies no link is read from left
 * unread, but a `robots.txt` or a sitemap read whole), with the two waits of
 * stage 3's workers: `attempt(job)`, one request whose failure comes back as
 * its error's name, as the crawl core takes it, and `pause(ms)`, which
 * `abort()` ends together with every request in flight.
 *
 * A pause before a URL's next attempt is published on `crawlChannel` as an
 * `await` (what: `sleep`) and a `resume`; a wait job's, which holds no URL,
 * is not. An attempt publishes nothing: the trace shows the worker's `await
 * client.get` at the attempt's `fetch-start` and its `resume` at its
 * `fetch-end`, which the crawl core publishes in the worker's own stretch
 * (src/observe/trace.ts).
 *
 * @remarks Kept out of stage 3's crawler so that it shows only how its
 * workers wait: the option plumbing, the error names and the trace around
 * each `await` are the same for every worker.
 * @see src/asyncawait/crawler.ts; src/crawl/core.ts (`settle`)
 */
export class CrawlClient {
  private readonly client: HttpClient;
  /** The crawl's `headers`, and its cookie jar (null: no cookies), for a request that carries cookies. */
  private readonly headers: Readonly<Record<string, string>>;
  private readonly cookies: CookieJarLike | null;
  /** Aborted with the crawl: it ends the pauses, each of which listens to it. */
  private readonly stopping = new AbortController();

  /** @param skippable - With `skipNonHtml`, which bodies to leave unread: `skippableBody` (src/crawl/page.ts). */
  constructor(options: CrawlClientOptions, skippable: SkipBody) {
    this.client = new HttpClient({ ...options, connections: options.maxTasks, skipBody: options.skipNonHtml ? skippable : null });
    this.headers = options.headers ?? {};
    this.cookies = options.cookies ?? null;
    setMaxListeners(0, this.stopping.signal); // As many pauses as workers may listen at once.
  }

  /**
   * One attempt at `job.url`: the response, or the name of the error it
   * failed with (and `errorDetail`'s words for it). With cookies, the jar's
   * for `job.url` go with it (src/crawl/cookies.ts).
   */
  async attempt(job: { readonly kind: string; readonly url: string }): Promise<AttemptOutcome> {
    const reading = job.kind === "page" ? undefined : READ_WHOLE;
    const headers = withCookies(this.headers, this.cookies, job.url);
    try {
      return [await this.client.get(job.url, undefined, headers === this.headers ? reading : { ...reading, headers }), null];
    } catch (error) {
      return [errorName(error), errorDetail(error)];
    }
  }

  /**
   * Waits `delayMs`: a pause before a URL's next attempt (published for
   * `url`), or a wait job's, which ends early when its `woken` signal
   * aborts (the store has news: `Job.woken`). Rejects with an `AbortError`
   * once {@link abort}ed.
   */
  async pause(delayMs: number, url: string | null = null, crawl = 0, woken: AbortSignal | null = null): Promise<void> {
    if (url !== null && crawlChannel.hasSubscribers) crawlChannel.publish({ type: "await", crawl, url, what: "sleep" });
    if (woken !== null) return this.pauseUntilWoken(delayMs, woken);
    await sleep(delayMs, undefined, { signal: this.stopping.signal });
    if (url !== null && crawlChannel.hasSubscribers) crawlChannel.publish({ type: "resume", crawl, url });
  }

  /**
   * A wait job's pause, ended early by `woken` (resolves) or by {@link abort}
   * (rejects with the stop's reason, an `AbortError`). A timer and two
   * listeners, no error made: a crawl whose store has news often (a Redis
   * frontier) wakes every waiting worker each time.
   */
  private pauseUntilWoken(delayMs: number, woken: AbortSignal): Promise<void> {
    const stopping = this.stopping.signal;
    if (stopping.aborted) return Promise.reject(stopping.reason);
    if (woken.aborted) return Promise.resolve();
    setMaxListeners(0, woken); // As many pauses as workers may listen at once.
    return new Promise(function waiting(resolve, reject) {
      const timer = setTimeout(ended, delayMs);
      woken.addEventListener("abort", ended, { once: true });
      stopping.addEventListener("abort", stopped, { once: true });
      function settled(): void {
        clearTimeout(timer);
        woken.removeEventListener("abort", ended);
        stopping.removeEventListener("abort", stopped);
      }
      function ended(): void {
        settled();
        resolve();
      }
      function stopped(): void {
        settled();
        reject(stopping.reason);
      }
    });
  }

  /** Ends every request in flight and every pause: the crawl was stopped. */
  abort(): void {
    void this.client.close();
    this.stopping.abort();
  }

  /** Closes the connection pool, once every request has ended. */
  close(): Promise<void> {
    return this.client.close();
  }
}
