/*
 * node-crawler (npm `crawler`) as a peer in `npm run bench`: crawls every
 * page reachable from ROOT_URL on its host, MAX_TASKS connections at once,
 * links found with the cheerio document it hands each callback.
 *
 * Usage: node node-crawler.cjs PEERS_DIR ROOT_URL MAX_TASKS
 * (PEERS_DIR: where bench/peers/setup.sh installed the package.)
 * Prints one JSON line: {"pages", "cpuMs", "peakRssBytes"}, the whole
 * process's CPU time and peak RSS (start-up and imports included).
 */
"use strict";
const { createRequire } = require("node:module");
const { join } = require("node:path");

const [peersDir, root, maxTasksText] = process.argv.slice(2);
const load = createRequire(join(peersDir, "package.json"));
const CrawlerModule = load("crawler");
const Crawler = CrawlerModule.default ?? CrawlerModule;

const rootHost = new URL(root).hostname;
const seen = new Set([root]);
let pages = 0;

const crawler = new Crawler({
  maxConnections: Number(maxTasksText),
  retries: 0,
  silence: true,
  callback(error, response, done) {
    pages += 1;
    if (error === null && response.$ !== undefined) {
      const $ = response.$;
      $("a[href]").each(function queueLink(_, element) {
        const url = URL.parse($(element).attr("href"), response.options.url);
        if (url === null || url.hostname !== rootHost) return;
        url.hash = "";
        if (seen.has(url.href)) return;
        seen.add(url.href);
        crawler.add(url.href);
      });
    }
    done();
  },
});
crawler.on("drain", function report() {
  const usage = process.resourceUsage();
  // resourceUsage(): CPU in microseconds, maxRSS in KiB.
  process.stdout.write(`${JSON.stringify({ pages, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, peakRssBytes: usage.maxRSS * 1024 })}\n`);
});
crawler.add(root);
