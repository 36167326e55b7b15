import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The benchmark smoke test (a fifth of the suite's time) runs on its own:
    // `npm run test:bench`, with vitest.bench.config.ts. CI runs both.
    exclude: [...configDefaults.exclude, "test/bench.test.ts"],
    typecheck: {
      enabled: true,
      include: ["test/**/*.test-d.ts"],
      tsconfig: "./tsconfig.json",
    },
    // Crawls against a loopback server: generous, because CI machines are shared.
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
