/**
 * The fixture web site: a real HTTP server on 127.0.0.1 to point the crawlers
 * at, since the tests (and this machine) never touch the real network.
 *
 * Start with {@link startDemoSite} for a ready-made site, {@link FixtureSite}
 * to script pages, redirects and faults one by one, {@link SyntheticSite}
 * for a seeded site of any size together with the crawl it should get
 * ({@link expectedCrawl}), or {@link HostGroup} for several hosts (ports)
 * whose pages link to each other.
 *
 * @example
 * import { startDemoSite } from "coroutine-crawler/site";
 * const demo = await startDemoSite();   // demo.url is http://127.0.0.1:PORT/
 * await demo.close();
 *
 * @module
 */
export {
  FixtureSite,
  type ContentEncoding,
  type FixtureSiteOptions,
  type PageContent,
  type PageOptions,
  type ReceivedRequest,
  type RetryAfterOptions,
  type SitemapOptions,
} from "./fixture-site.js";
export { faultHandler, type Fault, type RouteHandler } from "./faults.js";
export { escapeHtml, linksHtml, NOT_FOUND_BODY, NOT_FOUND_TYPE, sitemapXml, type LinksHtmlOptions } from "./html.js";
export { encodeLegacy, type LegacyCharset } from "./legacy-charset.js";
export {
  mulberry32,
  pagePath,
  renderPage,
  syntheticSite,
  type RenderedPage,
  type SyntheticPage,
  type SyntheticRedirect,
  type SyntheticRoute,
  type SyntheticSiteDefinition,
  type SyntheticSiteOptions,
} from "./synthetic.js";
export { expectedCrawl, latencyBound, type ExpectedCrawl, type ExpectedCrawlOptions } from "./expected-crawl.js";
export { SyntheticSite, startSyntheticSite } from "./synthetic-site.js";
export { DEMO_ROBOTS_TXT, demoSiteDefinition, startDemoSite } from "./demo-site.js";
export { HostGroup, hostGroupLayout, startHostGroup, type HostGroupOptions, type HostPage, type HostRequest } from "./host-group.js";
