import { describe, expect, it } from "vitest";
import { runChaos } from "./harness.js";

/**
 * The chaos harness on a fixed small seed set (the long mode is `npm run chaos`): every seed's run must hold
 * every guarantee — each partition done exactly once, one live version per chunk equal to the ledger's, the
 * ledger consistent with Druid, the exit code and report truthful — while it was really disturbed.
 */
describe("chaos: a 60-partition backfill under seeded faults, kills and emulator restarts", () => {
  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}: never twice, never lost`, async () => {
      const run = await runChaos({ seed });
      expect(run.violations).toEqual([]);
      expect(run.figures).toMatchObject({ doubleSuccesses: 0, mixedChunks: 0, lost: 0, exitCode: 0 });
      // The run was disturbed: faults answered and at least one kill or restart.
      expect(run.figures.faultsInjected).toBeGreaterThan(0);
      expect(run.figures.kills + run.figures.emulatorRestarts).toBeGreaterThan(0);
    }, 300_000);
  }
});
