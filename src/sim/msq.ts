import { periodIso } from "../core/granularity.js";
import type { IngestResult } from "./ingest.js";
import { instantText, intervalText } from "./instant-text.js";
import type { IngestPlan, MsqPlan, TaskPlan } from "./plans.js";
import type { SimTask } from "./task.js";

export { MsqPlanError } from "./msq-text.js";

/**
 * SQL-based ingestion (MSQ, docs/druid-api.md §6), once planned (msq-plan.ts): the `query_controller` task whose
 * ingestion the engine runs with the native model (ingest.ts), the `query_worker` tasks that live and end with
 * it, the faults it ends with and its reports (`MSQFaultUtils`, `TooManyWarningsFault`,
 * `docs/api-reference/sql-ingestion-api.md`).
 */

/** An MSQ fault as it appears in `errorReport.error` (`BaseMSQFault` serialization). */
export interface MsqFault {
  errorCode: string;
  errorMessage: string;
  [key: string]: unknown;
}

/** `CanceledFault`: what workers (and a shut-down controller) report when the query is canceled. */
export const CANCELED_MESSAGE = "Canceled: Query canceled by user or by task shutdown.";
const _DEFAULT_ROWS_PER_SEGMENT = 3_000_000;
const PARSE_CODE = "CannotParseExternalData";

/**
 * The fault an MSQ query ends with, decided when the controller starts (the engine applies it at the end).
 * Parse failures are warnings (`CannotParseExternalData`) until there are more than `maxParseExceptions`
 * (`FaultsExceededChecker`); then the query fails with `TooManyWarnings` (`TooManyWarningsFault`). A row whose
 * `__time` is null fails it with `InsertTimeNull` (`InsertTimeNullFault`: `TIME_PARSE` answers null for text it
 * cannot read). A REPLACE whose rows fall outside its OVERWRITE WHERE window fails with `InsertTimeOutOfBounds`
 * (`InsertTimeOutOfBoundsFault`), naming the earliest such time chunk.
 */
export function msqFault(plan: TaskPlan, result: IngestResult): MsqFault | null {
  const msq = plan.msq;
  if (!msq) return null;
  const warnings = result.counters.unparseable;
  const limit = msq.maxParseExceptions;
  if (limit >= 0 && warnings > limit) {
    return {
      errorCode: "TooManyWarnings",
      maxWarnings: limit,
      rootErrorCode: PARSE_CODE,
      errorMessage: `Too many warnings of type ${PARSE_CODE} generated (max = ${limit})`,
    };
  }
  // `failOnEmptyInsert` (default false): an ingestion that writes no rows fails (`InsertCannotBeEmptyFault`).
  if (msq.context.failOnEmptyInsert === true && result.counters.processed === 0)
    return {
      errorCode: "InsertCannotBeEmpty",
      dataSource: plan.dataSource,
      errorMessage: `No rows to insert for dataSource[${plan.dataSource}]. Set failOnEmptyInsert : false in the query context to allow empty inserts.`,
    };
  const found = msq.findings;
  if (found && found.nullTimes > 0)
    return {
      errorCode: "InsertTimeNull",
      errorMessage: "Null timestamp (__time) encountered during INSERT or REPLACE.",
    };
  const limits = partitionFault(plan, result);
  if (limits) return limits;
  const window = msq.overwrite;
  const chunk = found?.outside ?? null;
  if (window && chunk) {
    const bounds = `[${intervalText(window)}]`;
    return {
      errorCode: "InsertTimeOutOfBounds",
      interval: intervalText(chunk),
      intervalBounds: [intervalText(window)],
      errorMessage: `Inserted data contains time chunk[${intervalText(chunk)}] outside of bounds specified by OVERWRITE WHERE[${bounds}]. If you want to include this data, expand your OVERWRITE WHERE. If you do not want to include this data, use SELECT ... WHERE to filter it from your inserted data.`,
    };
  }
  return null;
}

/** `GranularityType` names of the standard granularities, as `TooManySegmentsInTimeChunkFault` prints them. */
const STANDARD_GRANULARITIES: Record<string, string> = {
  PT1S: "SECOND",
  PT1M: "MINUTE",
  PT5M: "FIVE_MINUTE",
  PT10M: "TEN_MINUTE",
  PT15M: "FIFTEEN_MINUTE",
  PT30M: "THIRTY_MINUTE",
  PT1H: "HOUR",
  PT6H: "SIX_HOUR",
  PT8H: "EIGHT_HOUR",
  P1D: "DAY",
  P1W: "WEEK",
  P1M: "MONTH",
  P3M: "QUARTER",
  P1Y: "YEAR",
};

/**
 * The limits on what one query writes: more partitions (segments) than `Limits.MAX_PARTITIONS` (25,000)
 * fail it with `TooManyPartitions`; more segments in one time chunk than the context's `maxNumSegments` with
 * `TooManySegmentsInTimeChunk` (each chunk's rows over `rowsPerSegment`, as the segment generator cuts them).
 */
function partitionFault(plan: TaskPlan, result: IngestResult): MsqFault | null {
  const ingest = plan.ingest;
  const msq = plan.msq;
  if (!ingest || !msq) return null;
  const per = ingest.partitions.maxRowsPerSegment;
  const counts = result.chunks.map((c) => ({ chunk: c.interval, n: Math.ceil(c.numRows / per) }));
  const maxPartitions = 25_000;
  if (counts.reduce((a, c) => a + c.n, 0) > maxPartitions)
    return {
      errorCode: "TooManyPartitions",
      maxPartitions,
      errorMessage: `Too many partitions (max = ${maxPartitions}). Try increasing the limit using the maxPartitions query context parameter, breaking your query up into smaller queries, or using a larger target size.`,
    };
  const maxNumSegments = Number(msq.context.maxNumSegments);
  if (!Number.isInteger(maxNumSegments)) return null;
  const over = counts.find((c) => c.n > maxNumSegments);
  if (!over) return null;
  const g = ingest.dataSchema.segmentGranularity;
  const name =
    g.kind === "all"
      ? "ALL"
      : g.kind === "period"
        ? (STANDARD_GRANULARITIES[periodIso(g.period)] ?? g.name)
        : "NONE";
  // ALL's one chunk is reported at the epoch (MSQFaultsTest).
  const chunk = instantText(g.kind === "all" ? 0 : over.chunk.start);
  const fmt = (n: number) => n.toLocaleString("en-US");
  return {
    errorCode: "TooManySegmentsInTimeChunk",
    timeChunk: chunk,
    numSegments: over.n,
    maxNumSegments,
    errorMessage: `Too many segments requested to be generated in time chunk[${chunk}] with granularity[${name}] (requested = [${fmt(over.n)}], maximum = [${fmt(maxNumSegments)}]). Please try breaking up your query or change the maximum using the query context parameter[maxNumSegments].`,
  };
}

/** `MSQFaultUtils.generateMessageWithErrorCode`: what the controller's TaskStatus errorMsg says. */
export function faultMessage(fault: MsqFault): string {
  return `${fault.errorCode}: ${fault.errorMessage}`;
}

/** The fault behind a failed controller's errorMsg (the code before the first colon, else UnknownError). */
function faultOf(task: SimTask): MsqFault | null {
  if (task.phase !== "failed") return null;
  const msg = task.errorMsg ?? "";
  if (task.plan.msq && task.result) {
    const planned = msqFault(task.plan, task.result);
    if (planned && msg === faultMessage(planned)) return planned;
  }
  if (task.shutDown || msg === CANCELED_MESSAGE)
    return { errorCode: "Canceled", errorMessage: "Query canceled by user or by task shutdown." };
  // A fault planned before a restart: its code and message are in the errorMsg.
  const coded =
    /^(InsertTimeNull|InsertTimeOutOfBounds|InsertCannotBeEmpty|TooManyPartitions|TooManySegmentsInTimeChunk): ([\s\S]*)$/.exec(
      msg,
    );
  if (coded) return { errorCode: coded[1] as string, errorMessage: coded[2] as string };
  return { errorCode: "UnknownError", errorMessage: msg };
}

/**
 * The controller's worker tasks, `<controller>-worker<n>_0` of type `query_worker` in the controller's group
 * (`MSQTasks.workerTaskId`), started with it. They hold no slots of their own (the controller's plan counts
 * them) and end when it ends (`SimTask.plan.controller`).
 */
