import type { CallOptions, DruidClient } from "../druid/client.js";
import type { SqlStatementStatus, TaskReports } from "../druid/types.js";
import type { JsonObject } from "../ledger/types.js";
import type { DataGates, RowStats } from "./gates.js";

/**
 * SQL-based ingestion (MSQ, docs/druid-api.md §6) as the ingest runner sees it: the slots a controller and
 * its workers take, the gates handed to Druid in the query context, and the evidence of a controller's
 * `multiStageQuery` report (counters, warnings, the fault) — or, when the report is missing, the statements
 * API's — in the row-counter terms the data gates decide on. Pure but for {@link statementEvidence}.
 */

/**
 * `maxNumTasks` includes the controller (default 2: one controller, one worker), and each takes a slot. It is
 * read from the context or from a `SET maxNumTasks = N;` statement of the query.
 */
export function slotsForSql(context: JsonObject | undefined, query = ""): number {
  const set = /\bSET\s+"?maxNumTasks"?\s*=\s*'?(\d+)'?\s*;/i.exec(query);
  const n = context?.maxNumTasks ?? (set ? Number(set[1]) : undefined);
  return typeof n === "number" && Number.isInteger(n) && n >= 2 ? n : 2;
}

/**
 * Hands an absolute `--max-unparseable` to Druid as the context's `maxParseExceptions` (the query then fails
 * with `TooManyWarnings` before it publishes); a percentage can only be checked after the query, so the
 * limit is lifted (-1: MSQ's own default is 0, which would fail on the first bad row). A value the template
 * set itself (in `context` or a leading `SET maxParseExceptions = …;`) is left alone.
 */
export function contextWithGates(context: JsonObject, query: string, gates: DataGates): JsonObject {
  if (context.maxParseExceptions !== undefined && context.maxParseExceptions !== null) return context;
  if (/\bSET\s+"?maxParseExceptions"?\s*=/i.test(query)) return context;
  return {
    ...context,
    maxParseExceptions: gates.maxUnparseable.kind === "count" ? gates.maxUnparseable.max : -1,
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const sum = (v: unknown): number =>
  Array.isArray(v) ? v.reduce((n: number, x) => n + (typeof x === "number" ? x : 0), 0) : 0;

/** What an MSQ report says about one attempt, in the runner's terms. */
export interface MsqEvidence {
  /** Null when the report has no counters yet. */
  rowStats: RowStats | null;
  /** The first `CannotParseExternalData` messages of `status.warnings`. */
  parseErrors: string[];
  /** `<errorCode>: <errorMessage>` of `status.errorReport`, as the controller's errorMsg says it. */
  errorMsg: string | null;
  /** `status.status`: RUNNING, SUCCESS or FAILED. */
  status: string | null;
}

/**
 * Reads `multiStageQuery.payload` (`docs/api-reference/sql-ingestion-api.md`, "Report response fields"):
 * - `processed`: rows the last stage turned into segments (`segmentGenerationProgress.rowsProcessed`, summed
 *   over workers);
 * - `unparseable`: the `CannotParseExternalData` warning counters of every stage and worker;
 * - `thrownAway`: rows the external-input stage read but did not pass on (its SELECT's WHERE);
 * - `processedWithError`: 0 (MSQ has no such counter: a bad row is a warning, never half-ingested).
 */
export function msqEvidence(reports: TaskReports | null | undefined): MsqEvidence | null {
  const report = reports?.multiStageQuery;
  const payload = isObj(report?.payload) ? (report.payload as Obj) : null;
  if (!payload) return null;
  const status = isObj(payload.status) ? payload.status : {};
  const error =
    isObj(status.errorReport) && isObj(status.errorReport.error) ? status.errorReport.error : null;
  const errorMsg =
    error && typeof error.errorCode === "string"
      ? `${error.errorCode}${typeof error.errorMessage === "string" ? `: ${error.errorMessage}` : ""}`
      : null;
  const parseErrors = (Array.isArray(status.warnings) ? status.warnings : [])
    .map((w) => (isObj(w) && isObj(w.error) ? w.error : null))
    .filter((e): e is Obj => e !== null && e.errorCode === "CannotParseExternalData")
    .map((e) => String(e.errorMessage ?? "CannotParseExternalData"))
    .slice(0, 5);
  const counters = isObj(payload.counters) ? payload.counters : null;
  let rowStats: RowStats | null = null;
  if (counters && Object.keys(counters).length > 0) {
    const stageNumbers = Object.keys(counters)
      .map(Number)
      .filter(Number.isInteger)
      .sort((a, b) => a - b);
    const workersOf = (stage: number): Obj[] => {
      const s = counters[String(stage)];
      return isObj(s) ? Object.values(s).filter(isObj) : [];
    };
    let unparseable = 0;
    for (const stage of stageNumbers) {
      for (const w of workersOf(stage)) {
        if (isObj(w.warnings) && typeof w.warnings.CannotParseExternalData === "number")
          unparseable += w.warnings.CannotParseExternalData;
      }
    }
    let processed = 0;
    let generated = false;
    for (const stage of stageNumbers) {
      for (const w of workersOf(stage)) {
        const g = w.segmentGenerationProgress;
        if (isObj(g) && typeof g.rowsProcessed === "number") {
          processed += g.rowsProcessed;
          generated = true;
        }
      }
    }
    const first = stageNumbers[0];
    const input = first === undefined ? [] : workersOf(first);
    const read = input.reduce((n, w) => n + (isObj(w.input0) ? sum(w.input0.rows) : 0), 0);
    const passed = input.reduce((n, w) => n + (isObj(w.output) ? sum(w.output.rows) : 0), 0);
    if (!generated) processed = passed;
    rowStats = { processed, processedWithError: 0, unparseable, thrownAway: Math.max(0, read - passed) };
  }
  return {
    rowStats,
    parseErrors,
    errorMsg,
    status: typeof status.status === "string" ? status.status : null,
  };
}

/** {@link msqEvidence} of a statements-API answer (`detail=true`: the same counters and warnings, the fault as `errorDetails`). */
export function evidenceOfStatement(st: SqlStatementStatus | null): MsqEvidence | null {
  if (!st) return null;
  const reports = {
    multiStageQuery: {
      type: "multiStageQuery",
      taskId: st.queryId,
      payload: { status: { status: st.state, warnings: st.warnings ?? [] }, counters: st.counters ?? {} },
    },
  } as unknown as TaskReports;
  const evidence = msqEvidence(reports);
  if (!evidence) return null;
  const message = st.errorDetails?.errorMessage;
  return { ...evidence, errorMsg: typeof message === "string" ? message : null };
}

/**
 * `GET /druid/v2/sql/statements/{controller id}?detail=true` (docs/druid-api.md §6.2): what segops reads when
 * the controller's report is missing (404 for a moment at start, or gone). Null when Druid cannot say.
 */
export async function statementEvidence(
  client: DruidClient,
  taskId: string,
  call: CallOptions,
): Promise<MsqEvidence | null> {
  try {
    return evidenceOfStatement(await client.sqlStatement(taskId, { ...call, detail: true }));
  } catch {
    return null;
  }
}
