import type { Command } from "commander";
import { addDruidOptions } from "../options.js";
import type { DoctorFlags } from "./doctor-action.js";

/**
 * `segops doctor --druid URL [TEMPLATE…] [--json]`: what segops will do on this cluster — its release and the
 * behaviours that follow from it, the APIs it may and may not use, a Router without its management proxy, the
 * compaction and kill settings that act on a backfill, and the templates' lints. Exit 0 with only notes and
 * warnings, 1 on a blocker, 2 on bad input. The implementation (doctor-action.ts) loads when it runs.
 */
export function registerDoctor(program: Command): void {
  addDruidOptions(
    program
      .command("doctor")
      .description(
        "check a cluster (and templates) before a backfill: release, behaviours, permissions, Router proxy, compaction/kill settings, template lints; exit 1 on a blocker",
      )
      .argument("[templates...]", "spec templates to lint against this cluster (JSON, YAML or SQL)")
      .option(
        "--rollback-horizon <period>",
        "how far back replaces must stay undoable, e.g. P60D: checked against Druid's auto-kill",
      )
      .option("--json", "print the report as JSON on stdout (shape in docs/doctor.md)"),
  ).action(async (templates: string[], flags: DoctorFlags, cmd: Command) =>
    (await import("./doctor-action.js")).doctorAction(templates, flags, cmd),
  );
}
