/**
 * `node --import ./scripts/debug/register.mjs file.ts`: runs this
 * repository's TypeScript with every line and column where the `.ts` file has
 * it, for `node inspect` (which reads no source maps), DevTools and VS Code.
 * `npm run debug -- examples/04-callbacks-crawl.ts` starts `node inspect` with it.
 *
 * Mechanism: registers scripts/debug/hooks.mjs as module customization hooks
 * (`module.register`, Node 20.6+). They resolve `./x.js` to `./x.ts` where only
 * the `.ts` exists, as TypeScript's NodeNext imports are written, and load a
 * `.ts` file as its text with the types blanked (scripts/debug/blank-types.mjs).
 *
 * @see docs/debugging.md, "node inspect: the TypeScript lines"
 */
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
