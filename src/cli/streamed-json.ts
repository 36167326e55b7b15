/**
 * The `--json` document of a crawl whose records are in Redis (`--frontier`),
 * written with its `records` and `seen` arrays streamed from Redis a chunk
 * at a time, straight to the file: no process holds a whole crawl in memory
 * at its end. The text is the one `JSON.stringify(document, null, 2)` would
 * give for the whole document: the same keys, in the same order.
 *
 * @module
 */
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { CrawlResultJson } from "./result-json.js";

/** Where the streamed arrays come from: a `RedisFrontier`, or anything that reads in chunks alike. */
export interface ChunkSource {
  /** Every record, as JSON text, a chunk at a time. */
  recordChunks(): AsyncIterable<string[]>;
  /** Every URL seen, a chunk at a time. */
  seenChunks(): AsyncIterable<string[]>;
}

/** What {@link writeStreamedJson} did. */
export interface StreamedJson {
  /** Records written into `records`. */
  records: number;
  /** URLs written into `seen`. */
  seen: number;
  /** The most records or URLs read from the source at once: what the writer held in memory. */
  largestChunk: number;
}

/** Writes text and resolves once it is handed on (a file's write done, stdout's callback called). */
type Write = (text: string) => Promise<void>;

/**
 * Writes `document` to `destination` (`-`: stdout), its `records` and `seen`
 * read from `source` instead, a chunk at a time. A file is written under a
 * temporary name beside it and renamed at the end, so a crawl whose Redis
 * stops answering midway leaves no half document where the JSON should be.
 *
 * @throws the file's error when it cannot be written; the source's (a
 * `FrontierError`) when it stops answering. Either way, no file is left.
 */
export async function writeStreamedJson(destination: string, document: CrawlResultJson, source: ChunkSource): Promise<StreamedJson> {
  if (destination === "-") return writeDocument(writeToStdout, document, source);
  const partial = join(dirname(destination), `.${basename(destination)}.${process.pid}.partial`);
  const file = await open(partial, "w");
  let written: StreamedJson;
  try {
    written = await writeDocument((text) => file.write(text).then(() => undefined), document, source);
    await file.close();
    await rename(partial, destination);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(partial, { force: true });
    throw error;
  }
  return written;
}

function writeToStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** The document's fields in order, `records` and `seen` streamed: `{`, then `  "key": value` per field, then `}`. */
async function writeDocument(write: Write, document: CrawlResultJson, source: ChunkSource): Promise<StreamedJson> {
  const counts: StreamedJson = { records: 0, seen: 0, largestChunk: 0 };
  const fields = Object.entries(document);
  await write("{\n");
  for (const [index, [key, value]] of fields.entries()) {
    await write(`  ${JSON.stringify(key)}: `);
    if (key === "records") counts.records = await writeArray(write, source.recordChunks(), parsed, counts);
    else if (key === "seen") counts.seen = await writeArray(write, source.seenChunks(), same, counts);
    else await write(indented(JSON.stringify(value, null, 2)));
    await write(index === fields.length - 1 ? "\n" : ",\n");
  }
  await write("}\n");
  return counts;
}

function parsed(text: string): unknown {
  return JSON.parse(text);
}

function same(text: string): unknown {
  return text;
}

/** One array, a chunk at a time, as an item of the document (at depth 1): `[]`, or `[\n    item,\n    item\n  ]`. */
async function writeArray(write: Write, chunks: AsyncIterable<string[]>, value: (text: string) => unknown, counts: StreamedJson): Promise<number> {
  let count = 0;
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    counts.largestChunk = Math.max(counts.largestChunk, chunk.length);
    const items = chunk.map((text) => `    ${indented(indented(JSON.stringify(value(text), null, 2)))}`);
    await write(`${count === 0 ? "[\n" : ",\n"}${items.join(",\n")}`);
    count += chunk.length;
  }
  await write(count === 0 ? "[]" : "\n  ]");
  return count;
}

/** JSON text one level deeper (two spaces more on every line but the first). */
function indented(json: string): string {
  return json.replace(/\n/g, "\n  ");
}
