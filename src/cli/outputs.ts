/**
 * The files the `crawl` command writes (`--json`, `--jsonl`, `-o FILE`,
 * `--trace FILE`, `--timeline FILE`): which format `-o` picks from a name,
 * and the checks that refuse a target before the first request rather than
 * after the whole crawl.
 *
 * @module
 */
import { accessSync, constants, statSync } from "node:fs";
import { dirname, extname } from "node:path";

/** The formats `-o FILE` writes: the result as JSON (`--json`), a line of JSON per record (`--jsonl`), a CSV row per record. */
export type OutputFormat = "json" | "jsonl" | "csv";

/**
 * The extensions `-o FILE` knows, as Scrapy's feed exports name them
 * (`.jl` is Scrapy's JSON Lines; `.ndjson` another common name).
 */
export const OUTPUT_EXTENSIONS: Readonly<Record<string, OutputFormat>> = {
  ".json": "json",
  ".jsonl": "jsonl",
  ".jl": "jsonl",
  ".ndjson": "jsonl",
  ".csv": "csv",
};

/** The format `-o FILE` writes FILE in, from its extension (any case), or null when it is none of {@link OUTPUT_EXTENSIONS}. */
export function formatOf(file: string): OutputFormat | null {
  return OUTPUT_EXTENSIONS[extname(file).toLowerCase()] ?? null;
}

/** Whether a word looks like a URL (`http://…`, `https://…`, `redis://…`) rather than a file name. */
export function looksLikeUrl(word: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(word);
}

/**
 * Why `file` cannot be written, in a few words (`the directory out does not
 * exist`, `it is a directory`, `permission denied`), or null when it can as
 * far as can be told without writing it: its directory exists and may be
 * written to, and the file, if it exists, is not a directory and may be
 * written. `-` (stdout) always can.
 *
 * @remarks Checked rather than opened for the outputs written at the end
 * (`--json`, `--timeline`), so an earlier run's file stays as it is until the
 * new one is ready; a disk that fills up during the crawl is still only
 * found out when writing.
 */
export function unwritable(file: string): string | null {
  if (file === "-") return null;
  const directory = dirname(file);
  try {
    if (!statSync(directory).isDirectory()) return `${directory} is not a directory`;
  } catch {
    return `the directory ${directory} does not exist`;
  }
  let exists = true;
  try {
    if (statSync(file).isDirectory()) return "it is a directory";
  } catch {
    exists = false;
  }
  try {
    accessSync(exists ? file : directory, constants.W_OK);
  } catch {
    return exists ? "permission denied" : `permission denied in ${directory}`;
  }
  return null;
}
