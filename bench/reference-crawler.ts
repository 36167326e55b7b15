/**
 * A yardstick, not a stage: the plainest fast crawler Node allows, so the
 * benchmark can tell what the machine and the site permit from what a
 * stage costs.
 *
 * Native async/await, `maxTasks` workers on an array queue, `node:http`
 * with one keep-alive `Agent` (a socket per worker, reused), links found by
 * a regular expression. It keeps none of the stages' rules that the
 * synthetic site does not exercise (no retries, no redirects, no charsets,
 * no content decoding, no `<base>`, no timeouts), so it is a bound on what a
 * stage can reach, not a crawler to learn from. Its records are the ones the
 * stages make on the benchmark's sites, so the harness checks them the same
 * way.
 *
 * @remarks The issue's reference figures ("a plain async crawler on
 * node:http keep-alive") were measured with a crawler of this shape.
 * @module
 */
import { Agent, request, type IncomingMessage } from "node:http";
import { pageRecord, type FetchStatistic } from "../src/crawl/records.js";

/** What {@link referenceCrawl} resolves to: the part of a `CrawlResult` the benchmark reads. */
export interface ReferenceResult {
  /** One per URL fetched, in completion order. */
  records: FetchStatistic[];
  /** URLs left in the queue (always 0: the crawl runs to the end). */
  todo: number;
}

/** An `href="…"` or `href='…'` attribute value. */
const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi;

/**
 * Crawls everything reachable from `root` on the root's host name (any
 * port) with `maxTasks` workers, and no limit per host; calls `onRecord`
 * (if given) with each record as it is made, as the stages do.
 *
 * @throws Error if a request fails: the yardstick has no retries, and the
 * benchmark's site never fails.
 */
export async function referenceCrawl(
  root: string,
  options: { maxTasks: number; onRecord?: (record: FetchStatistic) => void },
): Promise<ReferenceResult> {
  const rootUrl = new URL(root);
  rootUrl.hash = "";
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxTasks });
  const seen = new Set<string>([rootUrl.href]);
  // The URLs to fetch are queue[head…]. Not Array#shift(): once the array is
  // large its backing store sits in V8's large-object space, which cannot be
  // trimmed from the front, and each shift copies the whole array (about
  // 80 µs at 100,000 URLs), which made this yardstick quadratic on S4's
  // 300,000 pages. The taken part is dropped now and then instead.
  let queue: string[] = [rootUrl.href];
  let head = 0;
  const records: FetchStatistic[] = [];
  let busy = 0;
  // Workers with nothing to do wait here until a page adds URLs or the crawl ends.
  let wakeUps: Array<() => void> = [];

  function wakeAll(): void {
    const waiting = wakeUps;
    wakeUps = [];
    for (const resume of waiting) resume();
  }

  // One idle worker per URL queued: waking all 10,000 of S3 for each page would be quadratic.
  function wake(count: number): void {
    for (let i = 0; i < count && wakeUps.length > 0; i++) wakeUps.pop()?.();
  }

  function idle(): Promise<void> {
    return new Promise<void>(function park(resolve) {
      wakeUps.push(resolve);
    });
  }

  async function work(): Promise<void> {
    for (;;) {
      if (head >= 4096 && head * 2 >= queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      const url = head < queue.length ? queue[head++] : undefined;
      if (url === undefined) {
        if (busy === 0) return wakeAll(); // nothing queued, nothing in flight: done
        await idle();
        continue;
      }
      busy += 1;
      const page = await get(url, agent);
      const links = extractLinks(page.body, url, rootUrl.hostname);
      let fresh = 0;
      for (const link of links) {
        if (seen.has(link)) continue;
        seen.add(link);
        queue.push(link);
        fresh += 1;
      }
      const record = pageRecord(url, { status: page.status, size: page.body.length, contentType: page.contentType, encoding: "utf-8" }, links.size, fresh);
      records.push(record);
      options.onRecord?.(record);
      busy -= 1;
      wake(fresh);
    }
  }

  const workers: Promise<void>[] = [];
  for (let i = 0; i < options.maxTasks; i++) workers.push(work());
  try {
    await Promise.all(workers);
  } finally {
    agent.destroy();
  }
  return { records, todo: queue.length - head };
}

/** One response: status, media type and the whole body. */
interface Page {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/** GETs `url` on `agent` and reads the whole body. */
function get(url: string, agent: Agent): Promise<Page> {
  return new Promise<Page>(function send(resolve, reject) {
    const outgoing = request(url, { agent }, function onResponse(response: IncomingMessage) {
      const chunks: Buffer[] = [];
      response.on("data", function onData(chunk: Buffer) {
        chunks.push(chunk);
      });
      response.on("end", function onEnd() {
        const type = response.headers["content-type"];
        resolve({
          status: response.statusCode ?? 0,
          contentType: type === undefined ? null : (type.split(";")[0] ?? "").trim().toLowerCase(),
          body: chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks),
        });
      });
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

/**
 * The distinct http(s) links of `body` to `hostname`, any port (as the
 * stages' URL policy compares host names), fragments dropped, in document order.
 */
function extractLinks(body: Buffer, base: string, hostname: string): Set<string> {
  const links = new Set<string>();
  for (const match of body.toString("latin1").matchAll(HREF)) {
    const href = (match[1] ?? match[2] ?? "").replaceAll("&amp;", "&").trim();
    const url = URL.parse(href, base);
    if (url === null || url.hostname !== hostname || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
    const hash = url.href.indexOf("#");
    links.add(hash === -1 ? url.href : url.href.slice(0, hash));
  }
  return links;
}
