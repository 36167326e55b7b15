/**
 * Beyond one process: the crawl's queue and seen set in Redis, so that
 * many crawler processes, on many machines, share one crawl, survive the
 * death of any of them, and resume it after all have stopped.
 *
 * Read `redis-frontier.ts` (the frontier: the crawl core's store, given to a
 * stage 3 `Crawler`), then `take-pump.ts` (the loop that leases the URLs its
 * `take()` hands out), then
 * `scripts.ts` (each of its steps, one Lua script that Redis runs alone),
 * then docs/guide-distributed.md.
 *
 * @example
 * import { crawl } from "coroutine-crawler/asyncawait";
 * import { RedisFrontier } from "coroutine-crawler/redis";
 * const frontier = await RedisFrontier.open({ url: "redis://127.0.0.1:6379/0", name: "demo" });
 * try {
 *   const result = await crawl("http://127.0.0.1:8080/", { maxTasks: 20 }, frontier);
 *   console.log(result.recorded, "records, from every process");
 * } finally {
 *   await frontier.close();
 * }
 *
 * @module
 */
export {
  FrontierError,
  OVERRIDABLE,
  ACL_COMMANDS,
  CLUSTER_ACL_COMMANDS,
  CLUSTER_UNUSED,
  aclRule,
  RedisFrontier,
  resolveFrontierOptions,
  type FrontierStatus,
  type FrontierTlsFiles,
  type FrontierWorker,
  type RedisFrontierOptions,
} from "./redis-frontier.js";
