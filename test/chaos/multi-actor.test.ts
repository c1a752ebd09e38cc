import { describe, expect, it } from "vitest";
import { runMultiActor } from "./multi-actor.js";

/**
 * The multi-actor chaos family on fixed seeds (the long mode is `npm run chaos -- --multi`): three `segops
 * serve` hosts on one PostgreSQL, bursts of identical backfill requests across them, CLI compactions, kills
 * and rollbacks over the same days, a host paused past its lease, a host SIGKILLed and started again,
 * PostgreSQL restarted. Each seed's run must hold every guarantee: Druid's rows per day are the source's,
 * nothing ran twice, no partition lost or stuck, every done partition's chunk served, at most one open job
 * over the same inputs, and every host brings a fresh job to done alone afterwards.
 * Some segment operations run on the hosts' ledger, others on a ledger of their own (another writer).
 */
describe("chaos: several actors on one ledger and one Druid", () => {
  for (const seed of [1, 6]) {
    it(`seed ${seed}: never twice, never lost, every host progressing`, async () => {
      const run = await runMultiActor({ seed, days: 30 });
      expect(run.violations).toEqual([]);
      const f = run.figures;
      expect(f).toMatchObject({
        lost: 0,
        doubled: 0,
        openTwice: 0,
        stalledHosts: 0,
        unservedDone: 0,
        rowMismatches: 0,
      });
      // The actors really met: identical requests raced (some refused or found again), segment operations
      // ran, and the hosts were disturbed.
      expect(f.racingRequests).toBeGreaterThan(5);
      expect((f.answers["200"] ?? 0) + (f.answers["409"] ?? 0)).toBeGreaterThan(0);
      expect(f.segmentOps).toBeGreaterThanOrEqual(3);
      expect(f.opsOnOwnLedger).toBeGreaterThan(0);
      expect(f.opsOnOwnLedger).toBeLessThan(f.segmentOps);
      expect(f.hostPauses + f.hostKills + f.pgRestarts).toBeGreaterThan(0);
      expect(f.partitions).toBeGreaterThanOrEqual(30);
    }, 600_000);
  }
});
