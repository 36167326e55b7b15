/*
 * crawlee's CheerioCrawler (npm `crawlee`, no browser) as a peer in
 * `npm run bench`: crawls every page reachable from ROOT_URL on its host
 * name with `enqueueLinks({ strategy: "same-hostname" })`, MAX_TASKS requests
 * at once, its storage in memory only.
 *
 * Usage: node crawlee.cjs PEERS_DIR ROOT_URL MAX_TASKS
 * (PEERS_DIR: where bench/peers/setup.sh installed the package.)
 * Prints one JSON line: {"pages", "cpuMs", "peakRssBytes"}, the whole
 * process's CPU time and peak RSS (start-up and imports included).
 */
"use strict";
const { createRequire } = require("node:module");
const { join } = require("node:path");

const [peersDir, root, maxTasksText] = process.argv.slice(2);
const load = createRequire(join(peersDir, "package.json"));
const { CheerioCrawler, Configuration, log } = load("crawlee");

async function main() {
  log.setLevel(log.LEVELS.OFF);
  const maxTasks = Number(maxTasksText);
  let pages = 0;
  const crawler = new CheerioCrawler(
    {
      // Start at full concurrency: the autoscaled pool would otherwise begin at 1 and grow.
      minConcurrency: maxTasks,
      maxConcurrency: maxTasks,
      maxRequestRetries: 0,
      async requestHandler({ enqueueLinks }) {
        pages += 1;
        await enqueueLinks({ strategy: "same-hostname" });
      },
      failedRequestHandler() {
        pages += 1;
      },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true }),
  );
  await crawler.run([root]);
  const usage = process.resourceUsage();
  // resourceUsage(): CPU in microseconds, maxRSS in KiB.
  process.stdout.write(`${JSON.stringify({ pages, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, peakRssBytes: usage.maxRSS * 1024 })}\n`);
}

main().catch(function fail(error) {
  process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
