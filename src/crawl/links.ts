/**
 * Link extraction: the hrefs of a page, as absolute http(s) URLs, read with
 * the tokenizer of the streaming HTML parser htmlparser2.
 *
 * @module
 */
import type { TokenizerCallbacks } from "htmlparser2";
import { Tokenizer } from "./htmlparser2-parts.js";
import { dropCredentials, parseUrl } from "./urls.js";

/** htmlparser2's HTML-mode settings, as its Parser hands them to its Tokenizer. */
const TOKENIZER_OPTIONS = {
  xmlMode: false, // HTML rules: `<script>`, `<style>`, `<title>`, `<textarea>`… hold text, not tags
  decodeEntities: true, // `&amp;` in an href is `&`
  recognizeSelfClosing: false, // `<script/>` still opens a script, as in browsers
};

/**
 * The links of an HTML page: every `<a href>` and `<area href>`, resolved
 * against the page's base URL, without fragment or `user:pass@`, http(s)
 * only, each once, in document order (first occurrence).
 *
 * htmlparser2's tokenizer reads the text as a stream of tags without building
 * a DOM. We lowercase tag and attribute names (`<A HREF=x>` is a link), keep
 * the first of a repeated attribute, and take entity-decoded values (`&amp;` →
 * `&`), quoted or not; the tokenizer reads `<script>`, `<style>`, `<title>` and
 * `<textarea>` as text (except inside `<svg>` and `<math>`, as browsers do), so
 * markup inside them yields no links. The hrefs are
 * collected first and resolved once the whole page is read, because the first
 * `<base href>` sets the base for the entire document, including links that
 * come before it. WHATWG `URL` then does the rest: it strips surrounding
 * whitespace and removes tabs and newlines inside, and refuses what is not a
 * URL.
 *
 * Never throws: an error ends the read, and the links found so far are
 * returned. The caller applies the URL policy (host, `exclude`) afterwards.
 *
 * @param html - The decoded text of the page.
 * @param pageUrl - The absolute URL the page was fetched from.
 * @param attributes - More attributes to take links from, lowercased, on any
 * element (`data-href`; the option `linkAttributes`, the CLI's `--link-attr`):
 * each one's first value in a complete start tag is a link too, in document
 * order with the hrefs. Default none: `<a href>` and `<area href>` only.
 * @remarks We drive htmlparser2's `Tokenizer`, not its `Parser`: the Parser
 * keeps its open elements newest-first (`this.stack.unshift(name)` in
 * `Parser.emitOpenTag`, htmlparser2 12.0.0), so each start tag moves every
 * open element, and a page of 200,000 unclosed `<b>` (600 KB) took 5 to 11 s
 * here, during which no timeout could fire. Links need only start tags and their
 * attributes, which the Tokenizer reports without keeping a stack.
 *
 * The chapter finds links with a regular expression, `href=["'](.*?)["']`,
 * which also matches inside scripts and comments, misses unquoted values, and
 * does not decode entities or honour `<base>`.
 * @see Chapter, "Coordinating Coroutines" (`parse_links` in `crawling.py`)
 * @example
 * ```ts
 * parseLinks('<a href="/b#top">b</a> <a href="mailto:x@y">mail</a>', "http://example.com/a");
 * // → ["http://example.com/b"]
 * ```
 */
export function parseLinks(html: string, pageUrl: string, attributes: readonly string[] = []): string[] {
  const tags = new LinkTags(html, attributes.length === 0 ? null : new Set(attributes));
  try {
    const tokenizer = new Tokenizer(TOKENIZER_OPTIONS, tags);
    tokenizer.write(html);
    tokenizer.end();
  } catch {
    // The tokenizer does not throw on bad markup; this only guards the promise
    // that a page never stops the crawl. Keep what was found.
  }
  return pageLinks(tags.hrefs, tags.baseHref, pageUrl);
}

/**
 * A page's links from the hrefs of its `<a>` and `<area>` tags, in document
 * order, and the href of its first `<base>` (null without one): resolved,
 * http(s) only, without fragment or `user:pass@`, each once. What
 * {@link parseLinks} does once the tokenizer has read the page, and what the
 * tree walk of a parsed document does (src/crawl/document.ts), so that both
 * resolve alike.
 */
