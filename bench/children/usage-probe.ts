/**
 * Loaded with `node --import` ahead of a script the bench runs unchanged
 * (the yardstick, bench/yardstick/ideal-crawler.mjs), to read what that
 * script does not report: when the process exits, it writes one JSON line
 * to standard output, after the script's own lines,
 * `{"usage":{"cpuMs","cpuBeforeMainMs","peakRssBytes","rssBeforeMainBytes"}}`:
 * the whole process's CPU (user + system) and peak RSS, and both as they
 * were when this probe ran, just before the script's own module.
 *
 * Its own cost is one small module: about a millisecond of CPU.
 *
 * @remarks Written with `writeSync`, as an `exit` listener can run no
 * asynchronous write (the yardstick ends with `process.exit(0)`).
 * @module
 */
import { writeSync } from "node:fs";

const before = process.cpuUsage();
const rssBeforeMainBytes = process.memoryUsage.rss();

function reportUsage(): void {
  const usage = process.resourceUsage(); // CPU in microseconds, maxRSS in KiB
  const line = {
    usage: {
      cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      cpuBeforeMainMs: (before.user + before.system) / 1000,
      peakRssBytes: usage.maxRSS * 1024,
      rssBeforeMainBytes,
    },
  };
  writeSync(1, `${JSON.stringify(line)}\n`);
}

process.on("exit", reportUsage);
