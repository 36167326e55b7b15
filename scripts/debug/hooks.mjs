/**
 * Module customization hooks for scripts/debug/register.mjs: a `.ts` file is
 * loaded as its own text with the types replaced by spaces, so V8's positions
 * are the `.ts` file's (scripts/debug/blank-types.mjs says why and how).
 *
 * @remarks They run on Node's loader thread, not on the thread being debugged:
 * the debugger never stops in them.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { blankTypes } from "./blank-types.mjs";

/** `./x.js` imported from a `.ts` file is `./x.ts` when there is no `./x.js` (NodeNext's way of naming TypeScript imports). */
export async function resolve(specifier, context, nextResolve) {
  const relative = specifier.startsWith("./") || specifier.startsWith("../");
  if (relative && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
    const url = new URL(specifier, context.parentURL);
    if (!existsSync(url)) {
      const typescript = new URL(url.href.replace(/\.js$/, ".ts"));
      if (existsSync(typescript)) return { url: typescript.href, format: "module", shortCircuit: true };
    }
  }
  return nextResolve(specifier, context);
}

/** A `.ts` file is an ES module (package.json: `"type": "module"`) whose text is the file's, types blanked. */
export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = blankTypes(await readFile(path, "utf8"), path);
  return { format: "module", source, shortCircuit: true };
}
