import type { Command } from "commander";
import { addIngestOptions, type BackfillFlags } from "./ingest-flags.js";

export function registerBackfill(program: Command): void {
  addIngestOptions(
    program
      .command("backfill <template>")
      .description(
        "ingest a date range, one partition per granularity bucket; rerunning the same command resumes the job",
      )
      .requiredOption("--from <date>", "first instant of the range (ISO, inclusive), e.g. 2026-01-01")
      .requiredOption("--to <date>", "end of the range (ISO, exclusive), e.g. 2026-02-01")
      .option(
        "--granularity <g>",
        "partition granularity (hour, day, week, month, …); default: the spec's segmentGranularity",
      ),
  ).action(async (template: string, flags: BackfillFlags) => {
    process.exitCode = await (await import("./ingest-common.js")).backfillCommand(template, flags);
  });
}
