// The Broker SQL value-model cases observed on a real Druid 33.0.0 (test/conformance/broker-sql-engine-cases.ts), run
// against the emulator with druidVersion 33. Sim time is a ManualClock that moves only when a case polls, so
// nothing sleeps; it stands months after the data, as the real Druid's clock did.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { brokerSqlEngineConformanceSuite } from "../conformance/broker-sql-engine-cases.js";

const clock = new ManualClock(Date.UTC(2026, 10, 30, 12));
let sim: SimHandle | undefined;
const dataDir = mkdtempSync(join(tmpdir(), "segops-sim-broker-sql-engine-"));

beforeAll(async () => {
  sim = await startSim({ clock, druidVersion: 33, capacity: 3 });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

brokerSqlEngineConformanceSuite({
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
