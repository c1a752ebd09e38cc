import { z } from "zod";
import { TASK_STATES } from "../ledger/types.js";
import { AuditResult, Event, JOB_STATES, JobSummary, RowStats } from "./schemas.js";

/**
 * The shapes of the read-only routes the dashboard (web/) reads: a job list as a stream, a backfill's
 * partitions as grid cells, one partition in full, a datasource's segment timeline and the Druid load
 * the service sees. In the route table (and so in the OpenAPI document) like every other route.
 */

const Instant = z.string().describe("ISO-8601 instant (UTC)");

/** A job in the dashboard's list: the summary plus what it filters and shows by. */
export const DashboardJob = JobSummary.extend({
  datasource: z.string().nullable(),
  /** The job's range (`start/end`), null for kinds without one. */
  range: z.string().nullable(),
});
export type DashboardJob = z.infer<typeof DashboardJob>;

export const LoginBody = z.strictObject({ token: z.string().min(1).max(4096) });

/** Logout takes no options; an empty object (or no body) is the one it accepts. */
export const LogoutBody = z.strictObject({});

export const Session = z.object({
  /** The service checks a token (false: loopback without one). */
  authRequired: z.boolean(),
  /** This request carries a valid token (header or session cookie), or none is needed. */
  authenticated: z.boolean(),
});

export const JobStreamQuery = z.strictObject({
  state: z.enum(JOB_STATES).optional(),
  kind: z.string().min(1).max(100).optional(),
  datasource: z.string().min(1).max(500).optional(),
  /** Jobs in the first snapshot, newest first. @default 100 */
  limit: z
    .preprocess(
      (v) => (typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : v),
      z.number().int().min(1).max(500),
    )
    .optional(),
});

export const StreamReady = z.object({ jobs: z.number().int() });
export const StreamEnd = z.object({ open: z.number().int() });

/** One partition as a cell of the grid (hover shows all of it). */
export const Cell = z.object({
  task: z.string(),
  state: z.enum(TASK_STATES),
  canceled: z.boolean(),
  interval: z.string(),
  start: Instant,
  end: Instant,
  attempts: z.number().int(),
  step: z.string().nullable(),
  druidTaskIds: z.array(z.string()),
  druidState: z.string().nullable(),
  rows: z.number().nullable(),
  rowStats: RowStats.nullable(),
  /** Druid's run time of the last attempt, when it ended. */
  durationMs: z.number().nullable(),
  error: z.string().nullable(),
  /** Why it ended without being done, when segops decided it (`rolled-back`, `refused-empty`, …). */
  outcome: z.string().nullable(),
});

export const PartitionGrid = z.object({
  job: DashboardJob,
  /** The job's partition granularity as the plan stored it (text or a JSON period). */
  granularity: z.json(),
  items: z.array(Cell),
});

export const Step = z.object({
  name: z.enum(["submitted", "running", "succeeded", "handed off", "audited"]),
  at: Instant.nullable(),
});

export const PartitionDetail = Cell.extend({
  jobId: z.string(),
  version: z.string().nullable(),
  segments: z.number().nullable(),
  bytes: z.number().nullable(),
  parseErrors: z.array(z.string()),
  steps: z.array(Step),
  /** Each failed attempt with Druid's error message (the task report's excerpt). */
  failures: z.array(z.record(z.string(), z.json())),
  events: z.array(Event),
  /** What the API lets a user do with it now. */
  actions: z.array(z.enum(["retry", "cancel", "dead-letter-retry", "dead-letter-drop"])),
});

export const PartitionActionResult = z.object({ jobId: z.string(), changed: z.array(z.string()) });

export const DatasourceParam = z.object({ datasource: z.string().min(1).max(500) });

/**
 * The audit's chunks are the live sets (no granularity: a granularity over all time is millions of
 * buckets, and the timeline needs none to show one live version per chunk).
 */
export const TimelineQuery = z.strictObject({
  /** @default all time */
  interval: z.string().min(1).max(200).optional(),
});

