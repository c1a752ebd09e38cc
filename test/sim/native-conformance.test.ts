// The native-query conformance cases observed on a real Druid 33.0.0 (test/conformance/native-cases.ts), run
// against the emulator with druidVersion 33. Sim time is a ManualClock that moves only when a case polls.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { nativeConformanceSuite } from "../conformance/native-cases.js";

const clock = new ManualClock(Date.UTC(2026, 10, 30, 12));
let sim: SimHandle | undefined;
const dataDir = mkdtempSync(join(tmpdir(), "segops-sim-native-"));

beforeAll(async () => {
  sim = await startSim({ clock, druidVersion: 33 });
});

afterAll(async () => {
  await sim?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

nativeConformanceSuite({
  name: "emulator (druidVersion 33)",
  url: () => {
    if (!sim) throw new Error("the emulator has not started");
    return sim.url;
  },
  pause: () => clock.advance(1000),
  maxPolls: 600,
  dataDir: () => dataDir,
});
