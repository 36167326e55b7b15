import type { ServerResponse } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { HostGroup, hostGroupLayout, startHostGroup } from "../../src/site/host-group.js";
import { get } from "./helpers.js";

/**
 * Lets Node's loop go round (on `setImmediate`, which fake timers leave alone)
 * until `done()` holds, and then `more` turns; fails after 100,000 turns.
 */
async function nodeTurnsUntil(done: () => boolean, more = 0): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    if (turn === 100_000) throw new Error("nodeTurnsUntil: the condition never held");
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (let turn = 0; turn < more; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** The hrefs of an HTML page, in document order. */
function hrefsOf(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1] ?? "");
}

/** Fetches every page reachable from `root` with a plain client, breadth first: the URLs, in order. */
async function walk(root: string): Promise<string[]> {
  const queue = [root];
  const seen = new Set(queue);
  for (let head = 0; head < queue.length; head++) {
    const url = queue[head] ?? root;
    const response = await get(url);
    expect({ url, status: response.status }).toEqual({ url, status: 200 });
    for (const href of hrefsOf(response.body.toString())) {
      const link = new URL(href, url).href;
      if (seen.has(link)) continue;
      seen.add(link);
      queue.push(link);
    }
  }
  return queue;
}

describe("hostGroupLayout", () => {
  it("builds the same links from the same seed and others from another seed", () => {
    const options = { hosts: 4, pagesPerHost: 10, linksPerPage: 4, seed: 3 };
    expect(hostGroupLayout(options)).toEqual(hostGroupLayout(options));
    expect(hostGroupLayout({ ...options, seed: 4 })).not.toEqual(hostGroupLayout(options));
  });

  it("links each page first to the next page of its own host, with K links each", () => {
    const layout = hostGroupLayout({ hosts: 3, pagesPerHost: 5, linksPerPage: 3, seed: 1 });
    expect(layout).toHaveLength(3);
    for (const [host, routes] of layout.entries()) {
      expect([...routes.keys()]).toEqual(["/", "/p/1", "/p/2", "/p/3", "/p/4"]);
      for (const [path, links] of routes) {
        const own = host === 0 && path === "/" ? links.slice(2) : links;
        expect(own).toHaveLength(3);
        const next = path === "/" ? 1 : (Number(path.slice(3)) + 1) % 5;
        expect(own[0]).toEqual({ host, path: next === 0 ? "/" : `/p/${next}` });
      }
    }
  });

  it("links host 0's root first to every other host's root", () => {
    const layout = hostGroupLayout({ hosts: 4, pagesPerHost: 2, linksPerPage: 0 });
    expect(layout[0]?.get("/")).toEqual([
      { host: 1, path: "/" },
      { host: 2, path: "/" },
      { host: 3, path: "/" },
    ]);
    expect(layout[1]?.get("/")).toEqual([]);
  });

  it("links across hosts", () => {
    const layout = hostGroupLayout({ hosts: 3, pagesPerHost: 20, linksPerPage: 4, seed: 9 });
    const crossing = layout.flatMap((routes, host) => [...routes.values()].flat().filter((link) => link.host !== host));
    expect(crossing.length).toBeGreaterThan(20);
  });

  it("rejects counts that are not integers", () => {
    expect(() => hostGroupLayout({ hosts: 0, pagesPerHost: 1 })).toThrow(RangeError);
    expect(() => hostGroupLayout({ hosts: 1, pagesPerHost: 0 })).toThrow("pagesPerHost");
    expect(() => hostGroupLayout({ hosts: 1, pagesPerHost: 1, linksPerPage: 1.5 })).toThrow("linksPerPage");
  });
});

