/**
 * What a correct crawl of a synthetic site looks like, worked out from the
 * site's definition alone, without any crawler's code.
 *
 * @module
 */
import { pageRecord, redirectRecord, type FetchStatistic } from "../crawl/records.js";
import { NOT_FOUND_BODY } from "./html.js";
import { renderPage, type SyntheticSiteDefinition } from "./synthetic.js";

/** Options for {@link expectedCrawl}. */
export interface ExpectedCrawlOptions {
  /** The site's origin, `http://127.0.0.1:PORT`: records hold absolute URLs. */
  origin: string;
  /** The crawl's `maxRedirect`. Default 10, the crawlers' default. */
  maxRedirect?: number;
}

/** The crawl a synthetic site should get. */
export interface ExpectedCrawl {
  /** Every record, in breadth-first order: the order a crawler with `maxTasks: 1` makes them. */
  readonly records: readonly FetchStatistic[];
  /** Every URL queued, in the order it was queued (the crawl's `seen`). */
  readonly seen: readonly string[];
  /** Breadth-first depth of each fetched URL: 0 for the root; a redirect's target is one deeper than the redirect. */
  readonly depthOf: ReadonlyMap<string, number>;
  /** The deepest depth: a crawl needs at least `maxDepth + 1` rounds of fetches. */
  readonly maxDepth: number;
}

/** The `fetchedAt` of every expected record: the epoch, a time no crawl's record has. */
export const EXPECTED_AT = "1970-01-01T00:00:00.000Z";

/**
 * The records of a crawl of `definition` from its root, by a plain
 * breadth-first walk with a FIFO queue, following docs/behaviour.md:
 * links are queued in document order, first occurrence, fragments dropped; a
 * redirect's target is queued when the redirect is processed, if unseen and
 * if redirects are left; a missing path is a 404 record. Each record's
 * `referrer` is the record that queued its URL (null for the root), its
 * `depth` the links followed from the root, its `tries` 1, its `fetchedAt`
 * `EXPECTED_AT` (the epoch), since no time can be known (a test leaves it out). Every
 * link of a synthetic site is on the site's own host, so the URL policy
 * allows all.
 *
 * @remarks Independent on purpose: it shares only the record constructors and
 * the site's own page renderer (for sizes) with the rest of the package, so
 * a bug in the shared URL or HTML code cannot hide in both sides of a test.
 */
export function expectedCrawl(definition: SyntheticSiteDefinition, options: ExpectedCrawlOptions): ExpectedCrawl {
  const origin = options.origin.replace(/\/+$/, "");
  const maxRedirect = options.maxRedirect ?? 10;
  const seen = new Set<string>(["/"]);
  // `referrer`: the URL of the record that queued the path, null for the root.
  // `linkDepth`: the record's `depth`, links followed from the root (a redirect's target lies as deep as the redirect).
  const queue: Array<{ path: string; redirectsLeft: number; depth: number; linkDepth: number; referrer: string | null }> = [
    { path: "/", redirectsLeft: maxRedirect, depth: 0, linkDepth: 0, referrer: null },
  ];
  const records: FetchStatistic[] = [];
  const depthOf = new Map<string, number>();
  let maxDepth = 0;
  for (let head = 0; head < queue.length; head++) {
    const { path, redirectsLeft, depth, linkDepth, referrer } = queue[head] ?? { path: "/", redirectsLeft: 0, depth: 0, linkDepth: 0, referrer: null };
    const where = { depth: linkDepth, tries: 1, fetchedAt: EXPECTED_AT };
    const url = origin + path;
    depthOf.set(url, depth);
    maxDepth = Math.max(maxDepth, depth);
    const route = definition.routes.get(path);
    if (route === undefined) {
      const size = Buffer.byteLength(NOT_FOUND_BODY);
      records.push(pageRecord(url, { status: 404, size, contentType: "text/plain", encoding: "utf-8" }, 0, 0, referrer, where));
    } else if (route.kind === "redirect") {
      records.push(redirectRecord(url, route.status, origin + route.to, referrer, where));
      if (!seen.has(route.to) && redirectsLeft > 0) {
        seen.add(route.to);
        queue.push({ path: route.to, redirectsLeft: redirectsLeft - 1, depth: depth + 1, linkDepth, referrer: url });
      }
    } else {
      const links = [...new Set(route.links.map(withoutFragment))];
      const fresh = links.filter(function unseen(link) {
        return !seen.has(link);
      });
      const rendered = renderPage(path, route);
      const page = { status: 200, size: rendered.size, contentType: "text/html", encoding: rendered.charset };
      records.push(pageRecord(url, page, links.length, fresh.length, referrer, where));
      for (const link of fresh) {
        seen.add(link);
        queue.push({ path: link, redirectsLeft: maxRedirect, depth: depth + 1, linkDepth: linkDepth + 1, referrer: url });
      }
    }
  }
  return {
    records,
    seen: [...seen].map(function absolute(path) {
      return origin + path;
    }),
    depthOf,
    maxDepth,
  };
}

/**
 * The least wall time, in ms, any crawler can take on a site whose every
 * response is delayed `delayMs`: all fetches spread over `maxTasks` workers,
 * and at least one delay per breadth-first level, whichever is more.
 *
 * `max(pages × delay / maxTasks, (maxDepth + 1) × delay)`.
 */
export function latencyBound(expected: ExpectedCrawl, delayMs: number, maxTasks: number): number {
  return Math.max((expected.records.length * delayMs) / maxTasks, (expected.maxDepth + 1) * delayMs);
}

function withoutFragment(href: string): string {
  const hash = href.indexOf("#");
  return hash === -1 ? href : href.slice(0, hash);
}
