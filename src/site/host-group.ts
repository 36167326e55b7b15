/**
 * Several fixture sites at once, one per port of 127.0.0.1: the hosts a
 * polite crawler tells apart (a host is an origin, so each port is one).
 * Their pages link to pages of their own host and of the others.
 *
 * @module
 */
import { FixtureSite, type ReceivedRequest } from "./fixture-site.js";
import { mulberry32, pagePath } from "./synthetic.js";

/** The shape of a host group; see {@link HostGroup.start}. */
export interface HostGroupOptions {
  /** Hosts, at least 1: host h is a {@link FixtureSite} on its own port. */
  hosts: number;
  /** Pages on each host, at least 1: `/`, `/p/1`, … as {@link pagePath} names them. */
  pagesPerHost: number;
  /** Links on each page. Default 3. */
  linksPerPage?: number;
  /** Seed of the PRNG that picks the links: same seed, same group. Default 1. */
  seed?: number;
  /** Delay before every response of every host, in ms. Default 0. */
  delayMs?: number;
  /** The `robots.txt` host h serves, or null for none (a 404, so everything is allowed). Default: none anywhere. */
  robots?: (hostIndex: number) => string | null;
  /**
   * The origin host h is at on a simulated network (`http://group.test:800h`:
   * one host name, a port each, as on 127.0.0.1), its sites listening on no
   * port (see `FixtureSite`'s `origin`). Default: none, each host listens on
   * its own port of 127.0.0.1.
   */
  origin?: (hostIndex: number) => string;
}

/** A page of a host group before the ports are known: which host, which path. */
export interface HostPage {
  readonly host: number;
  readonly path: string;
}

/** A request one host of a group received: see {@link HostGroup.requests}. */
export interface HostRequest extends ReceivedRequest {
  /** The host's origin, `http://127.0.0.1:PORT`. */
  readonly origin: string;
}

/**
 * The links of every page of a host group, deterministically from
 * `options.seed`: `layout[h].get(path)` lists the pages that page of host h
 * links to, in document order.
 *
 * Page i's first link goes to page i+1 of its own host (so every page of a
 * host is reachable from the host's root); its other links go to a page of
 * any host, host and page drawn uniformly. Host 0's root first links to every
 * other host's root, so one crawl from it reaches every host.
 *
 * @throws RangeError for a count that is not an integer (hosts and pages: at least 1).
 */
export function hostGroupLayout(options: HostGroupOptions): ReadonlyArray<ReadonlyMap<string, readonly HostPage[]>> {
  const hosts = count("hosts", options.hosts, 1);
  const pages = count("pagesPerHost", options.pagesPerHost, 1);
  const linksPerPage = count("linksPerPage", options.linksPerPage ?? 3, 0);
  const random = mulberry32(options.seed ?? 1);
  function pick(limit: number): number {
    return Math.floor(random() * limit);
  }
  const layout: Array<Map<string, HostPage[]>> = [];
  for (let host = 0; host < hosts; host++) {
    const routes = new Map<string, HostPage[]>();
    for (let i = 0; i < pages; i++) {
      const links: HostPage[] = [];
      for (let n = 0; n < linksPerPage; n++) {
        links.push(n === 0 ? { host, path: pagePath((i + 1) % pages) } : { host: pick(hosts), path: pagePath(pick(pages)) });
      }
      routes.set(pagePath(i), links);
    }
    layout.push(routes);
  }
  const otherRoots = Array.from({ length: hosts - 1 }, function rootOf(_, index) {
    return { host: index + 1, path: "/" };
  });
  const hub = layout[0]; // hosts >= 1
  hub.set("/", [...otherRoots, ...(hub.get("/") ?? [])]);
  return layout;
}

/**
 * A group of running fixture sites whose pages link across hosts, for
 * crawling with per-host politeness: each site's counters and request log
 * are that host's.
 *
 * Links to a page of the same host are paths (`/p/3`); links to another host
 * are absolute URLs. Every host is `127.0.0.1`, so a crawl from {@link url}
 * follows them all (root domains compare host names, not ports).
 *
 * @example
 * const group = await startHostGroup({ hosts: 3, pagesPerHost: 20, delayMs: 5 });
 * const result = await crawl(group.url, { maxPerHost: 2 });
 * // the records' URLs are group.expectedUrls; each of group.peakInFlightPerHost() is at most 2
 * await group.close();
 */
