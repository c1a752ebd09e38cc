import { formatInterval, type Interval } from "../../core/interval.js";
import type { SegmentData } from "./data.js";
import type { Analysis, SegmentMetadataQuery } from "./model.js";

/**
 * segmentMetadata (docs/querying/segmentmetadataquery.md; `SegmentAnalyzer`,
 * `SegmentMetadataQueryQueryToolChest.mergeAnalyses`): per segment, or merged into one whose id is the last
 * segment's interval with the version `merged`. Default analyses: cardinality, interval, minmax. A string
 * column's cardinality counts null as a value; its min and max are the smallest and largest values (min null
 * when it has nulls); numeric columns have neither. Sizes only with the `size` analysis: a timestamp 10 bytes a
 * row, a long or double 8, a float 4, a string the UTF-8 length of its values; the segment's
 * total adds a byte per column and row. The emulator does not keep an
 * ingestion's metricsSpec, timestampSpec or query granularity: `aggregators`, `timestampSpec` and
 * `queryGranularity` are null.
 */

interface ColumnAnalysis {
  typeSignature: string;
  type: string;
  hasMultipleValues: boolean;
  hasNulls: boolean;
  size: number;
  cardinality: number | null;
  minValue: string | null;
  maxValue: string | null;
  errorMessage: null;
}

interface Analysed {
  id: string;
  intervals: Interval[];
  columns: Record<string, ColumnAnalysis>;
  size: number;
  numRows: number;
  rollup: boolean | null;
}

const BYTES: Record<string, number> = { LONG: 8, DOUBLE: 8, FLOAT: 4 };

function analyse(s: SegmentData, types: Set<Analysis>): Analysed {
  const columns: Record<string, ColumnAnalysis> = {};
  for (const c of s.columns) {
    const vals = s.rows.map((r) => (c.name === "__time" ? r.__time : r[c.name]));
    const flat = vals.flatMap((v) => (Array.isArray(v) ? (v.length === 0 ? [null] : v) : [v]));
    const hasNulls = flat.some((v) => v === null || v === undefined);
    const a: ColumnAnalysis = {
      typeSignature: c.type,
      type: c.type,
      hasMultipleValues: vals.some((v) => Array.isArray(v) && v.length > 1),
      hasNulls,
      size: 0,
      cardinality: null,
      minValue: null,
      maxValue: null,
      errorMessage: null,
    };
    if (c.type === "STRING") {
      const strings = flat.filter((v) => v !== null && v !== undefined).map(String);
      const distinct = [...new Set(strings)].sort();
      a.cardinality = types.has("cardinality") ? distinct.length + (hasNulls ? 1 : 0) : 0;
      if (types.has("minmax") && distinct.length > 0) {
        a.minValue = hasNulls ? null : (distinct[0] as string);
        a.maxValue = distinct.at(-1) as string;
      }
      if (types.has("size")) a.size = strings.reduce((n, v) => n + Buffer.byteLength(v), 0);
    } else if (types.has("size")) {
      a.size = s.rows.length * (c.name === "__time" ? 10 : (BYTES[c.type] ?? 8));
    }
    columns[c.name] = a;
  }
  return {
    id: s.id,
    intervals: [s.interval],
    columns,
    // `SegmentMetadataQueryRunnerFactory` starts the total at a byte per column and row ("whitespace").
    size: types.has("size")
      ? s.columns.length * s.rows.length + Object.values(columns).reduce((n, c) => n + c.size, 0)
      : 0,
    numRows: s.rows.length,
    rollup: s.rollup,
  };
}

function foldColumn(a: ColumnAnalysis, b: ColumnAnalysis): ColumnAnalysis {
  const pick = (x: string | null, y: string | null, min: boolean) =>
    x === null || y === null ? (min ? null : (x ?? y)) : (min ? x < y : x > y) ? x : y;
  return {
    ...a,
    hasMultipleValues: a.hasMultipleValues || b.hasMultipleValues,
    hasNulls: a.hasNulls || b.hasNulls,
    size: a.size + b.size,
    cardinality:
      a.cardinality === null
        ? b.cardinality
        : b.cardinality === null
          ? a.cardinality
          : Math.max(a.cardinality, b.cardinality),
    minValue: a.hasNulls || b.hasNulls ? null : pick(a.minValue, b.minValue, true),
    maxValue: pick(a.maxValue, b.maxValue, false),
  };
}

/** Joins touching or overlapping intervals (`JodaUtils.condenseIntervals`). */
function condense(intervals: Interval[]): Interval[] {
  const out: { start: number; end: number }[] = [];
  for (const i of [...intervals].sort((a, b) => a.start - b.start)) {
    const last = out.at(-1);
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ start: i.start, end: i.end });
  }
  return out;
}

function merge(dataSource: string, list: Analysed[]): Analysed {
  const last = list.at(-1) as Analysed;
  const columns: Record<string, ColumnAnalysis> = {};
  for (const a of list)
    for (const [name, c] of Object.entries(a.columns))
      columns[name] = columns[name] ? foldColumn(columns[name], c) : c;
  const lastInterval = last.intervals[0] as Interval;
  return {
    id: `${dataSource}_${formatInterval(lastInterval).replace("/", "_")}_merged`,
    intervals: condense(list.flatMap((a) => a.intervals)),
    columns,
    size: list.reduce((n, a) => n + a.size, 0),
    numRows: list.reduce((n, a) => n + a.numRows, 0),
    rollup: list.every((a) => a.rollup === last.rollup) ? last.rollup : null,
  };
}

/** Druid's default history (`druid.query.segmentMetadata.defaultHistory`, P1W) before the newest segment's end. */
export function defaultIntervals(segments: SegmentData[]): Interval[] {
  const end = Math.max(...segments.map((s) => s.interval.end));
  return [{ start: end - 7 * 86_400_000, end }];
}

export function segmentMetadata(q: SegmentMetadataQuery, segments: SegmentData[]): unknown[] {
  if (segments.length === 0) return [];
  const analysed = segments.map((s) => analyse(s, q.analysisTypes));
  // Merging folds results pairwise: a single segment's analysis comes back as it is, under its own id.
  const results = q.merge && analysed.length > 1 ? [merge(q.dataSource, analysed)] : analysed;
  const t = q.analysisTypes;
  return results.map((a) => ({
    id: a.id,
    intervals: t.has("interval") ? a.intervals.map(formatInterval) : null,
    columns: a.columns,
    size: a.size,
    numRows: a.numRows,
    aggregators: null,
    timestampSpec: null,
    queryGranularity: null,
    rollup: t.has("rollup") ? a.rollup : null,
  }));
}
