import type { Row } from "../ingest.js";
import { Sketch } from "../sql-sketches.js";
import { emulatorGap } from "./errors.js";
import type { Aggregator, Filter, PostAggregator } from "./model.js";

/**
 * Filters, aggregators and post-aggregators over emulated rows, with Druid's SQL-compatible null handling (the
 * only mode from Druid 28): a filter on a null value is unknown, and NOT of unknown is unknown, so neither a
 * filter nor its negation keeps such a row (Druid's docs/querying/filters.md, on filtering nulls); sums and
 * min/max of no non-null input are null, a count of no rows is 0 (docs/querying/aggregations.md).
 */

type Truth = boolean | null;

/** A row value as the string a string comparison sees (Druid reads numbers through their text). */
export function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return String(v);
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** A row value as a number: a string that does not parse reads as 0, as the numeric selectors of a string column do. */
export function asNumber(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  if (v instanceof Sketch) throw emulatorGap("native queries do not read the sketch columns");
  const n = Number(v);
  return v !== "" && Number.isFinite(n) ? n : 0;
}

/** The values of a (possibly multi-value) column in a row. */
function values(row: Row, column: string): unknown[] {
  const v = column === "__time" ? row.__time : row[column];
  if (v instanceof Sketch) throw emulatorGap(`native queries do not read the sketch column [${column}]`);
  return Array.isArray(v) ? (v.length === 0 ? [null] : v) : [v];
}

/** Any value matches; unknown when only nulls were seen and none matched. */
function anyOf(row: Row, column: string, test: (v: unknown) => Truth): Truth {
  let unknown = false;
  for (const v of values(row, column)) {
    const t = test(v);
    if (t === true) return true;
    if (t === null) unknown = true;
  }
  return unknown ? null : false;
}

function compareBy(ordering: string, a: string, b: string): number {
  if (ordering === "numeric") {
    const x = Number(a);
    const y = Number(b);
    if (Number.isFinite(x) && Number.isFinite(y)) return x - y;
  }
  if (ordering === "strlen") return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  if (ordering === "alphanumeric") return a.localeCompare(b, "en", { numeric: true });
  return a < b ? -1 : a > b ? 1 : 0;
}

