/**
 * What a kept record costs (issue 39, memory with records kept), in every
 * stage: the retained size of a crawl's `records` at its end, the result
 * held (the bytes its records alone keep alive, read from a heap snapshot:
 * test/helpers/retained-size.ts). A record is a plain object of 14 fields
 * (136 bytes: 8 each and a 24-byte header), its slot in `records` (8 bytes,
 * and up to half as much again of room to grow), and its share of the
 * `fetchedAt` strings (40 bytes, one a millisecond); its URL strings are the
 * seen set's too. Anything of its page a record held besides (the body, a
 * job, its queue item) would be counted with it. Bytes, never times.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { retainedBytes } from "../helpers/retained-size.js";
import { stages } from "./stages.js";

/** Pages of the site. */
const PAGES = 3_000;
/** The most a record may hold: 136 + 12 + 40 bytes. */
const MOST_BYTES_A_RECORD = 188;

let synthetic: SyntheticSite;

beforeAll(async () => {
  synthetic = await SyntheticSite.start({ pages: PAGES, linksPerPage: 10, seed: 39 });
});

afterAll(async () => {
  await synthetic?.close();
});

describe.each(stages)("$name crawler's kept records", (stage) => {
  it(`hold at most ${MOST_BYTES_A_RECORD} bytes each, themselves and nothing of their pages`, async () => {
    const result = await stage.crawl(synthetic.url);
    expect(result.records).toHaveLength(synthetic.expected.records.length);
    const perRecord = retainedBytes(result.records) / result.records.length;
    expect(perRecord).toBeLessThanOrEqual(MOST_BYTES_A_RECORD);
    expect(perRecord).toBeGreaterThan(136); // A record's object alone: the count sees the records.
  });
});
