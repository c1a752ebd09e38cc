import type { Command } from "commander";
import { addDruidOptions, addLedgerOption, positiveInt } from "../options.js";
import type { CompactFlags } from "./compact-action.js";
import { addRunControlOptions } from "./ingest-flags.js";

/**
 * `segops compact DATASOURCE --interval I [--all] [--dry-run]`: rewrites the fragmented time chunks of an
 * interval with `compact` tasks, then checks that the data is the same and each chunk has one version.
 */
export function registerCompact(program: Command): void {
  const command = program
    .command("compact <datasource>")
    .description(
      "compact fragmented time chunks: one compact task per chunk, data checked unchanged, one version each",
    )
    .requiredOption("--interval <interval>", "the interval to compact (ISO-8601)")
    .option("--all", "every chunk with data, not only those the audit flags")
    .option(
      "--min-segment-mb <n>",
      "segments below this size are small",
      positiveInt("--min-segment-mb"),
      300,
    )
    .option(
      "--max-segment-mb <n>",
      "segments above this size are large",
      positiveInt("--max-segment-mb"),
      700,
    )
    .option(
      "--max-rows-per-segment <n>",
      "rows per segment the compaction writes (and the most a healthy one has)",
      positiveInt("--max-rows-per-segment"),
      5_000_000,
    )
    .option("--dry-run", "show the chunks and why, change nothing");
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command).action(async (datasource: string, flags: CompactFlags) =>
    (await import("./compact-action.js")).compactAction(datasource, flags),
  );
}
