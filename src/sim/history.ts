import type { SimEngine } from "./engine.js";
import { segmentId } from "./ids.js";
import { instantText } from "./instant-text.js";
import type { TaskPlan } from "./plans.js";
import { hash32, seededRng } from "./rng.js";
import type { SimTask } from "./task.js";
import type { SimSegment } from "./timeline.js";

/**
 * A production-sized past for the emulator, written straight into its stores instead of run task by task:
 * complete tasks spread over the last `spanMs` (what `GET /tasks` lists within Druid's
 * `recentlyFinishedThreshold`) and used, served segments over the days before `segmentsBefore`, spread over
 * `dataSources` datasources. Seconds to seed where running 20,000 tasks would take the emulator hours; the
 * cost benchmark (bench/cost.ts) measures what each poller's requests cost against such a cluster.
 */
export interface HistoryOptions {
  /** Complete tasks, created over the last `spanMs` before the emulator's now. */
  tasks: number;
  /** Used segments (each served), whole days of `partitionsPerDay` segments per datasource. */
  segments: number;
  /** Datasources the tasks and segments are spread over; the first is `names[0]` when given. */
  dataSources: number;
  /** @default 24 h */
  spanMs?: number;
  /** The last day of history ends here (ms, a day boundary); the days go back from it. @default the emulator's now, floored to the day */
  segmentsBefore?: number;
  /** @default 4 */
  partitionsPerDay?: number;
  /** Share of the tasks that FAILED. @default 0.05 */
  failedShare?: number;
  /** Datasource names to use first (e.g. the benchmark's own), then `history_NN`. */
  names?: readonly string[];
  /** @default 1 */
  seed?: number;
}

export interface SeededHistory {
  tasks: number;
  segments: number;
  dataSources: string[];
}

const DAY_MS = 86_400_000;
const SEGMENT_BYTES = 50_000_000;

/** A complete task's plan: only what the list, status and payload views and the scheduler's filters read. */
function historyPlan(dataSource: string): TaskPlan {
  return {
    id: null,
    type: "index_parallel",
    groupId: null,
    dataSource,
    priority: 50,
    context: {},
    slots: 1,
    ingest: null,
    killInterval: null,
    sim: { durationMs: null, fail: null, failAttempts: null, failKey: null, rows: null, neverHandoff: false },
  };
}

function nameOf(i: number, names: readonly string[]): string {
  return names[i] ?? `history_${String(i).padStart(2, "0")}`;
}

/** Seeds the engine's task map and segment store (nothing is submitted, no event recorded). */
export function seedHistory(engine: SimEngine, o: HistoryOptions): SeededHistory {
  for (const [name, v] of [
    ["tasks", o.tasks],
    ["segments", o.segments],
    ["dataSources", o.dataSources],
  ] as const)
    if (!Number.isInteger(v) || v < (name === "dataSources" ? 1 : 0))
      throw new RangeError(`Expected history \`${name}\` to be a whole number, got ${v}`);
  const now = engine.now;
  const span = o.spanMs ?? DAY_MS;
  const names = o.names ?? [];
  const rng = seededRng(hash32("history", o.seed ?? 1));
  const failedShare = o.failedShare ?? 0.05;
  const dataSources = Array.from({ length: o.dataSources }, (_, i) => nameOf(i, names));

  for (let i = 0; i < o.tasks; i++) {
    const dataSource = dataSources[i % dataSources.length] as string;
    // Oldest first, so the map keeps creation order as a live Overlord's would have filled it.
    const createdAt = now - span + Math.floor(((i + rng.next()) * span) / Math.max(1, o.tasks));
    const runMs = 30_000 + Math.floor(rng.next() * 600_000);
    const finishedAt = Math.min(now - 1, createdAt + runMs);
    const failed = rng.next() < failedShare;
    const id = `index_parallel_${dataSource}_history${String(i).padStart(6, "0")}_${instantText(createdAt)}`;
    const task: SimTask = {
      id,
      groupId: id,
      type: "index_parallel",
      dataSource,
      payload: { type: "index_parallel", id, dataSource },
      plan: historyPlan(dataSource),
      seq: -o.tasks + i,
      createdAt,
      phase: failed ? "failed" : "success",
      runnerInsertedAt: createdAt,
      startedAt: createdAt,
      endsAt: null,
      finishedAt,
      errorMsg: failed ? "Failed in phase[segment generation]. See task logs for details." : null,
      location: { host: null, port: -1, tlsPort: -1 },
      version: null,
      result: null,
      plannedFailure: null,
      segmentIds: [],
      handedOff: true,
    };
    engine.tasks.set(id, task);
  }

  const perDay = o.partitionsPerDay ?? 4;
  const before = o.segmentsBefore ?? Math.floor(now / DAY_MS) * DAY_MS;
  const days = Math.ceil(o.segments / (perDay * dataSources.length));
  const segments: SimSegment[] = [];
  for (let d = 0; d < dataSources.length && segments.length < o.segments; d++) {
    const dataSource = dataSources[d] as string;
    for (let day = days; day >= 1 && segments.length < o.segments; day--) {
      const interval = { start: before - day * DAY_MS, end: before - (day - 1) * DAY_MS };
      // A version is a lock time: an hour into the day after the data's.
      const version = instantText(interval.end + 3_600_000 > now ? now - day : interval.end + 3_600_000);
      const publishedAt = Math.min(now, interval.end + 7_200_000);
      for (let p = 0; p < perDay && segments.length < o.segments; p++) {
        segments.push({
          id: segmentId(dataSource, interval, version, p),
          dataSource,
          interval,
          version,
          partitionNum: p,
          corePartitions: perDay,
          shardSpec: { type: "numbered", partitionNum: p, partitions: perDay },
          size: SEGMENT_BYTES,
          numRows: 1_000_000,
          dimensions: ["page", "user", "country"],
          metrics: ["count", "added"],
          loadSpec: {
            type: "local",
            path: `/druid/segments/${dataSource}/${instantText(interval.start)}_${instantText(interval.end)}/${version}/${p}/index.zip`,
          },
          tombstone: false,
          taskId: `history_${dataSource}`,
          publishedAt,
          servedAt: publishedAt,
          unusedAt: null,
          rows: null,
        });
      }
    }
  }
  engine.store.add(segments);
  return { tasks: o.tasks, segments: segments.length, dataSources };
}
