import { type ClusterBinding, jobCluster, sameCluster } from "../../druid/cluster.js";
import type { Store } from "../../ledger/store.js";

const JOB_PAGE = 500;

/**
 * The versions segops published to a datasource on this cluster, from the ledger: an ingestion partition's
 * `version` and a compaction's `liveVersion` (what the timeline colours "ours"). Reads the job list page by
 * page and the partitions of this datasource's jobs only.
 */
export async function ourVersions(
  store: Store,
  datasource: string,
  cluster: ClusterBinding,
): Promise<Set<string>> {
  const versions = new Set<string>();
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await store.listJobs({ limit: JOB_PAGE, ...(after ? { after } : {}) });
    for (const job of page) {
      if (job.options.datasource !== datasource) continue;
      const bound = jobCluster(job);
      if (bound && !sameCluster(bound, cluster)) continue;
      for (const task of await store.listTasks(job.id)) {
        for (const v of [task.progress.version, task.progress.liveVersion])
          if (typeof v === "string" && v) versions.add(v);
      }
    }
    const last = page[page.length - 1];
    if (!last || page.length < JOB_PAGE) return versions;
    after = { createdAt: last.createdAt, id: last.id };
  }
}
