// Admission against the emulator speaking the Druid releases teams run (docs/druid-versions.md).
import { afterEach, describe, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";
import { startTestSim } from "../helpers/sim.js";

const clients: DruidClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

function clientOf(url: string): DruidClient {
  const c = new DruidClient({ url });
  clients.push(c);
  return c;
}

describe("admission on each Druid release", () => {
  it.each([33, 35, 37, 38, 39])(
    "counts only the enabled workers' slots on an emulated Druid %i with a disabled MiddleManager",
    async (druidVersion) => {
      const s = await startTestSim({ druidVersion, workers: 2, capacity: 4 });
      s.sim.setWorkerEnabled(1, false);
      const tracker = new AdmissionTracker({ client: clientOf(s.url), clock: s.clock, maxConcurrency: 10 });
      await tracker.refresh();
      expect(tracker.slots).toEqual({ ours: 0, used: 0, capacity: 4 });
      expect([tracker.admit("p1", 3), tracker.admit("p2", 1), tracker.admit("p3", 1)]).toEqual([
        true,
        true,
        false,
      ]);
      expect(tracker.lastDecision).toBe("capacity");
    },
  );
});
