/**
 * A fixture site serving a synthetic site, with the crawl it should get.
 *
 * @module
 */
import { FixtureSite, type FixtureSiteOptions } from "./fixture-site.js";
import { expectedCrawl, latencyBound, type ExpectedCrawl } from "./expected-crawl.js";
import { renderPage, syntheticSite, type SyntheticSiteDefinition, type SyntheticSiteOptions } from "./synthetic.js";

/**
 * A running synthetic site: the {@link FixtureSite} that serves it, the
 * definition it serves, and the crawl a correct crawler makes of it.
 *
 * @example
 * const synthetic = await SyntheticSite.start({ pages: 200, linksPerPage: 5, seed: 1, redirects: 5, notFound: 2 });
 * const result = await crawl(synthetic.url, { maxTasks: 1 });
 * // result.records deep-equals synthetic.expected.records
 * await synthetic.close();
 */
export class SyntheticSite {
  /** The crawl from the root with the default `maxRedirect` (10). */
  readonly expected: ExpectedCrawl;

  private constructor(
    /** The server, with its counters. */
    readonly site: FixtureSite,
    /** The routes it serves. */
    readonly definition: SyntheticSiteDefinition,
  ) {
    this.expected = expectedCrawl(definition, { origin: site.url });
  }

  /** Builds the site from `options` (or takes a ready definition) and starts serving it on 127.0.0.1. */
  static async start(
    options: SyntheticSiteOptions | SyntheticSiteDefinition,
    serverOptions: Pick<FixtureSiteOptions, "port" | "origin"> = {},
  ): Promise<SyntheticSite> {
    const definition = "routes" in options ? options : syntheticSite(options);
    const site = await FixtureSite.start({ delayMs: definition.options.delayMs, ...serverOptions });
    serve(site, definition);
    return new SyntheticSite(site, definition);
  }

  /** The root URL, `http://127.0.0.1:PORT/`: what to crawl. */
  get url(): string {
    return `${this.site.url}/`;
  }

  /** The expected crawl for another `maxRedirect`. */
  expectedFor(options: { maxRedirect: number }): ExpectedCrawl {
    return expectedCrawl(this.definition, { origin: this.site.url, maxRedirect: options.maxRedirect });
  }

  /** The least wall time (ms) a crawl with `maxTasks` workers can take; see {@link latencyBound}. */
  latencyBound(maxTasks: number): number {
    return latencyBound(this.expected, this.definition.options.delayMs, maxTasks);
  }

  /** Stops the server and closes every connection. */
  close(): Promise<void> {
    return this.site.close();
  }
}

/** Starts a {@link SyntheticSite}: `await startSyntheticSite({ pages: 100, linksPerPage: 4, seed: 7 })`. */
export function startSyntheticSite(options: SyntheticSiteOptions | SyntheticSiteDefinition): Promise<SyntheticSite> {
  return SyntheticSite.start(options);
}

function serve(site: FixtureSite, definition: SyntheticSiteDefinition): void {
  if (definition.robotsTxt !== undefined) site.addRobots(definition.robotsTxt);
  for (const [path, route] of definition.routes) {
    if (route.kind === "redirect") {
      site.addRedirect(path, route.to, route.status);
      continue;
    }
    const rendered = renderPage(path, route);
    const headers = { ...rendered.headers, "Content-Length": String(rendered.body.length) };
    site.addHandler(path, function servePage(_request, response) {
      response.writeHead(200, headers).end(rendered.body);
    });
  }
}
