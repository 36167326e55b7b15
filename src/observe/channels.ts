/**
 * The channels a crawl publishes on: plain-data messages on
 * `node:diagnostics_channel`, so that the stages say what they do without
 * knowing who listens. A stage publishes with one line,
 *
 * ```ts
 * crawlChannel.hasSubscribers && crawlChannel.publish({ type: "send", crawl: this.crawlId, url });
 * ```
 *
 * and pays nothing but that check when nobody subscribes. The `trace`
 * option, `crawl --trace`, `--timeline` and the tests subscribe (see
 * `trace.ts`), and so can anyone: `diagnostics_channel.subscribe("coroutine-crawler:crawl", fn)`.
 *
 * Messages carry numbers, not objects: a crawl id (so two crawls traced at
 * once do not mix), a loop id for the hand-made loops, a socket's file
 * number. No timestamps: a subscriber reads its own clock, since
 * `publish` calls it synchronously.
 *
 * @module
 */
import diagnostics_channel from "node:diagnostics_channel";

/** The three stages of this package. */
export type KnownStage = "callbacks" | "generators" | "asyncawait";

/**
 * Which stage published a message: one of the three, or any name a stage of
 * your own gives itself (docs/crawl-core.md, "The contract"). The
 * `string & {}` keeps the three names offered by an editor's completion.
 */
export type StageName = KnownStage | (string & {});

/**
 * A crawl's own story: its start and end and each attempt's start and end in
 * every stage; connect, send, first byte and reads in stages 1 and 2 (stage 3's
 * come from undici's own channels, which `trace.ts` reads); stage 3's worker
 * take/await/resume/done.
 */
export const crawlChannel = diagnostics_channel.channel("coroutine-crawler:crawl");

/**
 * The hand-made loops' work (stages 1 and 2): selects, dispatched callbacks,
 * timers, Task steps, resolved Futures. They belong to a loop, not to a crawl:
 * two crawls run in one loop share them.
 */
export const loopChannel = diagnostics_channel.channel("coroutine-crawler:loop");

/** The queue's counters at a fetch's start or end. */
export interface QueueCounters {
  /**
   * URLs waiting, in every stage: in the crawl's store (src/crawl/store.ts),
   * in a host's line, or resting before a retry (src/crawl/politeness.ts).
   */
  queued: number;
  /** URLs waiting or in flight: the work left, the joinable queue's unfinished count. */
  unfinished: number;
  /** Fetches in flight, counting the one the message is about. */
  inFlight: number;
}

/** A message on {@link crawlChannel}. */
export type CrawlMessage =
  | { type: "crawl-start"; crawl: number; stage: StageName; loop: number | null }
  | { type: "crawl-end"; crawl: number }
  | ({ type: "fetch-start"; crawl: number; url: string; attempt: number } & QueueCounters)
  | ({ type: "fetch-end"; crawl: number; url: string; attempt: number; status: number | null; error: string | null; detail?: string | null } & QueueCounters)
  | { type: "connect"; crawl: number; url: string; fd: number | null }
  | { type: "send" | "first-byte"; crawl: number; url: string }
  | { type: "read"; crawl: number; url: string; bytes: number }
  | { type: "take" | "resume" | "done"; crawl: number; url: string }
  | { type: "await"; crawl: number; url: string; what: string };

/** A message on {@link loopChannel}. */
export type LoopMessage =
  | { type: "select"; loop: number; ready: number }
  | { type: "dispatch"; loop: number; callback: string; fd: number }
  | { type: "timer"; loop: number; callback: string }
  | { type: "step"; loop: number; task: number; coroutine: string; yielded: string | null }
  | { type: "resolve"; loop: number; future: number; label: string }
  | { type: "cancel"; loop: number; task: number };

let crawlCount = 0;
let loopCount = 0;

/** A new crawl id: each crawl takes one when it starts and puts it in every message. */
export function nextCrawlId(): number {
  crawlCount += 1;
  return crawlCount;
}

/**
 * A new loop id for a hand-made loop (stages 1 and 2 both take theirs here,
 * so a stage-1 loop and a stage-2 loop never share one and two crawls traced
 * at once cannot mix their loops' messages).
 */
export function nextLoopId(): number {
  loopCount += 1;
  return loopCount;
}