export function workerTasks(controller: SimTask): SimTask[] {
  const msq = controller.plan.msq;
  if (!msq) return [];
  const out: SimTask[] = [];
  for (let n = 0; n < msq.workers; n++) {
    const id = `${controller.id}-worker${n}_0`;
    out.push({
      ...controller,
      id,
      groupId: controller.id,
      type: "query_worker",
      payload: {
        type: "query_worker",
        id,
        groupId: controller.id,
        controllerTaskId: controller.id,
        workerNumber: n,
        retryCount: 0,
        dataSource: controller.dataSource,
        context: msq.context,
      },
      plan: {
        ...controller.plan,
        id,
        type: "query_worker",
        groupId: controller.id,
        slots: 0,
        ingest: null,
        msq: undefined,
        controller: controller.id,
      },
      seq: controller.seq,
      // Launched by the controller as it starts.
      createdAt: controller.startedAt ?? controller.createdAt,
      runnerInsertedAt: controller.startedAt ?? controller.createdAt,
      location: { ...controller.location, port: controller.location.port + n + 1 },
      result: null,
      plannedFailure: null,
      segmentIds: [],
      version: null,
    });
  }
  return out;
}

/** The controller's stored payload (`GET /task/{id}`): `MSQControllerTask`'s JSON, the parts segops may read. */
export function controllerPayload(plan: TaskPlan, msq: MsqPlan): Record<string, unknown> {
  return {
    type: "query_controller",
    id: plan.id,
    groupId: plan.id,
    dataSource: plan.dataSource,
    resource: { availabilityGroup: plan.id, requiredCapacity: 1 },
    spec: {
      query: { dataSource: "external", context: msq.context },
      destination: {
        type: "dataSource",
        dataSource: plan.dataSource,
        segmentGranularity: plan.ingest?.dataSchema.segmentGranularity,
        replaceTimeChunks:
          msq.verb === "REPLACE" ? [msq.overwrite ? intervalText(msq.overwrite) : "ALL"] : null,
      },
      tuningConfig: { maxNumWorkers: msq.workers, rowsPerSegment: plan.ingest?.partitions.maxRowsPerSegment },
    },
    sqlQuery: msq.query,
    sqlQueryContext: msq.context,
    context: msq.context,
  };
}

// ------------------------------------------------------------------------------------------- views

/** Per-worker shares of a count (worker n gets the n-th slice; the first ones take the remainder). */
function shares(total: number, workers: number): number[] {
  const base = Math.floor(total / workers);
  return Array.from({ length: workers }, (_, i) => base + (i < total % workers ? 1 : 0));
}

function stageCounters(task: SimTask, fraction: number): Record<string, unknown> {
  const msq = task.plan.msq as MsqPlan;
  const c = task.result?.counters;
  const f = (n: number) => Math.floor(n * fraction);
  // The scan reads the rows WHERE dropped too.
  const read = f((c?.processed ?? 0) + (c?.thrownAway ?? 0) + (msq.findings?.dropped ?? 0));
  const output = f(c?.processed ?? 0);
  const warnings = f(c?.unparseable ?? 0);
  const bytes = f(c?.processedBytes ?? 0);
  const w = msq.workers;
  const [readS, outS, warnS, bytesS] = [
    shares(read, w),
    shares(output, w),
    shares(warnings, w),
    shares(bytes, w),
  ];
  const stage0: Record<string, unknown> = {};
  const stage1: Record<string, unknown> = {};
  for (let n = 0; n < w; n++) {
    const worker: Record<string, unknown> = {
      input0: { type: "channel", rows: [readS[n]], bytes: [bytesS[n]], files: [1], totalFiles: [1] },
      output: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
      shuffle: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
    };
    if ((warnS[n] as number) > 0) worker.warnings = { type: "warnings", [PARSE_CODE]: warnS[n] };
    stage0[String(n)] = worker;
    stage1[String(n)] = {
      input0: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
      segmentGenerationProgress: {
        type: "segmentGenerationProgress",
        rowsProcessed: outS[n],
        rowsPersisted: outS[n],
        rowsMerged: outS[n],
        rowsPushed: fraction >= 1 && task.phase === "success" ? outS[n] : 0,
      },
    };
  }
  return { "0": stage0, "1": stage1 };
}

function progressOf(task: SimTask, now: number): number {
  if (task.phase !== "running" || task.endsAt === null || task.startedAt === null) return 1;
  if (task.endsAt <= task.startedAt) return 1;
  return Math.min(1, Math.max(0, (now - task.startedAt) / (task.endsAt - task.startedAt)));
}

