/**
 * The demo site: one line starts a small site worth crawling, for notebooks,
 * examples and `crawl --demo`.
 *
 * @module
 */
import { SyntheticSite } from "./synthetic-site.js";
import { syntheticSite, type SyntheticPage, type SyntheticRoute, type SyntheticSiteDefinition } from "./synthetic.js";

/**
 * The demo site's `/robots.txt`: every crawler is asked to keep out of
 * `/private/`, and `coroutine-crawler` (this package's user agent) has its
 * own group that says the same. A crawl reads it only with `robots` on (the
 * `crawl` command's default); without, `/private/` is crawled like any page.
 * It sets no `Crawl-delay`: `npm start` shows the stages' concurrency on this
 * site, which a delay per request to its one host would take away.
 */
export const DEMO_ROBOTS_TXT = `# The demo site's robots.txt, read by crawls with \`robots\` on.
User-agent: *
Disallow: /private/

# A crawler follows only the group that names it (RFC 9309, 2.2.1), so this one repeats the Disallow.
User-agent: coroutine-crawler
Disallow: /private/
`;

/**
 * The demo site's definition: 60 synthetic pages with 4 links each, 3
 * redirects and a missing page among the links, a 5 ms delay on every
 * response (so concurrency shows), plus three pages linked from the root: a
 * gzip-compressed one (`/gzip`), a windows-1252 one (`/latin-1`) and
 * `/private/`, which links to `/private/drafts`. Its `robots.txt`
 * ({@link DEMO_ROBOTS_TXT}) disallows `/private/`.
 */
export function demoSiteDefinition(): SyntheticSiteDefinition {
  const base = syntheticSite({ pages: 60, linksPerPage: 4, seed: 2015, delayMs: 5, redirects: 3, notFound: 1 });
  const routes = new Map<string, SyntheticRoute>(base.routes);
  const root = routes.get("/");
  const rootLinks = root !== undefined && root.kind === "page" ? root.links : [];
  const newRoot: SyntheticPage = { kind: "page", links: [...rootLinks, "/gzip", "/latin-1", "/private/"] };
  routes.set("/", newRoot);
  routes.set("/gzip", { kind: "page", links: ["/p/1", "/p/2"], contentEncoding: "gzip", title: "Compressed with gzip" });
  routes.set("/latin-1", { kind: "page", links: ["/p/3"], charset: "windows-1252", title: "Café, crème brûlée" });
  routes.set("/private/", { kind: "page", links: ["/private/drafts"], title: "Private: robots.txt asks crawlers to keep out" });
  routes.set("/private/drafts", { kind: "page", links: ["/"], title: "Private drafts" });
  return { options: base.options, routes, robotsTxt: DEMO_ROBOTS_TXT };
}

/**
 * Starts the demo site on 127.0.0.1 and an ephemeral port.
 *
 * @example
 * const demo = await startDemoSite();
 * const result = await crawl(demo.url);
 * console.log(report(result));
 * await demo.close();
 */
export function startDemoSite(): Promise<SyntheticSite> {
  return SyntheticSite.start(demoSiteDefinition());
}
