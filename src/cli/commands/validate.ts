import type { Command } from "commander";
import { collect } from "./render.js";
import type { ValidateFlags } from "./validate-action.js";

/**
 * `segops validate <template|spec> [--interval I] [--var k=v] [--druid-version N] [--json]`: exit 0 when valid (warnings on
 * stderr), exit 2 with one `path: message` line per error. The implementation (validate-action.ts) is
 * imported when the command runs, so registering it costs nothing.
 */
export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description(
      "check a spec or template before anything is submitted (Druid's rules and segops' partition rules)",
    )
    .argument("<file>", "spec or template file: JSON, YAML or SQL")
    .option("--interval <interval>", "partition interval; required for templates, checks interval tightness")
    .option("--var <name=value>", "template variable for {{var.NAME}} (repeatable)", collect)
    .option(
      "--druid-version <n>",
      "the target cluster's Druid major release, 33 to 39: release-dependent rules apply as its (default 33, the oldest supported)",
    )
    .option("--json", "print {valid, errors, warnings} as JSON on stdout")
    .action(async (file: string, flags: ValidateFlags, cmd: Command) =>
      (await import("./validate-action.js")).validateAction(file, flags, cmd),
    );
}
