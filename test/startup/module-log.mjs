/**
 * Preloaded with `node --import` by lazy-imports.test.ts: appends to the file
 * named by MODULE_LOG every module the process loads. ES modules are logged
 * as they load, by the loader hook in module-log-hooks.mjs; CommonJS modules
 * (undici, iconv-lite, redis, and what `require()` loads) at exit, from the
 * CommonJS cache, which the hooks of Node 20 do not see. Node's own modules,
 * public and internal, are logged at exit too, as `builtin:NAME` (`builtin:http2`,
 * `builtin:internal/http2/core`), from `process.moduleLoadList` (undocumented,
 * but Node's own list of what it loaded). Node's modules are taken with
 * `process.getBuiltinModule`, not imported, so that the log itself loads no
 * more of them than it must: an ES module's `import` of node:fs reads every
 * export, and its `ReadStream` getter loads the file streams.
 */
const { appendFileSync } = process.getBuiltinModule("node:fs");
const { createRequire, register } = process.getBuiltinModule("node:module");

const log = process.env.MODULE_LOG;
if (log === undefined) throw new Error("module-log.mjs: set MODULE_LOG to the file to write");
register("./module-log-hooks.mjs", import.meta.url);
const cache = createRequire(import.meta.url).cache;
process.on("exit", function logCommonJs() {
  const builtins = process.moduleLoadList.filter((entry) => entry.startsWith("NativeModule ")).map((entry) => `builtin:${entry.slice("NativeModule ".length)}`);
  appendFileSync(log, `${[...Object.keys(cache), ...builtins].join("\n")}\n`);
});
