/**
 * `visit()`: the one place a crawl decides what a URL's outcome means.
 *
 * @module
 */
import { errorDetail, errorName } from "../kernel/errors.js";
import type { FetchError } from "../kernel/errors.js";
import type { HttpResponse } from "../http/parser.js";
import { readPage, type Page } from "./page.js";
import { extractDetail, HookPage, isThenable, PendingHook, readAnswer, type HookSettled } from "./page-context.js";
import type { CrawlItem, OnPage, PageResult } from "./page-hook.js";
import { errorRecord, pageRecord, redirectRecord, type FetchStatistic } from "./records.js";
import type { UrlPolicy } from "./urls.js";

/**
 * A URL to queue and the redirects it may still follow (the chapter's
 * `(url, max_redirect)` pair), the page that queued it and how deep it lies.
 * The crawl core queues the items `visit()` returns as they are, so the
 * referrer and the depth reach the URL's own `visit()`.
 */
export interface QueueItem {
  url: string;
  maxRedirect: number;
  /** The URL of the page (or redirect) whose `visit()` queued this one; absent or null for a root. */
  referrer?: string | null;
  /** Links followed from a root to reach it (redirects do not count); absent for a root: 0. */
  depth?: number;
  /** Attempts already made at this URL: a URL queued again after a `Retry-After` carries them. Absent: none. */
  tries?: number;
  /**
   * Present for a sitemap (option `sitemaps`), which is fetched and read as
   * one, not as a page: how deep in sitemap indexes it lies (0 for a sitemap
   * the crawl starts from, 1 for one an index at 0 names, …).
   */
  sitemap?: number;
}

/** What a URL's outcome means for the crawl: its record, then the URLs to queue. */
export interface Visit {
  /** The URL's one record. */
  record: FetchStatistic;
  /** URLs not seen before, in document order (or the redirect target), each to be marked seen and queued. */
  next: QueueItem[];
  /**
   * The items the page hook (`onPage`) made from the page, with its URL;
   * absent without a hook (and for a redirect or an error). A store that
   * keeps the crawl (`StateStore`) writes them with the record, in one step,
   * so a crawl resumed has each item once.
   */
  items?: CrawlItem[];
}

/**
 * A visit waiting for the page hook's promise ({@link visitHooked}): the
 * stage waits on `hook` in its own style, and `settle` then makes the visit
 * from how the promise settled.
 */
export interface PendingVisit {
  /** The hook's promise, as a stage waits on it. */
  readonly hook: PendingHook;
  /** The visit, once the promise settled: its items and links, or an `ExtractError`. */
  settle(settled: HookSettled): Visit;
}

/** What `visit()` reads of the crawl: its policy (with `maxDepth`), the URLs seen so far, and three options. */
export interface VisitContext {
  readonly policy: UrlPolicy;
  readonly seenUrls: ReadonlySet<string>;
  readonly maxRedirect: number;
  readonly maxBodyBytes: number;
  /** More attributes than `<a href>` that links are taken from (the option `linkAttributes`); absent: none. */
  readonly linkAttributes?: readonly string[];
}

/**
 * Turns the outcome of fetching `item` (a response, or the error name of its
 * last failed attempt, with `detail`: `errorDetail`'s words) after `tries`
 * attempts into the URL's record and the URLs to queue next. The record
 * carries the item's depth, `tries`, and the time now as `fetchedAt`.
 *
 * A redirect's target is queued with one redirect less and at the
 * redirect's depth, unless it was seen, is not allowed, or no redirect is
 * left; a page's links are filtered by the policy, and those not seen are
 * queued with the full `maxRedirect`, one level deeper than the page, unless
 * that is deeper than the policy's `maxDepth`: such links still count in the
 * record's `numUrls` (they are allowed), but they are neither queued nor
 * counted as new, and stay unseen, so a shallower page may still queue them.
 * Each URL queued names `item` as its referrer: the page that first found it
 * unseen, since a URL is queued once. The record carries `item`'s own
 * referrer. A body that cannot be read (`BadResponse`, `BodyTooLarge`) gives
 * an error record.
 *
 * It changes nothing: the crawl core has its store mark each `next` URL seen
 * and queue it, with no wait between calling `visit()` and doing so, so no
 * other fetch can see `seenUrls` in between (the chapter's point about why
 * coroutines need no lock here).
 *
 * @remarks The chapter's `fetch()` makes these decisions inline, after its
 * last `yield from`; the three stages share them here so that they cannot
 * decide differently.
 * @see Chapter, "Coordinating Coroutines" (`Crawler.fetch`); docs/behaviour.md
 */
export function visit(item: QueueItem, outcome: HttpResponse | FetchError, context: VisitContext, detail: string | null = null, tries = 1): Visit {
  const read = readOutcome(item, outcome, context, detail, tries, false);
  return "record" in read ? read : linksVisit(item, read, read.links, context, tries);
}