export class HostGroup {
  /** The root URL of each host, `http://127.0.0.1:PORT/`, in host order. */
  readonly roots: readonly string[];
  /** Every page's URL → the absolute URLs its links go to, in document order. */
  readonly links: ReadonlyMap<string, readonly string[]>;
  /** The URLs a full crawl from {@link url} records (without robots): every page it reaches, breadth first. */
  readonly expectedUrls: ReadonlySet<string>;

  private constructor(
    /** One site per host, in host order: their counters and logs are per host. */
    readonly sites: readonly FixtureSite[],
    layout: ReadonlyArray<ReadonlyMap<string, readonly HostPage[]>>,
    robots: ((hostIndex: number) => string | null) | undefined,
  ) {
    const links = new Map<string, readonly string[]>();
    for (const [host, routes] of layout.entries()) {
      const site = sites[host];
      for (const [path, targets] of routes) {
        const hrefs = targets.map(function href(target) {
          return target.host === host ? target.path : sites[target.host].urlFor(target.path);
        });
        site.addPage(path, hrefs);
        links.set(
          site.urlFor(path),
          targets.map(function absolute(target) {
            return sites[target.host].urlFor(target.path);
          }),
        );
      }
      const text = robots?.(host) ?? null;
      if (text !== null) site.addRobots(text);
    }
    this.links = links;
    this.roots = sites.map(function rootUrl(site) {
      return site.urlFor("/");
    });
    this.expectedUrls = new Set(this.reachable());
  }

  /**
   * Starts one {@link FixtureSite} per host and serves the pages of
   * {@link hostGroupLayout} on them (and each host's `robots.txt`, if any).
   *
   * @throws RangeError for a count that is not an integer; then no site is left running.
   */
  static async start(options: HostGroupOptions): Promise<HostGroup> {
    const layout = hostGroupLayout(options);
    const sites: FixtureSite[] = [];
    try {
      for (let host = 0; host < layout.length; host++) {
        const origin = options.origin?.(host);
        sites.push(await FixtureSite.start({ delayMs: options.delayMs ?? 0, ...(origin === undefined ? {} : { origin }) }));
      }
    } catch (error) {
      await closeAll(sites);
      throw error;
    }
    return new HostGroup(sites, layout, options.robots);
  }

  /** Host 0's root URL, which links to every host's root: what to crawl. */
  get url(): string {
    return this.roots[0];
  }

  /** Each host's origin, `http://127.0.0.1:PORT`, in host order (as `RobotsFetch.origin` names it). */
  get origins(): string[] {
    return this.sites.map(function originOf(site) {
      return site.url;
    });
  }

  /**
   * The URLs a crawl from {@link url} records, breadth first, when it
   * follows the links of a URL only if `follows(url)`: a URL it does not
   * follow still gets its record, as a page `robots.txt` disallows does.
   */
  reachable(follows: (url: string) => boolean = followAll): string[] {
    const queue = [this.url];
    const seen = new Set(queue);
    for (let head = 0; head < queue.length; head++) {
      const url = queue[head];
      if (!follows(url)) continue;
      for (const link of this.links.get(url) ?? []) {
        if (seen.has(link)) continue;
        seen.add(link);
        queue.push(link);
      }
    }
    return queue;
  }

  /** The most requests in flight at once on each host, in host order: what `maxPerHost` bounds. */
  peakInFlightPerHost(): number[] {
    return this.sites.map(function peakOf(site) {
      return site.peakRequestsInFlight;
    });
  }

  /** Every request to every host, in order of arrival. */
  requests(): HostRequest[] {
    const all = this.sites.flatMap(function logOf(site) {
      return site.requests().map(function withOrigin(request) {
        return { origin: site.url, ...request };
      });
    });
    return all.sort(function byArrival(a, b) {
      return a.at - b.at;
    });
  }

  /** Zeroes every host's counters and request log. */
  resetCounters(): void {
    for (const site of this.sites) site.resetCounters();
  }

  /** Stops every host and closes every connection. */
  close(): Promise<void> {
    return closeAll(this.sites);
  }
}

/** Starts a {@link HostGroup}: `await startHostGroup({ hosts: 3, pagesPerHost: 10 })`. */
export function startHostGroup(options: HostGroupOptions): Promise<HostGroup> {
  return HostGroup.start(options);
}

function followAll(): boolean {
  return true;
}

async function closeAll(sites: readonly FixtureSite[]): Promise<void> {
  await Promise.all(
    sites.map(function closeSite(site) {
      return site.close();
    }),
  );
}

function count(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(`Expected \`${name}\` to be an integer from ${min} and up, got ${value}`);
  }
  return value;
}
