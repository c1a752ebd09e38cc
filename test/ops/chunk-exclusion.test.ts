import { afterEach, describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { DruidClient, UnusedSegment } from "../../src/druid/client.js";
import type { DataSegment } from "../../src/druid/types.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import {
  inspectKill,
  type KillFacts,
  planCompaction,
  planKill,
  planRollback,
  unfinishedRollbacks,
} from "../../src/ops/index.js";
import { chunkExclusionKey } from "../../src/work/chunk.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Segment operations and ingestion of one time chunk exclude each other through one key per chunk: a kill
 * is cut into one partition per chunk under that key, so an open rollback of the chunk holds it off in the
 * ledger. Kill planning refuses a chunk with no used version (its unused versions are its only copies, as
 * between a rollback's two marks) unless the versions are named, and a chunk with an unfinished rollback.
 */

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

const DS = "ds";
const D1 = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const D2 = "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z";
const V1 = "2026-02-01T00:00:00.000Z";
const V2 = "2026-02-02T00:00:00.000Z";

function seg(interval: string, version: string, partitionNum = 0): DataSegment {
  return {
    dataSource: DS,
    interval,
    version,
    loadSpec: { type: "local" },
    dimensions: "",
    metrics: "",
    shardSpec: { type: "numbered", partitionNum, partitions: 0 },
    binaryVersion: 9,
    size: 100,
  } as DataSegment;
}

const id = (s: DataSegment) =>
  `${s.dataSource}_${s.interval.replace("/", "_")}_${s.version}${s.shardSpec.partitionNum ? `_${s.shardSpec.partitionNum}` : ""}`;

function killFacts(
  used: DataSegment[],
  unused: DataSegment[],
  extra: Partial<KillFacts["request"]> = {},
  rollbacks?: KillFacts["rollbacks"],
): KillFacts {
  return {
    request: { datasource: DS, interval: parseInterval("2026-01-01/2026-01-03"), ...extra },
    now: Date.parse("2026-03-01"),
    used,
    unused: unused.map((segment): UnusedSegment => ({ segment, unusedSince: Date.parse("2026-02-15") })),
    served: used.map(id),
    ...(rollbacks ? { rollbacks } : {}),
  };
}

function rollbackPlan() {
  return planRollback({
    request: { datasource: DS, interval: parseInterval(D1), target: { version: V1 } },
    used: [seg(D1, V2)],
    unused: [seg(D1, V1)],
  });
}

describe("one exclusion key per time chunk", () => {
  it("is the same for ingest, compact, kill and rollback of a chunk, whichever way the interval is written", () => {
    expect(chunkExclusionKey(DS, "2026-01-01/2026-01-02")).toBe(chunkExclusionKey(DS, D1));
    expect(chunkExclusionKey(DS, D1)).toBe(`${DS}|${D1}`);
    const ingest = planIngestJob({
      kind: "run",
      template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
      templateName: "daily.json",
      range: parseInterval("2026-01-01/2026-01-02"),
      vars: { dataDir: writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 1 }) },
    }).tasks[0]?.exclusionKey;
    const kill = planKill(killFacts([seg(D1, V2)], [seg(D1, V1)])).tasks[0]?.exclusionKey;
    const rollback = rollbackPlan().tasks[0]?.exclusionKey;
    const compact = planCompaction({
      request: { datasource: DS, interval: parseInterval(D1), all: true },
      used: [seg(D1, V2)],
      served: [id(seg(D1, V2))],
      locked: [],
    }).tasks[0]?.exclusionKey;
    expect(new Set([ingest, kill, rollback, compact])).toEqual(new Set([`${DS}|${D1}`]));
  });

  it("cuts a kill into one partition per chunk, a chunk bigger than a batch into numbered ones", () => {
    const used = [seg(D1, V2), seg(D2, V2)];
    const unused = [seg(D1, V1, 0), seg(D1, V1, 1), seg(D1, V1, 2), seg(D2, V1)];
    const plan = planKill(killFacts(used, unused, { batchSize: 2 }));
    expect(plan.batches.map((b) => [b.interval, b.segmentIds.length])).toEqual([
      [D1, 2],
      [D1, 1],
      [D2, 1],
    ]);
    expect(plan.tasks.map((t) => t.exclusionKey)).toEqual([`${DS}|${D1}`, `${DS}|${D1}`, `${DS}|${D2}`]);
    expect(new Set(plan.tasks.map((t) => t.id)).size).toBe(3);
    expect(new Set(plan.batches.map((b) => b.taskId)).size).toBe(3);
  });

  it("keeps a kill of a chunk from being claimed while a rollback of it runs", async () => {
    store = await openStore("sqlite::memory:");
    const rollback = rollbackPlan();
    const kill = planKill(killFacts([seg(D1, V2)], [seg(D1, V1)], { versions: [V1] }));
    await store.createJob(rollback.job, rollback.tasks);
    await store.createJob(kill.job, kill.tasks);
    const held = await store.claim({ kind: "rollback", owner: "a", leaseMs: 60_000, limit: 10 });
    expect(held.map((t) => t.id)).toEqual([rollback.tasks[0]?.id]);
    expect(await store.claim({ kind: "kill", owner: "b", leaseMs: 60_000, limit: 10 })).toEqual([]);
  });
});

