/**
 * What a crawler learns from one response: a redirect target, or the page's
 * size, type, charset and links.
 *
 * @module
 */
import { decodeContent, decodeText, mediaType, sniffCharset } from "./body.js";
import type { HttpResponse, ResponseParserOptions } from "../http/parser.js";
import { parseLinks } from "./links.js";
import { dropCredentials, parseUrl } from "./urls.js";

/**
 * One response, read: every field a record needs, and the links to queue.
 * A redirect has `nextUrl` and nothing else; an ordinary response has
 * `nextUrl: null` and the rest.
 */
export interface Page {
  /** The HTTP status. */
  status: number;
  /** The redirect target (absolute, without fragment or `user:pass@`), or null when this is not a redirect. */
  nextUrl: string | null;
  /** The media type, lowercased (`text/html`); null for a redirect or without Content-Type. */
  contentType: string | null;
  /**
   * The charset the response names, lowercased: `Content-Type`'s, else the one
   * its body names (by its WHATWG name); `utf-8` when none; null for a redirect.
   */
  encoding: string | null;
  /**
   * Body bytes after content decoding; 0 for a redirect. For a body left
   * unread (`skipNonHtml`), the size its head announced: the `Content-Length`
   * (the bytes on the wire, before any content decoding), or 0 without one.
   */
  size: number;
  /**
   * The page's links: absolute http(s) URLs without fragment, each once, in
   * document order. Not yet filtered by the URL policy: that is the crawler's call.
   */
  links: string[];
  /**
   * The body as read, for a page hook (`readPage`'s `keepBody`): then
   * `links` is left empty, to be read from it when asked. Absent otherwise.
   */
  body?: PageBody;
}

