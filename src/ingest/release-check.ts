import { parseInterval } from "../core/interval.js";
import { type DruidCapabilities, NEWEST_KNOWN_MAJOR, OLDEST_SUPPORTED_MAJOR } from "../druid/capabilities.js";
import { InvalidSpecError, type SpecIssue } from "../spec/issues.js";
import { validateSpec } from "../spec/validate.js";
import type { PlannedJob } from "./plan.js";
import type { IngestPayload } from "./types.js";

/**
 * The release whose rules a plan is checked against once segops knows its cluster, or null when the plan's own
 * check (Druid 33's rules, the oldest segops supports) is all there is to do: the version could not be read, or
 * it is 33 or older. A release newer than segops knows is checked as the newest it knows (what it assumes there).
 */
export function releaseToCheck(capabilities: DruidCapabilities): number | null {
  const major = capabilities.version?.major;
  if (major === undefined || major <= OLDEST_SUPPORTED_MAJOR) return null;
  return Math.min(major, NEWEST_KNOWN_MAJOR);
}

/**
 * What the cluster's release refuses in a plan that Druid 33's rules let through. A plan is made before segops
 * connects (bad input exits 2 even with Druid down), so it is validated with the oldest release's rules, where
 * what a later release refuses (a `parser` from 37, a dynamic size ≤ 0 from 36, an unknown dimension type from 35)
 * is a warning naming that release. Once the release is read, the partitions the planner validated in full (the
 * first and the last; the others validate alike, spec/partitions.ts) are validated again with its rules, so such
 * a spec stops before anything is stored or submitted instead of failing at Druid partition by partition. The
 * release rules are about the template, never one partition's interval. SQL templates have no release rules yet.
 */
export function releaseErrors(plan: PlannedJob, druidVersion: number): SpecIssue[] {
  const ends = plan.tasks.length > 1 ? [plan.tasks[0], plan.tasks[plan.tasks.length - 1]] : plan.tasks;
  const errors = new Map<string, SpecIssue>();
  for (const task of ends) {
    const payload = task?.payload as unknown as IngestPayload | undefined;
    if (!payload || payload.kind === "sql") continue;
    const result = validateSpec(payload.spec, { partition: parseInterval(payload.interval), druidVersion });
    for (const e of result.errors)
      errors.set(`${e.path}\n${e.message}`, {
        path: e.path,
        message: `${payload.interval}: ${e.message} (the cluster runs Druid ${druidVersion})`,
      });
  }
  return [...errors.values()];
}

/**
 * {@link releaseErrors} as the refusal a request gets: an `InvalidSpecError` before anything is stored. Does nothing
 * while the release is unknown (`capabilities` null: not read yet, e.g. Druid down since the service started);
 * Druid then refuses such a spec at submission, a partition failing with Druid's words.
 */
export function refuseForRelease(
  plan: PlannedJob,
  capabilities: DruidCapabilities | null,
  template: string | undefined,
): void {
  const release = capabilities ? releaseToCheck(capabilities) : null;
  if (release === null) return;
  const errors = releaseErrors(plan, release);
  if (errors.length > 0) throw new InvalidSpecError(errors, { ...(template ? { template } : {}) });
}
