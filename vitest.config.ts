import { configDefaults, defineConfig } from "vitest/config";

/**
 * Run apart, each with its own config and script, for their time: the
 * benchmark's smoke test (`npm run test:bench`) and the two suites that run a
 * whole workflow in child processes (`npm run test:workflows`). CI runs all three.
 */
const RUN_APART = ["test/bench.test.ts", "test/bench-yardstick.test.ts", "test/learn/workshop.test.ts", "test/learn/wrong-implementations.test.ts", "test/distributed/processes.test.ts", "test/distributed/cluster-faults.test.ts"];

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...RUN_APART],
    // The type tests (test/**/*.test-d.ts) are not run here: `npm run typecheck`, which
    // `npm test` runs first, compiles them with the rest of test/, and an expectTypeOf
    // that does not hold is a compile error. Vitest's typecheck would run tsc on them again.
    typecheck: { enabled: false },
    // Two test files at a time, one per core (vitest's default on two cores is one: it
    // keeps a core for itself, which here only reports). Most files wait on sockets,
    // timers or child processes much of their time, so another file runs meanwhile.
    maxWorkers: 2,
    // Crawls against a loopback server: generous, because CI machines are shared.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
