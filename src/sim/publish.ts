import { bucketsOverlapping } from "../core/granularity.js";
import { type Interval, overlaps } from "../core/interval.js";
import { segmentId } from "./ids.js";
import type { ChunkData, IngestResult, Row } from "./ingest.js";
import { instantText } from "./instant-text.js";
import { nestedColumnType } from "./json-value.js";
import type { IngestPlan, PartitionsPlan } from "./plans.js";
import { hash32 } from "./rng.js";
import { isUsed, type SegmentStore, type SimSegment } from "./timeline.js";

/**
 * Turns a successful ingestion into the segments Druid would publish (docs/druid-api.md §4.1–§4.3):
 * REPLACE_LEGACY gives every chunk with data a new version; REPLACE also publishes tombstones for empty buckets
 * of `intervals` that overlap visible data; APPEND joins the chunk's live version with new partition numbers.
 */
export interface PublishRequest {
  taskId: string;
  dataSource: string;
  plan: IngestPlan;
  result: IngestResult;
  /** The task's lock version (ISO time). */
  version: string;
  now: number;
  servedAt: number | null;
  store: SegmentStore;
}

export interface Part {
  rows: Row[] | null;
  numRows: number;
  shardSpec: (partitionNum: number, core: number) => Record<string, unknown>;
}

/**
 * SQL types of the ingested columns, as the Broker's schema reports them (`INFORMATION_SCHEMA.COLUMNS`): string
 * dimensions VARCHAR, `long` BIGINT, `float` FLOAT, `double` DOUBLE; `count` and `long*` metrics BIGINT,
 * `double*` DOUBLE, `float*` FLOAT. Other column types (json, auto, sketches) are reported as VARCHAR / OTHER.
 */
export function columnTypes(plan: IngestPlan, result: IngestResult): Record<string, string> {
  const out: Record<string, string> = {};
  const dims = new Map((plan.dataSchema.dimensions ?? []).map((d) => [d.name, d.type]));
  for (const d of result.dimensions) {
    const t = dims.get(d) ?? "string";
    out[d] =
      t === "long"
        ? "BIGINT"
        : t === "float"
          ? "FLOAT"
          : t === "double"
            ? "DOUBLE"
            : t === "json" || t === "auto"
              ? result.chunks.some((c) => c.rows === null)
                ? "OTHER"
                : nestedColumnType(result.chunks.flatMap((c) => (c.rows ?? []).map((r) => r[d])))
              : "VARCHAR";
  }
  for (const m of plan.dataSchema.metrics) {
    const t = m.type;
    out[m.name] =
      t === "count" || t.startsWith("long") || m.finalize
        ? "BIGINT"
        : t.startsWith("double")
          ? "DOUBLE"
          : t.startsWith("float")
            ? "FLOAT"
            : "OTHER";
  }
  return out;
}

export function buildSegments(req: PublishRequest): SimSegment[] {
  const { plan, result, store, dataSource, now } = req;
  const visible = store.visible(dataSource, now);
  const types = columnTypes(plan, result);
  const out: SimSegment[] = [];
  const make = (
    interval: Interval,
    version: string,
    partitionNum: number,
    core: number,
    part: Part | null,
  ) => {
    const tombstone = part === null;
    const numRows = part?.numRows ?? 0;
    out.push({
      id: segmentId(dataSource, interval, version, partitionNum),
      dataSource,
      interval,
      version,
      partitionNum,
      corePartitions: core,
      shardSpec: tombstone
        ? { type: "tombstone", partitionNum: 0, partitions: 1 }
        : (part as Part).shardSpec(partitionNum, core),
      size: tombstone ? 1 : segmentSize(numRows, result.dimensions.length, result.metrics.length),
      numRows,
      dimensions: tombstone ? [] : result.dimensions,
      metrics: tombstone ? [] : result.metrics,
      ...(tombstone ? {} : { columnTypes: types }),
      loadSpec: tombstone
        ? { type: "tombstone", path: null }
        : {
            type: "local",
            path: `/druid/segments/${dataSource}/${instantText(interval.start)}_${instantText(interval.end)}/${version}/${partitionNum}/index.zip`,
          },
      tombstone,
      taskId: req.taskId,
      publishedAt: now,
      servedAt: req.servedAt,
      unusedAt: null,
      rows: part?.rows ?? null,
      ...(tombstone ? {} : { rollup: plan.dataSchema.rollup }),
    });
  };

  for (const chunk of result.chunks) {
    const parts = partition(chunk, plan.partitions, result.dimensions);
    const existing = visible.filter(
      (s) =>
        s.interval.start === chunk.interval.start && s.interval.end === chunk.interval.end && !s.tombstone,
    );
    if (plan.mode === "APPEND" && existing.length > 0) {
      const version = existing
        .map((s) => s.version)
        .sort()
        .at(-1) as string;
      const group = existing.filter((s) => s.version === version);
      const core = Math.max(...group.map((s) => s.corePartitions));
      let next = Math.max(...group.map((s) => s.partitionNum)) + 1;
      for (const part of parts) make(chunk.interval, version, next++, core, part);
    } else {
      parts.forEach((part, i) => {
        make(chunk.interval, req.version, i, parts.length, part);
      });
    }
  }

  if (plan.mode === "REPLACE" && plan.dataSchema.intervals) {
    const withData = new Set(result.chunks.map((c) => c.interval.start));
    const seen = new Set<number>();
    for (const interval of plan.dataSchema.intervals) {
      for (const bucket of bucketsOverlapping(plan.dataSchema.segmentGranularity, interval)) {
        if (withData.has(bucket.start) || seen.has(bucket.start)) continue;
        seen.add(bucket.start);
        if (visible.some((s) => isUsed(s, now) && overlaps(s.interval, bucket))) {
          make(bucket, req.version, 0, 1, null);
        }
      }
    }
  }
  return out;
}

