import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // 2-core machines: keep worker count modest so process-level tests (Postgres, child CLIs) don't starve.
    maxWorkers: 2,
  },
});
