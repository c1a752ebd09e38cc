import type { KindOfWork } from "../driver/kind.js";
import type { DruidServices } from "../work/services.js";
import { REGISTRY } from "./registry.js";

/**
 * Every kind of work this build runs (the registry, jobs/registry.ts, loaded), by ledger task kind: the
 * engine, reports, `status`, `dlq`, `retry` and `cancel` find a kind through this list.
 */
export const KINDS: readonly KindOfWork<DruidServices, never>[] = await Promise.all(
  REGISTRY.map((r) => r.kind()),
);

/** The kinds of job this build runs (`run`, `backfill`, and each other kind's own name), from the registry. */
export function jobKinds(kinds: readonly KindOfWork<never, never>[] = KINDS): string[] {
  return kinds.flatMap((k) => k.jobKinds ?? [k.name]);
}
