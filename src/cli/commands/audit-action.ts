import type { Command } from "commander";
import { parseGranularity } from "../../core/granularity.js";
import { formatInterval, type Interval, parseInterval } from "../../core/interval.js";
import { auditTimeline } from "../../ingest/audit.js";
import { toTimelineSegment } from "../../ingest/segments.js";
import { connectDruid } from "../context.js";
import type { DruidFlags } from "../options.js";
import { writers } from "./render.js";

/** `segops audit`'s implementation, loaded when the command runs (its flags are in audit.ts). */

export type AuditFlags = DruidFlags & { interval?: string; granularity?: string; json?: boolean };

const ALL_TIME: Interval = parseInterval("1000-01-01/3000-01-01");

export async function auditAction(datasource: string, flags: AuditFlags, cmd: Command): Promise<void> {
  const { out } = writers(cmd);
  const interval = flags.interval ? parseInterval(flags.interval) : ALL_TIME;
  const granularity = flags.granularity ? parseGranularity(flags.granularity) : undefined;
  const client = await connectDruid(flags);
  try {
    const [used, served] = await Promise.all([
      client.metadataSegments(datasource, [formatInterval(interval)]),
      client.servedSegments(datasource),
    ]);
    const servedIds = new Set(served);
    const report = auditTimeline({
      datasource,
      interval,
      segments: used.map((s) => toTimelineSegment(s, servedIds)),
      ...(granularity ? { granularity } : {}),
    });
    // Nothing to audit is not a pass: a misspelt datasource would otherwise read "AUDIT OK".
    if (used.length === 0) {
      const range = flags.interval ? formatInterval(interval) : "all time";
      const problem = `no segments of ${datasource} in ${range}; check the datasource name and --interval`;
      if (flags.json)
        out(`${JSON.stringify({ ...report, ok: false, noSegments: true, problem }, null, 2)}\n`);
      else out(`AUDIT FAILED: ${problem}\n`);
      process.exitCode = 1;
      return;
    }
    if (flags.json) out(`${JSON.stringify(report, null, 2)}\n`);
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
