import { z } from "zod";
import { TASK_STATES } from "../ledger/types.js";
import type { ViolationKind } from "../work/audit.js";

/**
 * The API's shapes, in zod: requests are parsed with them, responses are built to them, and the OpenAPI
 * document is generated from them (openapi.ts), so the three cannot drift apart. Request bodies for
 * starting work are the CLI's own (`jobs/requests.ts`).
 */

export const JOB_STATES = ["open", "done", "failed"] as const;

const Instant = z.string().describe("ISO-8601 instant (UTC)");

export const StateCounts = z
  .object(Object.fromEntries(TASK_STATES.map((s) => [s, z.number().int()])))
  .describe("Partitions per state");

/** One job in a listing. */
export const JobSummary = z.object({
  id: z.string(),
  kind: z.string(),
  /** As the partitions say: an open job whose partitions all ended shows how they ended. */
  state: z.enum(JOB_STATES),
  canceled: z.boolean(),
  createdAt: Instant,
  updatedAt: Instant,
  counts: StateCounts,
});
export type JobSummary = z.infer<typeof JobSummary>;

export const RowStats = z.object({
  processed: z.number(),
  processedWithError: z.number(),
  unparseable: z.number(),
  thrownAway: z.number(),
});

/** One partition of a job (any kind), as reports show it. */
export const Partition = z.object({
  task: z.string(),
  kind: z.string(),
  state: z.enum(TASK_STATES),
  attempts: z.number().int(),
  interval: z.string(),
  step: z.string().nullable(),
  druidTaskId: z.string().nullable(),
  druidState: z.string().nullable(),
  version: z.string().nullable(),
  rows: z.number().nullable(),
  segments: z.number().nullable(),
  bytes: z.number().nullable(),
  rowStats: RowStats.nullable(),
  parseErrors: z.array(z.string()),
  error: z.string().nullable(),
  /** Why it ended without being done, when segops decided it: `rolled-back`, `refused-empty`, `lost`, … */
  outcome: z.string().nullable().optional(),
  /** The version of the input it reads (`sourceVersion`, or segops' fingerprint), when known. */
  sourceVersion: z.string().nullable().optional(),
});

/** Partitions a job's view shows at most; a larger job's others are read a page at a time. */
export const JOB_VIEW_PARTITIONS = 1000;

/** A job with its partitions (the first {@link JOB_VIEW_PARTITIONS}; `partitionsNext` pages on). */
export const Job = JobSummary.extend({
  options: z.record(z.string(), z.json()),
  /** In task-id order, which is time order; at most 1,000 (see `partitionsNext`). */
  partitions: z.array(Partition),
  /** How many partitions the job has in all. */
  partitionCount: z.number().int(),
  /**
   * Null when `partitions` holds every one; else pass it as `after` to `GET /api/v1/jobs/{id}/partitions`
   * for the next page.
   */
  partitionsNext: z.string().nullable(),
  /** Over every partition, not only those shown. */
  totals: z.object({ rows: z.number(), segments: z.number(), bytes: z.number() }),
  /** The CLI's exit code for this state: 0 all done, 1 some failed, 3 work left. */
  exitCode: z.number().int(),
});
export type Job = z.infer<typeof Job>;

export const Event = z.object({
  id: z.number().int(),
  jobId: z.string(),
  taskId: z.string().nullable(),
  fromState: z.string().nullable(),
  toState: z.string(),
  reason: z.string(),
  actor: z.string(),
  at: Instant,
  data: z.record(z.string(), z.json()),
});

export const JobPage = z.object({
  items: z.array(JobSummary),
  /** Pass as `cursor` for the next page; null on the last one. */
  nextCursor: z.string().nullable(),
});

export const PartitionPage = z.object({
  items: z.array(Partition),
  /** Pass as `after` for the next page; null on the last one. */
  next: z.string().nullable(),
});

export type PartitionPage = z.infer<typeof PartitionPage>;

export const EventPage = z.object({
  items: z.array(Event),
  /** Pass as `after` for the next page (the last id returned, or the one given when none). */
  next: z.number().int(),
});

export const WaitResult = z.object({
  /** True once no partition can run any more (done, failed, or canceled and finished). */
  ended: z.boolean(),
  job: JobSummary,
});

export const CancelBody = z.strictObject({
  /** Also ask Druid to shut down the tasks the partitions have running. @default false */
  shutdown: z.boolean().optional(),
  reason: z.string().min(1).max(500).optional(),
});

export const CancelResult = z.object({
  flagged: z.number().int(),
  shutdown: z.array(z.string()),
});

export const RetryBody = z.strictObject({
  /**
   * Only these partitions (their `task` ids), each failed or dead-lettered; none is sent back unless all are.
   * Absent: every failed and dead-lettered partition of the job.
   */
  partitions: z.array(z.string()).min(1).max(JOB_VIEW_PARTITIONS).optional(),
});

export const RetryResult = z.object({
  jobId: z.string(),
  sent: z.array(z.string()),
});

export const DeadLetterPage = z.object({ items: z.array(Partition) });

export const DeadLetter = Partition.extend({
  failures: z.array(z.record(z.string(), z.json())),
  events: z.array(Event),
});

export const Health = z.object({ status: z.literal("ok") });

export const Check = z.object({ ok: z.boolean(), error: z.string().optional() });

/** The local worker in `/readyz`: its state, and whether it makes progress (docs/operations.md, "Stalled"). */
export const ReadinessWorker = z.object({
  state: z.string(),
  inFlight: z.number().int(),
  /** Partitions were due for it for the stall timeout while it held none and claimed nothing: not ready. */
  stalled: z.boolean(),
  /** Its last claim or committed change (its start, before the first); null without a worker. */
  lastProgressAt: z.string().nullable(),
  /** When stalled: since when partitions have been due while it moved nothing. */
  stalledSince: z.string().optional(),
  /** When stalled: what it waits on, in words. */
  reason: z.string().optional(),
});
export type ReadinessWorker = z.infer<typeof ReadinessWorker>;

