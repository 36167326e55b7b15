/**
 * `npm run test:workflows`: the suites that each run a whole workflow in
 * child processes, kept out of `npm test` for their time (half a minute each
 * on two cores). CI runs them after `npm test`.
 *
 * - test/learn/workshop.test.ts: the workshop (`npm run learn`) run whole
 *   against the library's own code and against its stubs;
 * - test/learn/wrong-implementations.test.ts: the workshop run on each wrong
 *   implementation its checks once let through;
 * - test/distributed/processes.test.ts: `crawl --frontier` processes sharing
 *   one crawl through a real redis-server: three at once, one killed, all
 *   stopped and resumed, and the chaos tests in both record modes (processes
 *   SIGKILLed again and again, Redis SIGKILLed with its append-only file and
 *   restarted, Redis paused with SIGSTOP for less than a lease and for
 *   several): a dozen crawls, several minutes on two cores. They run the
 *   built `crawl` (dist/cli.js), so the script builds first, as `npm test` does.
 * - test/distributed/cluster-faults.test.ts: one crawl over a local Redis
 *   Cluster with replicas, resharded and failed over mid-crawl (a minute).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/learn/workshop.test.ts", "test/learn/wrong-implementations.test.ts", "test/distributed/processes.test.ts", "test/distributed/cluster-faults.test.ts"],
    // As in vitest.config.ts; the tests that run the whole workshop set longer limits of their own.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
