import type { KindOfWork } from "../driver/kind.js";
import { ingestKind } from "../ingest/kind.js";
import { compactKind } from "../ops/compact/kind.js";
import { killKind } from "../ops/kill/kind.js";
import { rollbackKind } from "../ops/rollback/kind.js";
import type { DruidServices } from "../work/services.js";

/**
 * Every kind of work this build runs, by ledger task kind. A new kind is one folder and one line here;
 * the engine, reports, `status`, `dlq`, `retry` and `cancel` find it through this list.
 */
export const KINDS: readonly KindOfWork<DruidServices, never>[] = [
  ingestKind,
  rollbackKind,
  killKind,
  compactKind,
];

/** The kinds of job this build runs (`run`, `backfill`, and each other kind's own name), from the registry. */
export function jobKinds(kinds: readonly KindOfWork<never, never>[] = KINDS): string[] {
  return kinds.flatMap((k) => k.jobKinds ?? [k.name]);
}
