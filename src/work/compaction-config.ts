import type { SizeBand } from "./audit.js";

/**
 * The rows cap a datasource's auto-compaction config sets (Druid's `DataSourceCompactionConfig`, one entry of
 * `compactionConfigs` in `GET /druid/coordinator/v1/config/compaction`): the candidate rule and `segops compact`
 * judge a chunk by the segments Druid's own compaction would write, not by a fixed default. Pure.
 */

export interface CompactionRows {
  /** Most rows per segment a compaction of this datasource writes. */
  maxRows: number;
  /** Where it was read (`tuningConfig.partitionsSpec.maxRowsPerSegment`, …), for reports. */
  from: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const positive = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.floor(v) : null;

/** The datasource's entry of the cluster compaction config, or null when auto-compaction is not configured. */
export function datasourceCompactionConfig(
  clusterConfig: unknown,
  datasource: string,
): Record<string, unknown> | null {
  const list = isRecord(clusterConfig) ? clusterConfig.compactionConfigs : undefined;
  if (!Array.isArray(list)) return null;
  return list.find((c): c is Record<string, unknown> => isRecord(c) && c.dataSource === datasource) ?? null;
}

/**
 * The rows cap of a datasource compaction config: the partitionsSpec's `maxRowsPerSegment` (dynamic, range),
 * else its `targetRowsPerSegment` (hashed, range), else the deprecated top-level `maxRowsPerSegment`; a
 * dynamic spec's `maxTotalRows` lowers it (Druid pushes every segment once that many rows are pending).
 * Null when the config names none (Druid's default then, as the band's).
 */
export function compactionRows(config: Record<string, unknown> | null): CompactionRows | null {
  if (!config) return null;
  const tuning = isRecord(config.tuningConfig) ? config.tuningConfig : {};
  const spec = isRecord(tuning.partitionsSpec) ? tuning.partitionsSpec : {};
  const named: Array<[string, unknown]> = [
    ["tuningConfig.partitionsSpec.maxRowsPerSegment", spec.maxRowsPerSegment],
    ["tuningConfig.partitionsSpec.targetRowsPerSegment", spec.targetRowsPerSegment],
    ["maxRowsPerSegment", config.maxRowsPerSegment],
  ];
  let cap: CompactionRows | null = null;
  for (const [from, value] of named) {
    const rows = positive(value);
    if (rows !== null) {
      cap = { maxRows: rows, from };
      break;
    }
  }
  const total = positive(spec.maxTotalRows);
  if (total !== null && (cap === null || total < cap.maxRows))
    cap = { maxRows: total, from: "tuningConfig.partitionsSpec.maxTotalRows" };
  return cap;
}

/** The size band with the datasource's compaction rows cap, when its config names one. */
export function bandWithCompactionConfig(band: SizeBand, config: Record<string, unknown> | null): SizeBand {
  const rows = compactionRows(config);
  return rows ? { ...band, maxRows: rows.maxRows } : band;
}
