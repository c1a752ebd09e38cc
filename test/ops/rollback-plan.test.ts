import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { DataSegment } from "../../src/druid/types.js";
import { newerPublished, planRollback, type RollbackFacts, unplannedNewer } from "../../src/ops/index.js";

/** The rollback planner's refusals and choices (pure: facts in, plan or a named refusal out). */

function seg(interval: string, version: string, partitionNum = 0, partitions = 1): DataSegment {
  return {
    dataSource: "ds",
    interval,
    version,
    loadSpec: { type: "local" },
    dimensions: "",
    metrics: "",
    shardSpec: { type: "numbered", partitionNum, partitions },
    binaryVersion: 9,
    size: 100,
  } as DataSegment;
}

const D1 = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const D2 = "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z";
const BOTH = "2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z";

function facts(
  used: DataSegment[],
  unused: DataSegment[],
  target: RollbackFacts["request"]["target"],
  interval = D1,
) {
  return { request: { datasource: "ds", interval: parseInterval(interval), target }, used, unused };
}

/** The `path` a refusal names. */
function refusal(plan: () => unknown): unknown {
  try {
    plan();
  } catch (error) {
    return (error as { details?: { path?: unknown } }).details?.path;
  }
  throw new Error("planned without a refusal");
}

describe("planRollback", () => {
  it("restores each chunk's newest version before the instant and marks the newer ones unused", () => {
    const plan = planRollback(
      facts([seg(D1, "v3"), seg(D2, "v1")], [seg(D1, "v1"), seg(D1, "v2")], { before: "v3" }, BOTH),
    );
    expect(plan.chunks).toEqual([
      {
        datasource: "ds",
        interval: D1,
        toVersion: "v2",
        segmentIds: [`ds_${D1.replace("/", "_")}_v2`],
        newerVersions: ["v3"],
      },
    ]);
    expect(plan.tasks[0]?.exclusionKey).toBe(`ds|${D1}`);
  });

  it("refuses a newer segment reaching outside the interval (marking it unused would drop data outside)", () => {
    expect(() => planRollback(facts([seg(BOTH, "v2")], [seg(D1, "v1")], { version: "v1" }))).toThrow(
      /newer segment ds_2026-01-01T00:00:00.000Z_2026-01-03T00:00:00.000Z_v2 reaches outside .*widen the interval to 2026-01-01T00:00:00.000Z\/2026-01-03/,
    );
    // Each refusal names the request field it is about, for the service's errors[].path.
    expect(refusal(() => planRollback(facts([seg(BOTH, "v2")], [seg(D1, "v1")], { version: "v1" })))).toBe(
      "interval",
    );
    expect(refusal(() => planRollback(facts([seg(D1, "v2")], [], { version: "v1" })))).toBe("toVersion");
    expect(refusal(() => planRollback(facts([seg(D1, "v2")], [], { before: "v2" })))).toBe("before");
  });

  it("refuses a version with a killed partition, and a target that does not exist", () => {
    expect(() => planRollback(facts([seg(D1, "v2")], [seg(D1, "v1", 1, 2)], { version: "v1" }))).toThrow(
      /version v1 of .* lacks partition\(s\) 0 \(killed\)/,
    );
    expect(() => planRollback(facts([seg(D1, "v2")], [], { version: "v1" }))).toThrow(
      /has version v1 \(killed, or never written\); versions there: v2/,
    );
    expect(() => planRollback(facts([seg(D1, "v2")], [], { before: "v2" }))).toThrow(
      /is gone .* for 2026-01-01/,
    );
  });

  it("plans nothing when the chunk already serves the target, and the same request names the same job", () => {
    const a = planRollback(facts([seg(D1, "v1")], [], { version: "v1" }));
    expect(a.tasks).toEqual([]);
    const b = planRollback(facts([seg(D1, "v2")], [seg(D1, "v1")], { version: "v1" }));
    const c = planRollback(facts([seg(D1, "v2")], [seg(D1, "v1")], { version: "v1" }));
    expect(b.job.id).toBe(c.job.id);
    expect(b.job.id).toMatch(/^rollback_ds_/);
  });
});

describe("unplannedNewer", () => {
  const payload = {
    datasource: "ds",
    interval: D1,
    toVersion: "v1",
    segmentIds: ["x"],
    newerVersions: ["v2"],
  };

  it("names the used versions newer than the target that the plan did not, in the chunk only", () => {
    expect(unplannedNewer(payload, [seg(D1, "v1"), seg(D1, "v2")])).toEqual([]);
    expect(unplannedNewer(payload, [seg(D1, "v2"), seg(D1, "v3"), seg(D2, "v4"), seg(D1, "v0")])).toEqual([
      "v3",
    ]);
    expect(newerPublished(payload, ["v3"])).toMatch(
      /^a newer version v3 was published after the rollback was planned: roll back again if that is what you want/,
    );
  });
});