describe("HostGroup", () => {
  it("serves each host on its own port, linking its own pages by path and other hosts' by URL", async () => {
    const group = await startHostGroup({ hosts: 3, pagesPerHost: 6, linksPerPage: 3, seed: 2 });
    try {
      expect(new Set(group.sites.map((site) => site.port)).size).toBe(3);
      expect(group.origins).toEqual(group.sites.map((site) => site.url));
      expect(group.roots).toEqual(group.origins.map((origin) => `${origin}/`));
      expect(group.url).toBe(group.roots[0]);
      for (const [url, links] of group.links) {
        const hrefs = hrefsOf((await get(url)).body.toString());
        const origin = new URL(url).origin;
        expect(hrefs.map((href) => new URL(href, url).href)).toEqual(links);
        for (const href of hrefs) expect(href.startsWith("/")).toBe(new URL(href, url).origin === origin);
      }
    } finally {
      await group.close();
    }
  });

  it("expects every page of every host from one crawl of host 0's root, as a plain walk finds", async () => {
    const group = await HostGroup.start({ hosts: 4, pagesPerHost: 8, linksPerPage: 2, seed: 5 });
    try {
      expect(group.expectedUrls.size).toBe(32);
      expect(group.expectedUrls).toEqual(new Set(group.links.keys()));
      expect(await walk(group.url)).toEqual([...group.expectedUrls]);
    } finally {
      await group.close();
    }
  });

  it("expects only what links reach, when pages have no links of their own", async () => {
    const group = await HostGroup.start({ hosts: 3, pagesPerHost: 4, linksPerPage: 0 });
    try {
      expect([...group.expectedUrls]).toEqual(group.roots);
      expect(await walk(group.url)).toEqual(group.roots);
    } finally {
      await group.close();
    }
  });

  it("records a URL it does not follow without reaching past it", async () => {
    const group = await HostGroup.start({ hosts: 2, pagesPerHost: 3, linksPerPage: 1 });
    try {
      const [first, second] = group.origins;
      expect(group.reachable()).toEqual([`${first}/`, `${second}/`, `${first}/p/1`, `${second}/p/1`, `${first}/p/2`, `${second}/p/2`]);
      const keepOut = (url: string) => !url.startsWith(`${second}/`);
      expect(group.reachable(keepOut)).toEqual([`${first}/`, `${second}/`, `${first}/p/1`, `${first}/p/2`]);
    } finally {
      await group.close();
    }
  });

  it("serves robots.txt on the hosts that have one, and a 404 on the others", async () => {
    const group = await HostGroup.start({
      hosts: 3,
      pagesPerHost: 1,
      robots: (host) => (host === 1 ? null : `User-agent: *\nDisallow: /p/${host}\n`),
    });
    try {
      const responses = await Promise.all(group.sites.map((site) => get(site.urlFor("/robots.txt"))));
      expect(responses.map((response) => response.status)).toEqual([200, 404, 200]);
      expect(responses[2]?.headers["content-type"]).toBe("text/plain; charset=utf-8");
      expect(responses[2]?.body.toString()).toBe("User-agent: *\nDisallow: /p/2\n");
      expect(group.links.has(group.sites[0]?.urlFor("/robots.txt") ?? "")).toBe(false);
    } finally {
      await group.close();
    }
  });

  it("delays every host's responses by delayMs: none before the delay's timer is due, all when it is", async () => {
    // The sites' delay timers on a fake clock (sockets stay real): the test moves time itself,
    // so what it checks is which responses exist at 59 ms and at 60 ms, not how long anything took.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const group = await HostGroup.start({ hosts: 2, pagesPerHost: 1, delayMs: 60 });
    try {
      const answered: string[] = [];
      const responses = group.roots.map((root) =>
        get(root).then(function noteAnswer(response) {
          answered.push(root);
          return response;
        }),
      );
      await nodeTurnsUntil(() => group.sites.every((site) => site.totalRequests === 1));
      vi.advanceTimersByTime(59);
      await nodeTurnsUntil(() => true, 20); // Room for any response sent to reach the client.
      expect(answered).toEqual([]);
      expect(group.sites.map((site) => site.requestsInFlight)).toEqual([1, 1]);
      vi.advanceTimersByTime(1);
      expect((await Promise.all(responses)).map((response) => response.status)).toEqual([200, 200]);
    } finally {
      vi.useRealTimers();
      await group.close();
    }
  });

  it("counts the peak of requests in flight on each host apart, and logs every host's requests in arrival order", async () => {
    const group = await HostGroup.start({ hosts: 2, pagesPerHost: 1 });
    try {
      const [busy, quiet] = group.sites;
      if (busy === undefined || quiet === undefined) throw new Error("two sites expected");
      const held: ServerResponse[] = [];
      busy.addHandler("/held", function holdUntilThree(_request, response) {
        held.push(response);
        if (held.length === 3) for (const waiting of held) waiting.end("released");
      });
      await Promise.all([1, 2, 3].map(() => get(busy.urlFor("/held"))));
      await get(quiet.urlFor("/"));
      expect(group.peakInFlightPerHost()).toEqual([3, 1]);
      const log = group.requests();
      expect(log.map((request) => `${request.origin}${request.path}`)).toEqual([
        ...Array.from({ length: 3 }, () => `${busy.url}/held`),
        `${quiet.url}/`,
      ]);
      expect(log.every((request, i) => i === 0 || request.at >= (log[i - 1]?.at ?? Infinity))).toBe(true);
      group.resetCounters();
      expect(group.requests()).toEqual([]);
      expect(group.peakInFlightPerHost()).toEqual([0, 0]);
    } finally {
      await group.close();
    }
  });

  it("closes every host", async () => {
    const group = await HostGroup.start({ hosts: 2, pagesPerHost: 1 });
    await get(group.roots[1] ?? "");
    await group.close();
    await expect(get(group.url)).rejects.toThrow();
    await expect(get(group.roots[1] ?? "")).rejects.toThrow();
  });
});
