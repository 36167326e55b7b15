/**
 * `npm run test:bench`: the benchmark's smoke test alone (`npm run bench --
 * --quick` and the bench helpers' unit tests), kept out of `npm test` for its
 * time. CI runs it after `npm test`.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/bench.test.ts", "test/bench-yardstick.test.ts"],
    // The quick bench crawls every scenario with every stage in child processes.
    testTimeout: 120_000,
    hookTimeout: 30_000,
  },
});
