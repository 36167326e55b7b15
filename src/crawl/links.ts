/**
 * Link extraction: the hrefs of a page, as absolute http(s) URLs, with the
 * streaming HTML parser htmlparser2.
 *
 * @module
 */
import { Parser } from "htmlparser2";
import type { ParserOptions } from "htmlparser2";
import { parseUrl } from "./urls.js";

/** htmlparser2's HTML-mode defaults, spelled out because the link rules depend on them. */
const PARSER_OPTIONS: ParserOptions = {
  decodeEntities: true, // `&amp;` in an href is `&`
  lowerCaseTags: true, // `<A>` is `<a>`
  lowerCaseAttributeNames: true, // `HREF` is `href`
};

/**
 * The links of an HTML page: every `<a href>` and `<area href>`, resolved
 * against the page's base URL, without fragment, http(s) only, each once, in
 * document order (first occurrence).
 *
 * htmlparser2 reads the text as a stream of tags without building a DOM. It
 * lowercases tag and attribute names (`<A HREF=x>` is a link), decodes
 * entities in attribute values (`&amp;` → `&`), accepts unquoted values, and
 * reads `<script>` and `<style>` as raw text, so markup inside them yields no
 * links. The hrefs are collected first and resolved once the whole page is
 * read, because the first `<base href>` sets the base for the entire
 * document, including links that come before it. WHATWG `URL` then does the
 * rest: it strips surrounding whitespace and removes tabs and newlines inside,
 * and refuses what is not a URL.
 *
 * Never throws: a parser error ends the parse, and the links found so far are
 * returned. The caller applies the URL policy (host, `exclude`) afterwards.
 *
 * @param html - The decoded text of the page.
 * @param pageUrl - The absolute URL the page was fetched from.
 * @remarks The chapter finds links with a regular expression,
 * `href=["'](.*?)["']`, which also matches inside scripts and comments,
 * misses unquoted values, and does not decode entities or honour `<base>`.
 * @see Chapter, "Coordinating Coroutines" (`parse_links` in `crawling.py`)
 * @example
 * ```ts
 * parseLinks('<a href="/b#top">b</a> <a href="mailto:x@y">mail</a>', "http://example.com/a");
 * // → ["http://example.com/b"]
 * ```
 */
export function parseLinks(html: string, pageUrl: string): string[] {
  const hrefs: string[] = [];
  let baseHref: string | null = null;

  function onopentag(name: string, attributes: Record<string, string>): void {
    const href = attributes["href"];
    if (href === undefined) return;
    if (name === "a" || name === "area") hrefs.push(href);
    else if (name === "base" && baseHref === null) baseHref = href;
  }

  try {
    new Parser({ onopentag }, PARSER_OPTIONS).end(html);
  } catch {
    // htmlparser2 reports problems to onerror rather than throwing; this only
    // guards the promise that a page never stops the crawl. Keep what was found.
  }
  return resolveLinks(hrefs, baseUrl(baseHref, pageUrl));
}

/**
 * The URL relative links resolve against: the first `<base href>` resolved
 * against the page URL, or the page URL itself when there is no base or it
 * does not resolve to an http(s) URL (as the HTML standard's document base URL
 * falls back to the document's own). Undefined when even the page URL does not
 * parse: then only absolute hrefs resolve.
 */
function baseUrl(baseHref: string | null, pageUrl: string): string | undefined {
  if (baseHref !== null && URL.canParse(baseHref, pageUrl)) {
    const base = new URL(baseHref, pageUrl);
    if (base.protocol === "http:" || base.protocol === "https:") return base.href;
  }
  return URL.canParse(pageUrl) ? pageUrl : undefined;
}

/** Resolves, defragments, keeps http(s) and removes duplicates, in order. */
function resolveLinks(hrefs: readonly string[], base: string | undefined): string[] {
  const links = new Set<string>();
  for (const href of hrefs) {
    const url = parseUrl(href, base);
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
    // Cut the fragment off the serialised URL, where only the fragment can hold a `#`
    // (elsewhere it is percent-encoded): cheaper than `url.hash = ""`, which re-serialises.
    const absolute = url.href;
    const hash = absolute.indexOf("#");
    links.add(hash === -1 ? absolute : absolute.slice(0, hash));
  }
  return [...links];
}