/**
 * {@link visit} with the crawl's `onPage` hook: a page (a response that is
 * neither a redirect nor an error) is handed to the hook as a
 * {@link HookPage}; what it returns gives the visit its items (`items`, and
 * the record's `items` count) and, when it names `links`, the links to queue
 * in place of the page's, filtered and counted as the page's are. A hook that
 * returns a promise (any thenable) gives a {@link PendingVisit}: the stage
 * waits, and the visit is made when the promise settles. A hook that throws,
 * rejects or returns what is not items gives an `ExtractError` record whose
 * `detail` is its message, and no link is followed from the page.
 *
 * The page's body is kept and its links left unread until asked for
 * (`readPage`'s `keepBody`): by the hook, or after it when the crawl needs
 * them, so that a page is parsed once, as the hook's `document()` or by the
 * tokenizer.
 *
 * @param onPage - The crawl's hook, which runs now, inside this call.
 * @see src/crawl/page-context.ts; docs/behaviour.md, "Page hook"
 */
export function visitHooked(item: QueueItem, outcome: HttpResponse | FetchError, context: VisitContext, onPage: OnPage, detail: string | null = null, tries = 1): Visit | PendingVisit {
  const read = readOutcome(item, outcome, context, detail, tries, true);
  if ("record" in read || read.body === undefined || typeof outcome === "string") return "record" in read ? read : linksVisit(item, read, read.links, context, tries);
  const page = new HookPage(item.url, read.status, outcome.headers, read.contentType, item.depth ?? 0, read.body, context.linkAttributes);
  let result: PageResult | PromiseLike<PageResult>;
  try {
    result = onPage(page);
  } catch (error) {
    return extractFailed(item, error, tries);
  }
  if (!isThenable(result)) return answerVisit(item, page, read, result, context, tries);
  return {
    hook: new PendingHook(result),
    settle(settled: HookSettled): Visit {
      return "error" in settled ? extractFailed(item, settled.error, tries) : answerVisit(item, page, read, settled.value, context, tries);
    },
  };
}

/** The visit a hook's answer makes: its items, and its links or the page's; an `ExtractError` when the answer is not items. */
function answerVisit(item: QueueItem, page: HookPage, read: Page, result: PageResult, context: VisitContext, tries: number): Visit {
  let items: CrawlItem[];
  let links: readonly string[];
  try {
    const answer = readAnswer(result, item.url);
    items = answer.items.map((each) => ({ url: item.url, item: each }));
    links = answer.links ?? page.links;
  } catch (error) {
    if (error instanceof TypeError) return extractFailed(item, error, tries);
    return { record: errorRecord(item.url, errorName(error), item.referrer ?? null, errorDetail(error), { depth: item.depth ?? 0, tries }), next: [] };
  }
  const v = linksVisit(item, read, links, context, tries);
  v.record.items = items.length;
  v.items = items;
  return v;
}

/** The visit of a page whose hook failed: an `ExtractError` record, with the hook's message as its `detail`. */
function extractFailed(item: QueueItem, error: unknown, tries: number): Visit {
  return { record: errorRecord(item.url, "ExtractError", item.referrer ?? null, extractDetail(error), { depth: item.depth ?? 0, tries }), next: [] };
}

/** An outcome read: the visit of an error or a redirect, or the page to take links from. */
function readOutcome(item: QueueItem, outcome: HttpResponse | FetchError, context: VisitContext, detail: string | null, tries: number, keepBody: boolean): Visit | Page {
  const { url, maxRedirect } = item;
  const referrer = item.referrer ?? null;
  const depth = item.depth ?? 0;
  const where = { depth, tries };
  if (typeof outcome === "string") return { record: errorRecord(url, outcome, referrer, detail, where), next: [] };
  let page: Page;
  try {
    page = readPage(url, outcome, context.maxBodyBytes, keepBody, context.linkAttributes);
  } catch (error) {
    return { record: errorRecord(url, errorName(error), referrer, errorDetail(error), where), next: [] };
  }
  if (page.nextUrl !== null) {
    const target = page.nextUrl;
    // A target already seen means we have been down this path before.
    const follow = maxRedirect > 0 && !context.seenUrls.has(target) && context.policy.hrefAllowed(target);
    return {
      record: redirectRecord(url, page.status, target, referrer, where),
      next: follow ? [{ url: target, maxRedirect: maxRedirect - 1, referrer: url, depth }] : [],
    };
  }
  return page;
}

/** The visit of a page: its record, and its links (`links`: the page's, or those its hook named) filtered by the policy and queued when not seen. */
function linksVisit(item: QueueItem, page: Page, links: readonly string[], context: VisitContext, tries: number): Visit {
  const { url } = item;
  const referrer = item.referrer ?? null;
  const depth = item.depth ?? 0;
  const where = { depth, tries };
  const queueLinks = depth < context.policy.maxDepth; // The links lie at depth + 1.
  let numUrls = 0;
  const next: QueueItem[] = [];
  for (const link of links) {
    if (!context.policy.hrefAllowed(link)) continue;
    numUrls += 1;
    if (queueLinks && !context.seenUrls.has(link)) next.push({ url: link, maxRedirect: context.maxRedirect, referrer: url, depth: depth + 1 });
  }
  return { record: pageRecord(url, page, numUrls, next.length, referrer, where), next };
}
