/**
 * Sitemaps (sitemaps.org): the files a site lists its pages in, which option
 * `sitemaps` reads to seed the crawl. What a sitemap's outcome means is
 * decided here, as `visit()` decides a page's; the stages fetch a sitemap as
 * they fetch a `robots.txt`, read whole.
 *
 * @module
 */
import { xmlParser } from "./htmlparser2-parts.js";
import type { HttpResponse } from "../http/parser.js";
import { FetchFailure, errorName, type FetchError } from "../kernel/errors.js";
import { decodeContent, decodeText, mediaType, sniffCharset } from "./body.js";
import { errorRecord, pageRecord, redirectRecord } from "./records.js";
import { readPage } from "./page.js";
import { dropCredentials, hostIsAllowed, parseUrl, type UrlPolicy } from "./urls.js";
import type { QueueItem, Visit, VisitContext } from "./visit.js";

/** The `<loc>`s read from one sitemap file, at most: the sitemaps protocol's limit of URLs per file. Later ones are ignored. */
export const SITEMAP_MAX_LOCS = 50_000;

/**
 * How deep sitemap indexes nest, at most: the sitemaps a crawl starts from
 * are at level 0, the sitemaps an index at level 0 names at level 1, and so
 * on; an index at this level is read, but the sitemaps it names are not
 * fetched. The protocol allows no nesting at all; some sites nest once or twice.
 */
export const SITEMAP_MAX_NESTING = 3;

/** Sitemap files one crawl fetches, at most, counting those it starts from: sitemaps an index names beyond it are not fetched. */
export const SITEMAP_MAX_FILES = 1_000;

/** Elements open at once in a sitemap, at most: a sitemap nests three or four deep; a deeper one is not a sitemap. */
const MAX_NESTED_ELEMENTS = 32;

/** What a sitemap file holds: pages (`urlset`, or a text sitemap) or more sitemaps (`sitemapindex`), and their URLs as written. */
export interface Sitemap {
  /** `urlset` (a text sitemap too): `locs` are pages; `sitemapindex`: `locs` are sitemaps. */
  kind: "urlset" | "sitemapindex";
  /** The text of each `<loc>` of a `<url>` (or of a `<sitemap>`), trimmed, in document order, at most {@link SITEMAP_MAX_LOCS}. */
  locs: string[];
}

/**
 * Reads a sitemap: XML, or text when its first character (after a byte
 * order mark and white space) is not `<`.
 *
 * A text sitemap (the protocol's other format) lists one page per line;
 * lines that are not an absolute http(s) URL are skipped, and an empty file
 * lists nothing.
 *
 * XML is read with htmlparser2 in XML mode: its root element must
 * be `urlset` or `sitemapindex`, and each `<loc>` child of a `<url>` (or a
 * `<sitemap>`) gives one URL. Names are compared without their namespace
 * prefix and case (`<sm:URLSET>` is a `urlset`), and the namespace itself is
 * not checked: the old Google namespace, a missing `xmlns` or a wrong one
 * all read alike. Other elements (`<lastmod>`, `<image:loc>`, …) are
 * ignored; entities and CDATA are decoded. XML that is not well formed is
 * read as far as it goes: a file cut short gives the `<loc>`s before the cut.
 *
 * @throws FetchFailure `BadResponse` when XML is not a sitemap: no root
 * element (a comment alone), another root element (an HTML page), or
 * elements nested more than 32 deep.
 * @example
 * ```ts
 * parseSitemap('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a.example/</loc></url></urlset>');
 * // → { kind: "urlset", locs: ["http://a.example/"] }
 * ```
 */
export function parseSitemap(text: string): Sitemap {
  const start = /^\uFEFF?\s*/.exec(text)?.[0].length ?? 0;
  if (text[start] !== "<") return { kind: "urlset", locs: textLocs(text) };
  return parseXmlSitemap(text);
}

/** The lines of a text sitemap that are absolute http(s) URLs, trimmed, at most {@link SITEMAP_MAX_LOCS}. */
function textLocs(text: string): string[] {
  const locs: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    const url = parseUrl(line.trim());
    if (url !== null && (url.protocol === "http:" || url.protocol === "https:")) locs.push(line.trim());
    if (locs.length === SITEMAP_MAX_LOCS) break;
  }
  return locs;
}

function parseXmlSitemap(xml: string): Sitemap {
  const reader = new SitemapReader();
  const Parser = xmlParser();
  const parser = new Parser(reader, { xmlMode: true });
  parser.write(xml);
  parser.end();
  if (reader.kind === null) throw notSitemap(reader.rootName === null ? "it has no root element" : `its root element is <${reader.rootName}>`);
  return { kind: reader.kind, locs: reader.locs };
}

