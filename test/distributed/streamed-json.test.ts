/**
 * `crawl --frontier … --json FILE` against a real redis-server: the
 * document's `records` and `seen` are streamed from Redis a chunk at a time
 * at the end, none kept in memory during the crawl, and the document is the
 * one the schema describes, as `JSON.stringify` would have written it.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CrawlResultJson } from "../../src/cli/result-json.js";
import { writeStreamedJson } from "../../src/cli/streamed-json.js";
import { FrontierError, RedisFrontier } from "../../src/distributed/index.js";
import { SyntheticSite } from "../../src/site/synthetic-site.js";
import { requireBuiltCli, runCli } from "../cli/cli-process.js";
import { schemaErrors } from "../cli/json-schema.js";
import { describeWithRedis, startRedis, type RedisServer } from "../helpers/redis-server.js";
import { byUrl, withoutTiming } from "./records.js";

/** 2,000 pages, with redirects and missing pages among the links. */
const SITE = { pages: 2_000, linksPerPage: 4, seed: 27, redirects: 10, notFound: 10 };
/** The streaming's chunk, as RedisFrontier asks HSCAN and SSCAN for it. */
const CHUNK = 200;

const schema = JSON.parse(readFileSync(new URL("../../schema/crawl-result.schema.json", import.meta.url), "utf8")) as Record<string, unknown>;

describeWithRedis("crawl --frontier --json, streamed from Redis", () => {
  let redis: RedisServer;
  let site: SyntheticSite;
  let dir: string;

  beforeAll(async () => {
    requireBuiltCli();
    redis = await startRedis();
    site = await SyntheticSite.start(SITE);
    dir = mkdtempSync(join(tmpdir(), "cc-streamed-json-"));
  });
  afterAll(async () => {
    await site?.close();
    await redis?.remove();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("writes every record of a 2,000-page crawl to --json, valid against the schema, read from Redis 200 or so at a time", async () => {
    const file = join(dir, "crawl.json");
    const name = "streamed";
    const run = await runCli(["--frontier", redis.url, "--crawl-name", name, "--max-tasks", "10", "--ignore-robots", "--json", file, site.url], 90_000);
    expect(run.code, run.stderr).toBe(0);
    const expected = site.expected.records;
    // The report does not list the records it never held: it names the file.
    expect(run.stdout).toContain(`${expected.length} records not listed here: see ${file}`);

    const text = readFileSync(file, "utf8");
    const document = JSON.parse(text) as CrawlResultJson;
    expect(schemaErrors(document, schema, { strict: true })).toEqual([]);
    expect(byUrl(document.records).map(withoutTiming)).toEqual(byUrl(expected).map(withoutTiming));
    expect(document.recorded).toBe(expected.length);
    expect(document.todo).toBe(0);
    expect(new Set(document.seen)).toEqual(new Set(expected.map((record) => record.url)));
    expect(document.options.keepRecords).toBe(true);
    // The text is the one JSON.stringify gives for the whole document: same keys, same order, same layout.
    expect(text).toBe(`${JSON.stringify(document, null, 2)}\n`);
    expect(readdirSync(dir)).toEqual(["crawl.json"]); // No temporary file left beside it.

    // Written again from the same crawl in this process: what the writer held at once is a chunk, never the crawl.
    const frontier = await RedisFrontier.open({ url: redis.url, name });
    try {
      const again = join(dir, "again.json");
      const streamed = await writeStreamedJson(again, document, frontier);
      expect(streamed.records).toBe(expected.length);
      expect(streamed.seen).toBe(document.seen.length);
      expect(streamed.largestChunk).toBeGreaterThan(0);
      expect(streamed.largestChunk).toBeLessThanOrEqual(2 * CHUNK);
      expect(readFileSync(again, "utf8")).toBe(text);
    } finally {
      await frontier.close();
      rmSync(join(dir, "again.json"), { force: true });
    }
  });

  it("leaves no file, and rejects with a FrontierError, when Redis stops answering while the records are streamed", async () => {
    const file = join(dir, "lost.json");
    const frontier = await RedisFrontier.open({ url: redis.url, name: "streamed", leaseMs: 1_000 }); // Redis is waited for half a lease, 0.5 s.
    const document = JSON.parse(readFileSync(join(dir, "crawl.json"), "utf8")) as CrawlResultJson;
    let chunks = 0;
    const failing = {
      recordChunks: async function* recordChunks(): AsyncGenerator<string[]> {
        for await (const chunk of frontier.recordChunks()) {
          yield chunk;
          if (++chunks === 2) await redis.kill();
        }
      },
      seenChunks: () => frontier.seenChunks(),
    };
    try {
      await expect(writeStreamedJson(file, document, failing)).rejects.toThrow(FrontierError);
      expect(chunks).toBe(2);
      expect(readdirSync(dir).sort()).toEqual(["crawl.json"]);
    } finally {
      await frontier.close();
    }
  });
});
