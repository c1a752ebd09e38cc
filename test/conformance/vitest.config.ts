import { defineConfig } from "vitest/config";

// Conformance suite against a live Druid or the segops emulator; never part of the default `vitest run`
// (which only picks up test/**/*.test.ts). Run it with:
//   SEGOPS_CONFORMANCE_URL=http://127.0.0.1:8888 npx vitest run --config test/conformance/vitest.config.ts
export default defineConfig({
  test: {
    include: ["test/conformance/**/*.conformance.ts"],
    // Real ingestion and handoff take seconds to a minute on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    maxWorkers: 1,
  },
});
