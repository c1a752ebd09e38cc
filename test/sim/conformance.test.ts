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
    // A real Druid 33 kept overshadowed segments used for 15+ minutes (docs/real-druid.md).
    unusedDelayMs: 30 * 60_000,
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
