import type { Command } from "commander";
import { addDruidOptions, addLedgerOption, positiveInt } from "../options.js";
import { addRunControlOptions } from "./ingest-flags.js";
import type { KillFlags } from "./kill-action.js";
import { collect } from "./render.js";

/**
 * `segops kill DATASOURCE --interval I [--older-than P30D] [--version V …] [--yes]`: deletes unused segments
 * for good. A dry run by default (lists what would go and what stays served); `--yes` acts.
 */
export function registerKill(program: Command): void {
  const command = program
    .command("kill <datasource>")
    .description(
      "delete unused segments for good (dry run unless --yes): only unused ones, never what is served",
    )
    .requiredOption("--interval <interval>", "the interval to clean (ISO-8601); segments wholly inside it")
    .option(
      "--older-than <period>",
      "only segments marked unused at least this long ago (ISO-8601 period, e.g. P30D)",
    )
    .option("--version <v>", "only this version (repeatable)", collect, [])
    .option("--batch-size <n>", "segments per kill task", positiveInt("--batch-size"), 100)
    .option("--yes", "delete (without it: a dry run that changes nothing)");
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command).action(async (datasource: string, flags: KillFlags) =>
    (await import("./kill-action.js")).killAction(datasource, flags),
  );
}
