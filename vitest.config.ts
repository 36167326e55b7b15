import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
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
