/**
 * The world a crawl core is given: where its URLs live, its wall clock and
 * its random source. The core reads none of them itself (docs/crawl-core.md,
 * "The world as input"); a stage builds them here and hands them in, with
 * its own clock at `begin()`.
 *
 * @module
 */
import type { StageName } from "../observe/channels.js";
import { CrawlCore, type CoreWorld } from "./core.js";
import { resolveOptions, type CrawlOptions, type ResolvedCrawlOptions } from "./options.js";
import { mulberry32 } from "./random.js";
import { StateStore } from "./state.js";
import { MemoryStore, type CrawlStore } from "./store.js";

export type { CoreWorld } from "./core.js";

/**
 * The store a crawl keeps its URLs in: `given` (stage 3's frontier under the
 * core), else a {@link StateStore} in the `state` directory, else a
 * {@link MemoryStore}.
 *
 * @param wallClock - Paces a state directory's `fdatasync`.
 * @throws TypeError when both a store of its own and `state` are given: one store keeps the crawl.
 */
export function storeFor(options: ResolvedCrawlOptions, given?: CrawlStore, wallClock: () => number = Date.now): CrawlStore {
  if (given !== undefined && options.state !== null) throw new TypeError("Expected `state` to be left out with a store of its own (a frontier): that store keeps the crawl");
  if (given !== undefined) return given;
  return options.state === null ? new MemoryStore() : new StateStore(options.state, { clock: wallClock });
}

/**
 * The world of a crawl with these options, as every stage gives it: the
 * store {@link storeFor} builds, `Date.now`, and a random source seeded
 * with `options.seed`.
 *
 * @throws TypeError as {@link storeFor} does.
 */
export function worldFor(options: ResolvedCrawlOptions, store?: CrawlStore): CoreWorld {
  return { store: storeFor(options, store, Date.now), wallClock: Date.now, random: mulberry32(options.seed) };
}

/**
 * Listens to the crawl's `signal` for the stage: `aborted`, the stage's own
 * abort handling, runs when it aborts (it calls `core.stop()`, then ends what
 * is in flight in the stage's style); a signal aborted already stops the core
 * at once, before anything is in flight. And to its `finishSignal` (the
 * core's options), whose abort calls `core.finishInFlight()`: nothing the
 * stage must do, as the jobs out go on. Returns the function that stops
 * listening, for the crawl's end. The core itself listens to nothing
 * (docs/crawl-core.md, "No callbacks out").
 */
export function listenForAbort(core: { stop(): void; finishInFlight?(): void; readonly options?: { readonly finishSignal: AbortSignal | null } }, signal: AbortSignal | null | undefined, aborted: () => void): () => void {
  const finishing = core.options?.finishSignal ?? null;
  function finishInFlight(): void {
    core.finishInFlight?.();
  }
  if (finishing?.aborted === true) finishInFlight();
  else finishing?.addEventListener("abort", finishInFlight, { once: true });
  if (signal === null || signal === undefined) return finishing === null ? noListener : function stopFinishing() { finishing.removeEventListener("abort", finishInFlight); };
  if (signal.aborted) core.stop(); // Aborted before the crawl began: no job is handed out.
  signal.addEventListener("abort", aborted, { once: true });
  return function stopListening() {
    signal.removeEventListener("abort", aborted);
    finishing?.removeEventListener("abort", finishInFlight);
  };
}

function noListener(): void {}

/**
 * The crawl core of a stage's Crawler: the options resolved (a `TypeError`
 * naming a bad one), and the world {@link worldFor} builds for them, with
 * `store` if given. The stage gives its clock when the crawl begins.
 *
 * @throws TypeError for an unusable root or a bad option, naming it.
 */
export function coreFor(stage: StageName, roots: string | string[], options: CrawlOptions | undefined, store?: CrawlStore): CrawlCore {
  const settings = resolveOptions(options);
  return new CrawlCore(stage, roots, settings, worldFor(settings, store));
}
