import type { Command } from "commander";
import { addDruidOptions, addLedgerOption } from "../options.js";
import { addRunControlOptions } from "./ingest-flags.js";
import type { Kinds } from "./kind-flags.js";
import type { ResumeFlags } from "./resume-action.js";

/**
 * `segops resume JOB`: runs a stored job from where it stopped. Its partitions carry their rendered specs,
 * so neither the template nor the command line is needed: the way back for a `--new` job, whose command
 * would plan yet another job.
 */
export function registerResume(program: Command, kinds?: Kinds): void {
  const command = program
    .command("resume <job>")
    .description(
      "run a stored job (run or backfill) from where it stopped, against the cluster it belongs to",
    );
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command, { fromJob: true }).action(
    async (jobId: string, flags: ResumeFlags & { maxConcurrency?: number; poisonAfter?: number }) =>
      (await import("./resume-action.js")).resumeJob(jobId, flags, kinds),
  );
}
