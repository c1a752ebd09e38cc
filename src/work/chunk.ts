/**
 * The key two partitions share when they must never run at once: the same datasource time chunk (they would
 * fight over Druid's lock, or one would delete what the other is restoring). Ingestion, compaction, kill and
 * rollback of a chunk all use it. The interval is written canonically, so `2020-01-01/2020-01-02` and
 * Druid's `2020-01-01T00:00:00.000Z/2020-01-02T00:00:00.000Z` are one key.
 */
export function chunkExclusionKey(datasource: string, interval: string): string {
  // Instants parsed here (not with parseInterval): the rest of this module's imports stay as they are.
  const canonical = interval
    .split("/")
    .map((t) => (Number.isNaN(Date.parse(t)) ? t : new Date(Date.parse(t)).toISOString()))
    .join("/");
  return `${datasource}|${canonical}`;
}
