import { type Granularity, parseGranularity } from "../core/granularity.js";
import { IDENT, MsqPlanError, splitTopLevel, unquoteIdent } from "./msq-text.js";
import type { DimensionSpec, MetricSpec } from "./plans.js";

/**
 * An MSQ statement's SELECT list and GROUP BY, read into the native ingestion model (ingest.ts): the __time
 * expression (with TIME_FLOOR / FLOOR as the query granularity), the columns, and the aggregates a rollup
 * ingestion writes (`docs/multi-stage-query/concepts.md`, "Rollup": a GROUP BY makes one row per group and time).
 * The checks are Calcite's (`SqlValidatorImpl`; its messages from `CalciteResource`), which Druid's planner runs
 * before anything else. Not compared with a real Druid: the registry this project reaches serves no MSQ
 * extension for the real-Druid stage (docs/real-druid.md).
 */

type Aggregate = "SUM" | "MIN" | "MAX" | "COUNT";

/** One SELECT item, in order (GROUP BY ordinals count from 1 over these). */
export type SelectItem =
  | { kind: "time"; expr: string; column: string; format: "iso" | "millis"; granularity: Granularity }
  | { kind: "column"; expr: string; name: string }
  | { kind: "aggregate"; expr: string; fn: Aggregate; column: string | null; name: string }
  | { kind: "star"; expr: string };

export interface SelectPlan {
  items: SelectItem[];
  /** The GROUP BY's items as written; null without one. */
  groupBy: string[] | null;
}

const TIME_SOURCE = String.raw`(TIME_PARSE|MILLIS_TO_TIMESTAMP)\s*\(\s*(${IDENT})\s*\)`;
const FLOOR_UNITS: Record<string, string> = {
  SECOND: "second",
  MINUTE: "minute",
  HOUR: "hour",
  DAY: "day",
  WEEK: "week",
  MONTH: "month",
  QUARTER: "quarter",
  YEAR: "year",
};
const NONE: Granularity = { kind: "none" };

/** `<time source>`, `TIME_FLOOR(<time source>, 'P…')` or `FLOOR(<time source> TO UNIT)`, then `AS __time`. */
function timeItem(item: string): SelectItem | null {
  const as = /^([\s\S]+?)\s+AS\s+("?__time"?)$/i.exec(item);
  if (!as) return null;
  const expr = (as[1] as string).trim();
  const source = (m: RegExpExecArray, granularity: Granularity): SelectItem => ({
    kind: "time",
    expr,
    column: unquoteIdent(m[2] as string),
    format: (m[1] as string).toUpperCase() === "TIME_PARSE" ? "iso" : "millis",
    granularity,
  });
  const plain = new RegExp(`^${TIME_SOURCE}$`, "i").exec(expr);
  if (plain) return source(plain, NONE);
  const timeFloor = new RegExp(String.raw`^TIME_FLOOR\s*\(\s*${TIME_SOURCE}\s*,\s*'([^']*)'\s*\)$`, "i").exec(
    expr,
  );
  if (timeFloor) return source(timeFloor, granularityOf(timeFloor[3] as string, expr));
  const floor = new RegExp(String.raw`^FLOOR\s*\(\s*${TIME_SOURCE}\s+TO\s+([A-Za-z]+)\s*\)$`, "i").exec(expr);
  if (floor) {
    const unit = FLOOR_UNITS[(floor[3] as string).toUpperCase()];
    if (!unit) throw new MsqPlanError(`Invalid time unit [${floor[3]}] in [${expr}]`);
    return source(floor, granularityOf(unit, expr));
  }
  return null;
}

function granularityOf(text: string, expr: string): Granularity {
  try {
    return parseGranularity(text);
  } catch {
    throw new MsqPlanError(`Invalid period [${text}] in [${expr}]`);
  }
}

function aggregateItem(item: string): SelectItem | null {
  const m = new RegExp(
    String.raw`^(SUM|MIN|MAX|COUNT)\s*\(\s*(\*|${IDENT})\s*\)(?:\s+AS\s+(${IDENT}))?$`,
    "i",
  ).exec(item);
  if (!m) return null;
  const fn = (m[1] as string).toUpperCase() as Aggregate;
  const arg = m[2] as string;
  if ((arg === "*") !== (fn === "COUNT"))
    throw new MsqPlanError(
      arg === "*"
        ? `Cannot apply '${fn}' to arguments of type '${fn}(*)'`
        : "The emulator reads COUNT only as COUNT(*)",
      arg === "*" ? "invalidInput" : "unsupported",
    );
  if (m[3] === undefined)
    throw new MsqPlanError(`The emulator needs an alias for [${item}] (… AS name)`, "unsupported");
  return {
    kind: "aggregate",
    expr: item,
    fn,
    column: arg === "*" ? null : unquoteIdent(arg),
    name: unquoteIdent(m[3]),
  };
}