/**
 * Listens to htmlparser2's Parser: the root element, and the text of each
 * `<loc>` whose parent is a `<url>` or a `<sitemap>`. It keeps its own stack of
 * local names, and refuses a document nested deeper than a sitemap ever is:
 * the Parser's own stack costs a copy of itself per element in XML mode too,
 * so that depth is what bounds its work (see `parseLinks` on the Parser's stack).
 */
class SitemapReader {
  kind: Sitemap["kind"] | null = null;
  rootName: string | null = null;
  readonly locs: string[] = [];
  private readonly open: string[] = [];
  /** The text of the `<loc>` being read, or null outside one. */
  private text: string | null = null;

  onopentag(name: string): void {
    const local = localName(name);
    if (this.rootName === null) {
      this.rootName = name;
      if (local === "urlset" || local === "sitemapindex") this.kind = local;
    }
    this.open.push(local);
    if (this.open.length > MAX_NESTED_ELEMENTS) throw notSitemap(`its elements nest more than ${MAX_NESTED_ELEMENTS} deep`);
    const parent = this.open[this.open.length - 2];
    if (this.kind !== null && local === "loc" && this.open.length === 3 && parent === (this.kind === "urlset" ? "url" : "sitemap")) this.text = "";
  }

  ontext(text: string): void {
    if (this.text !== null) this.text += text;
  }

  /** An element ends: its end tag, or (`implied`) an end tag of an element around it, or the end of the text. */
  onclosetag(_name: string, implied: boolean): void {
    const depth = this.open.length;
    this.open.pop();
    if (this.text === null || depth !== 3) return; // Only the <loc>'s own end ends its text.
    const loc = this.text.trim();
    this.text = null;
    // A <loc> without its end tag may be cut short: `http://exa` is not a URL of the site.
    if (!implied && loc !== "" && this.locs.length < SITEMAP_MAX_LOCS) this.locs.push(loc);
  }
}

/** `sm:urlset` → `urlset`; `URLSet` → `urlset`. */
function localName(name: string): string {
  return name.slice(name.indexOf(":") + 1).toLowerCase();
}

function notSitemap(why: string): FetchFailure {
  return new FetchFailure("BadResponse", `Not a sitemap: ${why}`);
}

/** gzip's first two bytes (RFC 1952): a `.xml.gz` file, whatever its `Content-Type` says. */
function isGzip(body: Uint8Array): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b;
}

/**
 * A sitemap's bytes: the body with its `Content-Encoding` undone, then
 * gunzipped if it is gzip data itself (a `.xml.gz` file, served as
 * `application/gzip`, `application/x-gzip` or anything else). Each step stops
 * at `maxBodyBytes`, the limit a page's body has: a small file that inflates
 * to gigabytes (a gzip bomb) is refused, not inflated.
 *
 * @throws FetchFailure `BodyTooLarge` when a decoded body would be longer than
 * `maxBodyBytes`; `BadResponse` for data that is not valid gzip.
 */
export function sitemapBytes(response: HttpResponse, maxBodyBytes: number): Uint8Array {
  const body = decodeContent(response.headers, response.body, maxBodyBytes);
  return isGzip(body) ? decodeContent({ "content-encoding": "gzip" }, body, maxBodyBytes) : body;
}

/** What {@link visitSitemap} reads of the crawl besides what `visit()` reads. */
export interface SitemapContext extends VisitContext {
  /** Sitemap files the crawl may still queue (of {@link SITEMAP_MAX_FILES}). */
  readonly sitemapFilesLeft: number;
}

/**
 * Turns the outcome of fetching the sitemap `item` into its record and the
 * URLs to queue, as `visit()` does for a page. A sitemap's record is an
 * ordinary record: `numUrls` counts the distinct URLs of its `<loc>`s that
 * the policy allows, `numNewUrls` those it queues.
 *
 * - A `urlset`'s allowed, unseen URLs are queued as pages at depth 0: seeds,
 *   like the roots (links they lead to are at depth 1).
 * - A `sitemapindex`'s sitemaps on an allowed host ({@link sitemapFileAllowed})
 *   are queued as sitemaps one level deeper, unless that is deeper than
 *   {@link SITEMAP_MAX_NESTING} or the crawl has queued
 *   {@link SITEMAP_MAX_FILES} sitemap files.
 * - A redirect's target is followed as a sitemap (on an allowed host, within
 *   `maxRedirect`); any other status gives its record and nothing more (a
 *   `/sitemap.xml` that is not there is a `404` record, not an error).
 * - A body that cannot be read gives an error record whose `detail` says
 *   why: `BodyTooLarge` (a gzip bomb too), `BadResponse` (not gzip, or not a
 *   sitemap: an HTML page, say).
 *
 * Each URL queued names the sitemap as its referrer. Like `visit()`, it
 * changes nothing: the core's store marks the URLs seen and queues them.
 */