export function pageLinks(hrefs: readonly string[], baseHref: string | null, pageUrl: string): string[] {
  return resolveLinks(hrefs, baseUrl(baseHref, pageUrl));
}

/**
 * Listens to the tokenizer and keeps the first href of each complete `<a>`,
 * `<area>` and `<base>` start tag, as htmlparser2's Parser would report it in
 * `onopentag`, and the first value of each of the `extra` attributes on any
 * tag. The tokenizer gives positions in `html`, and decoded entities as
 * code points; a tag cut off by the end of the page is dropped.
 */
class LinkTags implements TokenizerCallbacks {
  /** The hrefs of `<a>` and `<area>` (and the `extra` attributes' values), in document order. */
  readonly hrefs: string[] = [];
  /** The href of the first `<base>` that has one. */
  baseHref: string | null = null;
  private readonly foreign = new ForeignContent();
  /** The start tag being read, lowercased. */
  private tagName = "";
  /** Its first href, once read. */
  private href: string | null = null;
  /** Whether the attribute being read is that first href: only its value is kept. */
  private inHref = false;
  /** Whether the attribute being read is the first of its name among `extra`: its value is kept too. */
  private inExtra = false;
  /** The start tag's links in attribute order (its href and `extra` values), pushed when the tag is complete. */
  private readonly tagLinks: string[] = [];
  /** The `extra` attributes the start tag had so far: only the first of a repeated one counts. */
  private readonly tagExtras = new Set<string>();
  private value = "";

  /** @param extra - More attribute names to take links from (lowercased), on any element; null: none. */
  constructor(
    private readonly html: string,
    private readonly extra: ReadonlySet<string> | null = null,
  ) {}

  onopentagname(start: number, end: number): void {
    this.tagName = this.html.slice(start, end).toLowerCase();
    this.href = null;
    this.foreign.open(this.tagName);
    if (this.extra === null) return;
    this.tagLinks.length = 0;
    this.tagExtras.clear();
  }

  onattribname(start: number, end: number): void {
    this.inHref =
      this.href === null &&
      (this.tagName === "a" || this.tagName === "area" || this.tagName === "base") &&
      this.html.slice(start, end).toLowerCase() === "href";
    if (this.extra === null || this.inHref) return;
    const name = this.html.slice(start, end).toLowerCase();
    // An a's `href` is a link already; a base's names the base, not a link.
    this.inExtra = this.extra.has(name) && !this.tagExtras.has(name) && !(name === "href" && (this.tagName === "a" || this.tagName === "area" || this.tagName === "base"));
    if (this.inExtra) this.tagExtras.add(name);
  }

  onattribdata(start: number, end: number): void {
    if (this.inHref || this.inExtra) this.value += this.html.slice(start, end);
  }

  onattribentity(codePoint: number): void {
    if (this.inHref || this.inExtra) this.value += String.fromCodePoint(codePoint);
  }

  onattribend(): void {
    if (this.inExtra) {
      this.tagLinks.push(this.value);
      this.inExtra = false;
      this.value = "";
      return;
    }
    if (!this.inHref) return;
    this.href = this.value; // "" for a bare `href`, as in the Parser
    if (this.extra !== null && this.tagName !== "base") this.tagLinks.push(this.value);
    this.inHref = false;
    this.value = "";
  }

  onopentagend(): void {
    if (this.extra !== null) {
      if (this.tagName === "base" && this.href !== null && this.baseHref === null) this.baseHref = this.href;
      for (const link of this.tagLinks) this.hrefs.push(link);
      this.tagLinks.length = 0;
      this.tagExtras.clear();
      this.href = null;
      return;
    }
    if (this.href === null) return;
    if (this.tagName !== "base") this.hrefs.push(this.href);
    else if (this.baseHref === null) this.baseHref = this.href;
    this.href = null;
  }

  onselfclosingtag(): void {
    this.onopentagend(); // `<a href=x/>` is a link like `<a href=x>`
    this.foreign.selfClose(this.tagName);
  }

