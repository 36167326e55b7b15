/**
 * Preloaded with `node --import` by lazy-imports.test.ts: appends to the file
 * named by MODULE_LOG every module the process loads. ES modules are logged
 * as they load, by the loader hook in module-log-hooks.mjs; CommonJS modules
 * (undici, iconv-lite, redis, and what `require()` loads) at exit, from the
 * CommonJS cache, which the hooks of Node 20 do not see.
 */
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const log = process.env.MODULE_LOG;
if (log === undefined) throw new Error("module-log.mjs: set MODULE_LOG to the file to write");
register("./module-log-hooks.mjs", import.meta.url);
const cache = createRequire(import.meta.url).cache;
process.on("exit", function logCommonJs() {
  appendFileSync(log, `${Object.keys(cache).join("\n")}\n`);
});
