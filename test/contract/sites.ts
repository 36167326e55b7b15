/**
 * The fixture sites a contract suite starts in its tests. After each test,
 * every site must have seen each socket a crawl opened to it closed (no
 * stage may leave one open), and then the sites are closed.
 */
import { afterEach } from "vitest";
import { FixtureSite, type FixtureSiteOptions } from "../../src/site/fixture-site.js";
import { startHostGroup, type HostGroup, type HostGroupOptions } from "../../src/site/host-group.js";

/** Starts sites and host groups for the tests of the `describe` it is called in, checked and closed after each test. */
export function sitesOfEachTest(): { startSite(options?: FixtureSiteOptions): Promise<FixtureSite>; startGroup(options: HostGroupOptions): Promise<HostGroup> } {
  let sites: FixtureSite[] = [];

  afterEach(async () => {
    const started = sites;
    sites = [];
    try {
      for (const site of started) await site.connectionsClosed(); // Every crawl closes every socket it opened.
    } finally {
      await Promise.all(started.map((site) => site.close()));
    }
  });

  return {
    async startSite(options) {
      const site = await FixtureSite.start(options);
      sites.push(site);
      return site;
    },
    async startGroup(options) {
      const group = await startHostGroup(options);
      sites.push(...group.sites);
      return group;
    },
  };
}
