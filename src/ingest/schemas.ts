import { z } from "zod";

/**
 * The ingest kind's ledger encodings, checked when a task is read (`KindOfWork.payload`/`progress`):
 * a row written by another version or by hand fails with the field that is wrong, instead of a cast
 * that lets `undefined` flow into a Druid request. Progress objects are loose (newer fields pass), and
 * every progress field is optional: `{}` is a partition not started yet.
 */

const json = z.json();
const jsonObject = z.record(z.string(), json);
const nullableString = z.string().nullable();

const unparseableLimit = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("count"), max: z.number().int().nonnegative() }),
  z.object({ kind: z.literal("percent"), max: z.number().min(0).max(100) }),
]);

export const ingestPayloadSchema = z.looseObject({
  datasource: z.string().min(1),
  interval: z.string().min(1),
  spec: jsonObject,
  specVersion: z.string().min(1),
  idPrefix: z.string().min(1),
  mode: z.enum(["replace", "append"]),
  segmentGranularity: z.union([z.string(), jsonObject]),
  slots: z.number().int().positive(),
  gates: z
    .object({
      maxUnparseable: unparseableLimit,
      minRows: z.number().int().nonnegative(),
      maxRowDrop: z.number().min(0).max(100).optional(),
    })
    .optional(),
  allowEmpty: z.boolean().optional(),
  idScheme: z.literal(2).optional(),
  source: z
    .looseObject({ version: z.string().min(1), origin: z.enum(["given", "local", "http"]) })
    .optional(),
});

const rowStats = z
  .object({
    processed: z.number(),
    unparseable: z.number(),
    thrownAway: z.number(),
    processedWithError: z.number(),
  })
  .nullable();

const failure = z.looseObject({
  attempt: z.number(),
  taskId: z.string(),
  failureClass: z.string(),
  deterministic: z.boolean(),
  errorMsg: nullableString,
});

export const ingestProgressSchema = z.looseObject({
  step: z.enum(["submit", "running", "handoff", "audit", "undo", "done"]).optional(),
  taskId: z.string().optional(),
  attempt: z.number().int().optional(),
  baseline: z.object({ versions: z.array(z.string()), segmentIds: z.array(z.string()) }).optional(),
  baselineTrusted: z.boolean().optional(),
  forgotten: z.number().int().optional(),
  submittedAt: z.number().optional(),
  reattached: z.boolean().optional(),
  succeededAt: z.number().optional(),
  druidDurationMs: z.number().optional(),
  druidCreatedTime: nullableString.optional(),
  rowStats: rowStats.optional(),
  parseErrors: z.array(z.string()).optional(),
  druidState: nullableString.optional(),
  version: nullableString.optional(),
  versionProof: z.enum(["recorded", "window", "baseline", "sole-task"]).nullable().optional(),
  handoffSince: z.number().optional(),
  handoffTimedOut: z.boolean().optional(),
  outcome: z
    .enum([
      "superseded",
      "lost",
      "unproven",
      "never-loaded",
      "handoff-timeout",
      "audit-failed",
      "forgotten",
      "refused-empty",
      "rolled-back",
      "undo-timeout",
      "undo-failed",
    ])
    .nullable()
    .optional(),
  handedOffAt: z.number().optional(),
  compactionSkip: z.string().optional(),
  compactedBy: z
    .looseObject({
      note: z.string(),
      by: z.array(z.looseObject({ taskId: z.string(), version: z.string() })),
    })
    .optional(),
  preflight: z.looseObject({ rowsRead: z.number(), complete: z.boolean() }).optional(),
  liveBefore: z
    .looseObject({ segments: z.number(), versions: z.array(z.string()), rows: z.number().nullable() })
    .optional(),
  undo: z
    .looseObject({
      reason: z.string(),
      phase: z.enum(["unmark", "mark", "served", "done"]),
      unmarked: z.array(z.string()).optional(),
    })
    .optional(),
  failures: z.array(failure).optional(),
  taskIds: z.array(z.string()).optional(),
  missing: z.array(z.string()).optional(),
  audit: z.looseObject({ ok: z.boolean() }).optional(),
  summary: z.looseObject({ taskIds: z.array(z.string()), druidTaskId: z.string() }).optional(),
});
