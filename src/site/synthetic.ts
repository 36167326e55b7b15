/**
 * A synthetic web site: N pages with K links each, chosen by a seeded PRNG,
 * so the same seed always gives the same site, and so the same crawl.
 *
 * @module
 */
import { gzipSync } from "node:zlib";
import { mulberry32 } from "../crawl/random.js";
import type { ContentEncoding } from "./fixture-site.js";
import { linksHtml } from "./html.js";
import { encodeLegacy, type LegacyCharset } from "./legacy-charset.js";

/** The shape of a synthetic site; see {@link syntheticSite}. */
export interface SyntheticSiteOptions {
  /** Pages, at least 1. Page 0 is `/`, page i is `/p/i`. */
  pages: number;
  /** Links on each page (duplicates and self-links happen, as on real sites). */
  linksPerPage: number;
  /** Seed of the PRNG that picks the links: same seed, same site. */
  seed: number;
  /** Delay before every response, in ms. Default 0. */
  delayMs?: number;
  /** Redirect paths `/r/0` … `/r/{n-1}`, each to a page, that links may point at. Default 0. */
  redirects?: number;
  /** Missing paths `/missing/0` … that links may point at (they get a 404). Default 0. */
  notFound?: number;
}

/** A page of a synthetic site: its links (paths, some with a fragment) and how its bytes are sent. */
export interface SyntheticPage {
  readonly kind: "page";
  /** The hrefs, in document order. */
  readonly links: readonly string[];
  /** The charset named in Content-Type (default utf-8). */
  readonly charset?: "utf-8" | LegacyCharset;
  /** Sent compressed with this Content-Encoding. Only gzip is used by the built-in sites. */
  readonly contentEncoding?: Extract<ContentEncoding, "gzip">;
  /** The page title (default "Page <path>"); non-ASCII shows the charset at work. */
  readonly title?: string;
}

/** A redirect of a synthetic site: `status` with `Location: to`. */
export interface SyntheticRedirect {
  readonly kind: "redirect";
  /** The Location: a path on the site. */
  readonly to: string;
  /** 301, 302, 303, 307 or 308. */
  readonly status: number;
}

/** What a synthetic site serves at one path. A path with no route is a 404. */
export type SyntheticRoute = SyntheticPage | SyntheticRedirect;

/** A whole synthetic site: the options it was made from and every route, by path. */
export interface SyntheticSiteDefinition {
  /** The options, defaults filled in (`delayMs` is the site's response delay). */
  readonly options: Readonly<Required<SyntheticSiteOptions>>;
  /** Every route by path; the root is `/`. */
  readonly routes: ReadonlyMap<string, SyntheticRoute>;
  /** The site's `/robots.txt`, if it has one (a crawl reads it only with `robots` on, so `expectedCrawl` ignores it). */
  readonly robotsTxt?: string;
}

/** The bytes of a synthetic page as served, and what a crawler should record for them. */
export interface RenderedPage {
  /** The bytes on the wire (compressed when the page says so). */
  readonly body: Buffer;
  /** Content-Type, and Content-Encoding when compressed. */
  readonly headers: Readonly<Record<string, string>>;
  /** Body length after content decoding: the record's `size`. */
  readonly size: number;
  /** The charset label: the record's `encoding`. */
  readonly charset: string;
}

/** The seeded generator the synthetic sites draw from: the crawl's own (src/crawl/random.ts). */
export { mulberry32 };

const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

/** The path of page `index`: `/` for page 0, else `/p/<index>`. */
export function pagePath(index: number): string {
  return index === 0 ? "/" : `/p/${index}`;
}

/**
 * Builds a synthetic site, deterministically from `options.seed`.
 *
 * Page i's first link goes to page i+1 (so every page is reachable from the
 * root); its other links are drawn uniformly from every page, redirect path
 * and missing path. One link in ten carries a fragment (`#s3`), which the
 * crawler must drop. Redirect `/r/j` has status 301, 302, 303, 307 or 308 (in
 * turn) and points at a page the PRNG picks, so two redirects may meet.
 *
 * @throws RangeError for a count that is not a non-negative integer (pages: at least 1).
 */
export function syntheticSite(options: SyntheticSiteOptions): SyntheticSiteDefinition {
  const resolved: Required<SyntheticSiteOptions> = {
    pages: count("pages", options.pages, 1),
    linksPerPage: count("linksPerPage", options.linksPerPage, 0),
    seed: options.seed,
    delayMs: options.delayMs ?? 0,
    redirects: count("redirects", options.redirects ?? 0, 0),
    notFound: count("notFound", options.notFound ?? 0, 0),
  };
  const random = mulberry32(resolved.seed);
  function pick(limit: number): number {
    return Math.floor(random() * limit);
  }
  const targets: string[] = [];
  for (let i = 0; i < resolved.pages; i++) targets.push(pagePath(i));
  for (let j = 0; j < resolved.redirects; j++) targets.push(`/r/${j}`);
  for (let k = 0; k < resolved.notFound; k++) targets.push(`/missing/${k}`);

  const routes = new Map<string, SyntheticRoute>();
  for (let i = 0; i < resolved.pages; i++) {
    const links: string[] = [];
    for (let n = 0; n < resolved.linksPerPage; n++) {
      const target = n === 0 ? pagePath((i + 1) % resolved.pages) : targets[pick(targets.length)];
      links.push(random() < 0.1 ? `${target}#s${n}` : `${target}`);
    }
    routes.set(pagePath(i), { kind: "page", links });
  }
  for (let j = 0; j < resolved.redirects; j++) {
    const status = REDIRECT_STATUSES[j % REDIRECT_STATUSES.length] ?? 302;
    routes.set(`/r/${j}`, { kind: "redirect", to: pagePath(pick(resolved.pages)), status });
  }
  return { options: resolved, routes };
}

/** The bytes and headers the site sends for a synthetic page at `path`. */
export function renderPage(path: string, page: SyntheticPage): RenderedPage {
  const charset = page.charset ?? "utf-8";
  const html = linksHtml(page.links, { title: page.title ?? `Page ${path}` });
  const decoded = charset === "utf-8" ? Buffer.from(html) : encodeLegacy(html, charset);
  const headers: Record<string, string> = { "Content-Type": `text/html; charset=${charset}` };
  let body = decoded;
  if (page.contentEncoding !== undefined) {
    body = gzipSync(decoded);
    headers["Content-Encoding"] = page.contentEncoding;
  }
  return { body, headers, size: decoded.length, charset };
}

function count(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`Expected \`${name}\` to be an integer from ${min} and up, got ${value}`);
  }
  return value;
}