/**
 * Whether this host reaches Druid, as `/readyz`, `/metrics` and the dashboard's banner show it
 * (docs/operations.md, "When Druid does not answer"): unreachable while its calls are refused here (one
 * probe per backoff step) or the worker has handed its partitions back for Druid.
 */
export const DruidReachability = z.object({
  reachable: z.boolean(),
  /** Since when Druid has not answered (its first unanswered call); absent while it answers. */
  since: z.string().optional(),
  /** The unanswered call and why (credentials removed). */
  lastError: z.string().optional(),
  /** When this host asks Druid again (one probe per backoff step); absent while it answers. */
  nextProbeAt: z.string().optional(),
  /** Calls this host refused meanwhile instead of sending them. */
  refused: z.number().int().optional(),
  /** The worker handed its partitions back (Druid silent past `--druid-outage-timeout`) and claims none until it answers. */
  workerPaused: z.boolean(),
});
export type DruidReachability = z.infer<typeof DruidReachability>;

export const Readiness = z.object({
  ready: z.boolean(),
  ledger: Check,
  druid: Check.extend({
    /** Since when Druid has not answered, while it does not. */
    since: z.string().optional(),
  }),
  worker: ReadinessWorker,
});

/** Every kind of audit violation; a kind added to the audit and not here fails to compile. */
const VIOLATION_KINDS = [
  "mixed-versions",
  "not-ours",
  "not-served",
  "duplicate-append",
  "rows-mismatch",
  "missing-version",
] as const satisfies readonly ViolationKind[];
type EveryViolationKind<T extends readonly ViolationKind[]> =
  Exclude<ViolationKind, T[number]> extends never ? T : never;
const violationKinds: EveryViolationKind<typeof VIOLATION_KINDS> = VIOLATION_KINDS;

export const ChunkAudit = z.object({
  interval: z.string(),
  /** One is healthy; none is a gap, several a chunk mid-replace (or mixed). */
  liveVersions: z.array(z.string()),
  segments: z.number().int(),
  /** Null when a segment does not say (Druid's metadata without row counts). */
  rows: z.number().nullable(),
  bytes: z.number(),
  tombstone: z.boolean(),
  appendedPartitions: z.number().int(),
  notes: z.array(z.string()),
});

export const AuditViolation = z.object({
  chunk: z.string(),
  kind: z.enum(violationKinds),
  message: z.string(),
});

export const CompactionCandidate = z.object({
  segment: z.string(),
  reason: z.enum(["small", "large", "rows"]),
  sizeBytes: z.number(),
  rows: z.number().nullable(),
});

export const AuditResult = z.object({
  datasource: z.string(),
  interval: z.string(),
  ok: z.boolean(),
  noSegments: z.boolean(),
  problem: z.string().optional(),
  chunks: z.array(ChunkAudit),
  violations: z.array(AuditViolation),
  compactionCandidates: z.array(CompactionCandidate),
  totals: z.object({ rows: z.number().nullable(), bytes: z.number(), segments: z.number() }),
});

// Query strings and path parameters.

/**
 * A number in a query string, written as JSON writes numbers (an integer when `!fraction`), read as a
 * number; any other text stays text and is rejected, where `z.coerce.number()` would read "" and blanks
 * as 0 and accept "0x10". The document shows the number schema.
 */
function queryNumber<T extends z.ZodType>(schema: T, fraction = false) {
  const grammar = fraction ? /^-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/ : /^-?[0-9]+$/;
  return z.preprocess((v) => (typeof v === "string" && grammar.test(v) ? Number(v) : v), schema);
}

export const JobId = z.object({ id: z.string().min(1).max(1000) });
export const TaskId = z.object({
  taskId: z
    .string()
    .min(1)
    .max(1000)
    .meta({
      description: "A partition: its job's id, `/` and its interval's slug (the `/` sent as `%2F`)",
      examples: ["backfill_wikipedia_20160627-20160630_4f1c2a9e0b/20160627-20160628"],
    }),
});

export const ListJobsQuery = z.strictObject({
  state: z.enum(JOB_STATES).optional(),
  kind: z.string().min(1).max(100).optional(),
  /** @default 50 */
  limit: queryNumber(z.number().int().min(1).max(500)).optional(),
  cursor: z.string().min(1).max(2000).optional(),
});

export const EventsQuery = z.strictObject({
  /** Only events after this id. @default 0 */
  after: queryNumber(z.number().int().min(0)).optional(),
  /** @default 500 */
  limit: queryNumber(z.number().int().min(1).max(1000)).optional(),
});

export const PartitionsQuery = z.strictObject({
  /** Only partitions after this one (a page's `next`, or a job's `partitionsNext`). */
  after: z.string().min(1).max(2000).optional(),
  /** @default 1000 */
  limit: queryNumber(z.number().int().min(1).max(10_000)).optional(),
});

export const WaitQuery = z.strictObject({
  /** Seconds to wait at most. @default 30 */
  timeout: queryNumber(z.number().min(0).max(300), true).optional(),
});

export const StreamQuery = z.strictObject({
  /** Replay events after this id first (or the `Last-Event-ID` header). */
  after: queryNumber(z.number().int().min(0)).optional(),
});

export const DeadLettersQuery = z.strictObject({ job: z.string().min(1).max(1000).optional() });

export const AuditQuery = z.strictObject({
  datasource: z.string().min(1).max(500),
  interval: z.string().min(1).max(200).optional(),
  granularity: z.string().min(1).max(200).optional(),
});
