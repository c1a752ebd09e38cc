import type { DoctorReport, PermissionResult } from "./report.js";

/** The human form of a doctor report (stdout of `segops doctor` without --json). Pure. */
export function formatReport(r: DoctorReport): string {
  const lines: string[] = [];
  const where =
    r.endpoints.overlord === r.endpoints.coordinator
      ? r.endpoints.overlord
      : `${r.endpoints.overlord} (Overlord), ${r.endpoints.coordinator} (Coordinator)`;
  lines.push(`Druid at ${where}`);
  lines.push(
    r.release.reported
      ? `release: Druid ${r.release.reported}${r.release.behavesAs !== Number.parseInt(r.release.reported, 10) ? ` (segops follows Druid ${r.release.behavesAs})` : ""}`
      : `release: unknown (segops follows Druid ${r.release.behavesAs})`,
  );
  lines.push("", `what segops does on Druid ${r.release.behavesAs}:`);
  for (const b of r.behaviours) lines.push(`  ${b.applies ? "yes" : "no "}  ${b.key}: ${b.what}`);
  lines.push("", `management API: ${r.router.verdict}: ${r.router.detail}`);
  lines.push("", "permissions (tried read-only):");
  for (const p of r.permissions) lines.push(`  ${permissionLine(p)}`);
  if (r.templates.length > 0) {
    lines.push("", "templates:");
    for (const t of r.templates)
      lines.push(`  ${t.file}: datasource ${t.dataSource ?? "(not named without placeholders)"}`);
  }
  lines.push("", r.findings.length === 0 ? "findings: none" : "findings:");
  for (const f of r.findings) {
    const at = f.file ? `${f.file}${f.path ? `: ${f.path}` : ""}: ` : "";
    lines.push(`  ${f.severity.padEnd(7)} ${at}${f.message}`);
  }
  lines.push(
    "",
    r.blockers === 0
      ? "ready: no blocker"
      : `not ready: ${r.blockers} blocker${r.blockers === 1 ? "" : "s"} (${[...new Set(r.findings.filter((f) => f.severity === "blocker").map((f) => f.code))].join(", ")})`,
  );
  return `${lines.join("\n")}\n`;
}

function permissionLine(p: PermissionResult): string {
  const status = p.status === null ? "no answer" : `HTTP ${p.status}`;
  const head = `${p.verdict.padEnd(6)} ${p.api} (${p.resource} ${p.action}; ${status})`;
  return p.verdict === "can" ? `${head}: ${p.usedFor}` : `${head}: ${p.cost}`;
}
