/**
 * The HTML the fixture site serves: a page of links, and the body of a 404.
 *
 * @module
 */

/** The body of the site's 404 response for a path it has no route for. */
export const NOT_FOUND_BODY = "Not found\n";

/** The Content-Type of the site's 404 response. */
export const NOT_FOUND_TYPE = "text/plain; charset=utf-8";

/** How {@link linksHtml} writes the page around the links. */
export interface LinksHtmlOptions {
  /** The page title (escaped). Default "Fixture page". */
  title?: string;
  /** Adds `<meta charset="…">` to the head: a charset named only in the document. */
  metaCharset?: string;
}

/**
 * An HTML page whose `<a href>`s are `links`, in order, one per line.
 *
 * The hrefs are written as given (only `&`, `"`, `<` escaped), so a test can
 * serve relative links, fragments, `mailto:` or other hosts and see what the
 * crawler makes of them.
 *
 * @example
 * linksHtml(["/a", "/b#top"]) // <a href="/a">/a</a> … <a href="/b#top">/b#top</a>
 */
export function linksHtml(links: readonly string[], options: LinksHtmlOptions = {}): string {
  const meta = options.metaCharset === undefined ? "" : `<meta charset="${escapeHtml(options.metaCharset)}">`;
  const anchors = links.map(function anchor(href) {
    const escaped = escapeHtml(href);
    return `<a href="${escaped}">${escaped}</a>\n`;
  });
  return (
    `<!doctype html>\n<html><head>${meta}<title>${escapeHtml(options.title ?? "Fixture page")}</title></head>\n` +
    `<body>\n${anchors.join("")}</body></html>\n`
  );
}

/** Escapes the characters that would end an attribute value or start a tag. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * A sitemap (sitemaps.org) listing `urls`, each escaped, as `<loc>`s: the
 * pages of a `urlset`, or with `kind: "sitemapindex"` the sitemaps of an index.
 *
 * @example
 * sitemapXml(["/a"].map((path) => site.urlFor(path))) // <urlset xmlns=…><url><loc>http://127.0.0.1:…/a</loc></url></urlset>
 */
export function sitemapXml(urls: readonly string[], kind: "urlset" | "sitemapindex" = "urlset"): string {
  const entry = kind === "urlset" ? "url" : "sitemap";
  const entries = urls.map(function loc(url) {
    return `  <${entry}><loc>${escapeHtml(url)}</loc></${entry}>\n`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${kind} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join("")}</${kind}>\n`;
}
