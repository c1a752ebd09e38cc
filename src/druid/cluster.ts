import { UsageError } from "../core/errors.js";

/**
 * Which Druid a job belongs to. A shared ledger (one `.segops/ledger.db` per directory, or one
 * PostgreSQL for a team) holds jobs for several clusters; a job records the cluster it was planned for
 * and refuses to run anywhere else, so a partition of `prod` is never ingested into `stage`.
 *
 * Druid exposes no cluster id over HTTP (`/status` carries the version and modules only), so the
 * identity is the set of base URLs, normalised by the URL parser and without credentials.
 */
export interface ClusterBinding {
  overlord: string | null;
  coordinator: string | null;
  broker: string | null;
}

/** The cluster a client talks to (anything with the client's `endpoints`). */
export function clusterOf(client: { endpoints: ClusterBinding }): ClusterBinding {
  const e = client.endpoints;
  return { overlord: e.overlord, coordinator: e.coordinator, broker: e.broker };
}

/** The binding stored in a job's options, or null for jobs planned before bindings existed. */
export function jobCluster(job: { options: Record<string, unknown> }): ClusterBinding | null {
  const c = job.options.cluster as Record<string, unknown> | undefined | null;
  if (!c || typeof c !== "object") return null;
  const url = (v: unknown) => (typeof v === "string" ? v : null);
  return { overlord: url(c.overlord), coordinator: url(c.coordinator), broker: url(c.broker) };
}

/** Overlord and Coordinator decide where data goes; the Broker only answers SQL, so it may differ. */
export function sameCluster(a: ClusterBinding, b: ClusterBinding): boolean {
  return a.overlord === b.overlord && a.coordinator === b.coordinator;
}

export function describeCluster(c: ClusterBinding): string {
  return c.overlord === c.coordinator
    ? (c.overlord ?? "(none)")
    : `overlord ${c.overlord ?? "(none)"}, coordinator ${c.coordinator ?? "(none)"}`;
}

/** A job asked to run against a cluster other than its own: exit 2, nothing claimed or submitted. */
export class ClusterMismatchError extends UsageError {
  constructor(jobId: string, bound: ClusterBinding, given: ClusterBinding) {
    super(
      `job ${jobId} belongs to the Druid at ${describeCluster(bound)}, not ${describeCluster(given)}: point --druid (or --overlord/--coordinator) at its cluster, or plan a new job for this one (the same command names a new job per cluster)`,
      { jobId, bound, given },
    );
  }
}

/** Throws unless `job` may run through a client for `given`. Jobs without a binding (older ledgers) may. */
export function assertJobCluster(
  job: { id: string; options: Record<string, unknown> },
  given: ClusterBinding,
): void {
  const bound = jobCluster(job);
  if (bound && !sameCluster(bound, given)) throw new ClusterMismatchError(job.id, bound, given);
}
