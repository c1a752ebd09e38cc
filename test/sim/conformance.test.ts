// The conformance cases observed on a real Druid 33.0.0 (test/conformance/cases.ts), run against the emulator
// with druidVersion 33. Sim time is a ManualClock that moves only when a case polls, so nothing sleeps.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { conformanceSuite } from "../conformance/cases.js";

const clock = new ManualClock(Date.UTC(2026, 10, 30, 12));
let sim: SimHandle | undefined;
const dataDir = mkdtempSync(join(tmpdir(), "segops-sim-conformance-"));

beforeAll(async () => {
  sim = await startSim({
    clock,
    druidVersion: 33,
    // scripts/druid/conf: one Indexer with 3 slots.
    capacity: 3,
    // Druid's dynamic config default: nothing overshadowed goes unused in the Coordinator's first 15 minutes
    // (a real Druid 33 kept overshadowed segments used that long, docs/real-druid.md)…
    millisToWaitBeforeDeleting: 900_000,
    // …then MarkOvershadowedSegmentsAsUnused acts on its next run (druid.coordinator.period PT5S in scripts/druid).
    unusedDelayMs: 5_000,
  });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

conformanceSuite({
  name: "emulator (druidVersion 33)",
  url: () => {
    if (!sim) throw new Error("the emulator has not started");
    return sim.url;
  },
  // One sim second per poll: a task of the duration model (~8 s) finishes within about ten polls.
  pause: () => clock.advance(1000),
  maxPolls: 600,
  dataDir: () => dataDir,
});
