import { ManualClock } from "../../src/core/clock.js";
import type { DruidClient } from "../../src/druid/client.js";
import type { DataSegment } from "../../src/druid/types.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { BudgetedTasks, type TaskIO } from "../../src/ops/druid-task.js";
import { cachedBudget } from "../../src/ops/slots.js";
import type { OpsIO, Partition, StepProgress } from "../../src/ops/step-table.js";
import type { AdmissionTracker } from "../../src/work/admission-tracker.js";
import { segmentId } from "../../src/work/segments.js";
import type { StatusBatcher, StatusResult } from "../../src/work/status-batcher.js";

/**
 * Fake Druid I/O for the segment operations' steps on their own: a partition whose checkpoints are kept in
 * memory, a client answering from the segments a test gives, a manual clock.
 */

export const DS = "wiki";
export const CHUNK = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
export const START = Date.UTC(2026, 0, 2);

export function segment(
  version: string,
  o: { partitionNum?: number; compacted?: boolean; interval?: string } = {},
): DataSegment {
  const interval = o.interval ?? CHUNK;
  const p = o.partitionNum ?? 0;
  return {
    dataSource: DS,
    interval,
    version,
    loadSpec: {},
    dimensions: "page",
    metrics: "count",
    shardSpec: { type: "numbered", partitionNum: p, partitions: 0 },
    size: 1000,
    identifier: `${DS}_${interval.replace("/", "_")}_${version}${p ? `_${p}` : ""}`,
    ...(o.compacted ? { lastCompactionState: { partitionsSpec: { type: "dynamic" } } } : {}),
  };
}

export type FakePart<P, G extends StepProgress> = Partition<P, G> & { saved: G[] };

/** A partition at `progress`, its checkpoints merged in memory and listed in `saved`. */
export function fakePart<P, G extends StepProgress>(payload: P, progress: G, attempt = 1): FakePart<P, G> {
  let p = progress;
  const saved: G[] = [];
  return {
    task: { id: "job/20260101", jobId: "job", attempt } as TaskRow,
    payload,
    call: { signal: new AbortController().signal },
    progress: () => p,
    save: async (patch) => {
      saved.push(patch);
      p = { ...p, ...patch };
    },
    saved,
  };
}

/** What the fake Druid holds for the chunk: each list may change between steps. */
export interface FakeDruid {
  used: DataSegment[];
  unused: DataSegment[];
  /** Ids Historicals serve; every used segment when absent. */
  served?: Set<string>;
}

/** A client answering the segment reads from `druid`; `over` adds or replaces calls. */
export function fakeClient(
  druid: FakeDruid,
  over: Partial<Record<keyof DruidClient, unknown>> = {},
): DruidClient {
  return {
    metadataSegments: async () => druid.used,
    // Druid's active tasks of a type (kill tasks, for a rollback): none unless a test says so.
    tasks: async () => [],
    unusedSegments: async () => druid.unused.map((segment) => ({ segment, unusedSince: 0 })),
    servedInInterval: async () =>
      druid.used
        .filter((s) => druid.served?.has(segmentId(s)) ?? true)
        .map((segment) => ({ segment, servers: [{ type: "historical" }] })),
    ...over,
  } as unknown as DruidClient;
}

export function fakeIO(client: DruidClient, clock = new ManualClock(START)): OpsIO & { clock: ManualClock } {
  return { client, clock, settings: { tickMs: 1000, handoffTimeoutMs: 60_000 } };
}

/** Admission that admits while `free` is true and records what it tracks. */
export function fakeAdmission(free = true) {
  const tracked = new Map<string, string | null>();
  const admission = {
    free,
    admit: () => admission.free,
    track: (id: string, _slots: number, druidTaskId: string | null) => tracked.set(id, druidTaskId),
    untrack: (id: string) => tracked.delete(id),
    release: () => {},
  };
  return { admission: admission as typeof admission & AdmissionTracker, tracked };
}

/**
 * The I/O of a kind that runs Druid tasks: a budget of `budget` places (null: none known), Druid's task
 * statuses from `statuses` (unknown when absent), admission when given.
 */
export function fakeTaskIO(
  client: DruidClient,
  o: { budget?: number | null; statuses?: Map<string, StatusResult>; admission?: AdmissionTracker } = {},
): TaskIO & { clock: ManualClock } {
  const io = fakeIO(client);
  const batcher = {
    get: async (id: string) => o.statuses?.get(id) ?? { id, state: "UNKNOWN" },
  } as unknown as StatusBatcher;
  const tasks = new BudgetedTasks({
    budget: cachedBudget(async () => o.budget ?? null, io.clock),
    batcher,
    admission: o.admission,
    tickMs: io.settings.tickMs,
    budgetName: "test budget",
    taskType: "test",
  });
  return { ...io, tasks };
}

/** The signal (or error) a step threw, or null when it returned. */
export const thrown = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );
