import { createHash } from "node:crypto";
import { canonicalJson, type JsonValue } from "../core/canonical-json.js";
import { UsageError } from "../core/errors.js";
import { parseGranularity, parseGranularityText } from "../core/granularity.js";
import { formatInterval, type Interval, intervalSlug } from "../core/interval.js";
import { splitInterval } from "../core/partition.js";
import { datasourcePart } from "../core/task-id.js";
import type { ClusterBinding } from "../druid/cluster.js";
import type { JsonObject, NewJob, NewTask } from "../ledger/types.js";
import {
  DEFAULT_SPEC_VERSION,
  InvalidSpecError,
  type LoadedTemplate,
  partitionIntervalCheck,
  prepareSpec,
  renderTemplate,
  type SpecIssue,
  sqlPartitionGranularity,
  sqlTarget,
  validateSpec,
  validateSql,
} from "../spec/index.js";
import { templateLints } from "../spec/template-lints.js";
import { chunkExclusionKey } from "../work/chunk.js";
import { type DataGates, DEFAULT_GATES, tuningWithGates } from "./gates.js";
import { contextWithGates, slotsForSql } from "./msq.js";
import { slotsForSpec } from "./slots.js";
import type { SourceVersion } from "./source.js";
import { INGEST_KIND, type IngestPayload } from "./types.js";

/**
 * Job planning (architecture doc, "Terminology"): everything that can be wrong with the input is found
 * here, before the ledger is written or anything is submitted — every partition is rendered and validated.
 * The job id derives from the inputs, so the same command plans the same job and resumes it.
 */

export interface IngestJobInput {
  kind: "run" | "backfill";
  template: LoadedTemplate;
  /** Shown in reports. */
  templateName: string;
  range: Interval;
  /** Partition granularity; defaults to the spec's segmentGranularity. */
  granularity?: string;
  vars?: Record<string, string>;
  specVersion?: string;
  idPrefix?: string;
  /** Forces a new job (and new Druid task ids) instead of resuming the one these inputs name. */
  nonce?: string;
  /** Options stored with the job (poisonAfter, maxConcurrency, ...), not part of its identity. */
  options?: JsonObject;
  /** Row-count gates per partition (rendered into the spec where Druid can enforce them). @default DEFAULT_GATES */
  gates?: DataGates;
  /**
   * Replacing live data with an empty input is what the user wants (`--allow-empty`): the pre-flight lets
   * such a partition through. Not part of the job's identity: rerun with it, the same job plans its refused
   * partitions anew (`jobs/rerun.ts`) and leaves the others as they are.
   */
  allowEmpty?: boolean;
  /**
   * The Druid the job is for: part of its identity (the same command against another cluster is another
   * job) and stored with it, so the job refuses to run anywhere else.
   */
  cluster?: ClusterBinding;
  /** Refuse a range cut into more partitions than this (`PartitionError`). @default 100000 */
  maxPartitions?: number;
}

export interface PlannedJob {
  job: NewJob;
  tasks: NewTask[];
  datasource: string;
  warnings: SpecIssue[];
}

/** The spec's segmentGranularity as written (a name, an ISO period or a `{type: "period"}` object). */
function specGranularity(spec: JsonObject): string | JsonObject {
  const g = (spec.spec as JsonObject | undefined)?.dataSchema as JsonObject | undefined;
  const value = (g?.granularitySpec as JsonObject | undefined)?.segmentGranularity;
  if (value === undefined || value === null) return "day"; // Druid's default (docs/druid-api.md §5)
  return typeof value === "string" ? value : (value as JsonObject);
}

function datasourceOf(spec: JsonObject): string {
  const ds = ((spec.spec as JsonObject | undefined)?.dataSchema as JsonObject | undefined)?.dataSource;
  return typeof ds === "string" ? ds : "unknown";
}

function modeOf(spec: JsonObject): "replace" | "append" {
  const io = (spec.spec as JsonObject | undefined)?.ioConfig as JsonObject | undefined;
  // Jackson coerces the string "true" to a boolean, so Druid appends for it too.
  const append = io?.appendToExisting;
  return append === true || (typeof append === "string" && /^true$/i.test(append)) ? "append" : "replace";
}

/** The spec with the gates Druid can enforce rendered into its tuningConfig (when the spec sets none). */
function withGates(spec: JsonObject, gates: DataGates): JsonObject {
  const inner = (spec.spec as JsonObject | undefined) ?? {};
  return {
    ...spec,
    spec: { ...inner, tuningConfig: tuningWithGates(inner.tuningConfig as JsonObject | undefined, gates) },
  };
}

/** The partition granularity, or an error naming where it came from (the flag or the spec's JSON path). */
function partitionGranularityOf(input: IngestJobInput, value: string | JsonObject) {
  try {
    // `--granularity` may be JSON text (a period object with a time zone); the spec's value is JSON already.
    return input.granularity && typeof value === "string"
      ? parseGranularityText(value)
      : parseGranularity(value);
  } catch (error) {
    const path = input.granularity ? "--granularity" : "spec.dataSchema.granularitySpec.segmentGranularity";
    throw new InvalidSpecError([{ path, message: error instanceof Error ? error.message : String(error) }], {
      template: input.templateName,
    });
  }
}

export function jobIdFor(input: IngestJobInput, datasource: string): string {
  const identity: { [key: string]: JsonValue } = {
    kind: input.kind,
    template: input.template.kind === "sql" ? input.template.text : (input.template.value as JsonValue),
    range: formatInterval(input.range),
    granularity: input.granularity ?? null,
    vars: input.vars ?? {},
    specVersion: input.specVersion ?? DEFAULT_SPEC_VERSION,
    idPrefix: input.idPrefix ?? "segops",
    nonce: input.nonce ?? null,
  };
  // Gates change the rendered spec (and so the task ids); the defaults keep older job ids as they were.
  if (input.gates && JSON.stringify(input.gates) !== JSON.stringify(DEFAULT_GATES))
    identity.gates = input.gates as unknown as JsonValue;
  // Only the Overlord and Coordinator decide where data lands (the Broker may be any query node).
  if (input.cluster)
    identity.cluster = { overlord: input.cluster.overlord, coordinator: input.cluster.coordinator };
  const hash = createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, 10);
  return `${input.kind}_${datasourcePart(datasource)}_${intervalSlug(input.range)}_${hash}`;
}

/** Partitions planned between two pauses of {@link planIngestJobYielding}: a few milliseconds of work. */
const PLAN_STEP = 250;

/** Plans a job at once: the CLI's way, which has nothing else to serve meanwhile. */
export function planIngestJob(input: IngestJobInput): PlannedJob {
  const steps = planSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Plans a job `PLAN_STEP` partitions at a time, awaiting `pause` between them: a service planning a
 * 50,000-partition backfill still answers its other requests meanwhile. The same plan as `planIngestJob`.
 */
export async function planIngestJobYielding(
  input: IngestJobInput,
  pause: () => Promise<void>,
): Promise<PlannedJob> {
  const steps = planSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

/** The planning of a job, suspended after every `PLAN_STEP` partitions. */
function* planSteps(input: IngestJobInput): Generator<void, PlannedJob> {
  // What no partition can fix (a SET over a pinned key, the clock read in a template): refused once, up front.
  const lints = templateLints(input.template);
  if (lints.errors.length > 0) throw new InvalidSpecError(lints.errors, { template: input.templateName });
  const planned = input.template.kind === "sql" ? yield* planSqlJob(input) : yield* planNativeJob(input);
  return lints.warnings.length > 0
    ? { ...planned, warnings: [...lints.warnings, ...planned.warnings] }
    : planned;
}

function* planNativeJob(input: IngestJobInput): Generator<void, PlannedJob> {
  const specVersion = input.specVersion ?? DEFAULT_SPEC_VERSION;
  // Render the whole range once to learn the datasource and granularity the template declares.
  const probe = prepareSpec(input.template, {
    interval: input.range,
    specVersion,
    ...(input.vars ? { vars: input.vars } : {}),
  });
  if (probe.kind !== "task") throw new UsageError("expected a native task template");
  const partitionGranularity = input.granularity ?? specGranularity(probe.spec as JsonObject);
  // `run` is one partition (one Druid task) over the whole interval; validation checks its alignment.
  const partitions =
    input.kind === "run"
      ? [input.range]
      : splitInterval(input.range, partitionGranularityOf(input, partitionGranularity), splitOptions(input));
  const datasource = datasourceOf(probe.spec as JsonObject);
  const jobId = jobIdFor(input, datasource);
  // What `--new` jobs over the same inputs share: an unfinished one must not be silently doubled.
  const baseId = input.nonce ? jobIdFor({ ...input, nonce: undefined }, datasource) : jobId;
  const prefix = input.nonce ? `${input.idPrefix ?? "segops"}-${input.nonce}` : (input.idPrefix ?? "segops");

  const gates = input.gates ?? DEFAULT_GATES;
  const errors: SpecIssue[] = [];
  const warnings = new Map<string, SpecIssue>();
  const tasks: NewTask[] = [];
  const vars = input.vars ? { vars: input.vars } : {};
  const addErrors = (interval: Interval, issues: readonly SpecIssue[]) => {
    for (const e of issues)
      errors.push({ path: e.path, message: `${formatInterval(interval)}: ${e.message}` });
  };
  const addWarnings = (issues: readonly SpecIssue[]) => {
    for (const w of issues) if (!w.path.startsWith("id")) warnings.set(`${w.path}:${w.message}`, w);
  };
  /** Render, pin the id, validate in full: the path every partition took before the fast path. */
  const full = (interval: Interval): JsonObject => {
    const prepared = prepareSpec(input.template, { interval, specVersion, prefix, ...vars });
    if (prepared.kind !== "task") throw new UsageError("expected a native task template");
    const gated = withGates(prepared.spec as JsonObject, gates);
    const result = validateSpec(gated, { partition: interval });
    addErrors(interval, result.errors);
    addWarnings([...prepared.warnings, ...result.warnings]);
    const { id: _pinned, ...spec } = gated;
    return spec as JsonObject;
  };
  if (input.template.kind !== "task") throw new UsageError("expected a native task template");
  const template = input.template.value;
  // The first and last partitions go the full way (the first decides whether the others may skip it;
  // the last bounds what the id derivation refuses, the interval's years); a template whose partitions
  // validate alike then costs one render and the interval rules per partition (spec/partitions.ts).
  const firstSpec = partitions[0] ? full(partitions[0]) : undefined;
  const alike =
    firstSpec && errors.length === 0 ? partitionIntervalCheck(template, withGates(firstSpec, gates)) : null;
  const invariant = firstSpec ? payloadFields(firstSpec) : undefined;
  for (const [i, interval] of partitions.entries()) {
    if (i > 0 && i % PLAN_STEP === 0) yield;
    let spec: JsonObject;
    if (i === 0 && firstSpec) spec = firstSpec;
    else if (!alike || i === partitions.length - 1) spec = full(interval);
    else {
      const rendered = renderTemplate(template, { interval, ...vars });
      const { id: _template, ...gated } = withGates(rendered.spec as JsonObject, gates);
      addWarnings(rendered.warnings);
      // An interval-rule error: validate this partition in full, for exactly the issues it always had.
      spec = alike(interval).length === 0 ? (gated as JsonObject) : full(interval);
    }
    const payload: IngestPayload = {
      datasource,
      interval: formatInterval(interval),
      spec,
      specVersion,
      idPrefix: prefix,
      ...(alike && invariant ? invariant : payloadFields(spec)),
      gates,
      ...(input.allowEmpty ? { allowEmpty: true } : {}),
      idScheme: 2,
    };
    tasks.push(partitionTask(jobId, datasource, interval, payload));
  }
  // The warnings too: an unknown field's "check the spelling" often explains the errors.
  if (errors.length > 0)
    throw new InvalidSpecError(errors, { template: input.templateName, warnings: [...warnings.values()] });
  return plannedJob(input, { jobId, baseId, partitionGranularity, datasource, specVersion, tasks, warnings });
}

function splitOptions(input: IngestJobInput): { maxPartitions?: number } {
  return input.maxPartitions !== undefined ? { maxPartitions: input.maxPartitions } : {};
}

/** What a partition's payload reads off its spec; the same for partitions that validate alike. */
function payloadFields(spec: JsonObject): Pick<IngestPayload, "mode" | "segmentGranularity" | "slots"> {
  return { mode: modeOf(spec), segmentGranularity: specGranularity(spec), slots: slotsForSpec(spec) };
}

/**
 * An SQL (MSQ) template: one `REPLACE … OVERWRITE WHERE` per partition, validated like a native spec (the
 * window equals the partition, aligned to `PARTITIONED BY`), the gates handed to Druid in the query context,
 * the id pinned through `context.sqlQueryId` at submit time (the controller is `query-<id>`). Partitions
 * default to the `PARTITIONED BY` granularity.
 */
function* planSqlJob(input: IngestJobInput): Generator<void, PlannedJob> {
  if (input.template.kind !== "sql") throw new UsageError("expected an SQL template");
  const specVersion = input.specVersion ?? DEFAULT_SPEC_VERSION;
  const vars = input.vars ? { vars: input.vars } : {};
  const probe = prepareSpec(input.template, { interval: input.range, specVersion, ...vars });
  if (probe.kind !== "sql") throw new UsageError("expected an SQL template");
  const datasource = sqlTarget(probe.body.query);
  const segmentGranularity = sqlPartitionGranularity(probe.body.query);
  if (datasource === undefined || segmentGranularity === undefined) {
    // The form is wrong whatever the partition: say why with validateSql's paths.
    const result = validateSql(probe.body.query);
    const errors =
      result.errors.length > 0
        ? result.errors
        : [{ path: "query.partitionedBy", message: "cannot read the PARTITIONED BY granularity" }];
    throw new InvalidSpecError(errors, { template: input.templateName });
  }
  const partitionGranularity = input.granularity ?? segmentGranularity;
  let partitions: Interval[];
  try {
    partitions =
      input.kind === "run"
        ? [input.range]
        : splitInterval(
            input.range,
            input.granularity
              ? parseGranularityText(partitionGranularity)
              : parseGranularity(partitionGranularity),
            splitOptions(input),
          );
  } catch (error) {
    const path = input.granularity ? "--granularity" : "query.partitionedBy";
    throw new InvalidSpecError([{ path, message: error instanceof Error ? error.message : String(error) }], {
      template: input.templateName,
    });
  }
  const jobId = jobIdFor(input, datasource);
  const baseId = input.nonce ? jobIdFor({ ...input, nonce: undefined }, datasource) : jobId;
  const prefix = input.nonce ? `${input.idPrefix ?? "segops"}-${input.nonce}` : (input.idPrefix ?? "segops");
  const gates = input.gates ?? DEFAULT_GATES;
  const errors: SpecIssue[] = [];
  const warnings = new Map<string, SpecIssue>();
  const tasks: NewTask[] = [];
  for (const [i, interval] of partitions.entries()) {
    if (i > 0 && i % PLAN_STEP === 0) yield;
    const base = { interval, specVersion, prefix, ...vars };
    const draft = prepareSpec(input.template, base);
    if (draft.kind !== "sql") throw new UsageError("expected an SQL template");
    const prepared = prepareSpec(input.template, {
      ...base,
      sqlContext: contextWithGates({}, draft.body.query, gates),
    });
    if (prepared.kind !== "sql") throw new UsageError("expected an SQL template");
    const result = validateSql(prepared.body.query, { partition: interval });
    for (const e of result.errors)
      errors.push({ path: e.path, message: `${formatInterval(interval)}: ${e.message}` });
    for (const w of [...prepared.warnings, ...result.warnings]) warnings.set(`${w.path}:${w.message}`, w);
    const { sqlQueryId: _pinned, ...context } = prepared.body.context;
    const payload: IngestPayload = {
      kind: "sql",
      datasource,
      interval: formatInterval(interval),
      spec: { query: prepared.body.query, context } as JsonObject,
      specVersion,
      idPrefix: prefix,
      mode: "replace",
      segmentGranularity,
      slots: slotsForSql(context as JsonObject, prepared.body.query),
      gates,
      ...(input.allowEmpty ? { allowEmpty: true } : {}),
      idScheme: 2,
    };
    tasks.push(partitionTask(jobId, datasource, interval, payload));
  }
  // The warnings too: an unknown field's "check the spelling" often explains the errors.
  if (errors.length > 0)
    throw new InvalidSpecError(errors, { template: input.templateName, warnings: [...warnings.values()] });
  return plannedJob(input, { jobId, baseId, partitionGranularity, datasource, specVersion, tasks, warnings });
}

/**
 * The planned job with each partition's source version (the user's, or fingerprinted after planning, by
 * interval) in its payload, and so in its Druid task ids: the same input reattaches to the Druid task
 * already run, changed input is new work. The job's identity leaves sources out: a rerun over changed
 * input finds its job again and plans the changed partitions anew (`jobs/rerun.ts`).
 */
export function applySources(planned: PlannedJob, sources: ReadonlyMap<string, SourceVersion>): PlannedJob {
  if (sources.size === 0) return planned;
  const tasks = planned.tasks.map((t) => {
    const payload = t.payload as unknown as IngestPayload;
    const source = sources.get(payload.interval);
    return source ? { ...t, payload: { ...payload, source } as unknown as JsonObject } : t;
  });
  return { ...planned, tasks };
}

function partitionTask(
  jobId: string,
  datasource: string,
  interval: Interval,
  payload: IngestPayload,
): NewTask {
  return {
    id: `${jobId}/${intervalSlug(interval)}`,
    kind: INGEST_KIND,
    payload: payload as unknown as JsonObject,
    exclusionKey: chunkExclusionKey(datasource, formatInterval(interval)),
  };
}

/** The job row of a planned run or backfill (native or SQL), with its partitions. */
function plannedJob(
  input: IngestJobInput,
  p: {
    jobId: string;
    baseId: string;
    partitionGranularity: string | JsonObject;
    datasource: string;
    specVersion: string;
    tasks: NewTask[];
    warnings: Map<string, SpecIssue>;
  },
): PlannedJob {
  return {
    job: {
      id: p.jobId,
      kind: input.kind,
      options: {
        template: input.templateName,
        range: formatInterval(input.range),
        granularity: p.partitionGranularity,
        datasource: p.datasource,
        specVersion: p.specVersion,
        vars: (input.vars ?? {}) as JsonObject,
        baseId: p.baseId,
        ...(input.nonce ? { nonce: input.nonce } : {}),
        ...(input.cluster ? { cluster: { ...input.cluster } } : {}),
        ...(input.options ?? {}),
      },
    },
    tasks: p.tasks,
    datasource: p.datasource,
    warnings: [...p.warnings.values()],
  };
}
