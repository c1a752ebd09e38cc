import { describe, expect, it } from "vitest";
import { coordinatorKiller, embeddedKiller, rollbackHorizonWarnings } from "../../src/druid/auto-kill.js";
import { DruidClient } from "../../src/druid/client.js";
import { startSim } from "../../src/sim/index.js";

/**
 * How long Druid keeps a replaced version for a rollback: the Coordinator's auto-kill bufferPeriod, and from
 * Druid 34 the Overlord's embedded kill (apache/druid #18028, UnusedSegmentKillerConfig: enabled false,
 * bufferPeriod P30D by default).
 */
describe("the rollback horizon against Druid's auto-kill buffers", () => {
  it("reads both killers with Druid's defaults where the properties are unset", () => {
    expect(coordinatorKiller({})).toMatchObject({ enabled: false, bufferPeriod: "P30D" });
    expect(embeddedKiller({}, 34)).toMatchObject({ enabled: false, bufferPeriod: "P30D" });
    expect(embeddedKiller({ "druid.manager.segments.killUnused.enabled": "true" }, 33)).toBeNull();
  });

  it("warns, naming the property, when an enabled killer's buffer is shorter than asked", () => {
    const props = {
      "druid.manager.segments.killUnused.enabled": "true",
      "druid.manager.segments.killUnused.bufferPeriod": "P7D",
      "druid.coordinator.kill.on": "true",
    };
    const killers = [coordinatorKiller(props), embeddedKiller(props, 34)];
    const warnings = rollbackHorizonWarnings("P60D", killers);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("KillUnusedSegments) deletes unused segments P30D after");
    expect(warnings[1]).toContain("UnusedSegmentsKiller, Druid 34+) deletes unused segments P7D after");
    expect(warnings[1]).toContain("raise druid.manager.segments.killUnused.bufferPeriod or roll back sooner");
    expect(rollbackHorizonWarnings("P7D", killers)).toEqual([]);
  });

  it("says nothing for a killer that is off, and refuses a horizon that is no period", () => {
    const killers = [
      coordinatorKiller({ "druid.coordinator.kill.bufferPeriod": "PT1H" }),
      embeddedKiller({}, 39),
    ];
    expect(rollbackHorizonWarnings("P365D", killers)).toEqual([]);
    expect(() => rollbackHorizonWarnings("60 days", killers)).toThrow(/not an ISO-8601 period/);
  });
});

describe("the rollback horizon read from an emulated cluster's /status/properties", () => {
  it("warns on a Druid 34 whose Overlord kills unused segments after P7D, and not on a 33 with the same properties", async () => {
    const props = {
      "druid.manager.segments.killUnused.enabled": "true",
      "druid.manager.segments.killUnused.bufferPeriod": "P7D",
    };
    for (const [druidVersion, expected] of [
      [34, 1],
      [33, 0],
    ] as const) {
      const sim = await startSim({ druidVersion, runtimeProperties: props });
      const client = new DruidClient({ url: sim.url });
      try {
        const read = await client.statusProperties("overlord");
        expect(read).toEqual(props);
        const major = (await client.capabilities()).behavesAs;
        const killers = [
          coordinatorKiller(await client.statusProperties("coordinator")),
          embeddedKiller(read, major),
        ];
        expect(rollbackHorizonWarnings("P30D", killers)).toHaveLength(expected);
      } finally {
        await client.close();
        await sim.close();
      }
    }
  });
});
