import type { Interval } from "../core/interval.js";
import { parseExpr } from "./msq-sql.js";
import { MsqPlanError } from "./msq-text.js";
import { Timestamp } from "./sql.js";
import type { Expr } from "./sql-ast.js";

/**
 * A REPLACE's `OVERWRITE WHERE` condition → the time window it replaces, as Druid's planner reads it
 * (`DruidSqlParserUtils.validateQueryAndConvertToIntervals` and `convertQueryToDimFilter`): comparisons of
 * `__time` with TIMESTAMP literals, BETWEEN, AND, OR and NOT, turned into bound filters and then intervals. Its
 * refusals are Druid's, the bound filters written as `BoundDimFilter#toString` writes them.
 */

const LONG_MIN = -Number.MAX_SAFE_INTEGER;
const LONG_MAX = Number.MAX_SAFE_INTEGER;

/** A set of disjoint, sorted [start, end) ranges. */
type Ranges = Array<[number, number]>;

interface Bound {
  text: string;
  ranges: Ranges;
}

const FLIP: Record<string, string> = { "<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=" };

/** Calcite's unparse of a node in a message: identifiers back-quoted, literals as written. */
function unparse(e: Expr): string {
  switch (e.k) {
    case "col":
      return `\`${e.name}\``;
    case "lit":
      if (e.v instanceof Timestamp)
        return `TIMESTAMP '${new Date(e.v.ms)
          .toISOString()
          .replace("T", " ")
          .replace(/\.000Z$/, "")
          .replace("Z", "")}'`;
      if (e.t === "BOOLEAN") return e.v ? "TRUE" : "FALSE";
      return e.v === null ? "NULL" : typeof e.v === "string" ? `'${e.v}'` : String(e.v);
    case "like":
      return `${unparse(e.e)}${e.not ? " NOT" : ""} LIKE ${unparse(e.pattern)}`;
    case "bin":
      return `${unparse(e.l)} ${e.op === "!=" ? "<>" : e.op} ${unparse(e.r)}`;
    case "un":
      return e.op === "NOT" ? `NOT ${unparse(e.e)}` : `-${unparse(e.e)}`;
    default:
      return "?";
  }
}

function intersect(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  for (const [s1, e1] of a)
    for (const [s2, e2] of b) {
      const s = Math.max(s1, s2);
      const e = Math.min(e1, e2);
      if (s < e) out.push([s, e]);
    }
  return out.sort((x, y) => x[0] - y[0]);
}