function typed(matchValueType: string, v: unknown): number | string | null {
  if (v === null || v === undefined) return null;
  if (matchValueType === "STRING") return asText(v);
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function cmp(a: number | string, b: number | string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function test(f: Filter, row: Row): Truth {
  switch (f.type) {
    case "true":
      return true;
    case "false":
      return false;
    case "and": {
      let unknown = false;
      for (const x of f.fields) {
        const t = test(x, row);
        if (t === false) return false;
        if (t === null) unknown = true;
      }
      return unknown ? null : true;
    }
    case "or": {
      let unknown = false;
      for (const x of f.fields) {
        const t = test(x, row);
        if (t === true) return true;
        if (t === null) unknown = true;
      }
      return unknown ? null : false;
    }
    case "not": {
      const t = test(f.field, row);
      return t === null ? null : !t;
    }
    case "selector":
      return anyOf(row, f.dimension, (v) => {
        const s = asText(v);
        if (f.value === null) return s === null;
        return s === null ? null : s === f.value;
      });
    case "null":
      return anyOf(row, f.column, (v) => v === null || v === undefined);
    case "equals":
      return anyOf(row, f.column, (v) => {
        const x = typed(f.matchValueType, v);
        return x === null ? null : x === typed(f.matchValueType, f.matchValue);
      });
    case "in":
      return anyOf(row, f.dimension, (v) => {
        const s = asText(v);
        if (f.values.includes(s)) return true;
        return s === null ? null : false;
      });
    case "range":
      return anyOf(row, f.column, (v) => {
        const x = typed(f.matchValueType, v);
        if (x === null) return null;
        const lo = typed(f.matchValueType, f.lower);
        const hi = typed(f.matchValueType, f.upper);
        if (lo !== null && (f.lowerOpen ? cmp(x, lo) <= 0 : cmp(x, lo) < 0)) return false;
        if (hi !== null && (f.upperOpen ? cmp(x, hi) >= 0 : cmp(x, hi) > 0)) return false;
        return true;
      });
    case "bound":
      return anyOf(row, f.dimension, (v) => {
        const s = asText(v);
        if (s === null) return null;
        if (f.lower !== null) {
          const c = compareBy(f.ordering, s, f.lower);
          if (f.lowerStrict ? c <= 0 : c < 0) return false;
        }
        if (f.upper !== null) {
          const c = compareBy(f.ordering, s, f.upper);
          if (f.upperStrict ? c >= 0 : c > 0) return false;
        }
        return true;
      });
    case "like":
    case "regex":
      return anyOf(row, f.dimension, (v) => {
        const s = asText(v);
        return s === null ? null : f.regex.test(s);
      });
    case "interval":
      return anyOf(row, f.dimension, (v) => {
        const n = asNumber(v);
        return n === null ? null : f.intervals.some((i) => n >= i.start && n < i.end);
      });
  }
}

/** Whether a row passes a filter (unknown does not). */
export function keeps(f: Filter | null, row: Row): boolean {
  return f === null || test(f, row) === true;
}

/** One aggregator's running state. */
export interface Accumulator {
  add(row: Row): void;
  value(): number | null;
}

export function accumulator(a: Aggregator): Accumulator {
  if (a.kind === "filtered") {
    const inner = accumulator(a.aggregator);
    return {
      add: (row) => {
        if (test(a.filter, row) === true) inner.add(row);
      },
      value: () => inner.value(),
    };
  }
  if (a.kind === "count") {
    let n = 0;
    return { add: () => void n++, value: () => n };
  }
  const isLong = a.kind.startsWith("long");
  const isFloat = a.kind.startsWith("float");
  const op = a.kind.endsWith("Sum") ? "sum" : a.kind.endsWith("Min") ? "min" : "max";
  let acc: number | null = null;
  const field = a.fieldName as string;
  return {
    add: (row) => {
      const raw = field === "__time" ? row.__time : row[field];
      let n = asNumber(Array.isArray(raw) ? raw[0] : raw);
      if (n === null) return;
      if (isLong) n = Math.trunc(n);
      else if (isFloat) n = Math.fround(n);
      acc = acc === null ? n : op === "sum" ? acc + n : op === "min" ? Math.min(acc, n) : Math.max(acc, n);
    },
    value: () => acc,
  };
}

/** The aggregators' values for a set of rows (in query order). */
export function aggregate(aggs: Aggregator[], rows: Iterable<Row>): Record<string, number | null> {
  const accs = aggs.map((a) => [a.name, accumulator(a)] as const);
  for (const r of rows) for (const [, acc] of accs) acc.add(r);
  return Object.fromEntries(accs.map(([name, acc]) => [name, acc.value()]));
}

/**
 * Post-aggregators over one result row, each seeing the ones before it. Arithmetic is in doubles: `/` gives 0
 * for a zero divisor, `quotient` is plain division (Infinity, which Druid writes as the string "Infinity").
 */
export function postAggregate(posts: PostAggregator[], values: Record<string, unknown>): void {
  const evaluate = (p: PostAggregator): number | null => {
    if (p.type === "constant") return p.value;
    if (p.type !== "arithmetic") {
      const v = values[p.fieldName];
      return typeof v === "number" ? v : v === null || v === undefined ? null : Number(v);
    }
    const args = p.fields.map(evaluate);
    if (args.some((x) => x === null)) return null;
    let out = args[0] as number;
    for (const x of args.slice(1) as number[]) {
      if (p.fn === "+") out += x;
      else if (p.fn === "-") out -= x;
      else if (p.fn === "*") out *= x;
      else if (p.fn === "/") out = x === 0 ? 0 : out / x;
      else if (p.fn === "quotient") out /= x;
      else out = out ** x;
    }
    return out;
  };
  for (const p of posts) if (p.name !== null) values[p.name] = evaluate(p);
}

/** A number as Druid's JSON writer prints it: non-finite doubles become their Java names as strings. */
export function jsonNumber(v: unknown): unknown {
  if (typeof v !== "number" || Number.isFinite(v)) return v;
  return Number.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
}
