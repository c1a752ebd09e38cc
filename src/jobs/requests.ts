import { z } from "zod";
import { yieldToEventLoop } from "../core/clock.js";
import { UsageError } from "../core/errors.js";
import { type Interval, parseInstant, parseInterval } from "../core/interval.js";
import { PartitionError } from "../core/partition.js";
import { nonTerminal } from "../driver/drain.js";
import type { ClusterBinding } from "../druid/cluster.js";
import { type DataGates, parseRowDrop, parseUnparseableLimit } from "../ingest/gates.js";
import {
  applySources,
  type IngestJobInput,
  type PlannedJob,
  planIngestJob,
  planIngestJobYielding,
} from "../ingest/plan.js";
import {
  fingerprintSource,
  givenSource,
  inputSourceOf,
  type SourceProbe,
  type SourceVersion,
} from "../ingest/source.js";
import type { IngestPayload } from "../ingest/types.js";
import type { CreateJobResult, Store } from "../ledger/store.js";
import type { JsonObject } from "../ledger/types.js";
import { externInputs } from "../spec/extern.js";
import { type LoadedTemplate, parseTemplateText } from "../spec/template.js";
import { StateConflictError } from "./actions.js";

/**
 * What a user asks for when they start ingestion — one shape for `segops run` / `backfill` (built from
 * flags) and `POST /api/v1/runs` / `backfills` (a JSON body), checked by the same zod schemas and planned
 * by the same function, so both name the same job for the same inputs.
 */

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Messages follow the field's name: "prefix: must not be empty", "--prefix: must not be empty".
// Rules are patterns rather than refinements where they can be, so the OpenAPI document states them too.
const nonEmpty = () =>
  z.string().max(200).regex(/\S/, { message: "must not be empty (leave it out for the default)" });

/** What `parseUnparseableLimit` reads: a row count, or a percentage from 0 to 100. */
const UNPARSEABLE_LIMIT = /^(?:\d+|0*(?:100(?:\.0+)?|\d{1,2}(?:\.\d+)?)%)$/;

/** The template: its text (JSON or YAML) or the template itself as a JSON object. */
const template = z.union([z.string().min(1, "must not be empty"), z.record(z.string(), z.json())]);

/** The fields `run` and `backfill` share (the template apart: the CLI reads it from a file). */
const ingestFields = {
  /** Shown in reports and job options. @default "api" */
  templateName: nonEmpty().optional(),
  /** Template variables (`--var NAME=value`). */
  vars: z
    .record(
      z.string().regex(VAR_NAME, "must be letters, digits and _, not starting with a digit"),
      z.string(),
    )
    .optional(),
  /** Changing it forces new Druid task ids (`--spec-version`). */
  specVersion: nonEmpty().optional(),
  /** Druid task id prefix (`--prefix`). @default "segops" */
  prefix: nonEmpty()
    .regex(/^[A-Za-z0-9_.-]*$/, { message: "must be letters, digits, '_', '-' and '.'" })
    .optional(),
  /** Start a new job instead of resuming the one these inputs name (`--new`). */
  new: z.boolean().optional(),
  /** Rows with a parse error a partition may have: a count or a percentage like "0.5%". @default 0 */
  maxUnparseable: z
    .union([
      z.number().int().min(0),
      z.string().regex(UNPARSEABLE_LIMIT, {
        message: 'must be a row count (e.g. 10) or a percentage from 0 to 100 (e.g. "0.5%")',
      }),
    ])
    .optional(),
  /**
   * The version of the input (`--source-version`), e.g. an upstream run id or a file's ETag: the same
   * version reattaches, another is new work. @default fingerprinted where segops can see the input
   */
  sourceVersion: nonEmpty().optional(),
  /** Let a partition whose input yields no rows replace the live data (`--allow-empty`). @default false */
  allowEmpty: z.boolean().optional(),
  /**
   * The most a replace may shrink its interval, as a percentage of the rows served before, e.g. "20%".
   * Past it the replace is undone. @default none (only a drop to nothing is refused)
   */
  maxRowDrop: z
    .string()
    .regex(/^(?:100(?:\.0+)?|\d{1,2}(?:\.\d+)?)%$/, {
      message: 'must be a percentage from 0 to 100, e.g. "20%"',
    })
    .optional(),
  /** Fewest rows a partition must ingest. @default 0 */
  minRows: z.number().int().min(0).optional(),
  /** This job's partitions at Druid at once, under the process's own cap (stored with the job). */
  maxConcurrency: z.number().int().min(1).max(10_000).optional(),
  /** Dead-letter this job's partitions after N same-class failures (stored with the job). */
  poisonAfter: z.number().int().min(1).max(1000).optional(),
};

const runFields = {
  /** ISO-8601 interval, e.g. `2026-01-01/2026-01-02`. */
  interval: z.string().min(1, "must not be empty"),
};
const backfillFields = {
  /** Range start (ISO-8601 instant). */
  from: z.string().min(1, "must not be empty"),
  /** Range end, exclusive. */
  to: z.string().min(1, "must not be empty"),
  /** Partition granularity; defaults to the spec's segmentGranularity. */
  granularity: z.string().min(1, "must not be empty").max(200).optional(),
};

