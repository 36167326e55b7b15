/**
 * What a page's links keep alive (issue 39, memory with records kept): a
 * link is the URL string every record, queue item and seen entry of its page
 * shares for the whole crawl, so it must hold none of the page's text. V8
 * makes a substring of 13 characters or more a view of the string it was cut
 * from, and joins two strings into a pair of them: a link made so would keep
 * its whole page alive. Counted in bytes of V8's heap after a full
 * collection (`gc()`, exposed here by `--expose-gc` set at run time), never
 * timed.
 */
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { parseLinks } from "../../src/crawl/links.js";

setFlagsFromString("--expose-gc");
/** A full collection: `gc` exists in a context made after the flag was set. */
const gc = runInNewContext("gc") as () => void;

/** V8's heap in use after full collections, bytes. */
function heapUsed(): number {
  gc();
  gc();
  return getHeapStatistics().used_heap_size;
}

const PAGE = "http://example.com/dir/page";
const MIB = 2 ** 20;

/** A page of about 1 MiB, decoded from bytes as the crawl decodes a body, whose three links are longer than 12 characters. */
function bigPage(n: number): string {
  const text = `<p>${"x".repeat(MIB)}</p><a href="/articles/a-rather-long-path-${n}">a</a><a href="http://example.com/another-long-absolute-path-${n}">b</a><a href="relative-and-long-${n}.html">c</a>`;
  return new TextDecoder().decode(Buffer.from(text));
}

describe("parseLinks' links", () => {
  it("hold none of their page's text: the links of 20 pages of 1 MiB, kept, add less than 2 MiB to the heap", () => {
    const before = heapUsed();
    const kept: string[][] = [];
    for (let n = 0; n < 20; n++) kept.push(parseLinks(bigPage(n), PAGE));
    const grown = heapUsed() - before;
    expect(kept.flat()).toHaveLength(60);
    expect(kept[3]).toEqual(["http://example.com/articles/a-rather-long-path-3", "http://example.com/another-long-absolute-path-3", "http://example.com/dir/relative-and-long-3.html"]);
    // One page may stay alive, not one a link: V8 keeps the subject of the last regular expression run, a link of the last page.
    expect(grown).toBeLessThan(2 * MIB);
  });
});