function union(a: Ranges, b: Ranges): Ranges {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: Ranges = [];
  for (const r of all) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

function complement(a: Ranges): Ranges {
  const out: Ranges = [];
  let from = LONG_MIN;
  for (const [s, e] of a) {
    if (s > from) out.push([from, s]);
    from = e;
  }
  if (from < LONG_MAX) out.push([from, LONG_MAX]);
  return out;
}

function timeLiteral(e: Expr): number | null {
  if (e.k !== "lit" || e.t === "BOOLEAN") return null;
  if (e.v instanceof Timestamp) return e.v.ms;
  return typeof e.v === "number" ? e.v : null;
}

function comparison(e: Extract<Expr, { k: "bin" }>, whole: Expr): Bound {
  let op = e.op;
  let column = e.l;
  let value = e.r;
  if (column.k !== "col") {
    column = e.r;
    value = e.l;
    op = FLIP[op] ?? op;
  }
  const v = value ? timeLiteral(value) : null;
  if (column.k !== "col" || v === null) throw invalid(whole);
  const name = column.name;
  const text =
    op === ">"
      ? `${v} < ${name} as numeric`
      : op === ">="
        ? `${v} <= ${name} as numeric`
        : op === "<"
          ? `${name} as numeric < ${v}`
          : op === "<="
            ? `${name} as numeric <= ${v}`
            : `${name} = ${v}`;
  const ranges: Ranges =
    op === ">"
      ? [[v + 1, LONG_MAX]]
      : op === ">="
        ? [[v, LONG_MAX]]
        : op === "<"
          ? [[LONG_MIN, v]]
          : op === "<="
            ? [[LONG_MIN, v + 1]]
            : [[v, v + 1]];
  if (name !== "__time") throw notTime(text);
  return { text, ranges };
}

function invalid(e: Expr): MsqPlanError {
  return new MsqPlanError(
    `Invalid OVERWRITE WHERE clause [${unparse(e)}]: expected clause including AND, OR, NOT, >, <, >=, <= OR BETWEEN operators`,
  );
}

function notTime(text: string): MsqPlanError {
  return new MsqPlanError(
    `OVERWRITE WHERE clause only supports filtering on the __time column, got [${text}]`,
  );
}

function bound(e: Expr, whole: Expr): Bound {
  switch (e.k) {
    case "bin": {
      if (e.op === "AND" || e.op === "OR") {
        const a = bound(e.l, whole);
        const b = bound(e.r, whole);
        return {
          text: `(${a.text} ${e.op === "AND" ? "&&" : "||"} ${b.text})`,
          ranges: e.op === "AND" ? intersect(a.ranges, b.ranges) : union(a.ranges, b.ranges),
        };
      }
      if (["<", "<=", ">", ">=", "="].includes(e.op)) return comparison(e, whole);
      throw new MsqPlanError(
        `Invalid OVERWRITE WHERE clause [${unparse(whole)}]: Unsupported operation [${e.op === "!=" ? "<>" : e.op}] in OVERWRITE WHERE clause.`,
      );
    }
    case "un": {
      if (e.op !== "NOT") throw invalid(whole);
      const a = bound(e.e, whole);
      return { text: `~(${a.text})`, ranges: complement(a.ranges) };
    }
    case "between": {
      const lo = timeLiteral(e.lo);
      const hi = timeLiteral(e.hi);
      if (e.e.k !== "col" || lo === null || hi === null) throw invalid(whole);
      const text = `${lo} <= ${e.e.name} as numeric <= ${hi}`;
      if (e.e.name !== "__time") throw notTime(text);
      const ranges: Ranges = [[lo, hi + 1]];
      return e.not ? { text: `~(${text})`, ranges: complement(ranges) } : { text, ranges };
    }
    case "like":
      throw new MsqPlanError(
        `Invalid OVERWRITE WHERE clause [${unparse(whole)}]: Unsupported operation [LIKE] in OVERWRITE WHERE clause.`,
      );
    default:
      throw invalid(whole);
  }
}

/**
 * The window an `OVERWRITE WHERE` condition names (the text between WHERE and the query, starting at `base`
 * in the statement). One interval; a condition naming several disjoint ones is beyond the emulator.
 */
export function overwriteWindow(cond: string, base: number): Interval {
  const e = parseExpr(cond, base);
  const b = bound(e, e);
  if (b.ranges.length === 0)
    throw new MsqPlanError(
      `The OVERWRITE WHERE clause [${b.text}] produced no time intervals, are the bounds overly restrictive?`,
    );
  if (b.ranges.length > 1)
    throw new MsqPlanError(
      "The emulator replaces one time window per REPLACE; this OVERWRITE WHERE names several",
      "unsupported",
    );
  const [start, end] = b.ranges[0] as [number, number];
  if (start === LONG_MIN || end === LONG_MAX)
    throw new MsqPlanError(
      "The emulator reads OVERWRITE WHERE only as a bounded __time window (both a lower and an upper bound)",
      "unsupported",
    );
  return { start, end };
}

/** A granularity as Druid's messages print it (`PeriodGranularity#toString`, `AllGranularity`). */
export function granularityText(g: { readonly kind: string }, iso: string | null): string {
  if (g.kind === "all") return "AllGranularity";
  if (g.kind === "none") return "NoneGranularity";
  return `{type=period, period=${iso}, timeZone=UTC, origin=null}`;
}