export function visitSitemap(item: QueueItem, outcome: HttpResponse | FetchError, context: SitemapContext, detail: string | null = null, tries = 1): Visit {
  const { url } = item;
  const where = { depth: 0, tries }; // A sitemap lies at a root's depth.
  const referrer = item.referrer ?? null;
  const level = item.sitemap ?? 0;
  if (typeof outcome === "string") return { record: errorRecord(url, outcome, referrer, detail, where), next: [] };
  if (outcome.status !== 200) {
    try {
      const page = readPage(url, outcome, context.maxBodyBytes);
      if (page.nextUrl === null) return { record: pageRecord(url, page, 0, 0, referrer, where), next: [] };
      const target = page.nextUrl;
      const follow = item.maxRedirect > 0 && !context.seenUrls.has(target) && sitemapFileAllowed(target, context.policy);
      return {
        record: redirectRecord(url, page.status, target, referrer, where),
        next: follow ? [{ url: target, maxRedirect: item.maxRedirect - 1, referrer: url, depth: 0, sitemap: level }] : [],
      };
    } catch (error) {
      return { record: errorRecord(url, errorName(error), referrer, messageOf(error), where), next: [] };
    }
  }
  let bytes: Uint8Array;
  let sitemap: Sitemap;
  let charset: string;
  try {
    bytes = sitemapBytes(outcome, context.maxBodyBytes);
    const sniffed = sniffCharset(outcome.headers, bytes);
    charset = sniffed.label;
    sitemap = parseSitemap(decodeText(bytes, sniffed.encoding));
  } catch (error) {
    return { record: errorRecord(url, errorName(error), referrer, messageOf(error), where), next: [] };
  }
  const index = sitemap.kind === "sitemapindex";
  const allowed = new Set<string>(); // Distinct, in document order, as a page's links are counted.
  for (const loc of sitemap.locs) {
    const target = locUrl(loc, url);
    if (target !== null && (index ? sitemapFileAllowed(target, context.policy) : context.policy.hrefAllowed(target))) allowed.add(target);
  }
  const room = index ? (level < SITEMAP_MAX_NESTING ? context.sitemapFilesLeft : 0) : Infinity;
  const next: QueueItem[] = [];
  for (const target of allowed) {
    if (next.length >= room) break;
    if (context.seenUrls.has(target)) continue;
    next.push(index ? { url: target, maxRedirect: context.maxRedirect, referrer: url, depth: 0, sitemap: level + 1 } : { url: target, maxRedirect: context.maxRedirect, referrer: url, depth: 0 });
  }
  const page = { status: outcome.status, size: bytes.length, contentType: mediaType(outcome.headers), encoding: charset };
  return { record: pageRecord(url, page, allowed.size, next.length, referrer, where), next };
}

/** A `<loc>` as the crawl queues it: resolved against the sitemap (the protocol asks for absolute URLs), without fragment or credentials; null when not an http(s) URL. */
function locUrl(loc: string, sitemapUrl: string): string | null {
  const parsed = parseUrl(loc, sitemapUrl);
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return null;
  parsed.hash = "";
  return dropCredentials(parsed).href;
}

/**
 * Whether a sitemap file may be fetched: an http(s) URL on a host the crawl
 * allows. `exclude`, `include` and `noParent` choose pages, not sitemaps: a
 * crawl under `/docs/` with `noParent` still reads `/sitemap.xml`, and queues
 * only the pages under `/docs/` it lists.
 */
export function sitemapFileAllowed(url: string, policy: UrlPolicy): boolean {
  const parsed = parseUrl(url);
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) return false;
  return hostIsAllowed(parsed.hostname, policy.rootDomains, policy.strict);
}

/**
 * The sitemaps a crawl starts from at an origin, as queue items at level 0:
 * `urls` (an origin's `/sitemap.xml`, or the `Sitemap:` lines of its
 * `robots.txt`), resolved, those on an allowed host, at most `room` of them.
 */
export function sitemapSeeds(urls: readonly string[], base: string, referrer: string | null, context: SitemapContext): QueueItem[] {
  const items: QueueItem[] = [];
  for (const each of urls) {
    const url = locUrl(each, base);
    if (items.length >= context.sitemapFilesLeft) break;
    if (url === null || !sitemapFileAllowed(url, context.policy) || context.seenUrls.has(url) || items.some((item) => item.url === url)) continue;
    items.push({ url, maxRedirect: context.maxRedirect, referrer, depth: 0, sitemap: 0 });
  }
  return items;
}

function messageOf(error: unknown): string | null {
  return error instanceof FetchFailure ? error.message : null;
}
