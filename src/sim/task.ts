import type { CompactChunk } from "./compact.js";
import type { IngestResult } from "./ingest.js";
import type { TaskPlan } from "./plans.js";

/**
 * The emulated cluster: task queue, lockbox, worker slots and segment store, advanced lazily to the current
 * sim time on every observation (`sync`). Events due in the past are replayed in time order — a task that ends
 * at t frees its slot at t and the next task starts at t — so results do not depend on when requests arrive.
 *
 * Terminology (docs/druid-api.md §2.3): a task is *waiting* until its locks are granted (statusCode RUNNING,
 * runnerStatusCode WAITING), *pending* while it waits for worker slots, *running* on a worker, then complete.
 */
export type TaskPhase = "waiting" | "pending" | "running" | "success" | "failed";

export interface TaskLocation {
  host: string | null;
  port: number;
  tlsPort: number;
}

export interface SimTask {
  id: string;
  groupId: string;
  type: string;
  dataSource: string;
  /** The stored payload (`GET /task/{id}`). */
  payload: Record<string, unknown>;
  plan: TaskPlan;
  seq: number;
  createdAt: number;
  phase: TaskPhase;
  /** When the task was handed to the runner (pending). */
  runnerInsertedAt: number | null;
  startedAt: number | null;
  endsAt: number | null;
  finishedAt: number | null;
  errorMsg: string | null;
  location: TaskLocation;
  version: string | null;
  result: IngestResult | null;
  /** Failure decided at start (parse limit, simFail), applied when the run ends. */
  plannedFailure: string | null;
  segmentIds: string[];
  handedOff: boolean;
  /** Ended by a shutdown request (its status keeps duration -1). */
  shutDown?: boolean;
  /** Failed in `isReady`, before it ran (its status keeps duration -1). */
  notReady?: boolean;
  /** A compaction's input, read when it starts (its lock keeps the chunks unchanged until it ends). */
  compactInput?: CompactChunk[];
  /** An MSQ compaction's run time once its workers all run (it waits for them until then). */
  runMs?: number;
  /** An MSQ compaction that has not launched its workers yet: its `endsAt` is when it does. */
  launchingWorkers?: boolean;
}
