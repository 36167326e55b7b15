/**
 * The `onPage` hook in the bottle: each seed's scenario crawled by the three
 * stages with a hook that returns items (from the document, so the links the
 * crawl follows come from the tree) and with one that returns them later
 * (an async hook, waited for on the virtual clock). For the same seed the
 * three stages give the same items, the same records as a crawl without a
 * hook (but for their `items` count), and leave nothing open. A hook that
 * returns at once leaves the trace as it was: it costs no step of the loop.
 */
import { selectAll, selectOne } from "css-select";
import { textContent } from "domutils";
import { describe, expect, it } from "vitest";
import { scenarioFor } from "../../src/bottle/scenario.js";
import { simulate, STAGES } from "../../src/bottle/simulate.js";
import type { PageContext, PageResult } from "../../src/crawl/page-hook.js";
import type { CrawlResult, FetchStatistic } from "../../src/crawl/records.js";

/** Seeds 0 to 19: redirects, missing pages, robots.txt, retries, hostile pages and network faults among them. */
const SEEDS = Array.from({ length: 20 }, (_, seed) => seed);

/** Items from a page's document: its title, how many links, how long its text (not its depth: with several tasks, the order pages are found in decides it). */
function fromDocument(page: PageContext): PageResult {
  const document = page.document();
  const title = selectOne("title", document);
  return [{ status: page.status, title: title === null ? null : textContent(title), anchors: selectAll("a", document).length, chars: page.text.length }];
}

/** The same items, a virtual millisecond later. */
function later(page: PageContext): Promise<PageResult> {
  const items = fromDocument(page);
  return new Promise((resolve) => setTimeout(() => resolve(items), 1));
}

/** The items as one comparable string, each with its page's URL, sorted: the order pages finish in is the stages' own. */
function itemsOf(result: CrawlResult): string {
  return result.items
    .map((each) => JSON.stringify(each))
    .sort()
    .join("\n");
}

/** The records without what timing decides (`fetchedAt`, `numNewUrls`, `referrer`, `depth`), nor a parser's words (`detail`), nor the hook's `items` count. */
function recordsOf(records: readonly FetchStatistic[]): string {
  return records
    .map(({ fetchedAt: _a, detail: _d, numNewUrls: _n, referrer: _r, depth: _p, items: _i, ...rest }) => JSON.stringify(rest))
    .sort()
    .join("\n");
}

describe("the onPage hook in the bottle", () => {
  it("costs a hook that returns at once no step: the trace (every fetch, task step and future) is the crawl's without a hook", async () => {
    for (const seed of [0, 1, 2, 3, 4]) {
      for (const stage of STAGES) {
        const plain = await simulate({ seed, stage });
        const hooked = await simulate({ seed, stage, options: { onPage: (page) => [{ links: page.links.length }] } });
        expect(hooked.trace, `seed ${seed}, ${stage.name}`).toEqual(plain.trace);
        expect(hooked.virtualMs).toBe(plain.virtualMs);
      }
    }
  });

  for (const [name, onPage] of [
    ["a hook that returns items", fromDocument],
    ["an async hook", later],
  ] as const) {
    it(`gives the same items in the three stages, for seeds 0 to ${SEEDS.length - 1}, with ${name}`, async () => {
      let pages = 0;
      for (const seed of SEEDS) {
        const hostile = scenarioFor(seed).expected === null;
        const plain = await simulate({ seed, stage: "callbacks", trace: false });
        let reference: string | null = null;
        for (const stage of STAGES) {
          const { result, leftOpen } = await simulate({ seed, stage, trace: false, options: { onPage } });
          expect(leftOpen, `seed ${seed}, ${stage.name}`).toEqual({ sockets: 0, timers: 0 });
          const items = itemsOf(result);
          reference ??= items;
          expect(items, `seed ${seed}, ${stage.name}`).toBe(reference);
          const made = result.records.filter((record) => record.items !== undefined);
          expect(made.length, `seed ${seed}, ${stage.name}: one item a page`).toBe(result.items.length);
          if (!hostile) expect(recordsOf(result.records), `seed ${seed}, ${stage.name}: records as without a hook`).toBe(recordsOf(plain.result.records));
          pages += made.length;
        }
      }
      expect(pages).toBeGreaterThan(SEEDS.length * 3); // Pages were crawled, and hooked.
    });
  }
});