/** `POST /api/v1/runs`: one partition over one interval. */
export const RunRequest = z.strictObject({ template, ...ingestFields, ...runFields });
export type RunRequest = z.infer<typeof RunRequest>;

/** `POST /api/v1/backfills`: a range, one partition per granularity bucket. */
export const BackfillRequest = z.strictObject({ template, ...ingestFields, ...backfillFields });
export type BackfillRequest = z.infer<typeof BackfillRequest>;

/** `segops run`'s flags as a request (the template comes from the file named on the command line). */
export const RunFlagsRequest = z.strictObject({ ...ingestFields, ...runFields });
/** `segops backfill`'s flags as a request. */
export const BackfillFlagsRequest = z.strictObject({ ...ingestFields, ...backfillFields });

/** Either request, with or without its template. */
export type IngestRequest =
  | RunRequest
  | BackfillRequest
  | z.infer<typeof RunFlagsRequest>
  | z.infer<typeof BackfillFlagsRequest>;

/** A request that parsed but cannot be planned: names the field (a JSON path) like a zod issue does. */
export function requestError(path: string, message: string): UsageError {
  return new UsageError(`${path}: ${message}`, { path, problem: message });
}

function rangeOf(kind: "run" | "backfill", request: IngestRequest): Interval {
  const at = (path: string, fn: () => Interval): Interval => {
    try {
      return fn();
    } catch (error) {
      throw requestError(path, error instanceof Error ? error.message : String(error));
    }
  };
  if (kind === "run") return at("interval", () => parseInterval((request as { interval: string }).interval));
  const b = request as { from: string; to: string };
  const start = at("from", () => ({ start: parseInstant(b.from), end: 0 })).start;
  const end = at("to", () => ({ start: parseInstant(b.to), end: 0 })).start;
  if (end <= start) throw requestError("to", `must be after from (${b.from}), got ${b.to}`);
  return { start, end };
}

/** The template the request carries, parsed as a file of `templateName` would be. */
export function templateOf(request: {
  template: RunRequest["template"];
  templateName?: string | undefined;
}): LoadedTemplate {
  const name = request.templateName ?? "api";
  if (typeof request.template !== "string") return { kind: "task", value: request.template as JsonObject };
  try {
    return parseTemplateText(request.template, name);
  } catch (error) {
    throw requestError("template", error instanceof Error ? error.message : String(error));
  }
}

function templateFrom(request: IngestRequest): LoadedTemplate {
  if (!("template" in request)) throw requestError("template", "is required");
  return templateOf(request);
}

export interface PlanRequestOptions {
  /** The Druid the job is for (part of its identity). */
  cluster?: ClusterBinding;
  /** The template already loaded (the CLI reads a file); else parsed from `request.template`. */
  template?: LoadedTemplate;
  /** With `new`: what makes this new job distinct. @default the current time in base 36 */
  nonce?: string;
  /** The most partitions the request may plan (a service's `maxPartitionsPerRequest`). @default 100000 */
  maxPartitions?: number;
}

/**
 * Plans the job a request names (pure apart from the default nonce). Everything wrong with the input is
 * found here, each error naming its field: nothing is stored or submitted before this has passed.
 */
export function planRequest(
  kind: "run" | "backfill",
  request: IngestRequest,
  options: PlanRequestOptions = {},
): PlannedJob {
  const input = jobInputOf(kind, request, options);
  try {
    return planIngestJob(input);
  } catch (error) {
    throw rangeError(kind, error, options);
  }
}

/**
 * `planRequest` a few hundred partitions at a time, the event loop free between them:
 * the service keeps answering while it plans a large backfill.
 */
export async function planRequestYielding(
  kind: "run" | "backfill",
  request: IngestRequest,
  options: PlanRequestOptions = {},
): Promise<PlannedJob> {
  const input = jobInputOf(kind, request, options);
  try {
    return await planIngestJobYielding(input, yieldToEventLoop);
  } catch (error) {
    throw rangeError(kind, error, options);
  }
}

/** The planner's input a request names, each wrong field refused by name. */
function jobInputOf(
  kind: "run" | "backfill",
  request: IngestRequest,
  options: PlanRequestOptions,
): IngestJobInput {
  const range = rangeOf(kind, request);
  const limit = parseUnparseableLimit(String(request.maxUnparseable ?? 0));
  if (!limit) throw requestError("maxUnparseable", "expected a row count or a percentage");
  const rowDrop = request.maxRowDrop !== undefined ? parseRowDrop(request.maxRowDrop) : undefined;
  if (rowDrop === null) throw requestError("maxRowDrop", "expected a percentage from 0 to 100");
  const gates: DataGates = {
    maxUnparseable: limit,
    minRows: request.minRows ?? 0,
    ...(rowDrop !== undefined ? { maxRowDrop: rowDrop } : {}),
  };
  const granularity = kind === "backfill" ? (request as { granularity?: string }).granularity : undefined;
  const stored: JsonObject = {};
  if (request.maxConcurrency !== undefined) stored.maxConcurrency = request.maxConcurrency;
  if (request.poisonAfter !== undefined) stored.poisonAfter = request.poisonAfter;
  return {
    kind,
    template: options.template ?? templateFrom(request),
    templateName: request.templateName ?? "api",
    range,
    vars: request.vars ?? {},
    ...(granularity ? { granularity } : {}),
    ...(request.specVersion !== undefined ? { specVersion: request.specVersion } : {}),
    ...(request.prefix !== undefined ? { idPrefix: request.prefix } : {}),
    ...(request.new ? { nonce: options.nonce ?? Date.now().toString(36) } : {}),
    options: stored,
    gates,
    ...(request.allowEmpty ? { allowEmpty: true } : {}),
    ...(options.cluster ? { cluster: options.cluster } : {}),
    ...(options.maxPartitions !== undefined ? { maxPartitions: options.maxPartitions } : {}),
  };
}

