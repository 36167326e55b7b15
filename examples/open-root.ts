/**
 * What every numbered example crawls: the URL given on the command line, or
 * else the demo site, started here and closed when the example ends.
 *
 * Not an example itself; the numbered files import it.
 *
 * @module
 */
import { normalizeRoot } from "../src/crawl/urls.js";
import { startDemoSite, type SyntheticSite } from "../src/site/index.js";

/** The URL an example works on, and how to let go of it. */
export interface Root {
  /** The root URL to fetch or crawl, e.g. `http://127.0.0.1:PORT/`. */
  readonly url: string;
  /** The demo site when the example started one, else null (a URL was given). */
  readonly demo: SyntheticSite | null;
  /** Closes the demo site, if the example started one. */
  close(): Promise<void>;
}

/**
 * Starts the demo site unless `rootUrl` is given.
 *
 * @example
 * ```ts
 * const root = await openRoot(process.argv[2]);
 * try {
 *   console.log(root.url);
 * } finally {
 *   await root.close();
 * }
 * ```
 */
export async function openRoot(rootUrl?: string): Promise<Root> {
  if (rootUrl !== undefined && rootUrl !== "") {
    // As the crawlers do with a root: `127.0.0.1:8000` becomes `http://127.0.0.1:8000/`.
    return { url: normalizeRoot(rootUrl), demo: null, close: nothingToClose };
  }
  const demo = await startDemoSite();
  return {
    url: demo.url,
    demo,
    close: function closeDemoSite() {
      return demo.close();
    },
  };
}

async function nothingToClose(): Promise<void> {}
