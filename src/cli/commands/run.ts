import type { Command } from "commander";
import { addIngestOptions, type IngestFlags } from "./ingest-flags.js";

export function registerRun(program: Command): void {
  addIngestOptions(
    program
      .command("run <template>")
      .description("ingest one interval end to end: submit, await SUCCESS, handoff gate, version audit")
      .requiredOption("--interval <interval>", "ISO interval, e.g. 2026-01-01/2026-01-02 or 2026-01-01/P1D"),
  ).action(async (template: string, flags: IngestFlags & { interval: string }) => {
    process.exitCode = await (await import("./ingest-common.js")).runCommand(template, flags);
  });
}
