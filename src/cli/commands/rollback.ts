import type { Command } from "commander";
import { addDruidOptions, addLedgerOption } from "../options.js";
import { addRunControlOptions } from "./ingest-flags.js";
import type { RollbackFlags } from "./rollback-action.js";

/**
 * `segops rollback DATASOURCE --interval I (--to-version V | --before T)`: serve an earlier version again
 * (newer versions marked unused, V marked used, V served, audited). Refused before anything changes when V
 * cannot be restored (killed, partly killed, or newer data reaching outside the interval).
 */
export function registerRollback(program: Command): void {
  const command = program
    .command("rollback <datasource>")
    .description(
      "serve an earlier version of an interval again: newer versions unused, V used, served and audited",
    )
    .requiredOption("--interval <interval>", "the interval to roll back (ISO-8601)")
    .option("--to-version <version>", "the segment version to restore in each chunk (see `segops audit`)")
    .option("--before <instant>", "restore, in each chunk, the newest version written before this instant")
    .option("--dry-run", "show what would change, change nothing");
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command).action(async (datasource: string, flags: RollbackFlags) =>
    (await import("./rollback-action.js")).rollbackAction(datasource, flags),
  );
}