/** The range cut into too many (or misaligned) partitions: the range's own field is at fault. */
function rangeError(kind: "run" | "backfill", error: unknown, options: PlanRequestOptions): unknown {
  if (!(error instanceof PartitionError)) return error;
  // A misaligned start is the `from` field's fault; anything else about the range (its end, its
  // length) is named by `to`, where the range ends.
  const misaligned = error.details.misaligned;
  const field =
    kind === "run" ? "interval" : Array.isArray(misaligned) && misaligned[0] === "start" ? "from" : "to";
  const cap = options.maxPartitions;
  if (cap !== undefined && error.details.maxPartitions === cap) {
    const range = String(error.details.range ?? "");
    return requestError(
      field,
      `${range} by ${String(error.details.granularity ?? "its granularity")} gives more than ${cap.toLocaleString("en-US")} partitions, the most one request may plan here (the service's maxPartitionsPerRequest): split the range into several requests, or choose a coarser granularity`,
    );
  }
  return requestError(field, error.message);
}

/** The input source of an SQL partition that reads exactly one `EXTERN`. */
function soleExternSource(query: unknown): JsonObject | null {
  const inputs = typeof query === "string" ? externInputs(query) : [];
  return inputs.length === 1 ? (inputs[0]?.inputSource ?? null) : null;
}

/** Partitions fingerprinted at once (HEAD requests for http inputs; local listings are shared). */
const FINGERPRINT_CONCURRENCY = 16;

/**
 * Plans the job a request names with its source versions: the request's `sourceVersion` for every
 * partition, or each partition's input fingerprinted through `probe` where segops can see it. The same
 * input reattaches; a partition whose input changed is new work (`adoptSources`; docs/specs.md, "What
 * makes a rerun new work").
 */
export async function planRequestWithSources(
  kind: "run" | "backfill",
  request: IngestRequest,
  options: PlanRequestOptions & { probe: SourceProbe },
): Promise<PlannedJob> {
  const planned = await planRequestYielding(kind, request, options);
  const sources = new Map<string, SourceVersion>();
  const payloads = planned.tasks.map((t) => t.payload as unknown as IngestPayload);
  if (request.sourceVersion !== undefined) {
    const given = givenSource(request.sourceVersion);
    for (const p of payloads) sources.set(p.interval, given);
  } else {
    let next = 0;
    const worker = async () => {
      while (next < payloads.length) {
        const p = payloads[next++] as IngestPayload;
        const source = p.kind === "sql" ? soleExternSource(p.spec.query) : inputSourceOf(p.spec);
        const version = source ? await fingerprintSource(source, options.probe) : null;
        if (version) sources.set(p.interval, version);
      }
    };
    await Promise.all(Array.from({ length: Math.min(FINGERPRINT_CONCURRENCY, payloads.length) }, worker));
  }
  return applySources(planned, sources);
}

/**
 * Creates (or finds again) the job a plan names. Over inputs whose job is unfinished, a second job would
 * ingest the same data again under other task ids (rows doubled by an appending template): a plain request
 * finds the unfinished job again (a `new` one too: the same command without `--new` resumes it), a `new`
 * one is refused, naming the way back. The ledger decides in the creating transaction, so racing requests
 * on any host cannot both get through.
 */
export async function createPlannedJob(
  store: Store,
  plan: PlannedJob,
  actor: string,
  isNew: boolean,
): Promise<CreateJobResult> {
  const baseId = String(plan.job.options?.baseId ?? plan.job.id);
  const result = await store.createJob(plan.job, plan.tasks, actor, {
    sameInputs: { baseId, whenUnfinished: isNew ? "refuse" : "find-again" },
  });
  if (!result.blockedBy) return result;
  const unfinished: string[] = [];
  for (const id of result.blockedBy)
    unfinished.push(`${id} (${nonTerminal(await store.countTasks(id))} partition(s) left)`);
  throw new StateConflictError(
    `new (--new) would ingest again what an unfinished job over the same inputs is ingesting: ${unfinished.join(", ")}. Resume it with \`segops resume JOB\` (or the same command without --new), or cancel it first (\`segops cancel JOB\`) if a fresh ingestion is really wanted`,
    { unfinished },
  );
}