/** A page's body kept for its hook: the bytes, the encoding to decode them in, and whether the crawl reads links from them. */
export interface PageBody {
  /** The body after content decoding; empty when it was left unread (`skipNonHtml`). */
  bytes: Uint8Array;
  /** The WHATWG name of the encoding to decode it in (`decodeText`). */
  encoding: string;
  /** Whether its links are read: a `200` `text/html` or `application/xml`. */
  linkBody: boolean;
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([300, 301, 302, 303, 307, 308]);

/** Media types whose body is searched for links. */
const LINK_TYPES: ReadonlySet<string> = new Set(["text/html", "application/xml"]);

/**
 * Whether a status is one the crawler treats as a redirect (when it comes
 * with a usable `Location`): 300, 301, 302, 303, 307 or 308.
 *
 * @remarks The chapter's `crawling.py` checks `(300, 301, 302, 303, 307)`;
 * 308 Permanent Redirect (RFC 7538, 2015) is added here.
 */
export function isRedirect(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/**
 * Whether links are read from a response's body: a `200` whose media type is
 * `text/html` or `application/xml` (the types in `LINK_TYPES`).
 */
function hasLinkBody(status: number, contentType: string | null): boolean {
  return status === 200 && contentType !== null && LINK_TYPES.has(contentType);
}

/**
 * Whether the crawl's `skipNonHtml` leaves a response's body unread: a `200`
 * whose body no link would be read from. Asked once the head has come, by
 * the shared parser in stages 1 and 2 (as its `skipBody`) and by stage 3's
 * HTTP client; every other response (a redirect, a `404`, an HTML page) is
 * read as it always is.
 */
export function skippableBody(status: number, headers: Readonly<Record<string, string>>): boolean {
  return status === 200 && !hasLinkBody(status, mediaType(headers));
}

/**
 * What stages 1 and 2 tell the shared parser: the body limit and, with
 * `skipNonHtml`, to leave the {@link skippableBody} bodies unread.
 */
export function parserOptions(options: { maxBodyBytes: number; skipNonHtml?: boolean }): ResponseParserOptions {
  return { maxBodyBytes: options.maxBodyBytes, skipBody: options.skipNonHtml === true ? skippableBody : null };
}

/**
 * Reads a response the way every stage's crawler does.
 *
 * A redirect status with a `Location` that resolves against `url` gives a
 * page with `nextUrl` set and nothing else: the body is not decoded, and the
 * crawler decides whether to follow. Any other response, including a 3xx
 * without a usable `Location`, is an ordinary page: its body is decoded
 * ({@link decodeContent}), `size`, `contentType` and `encoding` are filled in,
 * and a 200 `text/html` or `application/xml` body is decoded as text in the
 * encoding {@link sniffCharset} finds and searched for links. A response
 * whose body was left unread (`bodySkipped`, see {@link skippableBody}) has
 * its type and charset from its headers and, as `size`, the `Content-Length`
 * it announced (0 when it announced none: chunked, or until the close).
 *
 * @param url - The URL that was fetched (absolute, without fragment).
 * @param response - The parsed response.
 * @param maxBodyBytes - The longest body accepted once decoded.
 * @param keepBody - For a page hook: keep the decoded body in `body`, and
 * leave `links` empty, to be read only when asked (src/crawl/page-context.ts),
 * from the tokenizer or from the document the hook asked for.
 * @remarks The chapter's `fetch()` does this inline, with aiohttp's
 * `response.text()` and a regular expression for links; here it is one
 * function so three stages cannot drift apart. An empty `Location` counts as
 * no `Location`.
 * @see Chapter, "Coordinating Coroutines" (`Crawler.fetch` and `parse_links` in `crawling.py`)
 * @throws FetchFailure `BadResponse` or `BodyTooLarge` when the body cannot be decoded within `maxBodyBytes`,
 * or `BodyTooLarge` when its text would be longer than a JavaScript string can be ({@link decodeText}).
 * @param linkAttributes - More attributes links are taken from (the option `linkAttributes`, {@link parseLinks}).
 * @example
 * ```ts
 * const page = readPage("http://example.com/", parseResponse(bytes, { maxBodyBytes }), maxBodyBytes);
 * if (page.nextUrl !== null) console.log("redirect to", page.nextUrl);
 * ```
 */
export function readPage(url: string, response: HttpResponse, maxBodyBytes: number, keepBody = false, linkAttributes: readonly string[] = []): Page {
  const { status, headers } = response;
  const nextUrl = isRedirect(status) ? redirectTarget(url, headers["location"]) : null;
  if (nextUrl !== null) {
    return { status, nextUrl, contentType: null, encoding: null, size: 0, links: [] };
  }
  const contentType = mediaType(headers);
  if (response.bodySkipped === true) {
    const charset = sniffCharset(headers, response.body);
    const page: Page = { status, nextUrl: null, contentType, encoding: charset.label, size: announcedSize(headers), links: [] };
    if (keepBody) page.body = { bytes: new Uint8Array(0), encoding: charset.encoding, linkBody: false };
    return page;
  }
  const body = decodeContent(headers, response.body, maxBodyBytes);
  const charset = sniffCharset(headers, body);
  const linkBody = hasLinkBody(status, contentType);
  if (keepBody) return { status, nextUrl: null, contentType, encoding: charset.label, size: body.length, links: [], body: { bytes: body, encoding: charset.encoding, linkBody } };
  const links = linkBody ? parseLinks(decodeText(body, charset.encoding), url, linkAttributes) : [];
  return { status, nextUrl: null, contentType, encoding: charset.label, size: body.length, links };
}

/**
 * The body size a head announces: its `Content-Length` (both parsers refuse
 * a malformed one), or 0 when it has none.
 */
function announcedSize(headers: Readonly<Record<string, string>>): number {
  const length = headers["content-length"];
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : 0;
}

/** `Location` resolved against the URL (the chapter's `urljoin`), without fragment or credentials; null when unusable. */
export function redirectTarget(url: string, location: string | undefined): string | null {
  const target = location === undefined || location.trim() === "" ? null : parseUrl(location, url);
  if (target === null) return null;
  target.hash = "";
  return dropCredentials(target).href;
}