  onclosetag(start: number, end: number): void {
    if (this.foreign.empty()) return; // Nothing open to close: no need to read the name.
    this.foreign.close(this.html.slice(start, end).toLowerCase());
  }

  /** Asked at each `<`: inside svg or math, `<style>` and the like hold tags. */
  isInForeignContext(): boolean {
    return this.foreign.inside();
  }

  // Text, comments, CDATA, declarations and the end hold no links.
  ontext(): void {}
  ontextentity(): void {}
  oncomment(): void {}
  oncdata(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}
}

/** Where the markup turns SVG or MathML, as htmlparser2's Parser sees it. */
const FOREIGN_ROOTS = new Set(["svg", "math"]);
/** Elements inside svg or math whose content is HTML again (htmlparser2's `htmlIntegrationElements`). */
const HTML_ISLANDS = new Set(["mi", "mo", "mn", "ms", "mtext", "annotation-xml", "foreignobject", "desc", "title"]);

/**
 * Whether the tokenizer is inside `<svg>` or `<math>`, where htmlparser2's
 * Parser (like a browser) reads `<script>`, `<style>` and `<title>` as
 * ordinary markup, not as text. The tokenizer asks at every tag.
 *
 * Keeps only the open svg and math elements and the HTML islands in them
 * (`<foreignObject>`, `<title>`, `<mi>`…), newest last, each closed by its own
 * end tag, with a count per name so that an end tag with nothing to close
 * costs no search: a hostile page cannot make this quadratic either.
 *
 * @remarks The Parser tracks every open element, so there an ancestor's end
 * tag (`<div><svg></div>`) or an implied end also closes an svg; here only
 * `</svg>` does. On markup that closes what it opens, both agree (a property
 * test checks this against the Parser).
 */
class ForeignContent {
  private readonly elements: string[] = [];
  private readonly counts = new Map<string, number>();

  /** Whether no svg, math or island is open: an end tag then closes nothing. */
  empty(): boolean {
    return this.elements.length === 0;
  }

  inside(): boolean {
    const current = this.elements.at(-1);
    return current !== undefined && FOREIGN_ROOTS.has(current);
  }

  /** A start tag, lowercased. */
  open(name: string): void {
    if (!FOREIGN_ROOTS.has(name) && !this.isIsland(name)) return;
    this.elements.push(name);
    this.counts.set(name, this.count(name) + 1);
  }

  /**
   * After a start tag written `<x/>`: `<svg/>` and `<math/>` close at once, as the Parser closes
   * self-closed tags in foreign content; a self-closed island (`<title/>`) opens HTML and stays open.
   */
  selfClose(name: string): void {
    if (FOREIGN_ROOTS.has(name)) this.close(name);
  }

  /** An end tag, lowercased: closes the newest open element of that name and all opened after it. */
  close(name: string): void {
    if (this.count(name) === 0) return;
    let closed: string | undefined;
    do {
      closed = this.elements.pop();
      if (closed !== undefined) this.counts.set(closed, this.count(closed) - 1);
    } while (closed !== undefined && closed !== name);
  }

  private isIsland(name: string): boolean {
    // The Parser spells it `foreignObject`, and so knows it, only in svg or inside another one.
    if (name === "foreignobject") return this.elements.at(-1) === "svg" || this.count(name) > 0;
    return HTML_ISLANDS.has(name);
  }

  private count(name: string): number {
    return this.counts.get(name) ?? 0;
  }
}

/**
 * The URL relative links resolve against: the first `<base href>` resolved
 * against the page URL, or the page URL itself when there is no base or it
 * does not resolve to an http(s) URL (as the HTML standard's document base URL
 * falls back to the document's own). Null when even the page URL does not
 * parse: then only absolute hrefs resolve.
 */
export function baseUrl(baseHref: string | null, pageUrl: string): URL | null {
  if (baseHref !== null) {
    const base = parseUrl(baseHref, pageUrl);
    if (base !== null && (base.protocol === "http:" || base.protocol === "https:")) return base;
  }
  return parseUrl(pageUrl);
}