describe("kill planning refuses what only a finished rollback may touch", () => {
  it("refuses a chunk with no used version, naming it, unless the versions to delete are named", () => {
    // Day 1 is between a rollback's marks: V2 already unused, V1 not yet used again.
    const facts = killFacts([seg(D2, V2)], [seg(D1, V1), seg(D1, V2), seg(D2, V1)]);
    expect(() => planKill(facts)).toThrow(
      new RegExp(
        `cannot kill in ${D1.replace(/[.]/g, "\\.")}: no version of it is used.*--version V; "versions" in an API request`,
      ),
    );
    try {
      planKill(facts);
    } catch (error) {
      expect(error).toMatchObject({ name: "UsageError", details: { path: "interval", intervals: [D1] } });
    }
    const named = planKill({ ...facts, request: { ...facts.request, versions: [V2] } });
    expect(named.batches.flatMap((b) => b.segmentIds)).toEqual([id(seg(D1, V2))]);
  });

  it("refuses a chunk a rollback of the same ledger has not finished, read from the ledger", async () => {
    store = await openStore("sqlite::memory:");
    const rollback = rollbackPlan();
    await store.createJob(rollback.job, rollback.tasks);
    // Another datasource's rollback of the same day is not in the way.
    const other = planRollback({
      request: { datasource: "other", interval: parseInterval(D1), target: { version: V1 } },
      used: [{ ...seg(D1, V2), dataSource: "other" }],
      unused: [{ ...seg(D1, V1), dataSource: "other" }],
    });
    await store.createJob(other.job, other.tasks);
    const open = await unfinishedRollbacks(store, DS, parseInterval("2026-01-01/2026-01-03"));
    expect(open).toEqual([{ taskId: rollback.tasks[0]?.id, interval: D1, state: "new", step: null }]);
    const druid = {
      metadataSegments: async () => [seg(D1, V2), seg(D2, V2)],
      unusedSegments: async () => [seg(D1, V1), seg(D2, V1)].map((segment) => ({ segment, unusedSince: 0 })),
      servedSegments: async () => [id(seg(D1, V2)), id(seg(D2, V2))],
    } as unknown as DruidClient;
    const request = { datasource: DS, interval: parseInterval("2026-01-01/2026-01-03") };
    const facts = await inspectKill(druid, request, Date.parse("2026-03-01"), store);
    expect(() => planKill(facts)).toThrow(/cannot kill in .*2026-01-01.*: a rollback of it is not finished/);
    // Only day 2 asked for: nothing in the way.
    const day2 = await inspectKill(
      druid,
      { ...request, interval: parseInterval(D2) },
      Date.parse("2026-03-01"),
      store,
    );
    expect(planKill(day2).batches.map((b) => b.interval)).toEqual([D2]);
  });
});
