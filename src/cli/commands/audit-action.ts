import type { Command } from "commander";
import { auditDatasource } from "../../jobs/actions.js";
import { connectDruid } from "../context.js";
import type { DruidFlags } from "../options.js";
import { writers } from "./render.js";

/** `segops audit`'s implementation, loaded when the command runs (its flags are in audit.ts). */

export type AuditFlags = DruidFlags & { interval?: string; granularity?: string; json?: boolean };

export async function auditAction(datasource: string, flags: AuditFlags, cmd: Command): Promise<void> {
  const { out } = writers(cmd);
  const client = await connectDruid(flags);
  try {
    const report = await auditDatasource(client, {
      datasource,
      ...(flags.interval ? { interval: flags.interval } : {}),
      ...(flags.granularity ? { granularity: flags.granularity } : {}),
    });
    // Nothing to audit is not a pass: a misspelt datasource would otherwise read "AUDIT OK".
    if (report.noSegments) {
      if (flags.json) {
        const { noSegments: _n, problem, ...rest } = report;
        out(`${JSON.stringify({ ...rest, ok: false, noSegments: true, problem }, null, 2)}\n`);
      } else out(`AUDIT FAILED: ${report.problem}\n`);
      process.exitCode = 1;
      return;
    }
    const { noSegments: _n, ...shown } = report;
    if (flags.json) out(`${JSON.stringify(shown, null, 2)}\n`);
    else {
      for (const c of report.chunks) {
        out(
          `${c.interval}  ${c.liveVersions.join(",") || "(none)"}  rows ${c.rows ?? "?"}  segments ${c.segments}${c.notes.length ? `  (${c.notes.join("; ")})` : ""}\n`,
        );
      }
      for (const v of report.violations) out(`VIOLATION ${v.chunk} ${v.kind}: ${v.message}\n`);
      if (report.compactionCandidates.length > 0) {
        out(
          `${report.compactionCandidates.length} segment(s) outside the target size band (compaction candidates)\n`,
        );
      }
      out(
        report.ok
          ? `AUDIT OK: ${report.chunks.length} chunk(s), ${report.totals.rows ?? "?"} rows\n`
          : `AUDIT FAILED: ${report.violations.length} violation(s)\n`,
      );
    }
    process.exitCode = report.ok ? 0 : 1;
  } finally {
    await client.close();
  }
}
