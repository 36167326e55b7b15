/**
 * The world of a simulation: the simulated network, and the project's own
 * site servers served on it at origins of a test's choosing, with no socket.
 *
 * @module
 */
import type { CrawlOptions } from "../crawl/options.js";
import { FixtureSite, type FixtureSiteOptions } from "../site/fixture-site.js";
import { HostGroup, type HostGroupOptions } from "../site/host-group.js";
import { SyntheticSite } from "../site/synthetic-site.js";
import type { SyntheticSiteDefinition, SyntheticSiteOptions } from "../site/synthetic.js";
import type { SimulatedNetwork } from "./network.js";

/**
 * The simulated world a site builder sets up: the network, and sites served
 * on it at origins of your choosing (`http://site.test`).
 */
export class World {
  /** Every site started on the network, closed when the crawl is over. */
  readonly sites: FixtureSite[] = [];

  constructor(readonly network: SimulatedNetwork) {}

  /** Starts a {@link FixtureSite} at `origin` on the network (routes to add). */
  async fixture(origin: string, options: Omit<FixtureSiteOptions, "origin" | "port"> = {}): Promise<FixtureSite> {
    const site = await FixtureSite.start({ ...options, origin });
    this.serve(site);
    return site;
  }

  /** Starts a {@link SyntheticSite} at `origin` on the network. */
  async synthetic(origin: string, definition: SyntheticSiteOptions | SyntheticSiteDefinition): Promise<SyntheticSite> {
    const synthetic = await SyntheticSite.start(definition, { origin });
    this.serve(synthetic.site);
    return synthetic;
  }

  /** Starts a {@link HostGroup} on the network: host h at `http://group.test:800h` (one name, a port each, so a crawl from its root follows every host). */
  async hostGroup(options: Omit<HostGroupOptions, "origin">): Promise<HostGroup> {
    const group = await HostGroup.start({ ...options, origin: groupOrigin });
    for (const site of group.sites) this.serve(site);
    return group;
  }

  private serve(site: FixtureSite): void {
    const url = new URL(site.url);
    this.network.listen(url.hostname, site.port, function accept(socket) {
      site.accept(socket);
    });
    this.sites.push(site);
  }
}

function groupOrigin(host: number): string {
  return `http://group.test:${8000 + host}`;
}

/** Sets up the sites of a simulation on its world and returns the roots to crawl, and crawl options the site asks for. */
export type SiteBuilder = (world: World) => Promise<{ roots: string | string[]; options?: CrawlOptions }>;

