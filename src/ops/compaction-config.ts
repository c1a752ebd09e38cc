import { datasourceCompactionConfig } from "../work/compaction-config.js";

/** The one read the compaction-candidate rule needs (a `DruidClient` satisfies it). */
export interface CompactionConfigSource {
  compactionConfig(options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
}

/**
 * The datasource's auto-compaction config from the cluster compaction config (`GET
 * /druid/coordinator/v1/config/compaction`, docs/druid-api.md §3.9), or null when none is set or it cannot be
 * read (config read permission, an older Druid): the size band alone judges the chunks then.
 */
export async function readCompactionConfig(
  client: CompactionConfigSource,
  datasource: string,
  signal?: AbortSignal,
): Promise<Record<string, unknown> | null> {
  try {
    return datasourceCompactionConfig(await client.compactionConfig(signal ? { signal } : {}), datasource);
  } catch {
    return null;
  }
}
