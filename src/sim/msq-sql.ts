import { asPlanError, MsqPlanError } from "./msq-text.js";
import * as Ast from "./sql-ast.js";
import { parseExpressionPart, parseQueryPart } from "./sql-parse.js";

/**
 * The query part of an MSQ statement (`[WITH …] SELECT … FROM … [WHERE …] [GROUP BY …]`), read by the
 * emulator's one SQL parser (sql-parse.ts, as Druid's Calcite parser reads it: `docs/querying/sql.md`) into the
 * tree the Broker engine runs; the ingestion planner (msq-query.ts) plans and evaluates it with that engine. What
 * an ingestion's top level cannot write (SELECT DISTINCT, an aggregate's FILTER) is refused as `unsupported`,
 * never misread.
 */

/** An EXTERN input: what the controller reads (the report's stage definition, the native ingestion's source). */
export interface Extern {
  k: "extern";
  inputSource: Record<string, unknown>;
  inputFormat: Record<string, unknown>;
  signature: Array<{ name: string; type: string }>;
}

export interface OutputMetric {
  name: string;
  /** The native aggregator (`count`, `longSum`, `doubleMax`…). */
  type: string;
  /** The projected input column it aggregates, null for COUNT(*). */
  field: string | null;
  /** Written as its finalized count (APPROX_COUNT_DISTINCT_DS_HLL/_THETA; plans.ts MetricSpec). */
  finalize?: boolean;
}

/** A planned ingestion query: JSON, so it persists with the task (it is run once, on acceptance). */
export interface MsqProgram {
  query: Ast.Query;
  dimensions: Array<{ name: string; type: "string" | "long" | "double" | "float" | "json" }>;
  metrics: OutputMetric[];
  rollup: boolean;
  /** The output columns in SELECT order (for CLUSTERED BY ordinals and names). */
  columns: string[];
  /** No `__time` item: the rows are written at the epoch. */
  epochTime?: boolean;
  /** The columns the SELECT reads from (CLUSTERED BY may name them too). */
  inputColumns: string[];
  /** The EXTERN inputs read (the report's stage definition). */
  externs: Extern[];
}

const gap = (what: string): never => {
  throw new MsqPlanError(`The emulator reads no ${what} in an ingestion query`, "unsupported");
};

/** What the ingestion's top level cannot write: every row's aggregate inputs go to the rollup as they are. */
function checkTopLevel(q: Ast.Query): void {
  if (q.distinct) gap("SELECT DISTINCT");
  const walk = (e: Ast.Expr): void => {
    if (e.k === "fn" && e.filter) gap("aggregate FILTER clause");
    for (const c of childrenOf(e)) walk(c);
  };
  for (const item of q.items) if (item.expr.k !== "star") walk(item.expr as Ast.Expr);
}

const childrenOf = (e: Ast.Expr) => (e.k === "fn" ? e.args : Ast.children(e));

/** Parses the query part of a statement (`base`: where `sql` starts in it); the whole text must be read. */
export function parseQuery(sql: string, base = 0): Ast.Query {
  const q = asPlanError(() => parseQueryPart(sql, base));
  checkTopLevel(q);
  return q;
}

/** Parses one expression (CLUSTERED BY items, OVERWRITE WHERE). */
export function parseExpr(sql: string, base = 0): Ast.Expr {
  return asPlanError(() => parseExpressionPart(sql, base));
}
