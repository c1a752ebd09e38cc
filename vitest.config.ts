import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A timeout only ends a test that hangs: every test's work is bounded by counts, and on a 2-core
    // machine shared with other work (load 10 and more) it takes several times as long as on a quiet one,
    // so these are generous. A test that waits for something says what it saw when it gives up.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // 2-core machines: keep worker count modest so process-level tests (Postgres, child CLIs) don't starve.
    maxWorkers: 2,
  },
});