function reportStatus(task: SimTask, now: number): Record<string, unknown> {
  const msq = task.plan.msq as MsqPlan;
  const status = task.phase === "success" ? "SUCCESS" : task.phase === "failed" ? "FAILED" : "RUNNING";
  const started = task.startedAt ?? now;
  const end = task.finishedAt ?? now;
  const fault = faultOf(task);
  const warnings = (task.result?.unparseableEvents ?? []).map((message) => ({
    taskId: `${task.id}-worker0_0`,
    host: "localhost",
    stageNumber: 0,
    error: { errorCode: PARSE_CODE, errorMessage: message },
  }));
  return {
    status,
    ...(fault ? { errorReport: { taskId: task.id, host: "localhost", error: fault } } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    startTime: instantText(started),
    durationMs: end - started,
    pendingTasks: 0,
    runningTasks: status === "RUNNING" ? 1 + msq.workers : 0,
  };
}

function stages(task: SimTask): Array<Record<string, unknown>> {
  const msq = task.plan.msq as MsqPlan;
  const ingest = task.plan.ingest as IngestPlan;
  const phase = task.phase === "running" ? "READING_INPUT" : task.phase === "failed" ? "FAILED" : "FINISHED";
  const startTime = instantText(task.startedAt ?? task.createdAt);
  return [
    {
      stageNumber: 0,
      definition: {
        id: `${task.id}_0`,
        input: [
          {
            type: "external",
            inputSource: msq.program?.externs[0]?.inputSource ?? ingest.inputSource,
            inputFormat: msq.program?.externs[0]?.inputFormat ?? ingest.inputFormat,
            signature: msq.signature,
          },
        ],
        processor: { type: "scan" },
        maxWorkerCount: msq.workers,
      },
      phase,
      workerCount: msq.workers,
      partitionCount: msq.workers,
      startTime,
      sort: true,
    },
    {
      stageNumber: 1,
      definition: {
        id: `${task.id}_1`,
        input: [{ type: "stage", stage: 0 }],
        processor: {
          type: "segmentGenerator",
          dataSchema: { dataSource: task.dataSource },
          clusterBy: msq.clusteredBy,
        },
        maxWorkerCount: msq.workers,
      },
      phase: task.phase === "running" ? "NEW" : phase,
      workerCount: msq.workers,
      startTime,
    },
  ];
}

/**
 * `GET /task/{controller}/reports` for an MSQ controller (`docs/api-reference/sql-ingestion-api.md`, "Get the
 * report for a query task"): `multiStageQuery` with the status (errorReport and warnings), the stages and the
 * counters per stage per worker. Null before the controller starts (Druid answers 404 for a moment).
 */
export function msqReport(task: SimTask, now: number): Record<string, unknown> | null {
  if (!task.plan.msq || task.startedAt === null) return null;
  return {
    multiStageQuery: {
      type: "multiStageQuery",
      taskId: task.id,
      payload: {
        status: reportStatus(task, now),
        stages: stages(task),
        counters: stageCounters(task, progressOf(task, now)),
      },
    },
  };
}

/**
 * `GET /druid/v2/sql/statements/{queryId}` (`SqlStatementResource`; docs/api-reference/sql-api.md): the query id
 * is the controller task id. ACCEPTED while the task waits for locks or slots, then RUNNING, SUCCESS or FAILED
 * with `errorDetails` (the fault as a `DruidException`). `detail=true` adds stages, counters and warnings.
 */
export function statementStatus(task: SimTask, now: number, detail: boolean): Record<string, unknown> {
  const state =
    task.phase === "waiting" || task.phase === "pending"
      ? "ACCEPTED"
      : task.phase === "running"
        ? "RUNNING"
        : task.phase === "success"
          ? "SUCCESS"
          : "FAILED";
  const fault = faultOf(task);
  const report = msqReport(task, now);
  const payload = (report?.multiStageQuery as { payload: Record<string, unknown> } | undefined)?.payload;
  return {
    queryId: task.id,
    state,
    createdAt: instantText(task.createdAt),
    schema: [{ name: "TASK", type: "VARCHAR", nativeType: "STRING" }],
    durationMs: task.startedAt === null ? -1 : (task.finishedAt ?? now) - task.startedAt,
    ...(fault
      ? {
          errorDetails: {
            error: "druidException",
            errorCode: fault.errorCode,
            persona: "USER",
            category: fault.errorCode === "Canceled" ? "CANCELED" : "RUNTIME_FAILURE",
            errorMessage: faultMessage(fault),
            context: {},
          },
        }
      : {}),
    ...(detail && payload
      ? {
          stages: payload.stages,
          counters: payload.counters,
          warnings: (payload.status as { warnings?: unknown }).warnings ?? [],
        }
      : {}),
  };
}
