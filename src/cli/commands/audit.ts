import type { Command } from "commander";
import { addDruidOptions } from "../options.js";
import type { AuditFlags } from "./audit-action.js";

/**
 * `segops audit`: the version audit on demand, over any range of any datasource. The implementation
 * (audit-action.ts) is imported when the command runs.
 */
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
  ).action(async (datasource: string, flags: AuditFlags, cmd: Command) =>
    (await import("./audit-action.js")).auditAction(datasource, flags, cmd),
  );
}