/** Segment size in bytes: a modelled columnar footprint (header + per-row per-column cost). */
export function segmentSize(rows: number, dims: number, metrics: number): number {
  return 4096 + rows * (16 + 24 * dims + 8 * metrics);
}

/** Splits one chunk into partitions per `partitionsSpec` (docs/druid-api.md §3.5 shard specs). */
export function partition(chunk: ChunkData, spec: PartitionsPlan, dimensions: string[]): Part[] {
  const n =
    spec.type === "hashed" && spec.numShards !== null
      ? Math.max(1, spec.numShards)
      : Math.max(1, Math.ceil(chunk.numRows / spec.maxRowsPerSegment));
  const groups = split(chunk, n, spec, dimensions);
  if (spec.type === "dynamic") {
    return groups.map((g) => ({
      ...g,
      shardSpec: (partitionNum, core) => ({ type: "numbered", partitionNum, partitions: core }),
    }));
  }
  if (spec.type === "hashed") {
    const dims = spec.partitionDimensions;
    return groups
      .map((g, bucketId) => ({ g, bucketId }))
      .filter(({ g }) => g.numRows > 0)
      .map(({ g, bucketId }) => ({
        ...g,
        shardSpec: (partitionNum, core) => ({
          type: "hashed",
          partitionNum,
          partitions: core,
          bucketId,
          numBuckets: n,
          partitionDimensions: dims,
          partitionFunction: "murmur3_32_abs",
        }),
      }));
  }
  const dims = spec.partitionDimensions;
  const key = (r: Row | undefined) => (r ? dims.map((d) => (r[d] === null ? null : String(r[d]))) : null);
  return groups.map((g, i) => {
    const start = i === 0 ? null : key(g.rows?.[0]);
    const end = i === groups.length - 1 ? null : key(groups[i + 1]?.rows?.[0]);
    return {
      ...g,
      shardSpec: (partitionNum, core) =>
        spec.type === "single_dim"
          ? {
              type: "single",
              dimension: dims[0],
              start: start?.[0] ?? null,
              end: end?.[0] ?? null,
              partitionNum,
              numCorePartitions: core,
            }
          : { type: "range", dimensions: dims, start, end, partitionNum, numCorePartitions: core },
    };
  });
}

function split(
  chunk: ChunkData,
  n: number,
  spec: PartitionsPlan,
  dimensions: string[],
): Array<{ rows: Row[] | null; numRows: number }> {
  if (chunk.rows === null) {
    const per = Math.floor(chunk.numRows / n);
    return Array.from({ length: n }, (_, i) => ({
      rows: null,
      numRows: per + (i < chunk.numRows % n ? 1 : 0),
    }));
  }
  let rows = chunk.rows;
  if (spec.type === "hashed") {
    const dims = spec.partitionDimensions.length > 0 ? spec.partitionDimensions : dimensions;
    const buckets: Row[][] = Array.from({ length: n }, () => []);
    for (const r of rows) {
      const h = hash32(JSON.stringify([r.__time, ...dims.map((d) => r[d] ?? null)]));
      (buckets[h % n] as Row[]).push(r);
    }
    return buckets.map((b) => ({ rows: b, numRows: b.length }));
  }
  if (spec.type === "range" || spec.type === "single_dim") {
    const dims = spec.partitionDimensions;
    rows = [...rows].sort((a, b) => {
      for (const d of dims) {
        const x = String(a[d] ?? "");
        const y = String(b[d] ?? "");
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    });
  }
  const size = Math.ceil(rows.length / n);
  return Array.from({ length: n }, (_, i) => {
    const part = rows.slice(i * size, (i + 1) * size);
    return { rows: part, numRows: part.length };
  }).filter((p, i) => i === 0 || p.numRows > 0);
}
