import { DateTime } from "luxon";
import { bucketOf, bucketStart, bucketsOverlapping } from "../core/granularity.js";
import { type Interval, overlaps } from "../core/interval.js";
import type { RawInput } from "./input.js";
import { jsonCell } from "./json-value.js";
import type { IngestPlan, MetricSpec } from "./plans.js";
import { SKETCH_METRICS, type Sketch, sketchMetricInput, unionSketches } from "./sql-sketches.js";

/**
 * The ingestion model: turns input records into per-time-chunk rows the way a native batch task does —
 * timestamps parsed per `timestampSpec`, rows outside `intervals` thrown away, buckets by `segmentGranularity`,
 * `__time` truncated by `queryGranularity`, rollup on dimensions, parse exceptions counted against
 * `maxParseExceptions` (docs/druid-api.md §2.7 row counters, §5).
 */

export type Row = Record<string, unknown> & { __time: number };

/** `RowIngestionMetersTotals` (docs/druid-api.md §2.7). */
export interface RowCounters {
  processed: number;
  processedBytes: number;
  processedWithError: number;
  thrownAway: number;
  unparseable: number;
}

export interface ChunkData {
  interval: Interval;
  /** Rolled-up rows; null when the emulator did not keep them (synthetic sources). */
  rows: Row[] | null;
  numRows: number;
}

export interface IngestResult {
  counters: RowCounters;
  chunks: ChunkData[];
  dimensions: string[];
  metrics: string[];
  /** Saved parse-exception messages (up to `maxSavedParseExceptions`). */
  unparseableEvents: string[];
  /** Set when unparseable rows exceeded `maxParseExceptions`: Druid's failure message. */
  failure: string | null;
}

export function emptyCounters(): RowCounters {
  return { processed: 0, processedBytes: 0, processedWithError: 0, thrownAway: 0, unparseable: 0 };
}

/** Parses a timestamp value per `timestampSpec.format`; NaN when unparseable. */
export function parseTimestamp(value: unknown, format: string): number {
  if (value === null || value === undefined || value === "") return Number.NaN;
  const asNumber =
    typeof value === "number" ? value : /^-?\d+(\.\d+)?$/.test(String(value)) ? Number(value) : null;
  const f = format.toLowerCase();
  if (f === "millis") return asNumber ?? Number.NaN;
  if (f === "posix") return asNumber === null ? Number.NaN : asNumber * 1000;
  if (f === "micro") return asNumber === null ? Number.NaN : Math.floor(asNumber / 1000);
  if (f === "nano") return asNumber === null ? Number.NaN : Math.floor(asNumber / 1_000_000);
  const s = String(value).trim();
  if (f === "iso" || f === "auto") {
    if (f === "auto" && asNumber !== null) return asNumber;
    let dt = DateTime.fromISO(s, { zone: "utc" });
    if (!dt.isValid && f === "auto") dt = DateTime.fromSQL(s, { zone: "utc" });
    return dt.isValid ? dt.toMillis() : Number.NaN;
  }
  // A Joda pattern: its common letters mean the same in Luxon.
  const dt = DateTime.fromFormat(s, format, { zone: "utc" });
  return dt.isValid ? dt.toMillis() : Number.NaN;
}

/** Java's `Map#toString` rendering, as Druid prints events in parse-exception messages. */
function javaMap(o: Record<string, unknown>): string {
  return `{${Object.entries(o)
    .map(([k, v]) => `${k}=${v === null || typeof v !== "object" ? String(v) : JSON.stringify(v)}`)
    .join(", ")}}`;
}

function metricInput(m: MetricSpec, value: Record<string, unknown>): number {
  if (m.type === "count") return 1;
  const raw = m.fieldName === null ? null : value[m.fieldName];
  // A sketch metric's value is a Sketch (sql-sketches.ts), combined by union.
  if (m.type in SKETCH_METRICS) return sketchMetricInput(m.type, raw) as unknown as number;
  const n = typeof raw === "number" ? raw : Number(raw);
  if (raw === null || raw === undefined || !Number.isFinite(n)) return 0;
  return m.type.startsWith("long") ? Math.trunc(n) : n;
}

function combine(m: MetricSpec, a: number, b: number): number {
  if (m.type in SKETCH_METRICS) return unionSketches(a, b) as unknown as number;
  if (m.type.endsWith("Min")) return Math.min(a, b);
  if (m.type.endsWith("Max")) return Math.max(a, b);
  return a + b;
}

