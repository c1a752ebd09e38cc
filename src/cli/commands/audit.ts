import type { Command } from "commander";
import { parseGranularity } from "../../core/granularity.js";
import { formatInterval, type Interval, parseInterval } from "../../core/interval.js";
import { auditTimeline } from "../../ingest/audit.js";
import { toTimelineSegment } from "../../ingest/segments.js";
import { connectDruid } from "../context.js";
import { addDruidOptions, type DruidFlags } from "../options.js";
import { writers } from "./render.js";

const ALL_TIME: Interval = parseInterval("1000-01-01/3000-01-01");

/** `segops audit`: the version audit on demand, over any range of any datasource. */
export function registerAudit(program: Command): void {
  addDruidOptions(
    program
      .command("audit <datasource>")
      .description("check that every time chunk has exactly one live, served version and no doubled appends")
      .option("--interval <interval>", "range to audit (default: all time)")
      .option("--granularity <g>", "time chunk size (default: each live segment interval is a chunk)")
      .option("--json", "print the audit report as JSON")
      .addHelpText(
        "after",
        [
          "",
          "Exit 0 when the audit holds; exit 1 on a violation or when the range has no segments",
          "(a misspelt datasource is not a pass); 2 on bad input; 4 when Druid cannot be reached.",
        ].join("\n"),
      ),
  ).action(
    async (
      datasource: string,
      flags: DruidFlags & { interval?: string; granularity?: string; json?: boolean },
      cmd: Command,
    ) => {
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
    },
  );
}