/**
 * Resolves, keeps http(s), drops credentials and fragments, and removes
 * duplicates, in order: what {@link parseLinks} does with the hrefs it read,
 * and what `linksInHook` (src/crawl/extract.ts) does with those it takes
 * from a document, so both give the same links for the same hrefs.
 */
export function resolveLinks(hrefs: readonly string[], base: URL | null): string[] {
  const links = new Set<string>();
  const baseHref = base?.href;
  const site = base !== null && (base.protocol === "http:" || base.protocol === "https:") ? new SimplePaths(base) : null;
  for (const href of hrefs) {
    const simple = site?.resolve(href) ?? null;
    if (simple !== null) {
      links.add(simple);
      continue;
    }
    const url = parseUrl(href, baseHref);
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
    dropCredentials(url); // `http://u:p@host/a` is the page `http://host/a`: the crawler never sends them.
    // Cut the fragment off the serialised URL, where only the fragment can hold a `#`
    // (elsewhere it is percent-encoded): cheaper than `url.hash = ""`, which re-serialises.
    const absolute = url.href;
    const hash = absolute.indexOf("#");
    links.add(hash === -1 ? absolute : absolute.slice(0, hash));
  }
  return [...links];
}

/**
 * A path (and query) that WHATWG `URL` keeps as written: characters it never
 * percent-encodes, no `\`, no `%`, no space, and not `//` at the start; then
 * an optional query of the same characters (and `?`, `%`), then an optional
 * fragment (which is cut off, whatever it holds).
 */
const SIMPLE_PATH = /^(?!\/\/)[\w\-.~!$&()*+,;=:@/]*(?:\?[\w\-.~!$&()*+,;=:@/?%]*)?(?=#|$)/;

/**
 * Resolves the hrefs most pages are made of (`/p/1`, `page.html`, or this
 * site's own absolute URLs) by joining strings, where `new URL(href, base)`
 * costs about a microsecond a link (docs/benchmarks.md, "Issue 29, third round"). Every
 * other href, and any that has a dot segment (`./`, `../`) or could name a
 * scheme, gets `null`: `URL` resolves it. A property test holds the two to
 * the same answers.
 */
class SimplePaths {
  /** `http://host:port`, as `URL` serialises it: the part of a link before its path. */
  private readonly origin: string;
  /** The base's directory: its path up to and including the last `/`. */
  private readonly directory: string;

  constructor(base: URL) {
    this.origin = base.origin;
    this.directory = base.pathname.slice(0, base.pathname.lastIndexOf("/") + 1);
  }

  /** The link `href` names, without fragment, or null when `URL` must resolve it. */
  resolve(href: string): string | null {
    let path: string;
    if (href.startsWith("/")) path = href;
    else if (href.startsWith(this.origin) && href.charCodeAt(this.origin.length) === 0x2f) path = href.slice(this.origin.length);
    // A relative path, unless it starts with a dot segment or holds a `:` (`mailto:x` is a scheme).
    else if (/^[\w\-~!$&()*+,;=@][^:?#]*(?:[?#]|$)/.test(href)) path = this.directory + href;
    else return null;
    const simple = SIMPLE_PATH.exec(path);
    if (simple === null) return null;
    const kept = simple[0];
    const query = kept.indexOf("?");
    // A dot segment (`/./`, `/..`) is removed by `URL`: leave it to it.
    if ((query === -1 ? kept : kept.slice(0, query)).includes("/.")) return null;
    return flatConcat(this.origin, kept);
  }
}

/**
 * `origin + path` as one string of its own. The link is the URL string a
 * crawl keeps for as long as it runs (in its seen set, its queue item, its
 * record and its children's `referrer`), and `+` would make it a pair
 * pointing at its two parts, the second of which (a path of 13 characters or
 * more) V8 cuts from the page's text as a view that keeps the whole text
 * alive: every page would live as long as a link found on it. `join` copies
 * both into one new string.
 *
 * @remarks Measured on 20 pages of 1 MiB, their 60 links kept: 19.9 MiB of
 * heap with `+`, under 0.2 MiB with `join` (test/crawl/links-memory.test.ts;
 * docs/benchmarks.md, "Issue 39: memory with records kept").
 */
function flatConcat(origin: string, path: string): string {
  return [origin, path].join("");
}