export const TimelineSegmentView = z.object({
  id: z.string(),
  start: Instant,
  end: Instant,
  version: z.string(),
  partitionNum: z.number().int(),
  status: z.enum(["live", "overshadowed", "unused"]),
  tombstone: z.boolean(),
  sizeBytes: z.number(),
  rows: z.number().nullable(),
  served: z.boolean(),
  compactionCandidate: z.enum(["small", "large", "rows"]).nullable(),
});

/**
 * A part of the interval with no live data (no used, non-overshadowed segment, or only tombstones): a merged
 * stretch, or one partition's part of it where the ledger knows why (then with its job and partition).
 */
export const TimelineGap = z.object({
  interval: z.string(),
  reason: z.enum(["no-segments", "tombstone", "dead-lettered", "failed", "canceled", "pending", "killed"]),
  job: z.string().optional(),
  task: z.string().optional(),
  /** The partition's last error. */
  error: z.string().optional(),
});

const ChunkCount = z.object({ versions: z.number().int(), segments: z.number().int() });

/** One version's segments in a time chunk, with one status (a version can be live in one chunk only). */
export const TimelineChunkVersion = z.object({
  version: z.string(),
  status: z.enum(["live", "overshadowed", "unused"]),
  segments: z.number().int(),
  rows: z.number().nullable(),
  bytes: z.number(),
  /** Published by a segops job of this datasource (the ledger's ingestion or compaction partitions). */
  ours: z.boolean(),
});

/**
 * A time chunk (one segment interval) as the timeline's lanes draw it: its live version and that version's
 * state — `tombstone` (no rows), `not-served` (a live segment no Historical serves), `ours` (published by
 * segops, served) or `served` (another writer's, served) — what is overshadowed or unused there, and each
 * version's figures, newest first.
 */
export const TimelineChunk = z.object({
  interval: z.string(),
  live: z
    .object({
      version: z.string(),
      state: z.enum(["tombstone", "not-served", "ours", "served"]),
      segments: z.number().int(),
      rows: z.number().nullable(),
      bytes: z.number(),
      /** Its segments the audit names compaction candidates. */
      candidates: z.number().int(),
    })
    .nullable(),
  overshadowed: ChunkCount,
  unused: ChunkCount,
  versions: z.array(TimelineChunkVersion),
});

export const Timeline = z.object({
  datasource: z.string(),
  interval: z.string(),
  segments: z.array(TimelineSegmentView),
  /** More segments than one answer carries (5,000): the newest versions are kept. */
  truncated: z.boolean(),
  /** Every segment (never truncated) per time chunk, oldest first. */
  chunks: z.array(TimelineChunk),
  audit: AuditResult,
  /** Oldest first; without an interval, only between the first and the last segment. */
  gaps: z.array(TimelineGap),
});

export const Quantiles = z.object({
  count: z.number(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  p99: z.number().nullable(),
  /**
   * Detection only: partitions done whose end by Druid's clock (createdTime + duration) came after segops saw
   * it, so no latency was measured: Druid's clock runs ahead of this host's (an emulator's `--time-scale` above
   * 1, or clock skew).
   */
  unmeasured: z.number().int().optional(),
});

export const DruidLoad = z.object({
  /**
   * Since when and on what this host's partitions wait for worker slots other tasks hold, with none of its
   * own in flight (the CLI's "blocked by cluster" line); null when they are not.
   */
  blocked: z.object({ since: Instant, reason: z.string() }).nullable(),
  /** How often a sample is taken, ms. */
  sampleMs: z.number(),
  samples: z.array(
    z.object({
      at: Instant,
      /** Slots segops' partitions hold or reserved, in use by any task, and of every enabled worker. */
      ours: z.number().nullable(),
      used: z.number().nullable(),
      capacity: z.number().nullable(),
    }),
  ),
  /** Requests to Druid per minute between one sample and the one before, by endpoint route. */
  requestsPerMinute: z.array(z.object({ endpoint: z.string(), values: z.array(z.number()) })),
  /** Bytes of Druid's answers per minute over the same samples, by the same endpoint routes. */
  bytesPerMinute: z.array(z.object({ endpoint: z.string(), values: z.array(z.number()) })),
  /** Seconds, from the service's histograms (interpolated within buckets, as Prometheus does). */
  latency: z.object({ detection: Quantiles, handoff: Quantiles }),
});
