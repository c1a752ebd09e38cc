import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { CompactionGuard } from "../../src/ingest/compaction-guard.js";
import { skipIntervalFor, withoutSkipInterval, withSkipInterval } from "../../src/ingest/compaction-skip.js";

/**
 * The compaction guard's rules (apache/druid #19792: `DataSourceCompactionConfig.skipIntervals`, Druid 39), on a
 * Coordinator double that keeps one cluster compaction config.
 */

const DAY = parseInterval("2026-04-02/2026-04-03");

function coordinator(druid: number, configs: Record<string, unknown>[]) {
  const state = {
    configs: structuredClone(configs),
    writes: 0,
    onWrite: (_c: Record<string, unknown>) => {},
  };
  return {
    state,
    client: {
      compactionConfig: async () => ({ compactionConfigs: structuredClone(state.configs) }),
      setDatasourceCompactionConfig: async (config: Record<string, unknown>) => {
        state.writes++;
        state.configs = [
          ...state.configs.filter((c) => c.dataSource !== config.dataSource),
          structuredClone(config),
        ];
        state.onWrite(config);
      },
      capabilities: async () => ({ compactionSkipIntervals: druid >= 39, behavesAs: druid }),
    },
  };
}

describe("skip intervals of a compaction config", () => {
  it("widens a partition to the compaction granularity's buckets", () => {
    expect(skipIntervalFor(DAY, {})).toEqual(DAY);
    expect(skipIntervalFor(DAY, { granularitySpec: { segmentGranularity: "MONTH" } })).toEqual(
      parseInterval("2026-04-01/2026-05-01"),
    );
  });

  it("adds and removes one entry, keeping every other field and entry", () => {
    const config = { dataSource: "d", taskPriority: 30, skipIntervals: ["2025-01-01/2025-02-01"] };
    const added = withSkipInterval(config, DAY);
    expect(added).toEqual({
      ...config,
      skipIntervals: ["2025-01-01/2025-02-01", "2026-04-02T00:00:00.000Z/2026-04-03T00:00:00.000Z"],
    });
    expect(withSkipInterval(added as Record<string, unknown>, DAY)).toBeNull();
    expect(withoutSkipInterval(added as Record<string, unknown>, DAY)).toEqual(config);
    expect(withoutSkipInterval(config, DAY)).toBeNull();
  });
});

describe("the compaction guard", () => {
  it("on Druid 39 holds a partition's interval and releases it once the last holder is over", async () => {
    const c = coordinator(39, [{ dataSource: "d", taskContext: { owner: "ops" } }]);
    const guard = new CompactionGuard({ client: c.client, warn: () => {} });
    const month = { granularitySpec: { segmentGranularity: "MONTH" } };
    c.state.configs = [{ dataSource: "d", ...month }];
    const a = await guard.hold("d", DAY, "p1", undefined);
    const b = await guard.hold("d", parseInterval("2026-04-03/2026-04-04"), "p2", undefined);
    expect(a).toBe("2026-04-01T00:00:00.000Z/2026-05-01T00:00:00.000Z");
    expect(b).toBe(a);
    expect(c.state.configs[0]?.skipIntervals).toEqual([a]);
    await guard.release("d", a as string, "p1");
    expect(c.state.configs[0]?.skipIntervals).toEqual([a]); // p2 still writes the month
    await guard.release("d", a as string, "p2");
    expect(c.state.configs[0]).toEqual({ dataSource: "d", ...month, skipIntervals: [] });
  });

  it("leaves an entry it did not add (an operator's) alone, and resumes one a partition recorded", async () => {
    const entry = "2026-04-02T00:00:00.000Z/2026-04-03T00:00:00.000Z";
    const c = coordinator(39, [{ dataSource: "d", skipIntervals: [entry] }]);
    const guard = new CompactionGuard({ client: c.client, warn: () => {} });
    expect(await guard.hold("d", DAY, "p1", undefined)).toBeNull();
    expect(c.state.writes).toBe(0);
    // Another host recorded it for the partition before it crashed: this host owns it now.
    expect(await guard.hold("d", DAY, "p1", entry)).toBe(entry);
    await guard.release("d", entry, "p1");
    expect(c.state.configs[0]?.skipIntervals).toEqual([]);
  });

  it("writes again when another writer's change replaced its own", async () => {
    const c = coordinator(39, [{ dataSource: "d" }]);
    let clobber = true;
    c.state.onWrite = () => {
      if (!clobber) return;
      clobber = false;
      c.state.configs = [{ dataSource: "d", skipIntervals: ["2020-01-01/2020-01-02"] }]; // another host's stale write
    };
    const guard = new CompactionGuard({ client: c.client, warn: () => {} });
    await guard.hold("d", DAY, "p1", undefined);
    expect(c.state.writes).toBe(2);
    expect(c.state.configs[0]?.skipIntervals).toEqual([
      "2020-01-01/2020-01-02",
      "2026-04-02T00:00:00.000Z/2026-04-03T00:00:00.000Z",
    ]);
  });

  it("does nothing for a datasource without auto-compaction", async () => {
    const c = coordinator(39, []);
    const guard = new CompactionGuard({ client: c.client, warn: () => {} });
    expect(await guard.hold("d", DAY, "p1", undefined)).toBeNull();
    expect(c.state.writes).toBe(0);
  });

  it("before Druid 39 writes nothing and says once per datasource that compaction may race the backfill", async () => {
    const c = coordinator(38, [{ dataSource: "d" }]);
    const warnings: string[] = [];
    const guard = new CompactionGuard({ client: c.client, warn: (m) => warnings.push(m) });
    for (const p of ["p1", "p2", "p3"]) expect(await guard.hold("d", DAY, p, undefined)).toBeNull();
    expect(c.state.writes).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      "Druid 38 cannot skip intervals (compaction skipIntervals came in Druid 39)",
    );
    expect(warnings[0]).toContain("suspend the datasource's auto-compaction");
    // No auto-compaction configured: nothing to say.
    const quiet: string[] = [];
    const none = new CompactionGuard({ client: coordinator(38, []).client, warn: (m) => quiet.push(m) });
    await none.hold("d", DAY, "p1", undefined);
    expect(quiet).toEqual([]);
  });

  it("before Druid 39 also warns of a compaction supervisor the Coordinator's config does not list (Druid 37)", async () => {
    const c = coordinator(37, []);
    const warnings: string[] = [];
    const client = { ...c.client, supervisorIds: async () => ["kafka_events", "autocompact__d"] };
    const guard = new CompactionGuard({ client, warn: (m) => warnings.push(m) });
    expect(await guard.hold("d", DAY, "p1", undefined)).toBeNull();
    expect(await guard.hold("e", DAY, "p2", undefined)).toBeNull();
    expect(c.state.writes).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^d has a compaction supervisor \(autocompact\), and Druid 37 cannot skip intervals/,
    );
  });
});
