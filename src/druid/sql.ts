import type { SegmentLoadCounts, SqlParameter } from "./types.js";

/**
 * The handoff query Druid itself uses (MSQ `SegmentLoadStatusFetcher.LOAD_QUERY`, docs/druid-api.md §3.6),
 * built with dynamic parameters instead of string interpolation so no datasource or version can inject SQL.
 * With no versions it counts every non-overshadowed segment of the datasource.
 */
export function segmentLoadQuery(
  datasource: string,
  versions: readonly string[],
): { query: string; parameters: SqlParameter[] } {
  const versionClause =
    versions.length === 0 ? "" : ` AND (${versions.map(() => "version = ?").join(" OR ")})`;
  const query = [
    "SELECT COUNT(*) AS usedSegments,",
    "COUNT(*) FILTER (WHERE is_published = 1 AND replication_factor > 0) AS precachedSegments,",
    "COUNT(*) FILTER (WHERE is_published = 1 AND replication_factor = 0) AS onDemandSegments,",
    "COUNT(*) FILTER (WHERE is_available = 0 AND is_published = 1 AND replication_factor != 0) AS pendingSegments,",
    "COUNT(*) FILTER (WHERE replication_factor = -1) AS unknownSegments",
    "FROM sys.segments",
    `WHERE datasource = ? AND is_overshadowed = 0${versionClause}`,
  ].join("\n");
  const parameters: SqlParameter[] = [
    { type: "VARCHAR", value: datasource },
    ...versions.map((v): SqlParameter => ({ type: "VARCHAR", value: v })),
  ];
  return { query, parameters };
}

const COUNT_KEYS: Array<keyof SegmentLoadCounts> = [
  "usedSegments",
  "precachedSegments",
  "onDemandSegments",
  "pendingSegments",
  "unknownSegments",
];

/** Reads the single row of `segmentLoadQuery` (counts may arrive as numbers or numeric strings). */
export function parseSegmentLoadRow(row: Record<string, unknown> | undefined): SegmentLoadCounts {
  const counts = {} as SegmentLoadCounts;
  for (const key of COUNT_KEYS) {
    const n = Number(row?.[key] ?? 0);
    counts[key] = Number.isFinite(n) ? n : 0;
  }
  return counts;
}

/**
 * Druid's own completion rule: nothing pending and no replication still unknown; with `expectedSegments`
 * (e.g. the task's `segmentsPublished`), also at least that many used segments visible to the Broker,
 * which guards against its up-to-a-minute stale segment cache (§3.6 "Staleness").
 */
export function isHandedOff(counts: SegmentLoadCounts, expectedSegments?: number): boolean {
  return (
    counts.pendingSegments === 0 &&
    counts.unknownSegments === 0 &&
    (expectedSegments === undefined || counts.usedSegments >= expectedSegments)
  );
}
