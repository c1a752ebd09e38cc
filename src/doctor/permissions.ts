import type { ApiProbe } from "./probes.js";
import type { Finding, PermissionResult, PermissionVerdict } from "./report.js";

/**
 * What one probe's answer says about a permission. Pure. A 400 is Druid reading the request after it let the
 * user in (resource filters run before the body is read), so it counts as allowed; 401/403 is the refusal;
 * 404/405 is an API this URL does not serve (an old release, or a Router without its management proxy).
 */
export function verdictOf(status: number | null, notFoundIsEmpty = false): PermissionVerdict {
  if (status === null) return "unknown";
  if (status === 404 && notFoundIsEmpty) return "can";
  if (status === 401 || status === 403) return "cannot";
  if (status === 404 || status === 405) return "absent";
  if ((status >= 200 && status < 300) || status === 400) return "can";
  return "unknown";
}

export function permissionResult(
  probe: ApiProbe,
  api: string,
  status: number | null,
  routerBlocked = false,
): PermissionResult {
  // Behind a Router without its proxy a 404 is the Router's, not the resource's.
  const verdict = verdictOf(status, probe.notFoundIsEmpty === true && !routerBlocked);
  return {
    id: probe.id,
    api,
    resource: probe.resource,
    action: probe.action,
    verdict,
    status,
    usedFor: probe.usedFor,
    cost: verdict === "can" ? null : probe.cost,
    required: probe.required,
  };
}

/** The findings of the permission table: a refused required API is a blocker, any other refusal a warning. */
export function permissionFindings(results: readonly PermissionResult[], routerBlocked: boolean): Finding[] {
  const findings: Finding[] = [];
  const refused = results.filter((r) => r.verdict === "cannot");
  if (refused.some((r) => r.status === 401)) {
    findings.push({
      severity: "blocker",
      code: "unauthenticated",
      message:
        "Druid answered 401: the credentials were not accepted (check --user and its password, or the token)",
    });
  }
  for (const r of refused) {
    findings.push({
      severity: r.required ? "blocker" : "warning",
      code: "permission-denied",
      message: `${r.api} refused (HTTP ${r.status}; needs ${r.resource} ${r.action}): ${r.cost}`,
    });
  }
  // Behind a Router without its proxy every management API is absent: the router finding says it once.
  if (!routerBlocked) {
    for (const r of results.filter((x) => x.verdict === "absent")) {
      findings.push({
        severity: r.required ? "blocker" : "note",
        code: "api-absent",
        message: `${r.api} is not served here (HTTP ${r.status}): ${r.cost}`,
      });
    }
  }
  for (const r of results.filter((x) => x.verdict === "unknown" && x.status !== null)) {
    findings.push({
      severity: "note",
      code: "api-unknown",
      message: `${r.api} answered HTTP ${r.status}: whether segops may use it is unknown`,
    });
  }
  return findings;
}
