/**
 * The page handed to the user: what a crawl's `onPage` hook receives and
 * what it may give back (issue 37). The types only; the core calls the hook
 * in its `visit()` path (`visitHooked`, src/crawl/visit.ts), so that every
 * stage calls it the same way; the page itself is src/crawl/page-context.ts.
 *
 * @module
 */
import type { Document } from "domhandler";

/** Data a hook took from a page: a plain object that `JSON.stringify` can write. */
export type Item = Record<string, unknown>;

/** An item with the URL of the page it came from, as the outputs write it and `CrawlResult.items` keeps it. */
export interface CrawlItem {
  /** The URL of the page (the URL fetched, not a redirect's target). */
  url: string;
  /** What the hook returned. */
  item: Item;
}

/** One page, as the `onPage` hook sees it: a response the crawl read as a page (not a redirect, not an error). */
export interface PageContext {
  /** The URL fetched. */
  readonly url: string;
  /** The URL the page was served from: `url`, as the crawl follows redirects as URLs of their own. */
  readonly finalUrl: string;
  /** The HTTP status. */
  readonly status: number;
  /** The response's headers, names lowercased. */
  readonly headers: Readonly<Record<string, string>>;
  /** The media type, lowercased (`text/html`), or null without a Content-Type. */
  readonly contentType: string | null;
  /** Links followed from a root to reach this page (0 for a root). */
  readonly depth: number;
  /** The body after content decoding (gzip, deflate, br); empty for a body left unread (`skipNonHtml`). */
  readonly bytes: Uint8Array;
  /** The body decoded as text in the charset the page names (`utf-8` without one). */
  readonly text: string;
  /**
   * The page's links as the crawl reads them: absolute http(s) URLs without
   * fragment, each once, in document order, before the URL policy; empty
   * unless the page is a `200` `text/html` or `application/xml`. Read when
   * first asked: from the document when `document()` was called first, else
   * with the tokenizer, as a crawl without a hook reads them.
   */
  readonly links: readonly string[];
  /**
   * The page parsed by htmlparser2 into a domhandler tree, for css-select and
   * domutils. Parsed on the first call only; the links the crawl follows then
   * come from this tree, not from a second pass. Ask for it before reading
   * `links`, or the page is read twice (the tokenizer, then the tree).
   */
  document(): Document;
}

/**
 * What a hook may give back: nothing, items, or items with the links to
 * queue from this page instead of the ones it found (`links`: URLs or
 * references resolved against the page, still filtered by the URL policy
 * and `maxDepth`; an empty list follows nothing from the page).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook declared to return `void` (it only looks) is a hook too.
export type PageResult = void | undefined | null | readonly Item[] | { readonly items?: readonly Item[]; readonly links?: readonly string[] };

/**
 * The crawl option `onPage`: called once for each page a crawl reads
 * (status 2xx–5xx that is not a redirect). It may return a `PageResult` or a
 * promise of one; a hook that throws or rejects gives the page's record the
 * error `ExtractError` with its message, and the crawl goes on.
 */
export type OnPage = (page: PageContext) => PageResult | PromiseLike<PageResult>;
