/**
 * What the `crawl` command prints about a crawl whose queue is in Redis
 * (`--frontier`): the line after the report, and the `--status` text.
 *
 * @module
 */
import { withoutPassword } from "../http/proxy.js";
import type { FrontierStatus } from "../distributed/redis-frontier.js";
import type { FrontierFlags } from "./command-line.js";

/**
 * The line after the report of a crawl with `--frontier`: the report's
 * records are every process's, read from Redis; this says so, and what this
 * process did. For example `frontier redis://127.0.0.1:6379/0, crawl site1:
 * 5000 records in Redis; this process (h:4242:a1b2c3) recorded 1712`.
 *
 * @param recordedHere - the records this process stored.
 * @param interrupted - Ctrl-C stopped this process, which handed back the URLs it held.
 */
export function frontierLine(frontier: FrontierFlags, owner: string, recorded: number, recordedHere: number, interrupted: boolean): string {
  const handedBack = interrupted ? ", and handed the URLs it held back to the queue" : "";
  return `${crawlIn(frontier)}: ${plural(recorded, "record")} in Redis; this process (${owner}) recorded ${recordedHere}${handedBack}\n`;
}

/**
 * The `--status` text: a first line with the crawl's name, where it is and
 * what it is doing, then the counts, then each process that took URLs, most
 * recently alive first. A name with nothing in Redis gets one line saying so.
 *
 * @example
 * ```
 * frontier redis://127.0.0.1:6379/0, crawl site1: under way
 * queued       120
 * leased        20
 * records      880
 * seen        1020
 * processes      2
 *   h:4242:a1b2c3  alive 0.2 s ago  leased 10
 *   h:4250:d4e5f6  alive 0.4 s ago  leased 10
 * ```
 */
export function statusText(frontier: FrontierFlags, status: FrontierStatus): string {
  if (crawlMissing(status)) {
    return `${crawlIn(frontier)}: nothing in Redis under this name (a crawl starts when a process crawls a ROOT with this --frontier and --crawl-name)\n`;
  }
  const counts: Array<[string, number]> = [
    ["queued", status.queued],
    ["leased", status.leased],
    ["records", status.records],
    ["seen", status.seen],
    ["processes", status.workers.length],
  ];
  let text = `${crawlIn(frontier)}: ${state(status)}\n`;
  for (const [label, count] of counts) text += `${label.padEnd(10)}${String(count).padStart(6)}\n`;
  const width = Math.max(0, ...status.workers.map((worker) => worker.owner.length));
  for (const worker of status.workers) {
    text += `  ${worker.owner.padEnd(width)}  alive ${(worker.idleMs / 1000).toFixed(1)} s ago  leased ${worker.leased}\n`;
  }
  return text;
}

/** Whether Redis holds nothing of the crawl: never started under this name, or its keys are gone (`--status` then exits 1). */
export function crawlMissing(status: FrontierStatus): boolean {
  return !status.created && status.seen === 0 && status.queued === 0 && status.leased === 0 && status.workers.length === 0;
}

/** What the counts say about the crawl, in words. */
function state(status: FrontierStatus): string {
  if (status.leased > 0) {
    return `under way (${plural(status.leased, "URL")} leased; the leases of a process that died expire after its --lease)`;
  }
  if (status.queued > 0) return `stopped with ${plural(status.queued, "URL")} queued; crawl with the same flags again to resume it`;
  return "finished";
}

/** `frontier URL, crawl NAME`, the URL without its password. */
function crawlIn(frontier: FrontierFlags): string {
  return `frontier ${withoutPassword(frontier.url)}, crawl ${frontier.name}`;
}

/** The URL with its password, if any, as `***`: the output may be shared, the password should not be (one helper for Redis and proxy URLs). */
export { withoutPassword };

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