export function ingestRecords(input: RawInput, plan: IngestPlan): IngestResult {
  const schema = plan.dataSchema;
  const counters = emptyCounters();
  const unparseableEvents: string[] = [];
  const excluded = new Set([
    schema.timestamp.column,
    ...schema.dimensionExclusions,
    ...schema.metrics.map((m) => m.name),
    ...schema.metrics.flatMap((m) => (m.fieldName ? [m.fieldName] : [])),
  ]);
  const discovered: string[] = [];
  const discoveredSet = new Set<string>();
  const byChunk = new Map<number, { interval: Interval; rows: Map<string, Row> | Row[] }>();
  let failure: string | null = null;

  const parseError = (message: string) => {
    counters.unparseable++;
    if (unparseableEvents.length < plan.maxSavedParseExceptions) unparseableEvents.push(message);
    if (counters.unparseable + counters.processedWithError > plan.maxParseExceptions) {
      failure = `Max parse exceptions[${plan.maxParseExceptions}] exceeded`;
    }
  };

  for (const record of input.records) {
    if (failure) break;
    counters.processedBytes += record.bytes;
    const value = record.value;
    if (value === null) {
      parseError(`Unable to parse row [${record.raw}]`);
      continue;
    }
    const tsValue = value[schema.timestamp.column] ?? schema.timestamp.missingValue;
    const ts = parseTimestamp(tsValue, schema.timestamp.format);
    if (!Number.isFinite(ts)) {
      parseError(
        `Timestamp[${tsValue === undefined ? null : String(tsValue)}] is unparseable! Event: ${javaMap(value)}`,
      );
      continue;
    }
    if (schema.intervals && !schema.intervals.some((i) => ts >= i.start && ts < i.end)) {
      counters.thrownAway++;
      continue;
    }
    counters.processed++;
    if (schema.dimensions === null) {
      for (const k of Object.keys(value)) {
        if (!excluded.has(k) && !discoveredSet.has(k)) {
          discoveredSet.add(k);
          discovered.push(k);
        }
      }
    }
    const bucket = bucketOf(schema.segmentGranularity, ts);
    let chunk = byChunk.get(bucket.start);
    if (!chunk) {
      chunk = { interval: bucket, rows: schema.rollup ? new Map() : [] };
      byChunk.set(bucket.start, chunk);
    }
    const time =
      schema.queryGranularity.kind === "none"
        ? ts
        : Math.max(bucket.start, bucketStart(schema.queryGranularity, ts));
    const dims = schema.dimensions ?? discovered.map((name) => ({ name, type: "string" as const }));
    const row: Row = { __time: time };
    for (const d of dims) row[d.name] = dimValue(value[d.name], d.type);
    if (chunk.rows instanceof Map) {
      const key = JSON.stringify(dims.map((d) => row[d.name]).concat([time]));
      const existing = chunk.rows.get(key);
      if (existing) {
        for (const m of schema.metrics)
          existing[m.name] = combine(m, existing[m.name] as number, metricInput(m, value));
        continue;
      }
      for (const m of schema.metrics) row[m.name] = metricInput(m, value);
      chunk.rows.set(key, row);
    } else {
      for (const m of schema.metrics) row[m.name] = metricInput(m, value);
      chunk.rows.push(row);
    }
  }
  const chunks = [...byChunk.values()]
    .sort((a, b) => a.interval.start - b.interval.start)
    .map((c) => {
      const rows = c.rows instanceof Map ? [...c.rows.values()] : c.rows;
      for (const m of schema.metrics.filter((x) => x.finalize))
        for (const r of rows) r[m.name] = (r[m.name] as Sketch).keys.size;
      return { interval: c.interval, rows, numRows: rows.length };
    });
  return {
    counters,
    chunks,
    dimensions: schema.dimensions?.map((d) => d.name) ?? discovered,
    metrics: schema.metrics.map((m) => m.name),
    unparseableEvents,
    failure,
  };
}

function dimValue(v: unknown, type: string): unknown {
  if (v === undefined || v === null) return null;
  // Druid 33 indexes `json` and `auto` dimensions alike: nested columns typed by their values (json-value.ts).
  if (type === "json" || type === "auto") return jsonCell(v);
  if (type === "long") return Number.isFinite(Number(v)) ? Math.trunc(Number(v)) : null;
  if (type === "float" || type === "double") return Number.isFinite(Number(v)) ? Number(v) : null;
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : String(x)));
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/**
 * For sources the emulator does not read: `rows` spread evenly over the segment buckets of `intervals`
 * (no intervals → nothing to place, so no segments).
 */
export function syntheticIngest(rows: number, plan: IngestPlan): IngestResult {
  const schema = plan.dataSchema;
  const buckets = (schema.intervals ?? []).flatMap((i) =>
    bucketsOverlapping(schema.segmentGranularity, i).filter((b) => overlaps(b, i)),
  );
  const unique = buckets.filter((b, i) => buckets.findIndex((x) => x.start === b.start) === i);
  const counters = emptyCounters();
  counters.processed = unique.length === 0 ? 0 : rows;
  counters.processedBytes = counters.processed * 100;
  const per = unique.length === 0 ? 0 : Math.floor(rows / unique.length);
  const extra = unique.length === 0 ? 0 : rows % unique.length;
  const chunks = unique
    .map((interval, i) => ({ interval, rows: null, numRows: per + (i < extra ? 1 : 0) }))
    .filter((c) => c.numRows > 0);
  return {
    counters,
    chunks,
    dimensions: schema.dimensions?.map((d) => d.name) ?? [],
    metrics: schema.metrics.map((m) => m.name),
    unparseableEvents: [],
    failure: null,
  };
}