/** The SELECT list: the time expression, columns, `*` and the aggregates above. */
export function readSelectItems(list: string): SelectItem[] {
  const column = new RegExp(String.raw`^(${IDENT})(?:\s+AS\s+(${IDENT}))?$`, "i");
  return splitTopLevel(list).map((item): SelectItem => {
    const time = timeItem(item);
    if (time) return time;
    if (item === "*") return { kind: "star", expr: item };
    const aggregate = aggregateItem(item);
    if (aggregate) return aggregate;
    const c = column.exec(item);
    if (c && (c[2] === undefined || unquoteIdent(c[2]) === unquoteIdent(c[1] as string)))
      return { kind: "column", expr: item, name: unquoteIdent(c[1] as string) };
    throw new MsqPlanError(
      `The emulator reads SELECT items only as columns, *, SUM/MIN/MAX(col) and COUNT(*) with an alias, and TIME_PARSE(col) or MILLIS_TO_TIMESTAMP(col), optionally in TIME_FLOOR(…, 'period') or FLOOR(… TO unit), AS __time; got [${item}]`,
      "unsupported",
    );
  });
}

/** What a GROUP BY item names: an ordinal's item, or the item whose alias, column or expression it repeats. */
function groupedItem(entry: string, items: SelectItem[]): SelectItem {
  if (/^\d+$/.test(entry)) {
    const item = items[Number(entry) - 1];
    if (!item) throw new MsqPlanError(`Ordinal out of range`);
    return item;
  }
  const name = unquoteIdent(entry);
  const norm = (s: string) => s.replace(/\s+/g, "").toUpperCase();
  const found = items.find(
    (i) =>
      (i.kind === "column" && i.name === name) ||
      (i.kind === "time" && (name === "__time" || norm(i.expr) === norm(entry))) ||
      (i.kind === "aggregate" && i.name === name),
  );
  if (!found)
    throw new MsqPlanError(
      `The emulator reads GROUP BY items only as ordinals or the SELECT's columns and aliases, got [${entry}]`,
      "unsupported",
    );
  return found;
}

/**
 * Calcite's rules: with a GROUP BY (or an aggregate in the list), every other item must be grouped, and an
 * aggregate cannot be. Returns whether the ingestion groups rows (a rollup).
 */
export function checkGrouping(items: SelectItem[], groupBy: string[] | null): boolean {
  const aggregates = items.some((i) => i.kind === "aggregate");
  if (groupBy === null && !aggregates) return false;
  const grouped = new Set<SelectItem>();
  for (const entry of groupBy ?? []) {
    const item = groupedItem(entry, items);
    if (item.kind === "aggregate")
      throw new MsqPlanError("Aggregate expression is illegal in GROUP BY clause");
    grouped.add(item);
  }
  for (const item of items) {
    if (item.kind === "star")
      throw new MsqPlanError("The emulator reads no SELECT * with GROUP BY", "unsupported");
    if (item.kind !== "aggregate" && !grouped.has(item))
      throw new MsqPlanError(
        `Expression '${item.kind === "column" ? item.name : item.expr}' is not being grouped`,
      );
  }
  return true;
}

const NUMERIC = new Set(["long", "double", "float"]);

/** The aggregates as the native metrics a rollup ingestion combines (`count`, `longSum`, `doubleMax`, …). */
export function metricsOf(
  items: SelectItem[],
  signature: ReadonlyArray<{ name: string; type: string }>,
): MetricSpec[] {
  const types = new Map(signature.map((c) => [c.name, c.type]));
  return items.flatMap((item): MetricSpec[] => {
    if (item.kind !== "aggregate") return [];
    if (item.fn === "COUNT") return [{ name: item.name, type: "count", fieldName: null }];
    const column = item.column as string;
    const type = types.get(column);
    if (type === undefined) throw new MsqPlanError(`Column '${column}' not found in any table`);
    if (!NUMERIC.has(type))
      throw new MsqPlanError(
        `Cannot apply '${item.fn}' to arguments of type '${item.fn}(<VARCHAR>)'. Supported form(s): '${item.fn}(<NUMERIC>)'`,
      );
    const suffix = item.fn === "SUM" ? "Sum" : item.fn === "MIN" ? "Min" : "Max";
    return [{ name: item.name, type: `${type}${suffix}`, fieldName: column }];
  });
}

/** The selected columns (all but the time column for `*`) typed by the EXTERN signature. */
export function dimensionsOf(
  items: SelectItem[],
  timeColumn: string,
  signature: ReadonlyArray<{ name: string; type: string }>,
): DimensionSpec[] {
  const types = new Map(signature.map((c) => [c.name, c.type]));
  const names = items.some((i) => i.kind === "star")
    ? signature.map((c) => c.name).filter((n) => n !== timeColumn)
    : items.flatMap((i) => (i.kind === "column" ? [i.name] : []));
  return names.map((name) => {
    const t = types.get(name);
    if (t === undefined) throw new MsqPlanError(`Column '${name}' not found in any table`);
    return { name, type: NUMERIC.has(t) ? (t as "long" | "double" | "float") : "string" };
  });
}
