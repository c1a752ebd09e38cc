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

  it("seed 5, the emulator restarted without the tasks in flight (Druid forgetting them): each submitted again under its id and run once", async () => {
    const run = await runChaos({ seed: 5, restart: "forget" });
    expect(run.violations).toEqual([]);
    expect(run.figures).toMatchObject({
      doubleSuccesses: 0,
      mixedChunks: 0,
      lost: 0,
      exitCode: 0,
      emulatorForgets: 1,
    });
    // Druid really forgot tasks segops had submitted (the checker holds each to one acceptance before the
    // restart and one after).
    expect(run.figures.forgottenTasks).toBeGreaterThan(0);
    expect(run.figures.acceptedSubmissions).toBe(
      run.figures.partitions + run.figures.forgottenTasks + run.figures.retriedAttempts,
    );
  }, 300_000);
});
