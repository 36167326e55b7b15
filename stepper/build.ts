/**
 * Builds the stepper page: bundles stepper/page/main.ts with esbuild, and
 * writes ONE file, dist/stepper/index.html, with the script, the style sheet
 * and the recordings inlined, so it works opened straight from disk
 * (file://) and asks the network for nothing. `npm run build` runs it after
 * the library's build (`tsx stepper/build.ts`).
 *
 * The recordings are JSON in a `<script type="application/json">`, every `<`
 * written as `\u003c` so no text in them can close the element; the script's
 * own `</script` is written `<\/script` for the same reason.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { RecordingFormatError, readRecordings } from "./page/model.js";
import type { Recording } from "./recording.js";
// The recordings the page embeds: each stage's real crawl of the demo site, recorded in the bottle.
import { buildRecordings } from "./build-recordings.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..");

/** Where `npm run build` writes the page. */
export const STEPPER_PAGE = join(ROOT, "dist", "stepper", "index.html");

/** The page's script: main.ts and what it imports, bundled into one script for an inline `<script>`. */
export async function bundleScript(): Promise<string> {
  const result = await build({
    entryPoints: [join(HERE, "page", "main.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error("esbuild wrote no script for stepper/page/main.ts");
  return output.text;
}

/** The page's HTML: the template with the style sheet, the recordings and the script put in. */
export function pageHtml(script: string, recordings: readonly Recording[]): string {
  const template = readFileSync(join(HERE, "page", "index.html"), "utf8");
  const style = readFileSync(join(HERE, "page", "style.css"), "utf8");
  const data = JSON.stringify(recordings).replace(/</g, "\\u003c");
  const parts: Record<string, string> = { style, recordings: data, script: script.replace(/<\/script/gi, "<\\/script") };
  // A function, not a string, as the replacement: `$&` in the script must stay as written.
  return template.replace(/\{\{(style|recordings|script)\}\}/g, function part(_whole, name: string) {
    return parts[name] ?? "";
  });
}

/**
 * The recordings embedded in a page this module wrote (the `<script
 * id="recordings">`'s JSON), so another page can reuse them without
 * recording again: `npm run learn -- N --step` puts the library's three,
 * read from dist/stepper/index.html, after the learner's.
 *
 * @throws {@link RecordingFormatError} when the page holds no recordings.
 */
export function recordingsInPage(file: string): Recording[] {
  const html = readFileSync(file, "utf8");
  const found = /<script type="application\/json" id="recordings">([^<]*)<\/script>/.exec(html);
  if (found === null) throw new RecordingFormatError(`${file} holds no <script id="recordings">`);
  // The writer wrote every `<` as `\u003c`, which JSON reads back as `<`.
  return readRecordings(JSON.parse(found[1] ?? ""));
}

/** Writes the page with `recordings` to `file` (creating its folder); returns its size in bytes. */
export async function writeStepperPage(file: string, recordings: readonly Recording[]): Promise<number> {
  const html = pageHtml(await bundleScript(), recordings);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, html);
  return Buffer.byteLength(html);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const recordings = await buildRecordings();
  const bytes = await writeStepperPage(STEPPER_PAGE, recordings);
  const steps = recordings.map(function count(recording) { return `${recording.stage} ${recording.steps.length}`; }).join(", ");
  console.log(`stepper: wrote ${STEPPER_PAGE} (${(bytes / 1024).toFixed(0)} KiB; steps: ${steps})`);
}
