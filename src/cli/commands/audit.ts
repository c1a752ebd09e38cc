import type { Command } from "commander";
import { addDruidOptions, addLedgerOption } from "../options.js";
import type { AuditFlags } from "./audit-action.js";

/**
 * `segops audit`: the version audit on demand, over any range of any datasource. The implementation
 * (audit-action.ts) is imported when the command runs.
 */
export function registerAudit(program: Command): void {
  addLedgerOption(
    addDruidOptions(
      program
        .command("audit <datasource>")
        .description(
          "check that every time chunk has exactly one live, served version and no doubled appends; list the gaps",
        )
        .option("--interval <interval>", "range to audit (default: all time)")
        .option("--granularity <g>", "time chunk size (default: each live segment interval is a chunk)")
        .option("--expect-full", "exit 1 when any part of the range holds no live data (a gap)")
        .option("--json", "print the audit report as JSON")
        .addHelpText(
          "after",
          [
            "",
            "Gaps (parts of the range with no live data: no segment, or only tombstones) are listed with the",
            "ledger's reason when a job of this datasource knows it (dead-lettered, failed, canceled, not run",
            "yet, killed); without a ledger at --ledger, without reasons.",
            "",
            "Exit 0 when the audit holds; exit 1 on a violation, when the range has no segments (a misspelt",
            "datasource is not a pass), or with --expect-full on a gap; 2 on bad input; 4 when Druid cannot be",
            "reached.",
          ].join("\n"),
        ),
    ),
  ).action(async (datasource: string, flags: AuditFlags, cmd: Command) =>
    (await import("./audit-action.js")).auditAction(datasource, flags, cmd),
  );
}
