import type { DruidResourceType } from "./probes.js";

/**
 * The shape of `segops doctor`'s report, `--json` included (docs/doctor.md documents it; keys are only ever
 * added). Pure types and the one rule that turns findings into an exit code.
 */

export type Severity = "blocker" | "warning" | "note";

/** One thing the doctor found, with the section it belongs to. */
export interface Finding {
  readonly severity: Severity;
  /** Stable key, e.g. `router-without-proxy`, `permission-denied`, `lint-index-hadoop`. */
  readonly code: string;
  readonly message: string;
  /** The template file it is about, if any. */
  readonly file?: string;
  /** The JSON path (or `query`) inside the template, if any. */
  readonly path?: string;
}

/** `can`: Druid served it (or refused the request itself, not the user); `cannot`: 401/403. */
export type PermissionVerdict = "can" | "cannot" | "absent" | "unknown" | "not-tried";

export interface PermissionResult {
  readonly id: string;
  /** `METHOD /path` as tried (the datasource filled in). */
  readonly api: string;
  readonly resource: DruidResourceType;
  readonly action: "READ" | "WRITE";
  readonly verdict: PermissionVerdict;
  /** HTTP status Druid answered, null when it did not answer or the call was not tried. */
  readonly status: number | null;
  readonly usedFor: string;
  /** What segops loses without it (set when the verdict is not `can`). */
  readonly cost: string | null;
  readonly required: boolean;
}

export interface BehaviourResult {
  readonly key: string;
  readonly applies: boolean;
  readonly what: string;
  readonly source: string;
}

export type RouterVerdict = "management-proxy" | "no-management-proxy" | "not-druid" | "direct" | "unknown";

export interface DoctorReport {
  /** Which cluster, by base URL per service (never credentials). */
  readonly endpoints: Readonly<Record<"overlord" | "coordinator" | "broker", string | null>>;
  readonly release: {
    /** What `/status` said (null: not read). */
    readonly reported: string | null;
    /** The release whose behaviour segops follows. */
    readonly behavesAs: number;
    readonly warning: string | null;
  };
  readonly behaviours: readonly BehaviourResult[];
  readonly router: { readonly verdict: RouterVerdict; readonly detail: string };
  readonly permissions: readonly PermissionResult[];
  readonly templates: readonly { readonly file: string; readonly dataSource: string | null }[];
  readonly findings: readonly Finding[];
  readonly blockers: number;
  /** 0: only notes and warnings; 1: at least one blocker. */
  readonly exitCode: 0 | 1;
}

/** Orders findings blockers first (stable inside each severity) and counts the blockers. */
export function settle(findings: readonly Finding[]): {
  findings: Finding[];
  blockers: number;
  exitCode: 0 | 1;
} {
  const rank: Record<Severity, number> = { blocker: 0, warning: 1, note: 2 };
  const sorted = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank[a.f.severity] - rank[b.f.severity] || a.i - b.i)
    .map((x) => x.f);
  const blockers = sorted.filter((f) => f.severity === "blocker").length;
  return { findings: sorted, blockers, exitCode: blockers > 0 ? 1 : 0 };
}
