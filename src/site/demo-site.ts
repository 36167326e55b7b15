/**
 * The demo site: one line starts a small site worth crawling, for notebooks,
 * examples and `crawl --demo`.
 *
 * @module
 */
import { SyntheticSite } from "./synthetic-site.js";
import { syntheticSite, type SyntheticPage, type SyntheticRoute, type SyntheticSiteDefinition } from "./synthetic.js";

/**
 * The demo site's definition: 60 synthetic pages with 4 links each, 3
 * redirects and a missing page among the links, a 5 ms delay on every
 * response (so concurrency shows), plus two pages linked from the root: a
 * gzip-compressed one (`/gzip`) and a windows-1252 one (`/latin-1`).
 */
export function demoSiteDefinition(): SyntheticSiteDefinition {
  const base = syntheticSite({ pages: 60, linksPerPage: 4, seed: 2015, delayMs: 5, redirects: 3, notFound: 1 });
  const routes = new Map<string, SyntheticRoute>(base.routes);
  const root = routes.get("/");
  const rootLinks = root !== undefined && root.kind === "page" ? root.links : [];
  const newRoot: SyntheticPage = { kind: "page", links: [...rootLinks, "/gzip", "/latin-1"] };
  routes.set("/", newRoot);
  routes.set("/gzip", { kind: "page", links: ["/p/1", "/p/2"], contentEncoding: "gzip", title: "Compressed with gzip" });
  routes.set("/latin-1", { kind: "page", links: ["/p/3"], charset: "windows-1252", title: "Café, crème brûlée" });
  return { options: base.options, routes };
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
