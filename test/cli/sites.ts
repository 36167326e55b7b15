/**
 * The sites the `crawl` command's tests crawl, shared by the test files in
 * test/cli/.
 */
import { FixtureSite } from "../../src/site/index.js";

/** A port of 127.0.0.1 nothing listens on: one a site had a moment ago. */
export async function closedPort(): Promise<number> {
  const closed = await FixtureSite.start();
  const { port } = closed;
  await closed.close();
  return port;
}

/**
 * A site whose crawl from "/" makes 4 records: "/" links /a, /b and /old;
 * /old redirects to /a, already seen.
 */
export async function fourRecordSite(): Promise<FixtureSite> {
  const site = await FixtureSite.start();
  site.addPage("/", ["/a", "/b", "/old"]).addPage("/a", ["/"]).addPage("/b", []).addRedirect("/old", "/a");
  return site;
}
