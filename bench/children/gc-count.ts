/**
 * Counts a process's garbage collections, for S4's and S5's memory runs:
 * loaded before a crawler's own code with `node --import gc-count.js`, so it
 * counts the same for a stage's command and for the yardstick
 * (`../shared/bench/ideal-crawler.mjs`), which has no hook of its own.
 *
 * Mechanism: a `PerformanceObserver` on `'gc'` entries counts each kind V8
 * reports (scavenges, Mark-Compacts, incremental marking steps and weak
 * callbacks apart); when the process exits, one JSON line
 * ({@link GcCountReport}) is appended to the file named by
 * `GC_COUNT_FILE`, with the process's peak RSS (`resourceUsage().maxRSS`).
 *
 * @remarks
 * `'exit'` runs on `process.exit()` too, which is how both the command and
 * the yardstick end. The observer delivers its entries asynchronously: the
 * few collections of the last turn before exit can be missed, a count low by
 * one at most, not a figure that moves a ratio.
 *
 * @module
 */
import { appendFileSync } from "node:fs";
import { PerformanceObserver, constants } from "node:perf_hooks";
import type { PerformanceEntry, PerformanceObserverEntryList } from "node:perf_hooks";

/** The line written at exit. */
export interface GcCountReport {
  /** Young-generation collections. */
  scavenges: number;
  /** Full collections of the whole heap. */
  markCompacts: number;
  /** Peak RSS of the process, bytes. */
  peakRssBytes: number;
  /** CPU time of the process, user + system, seconds. */
  cpuSeconds: number;
}

const counts = { scavenges: 0, markCompacts: 0 };

function countCollections(list: PerformanceObserverEntryList): void {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind; // NodeGCPerformanceDetail
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) counts.scavenges++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) counts.markCompacts++;
  }
}

function reportAtExit(): void {
  const file = process.env.GC_COUNT_FILE;
  if (file === undefined) return;
  const usage = process.resourceUsage();
  const report: GcCountReport = {
    ...counts,
    peakRssBytes: usage.maxRSS * 1024,
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
  };
  appendFileSync(file, `${JSON.stringify(report)}\n`);
}

new PerformanceObserver(countCollections).observe({ entryTypes: ["gc"] });
process.on("exit", reportAtExit);
