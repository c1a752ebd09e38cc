import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import { parseInstant } from "../../core/interval.js";
import { addIngestOptions, executeIngest, type IngestFlags } from "./ingest-common.js";

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
  ).action(
    async (template: string, flags: IngestFlags & { from: string; to: string; granularity?: string }) => {
      const start = parseInstant(flags.from);
      const end = parseInstant(flags.to);
      if (end <= start) throw new UsageError(`--to (${flags.to}) must be after --from (${flags.from})`);
      process.exitCode = await executeIngest("backfill", template, { start, end }, flags, {
        ...(flags.granularity ? { granularity: flags.granularity } : {}),
      });
    },
  );
}
