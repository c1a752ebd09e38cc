import type { Command } from "commander";
import { addDruidOptions, addLedgerOption, type DruidFlags } from "../options.js";
import type { LedgerFlags } from "./ledger-actions.js";

/**
 * The ledger commands' flags and help (light: commander and the flag helpers); what each does is in
 * ledger-actions.ts, loaded when the command runs.
 */

const LISTING_HELP =
  "\nRead-only: with no ledger yet (nothing has run here) it says so, creates none and exits 0 (an\nempty listing; [] with --json).";

const SHOW_HELP =
  "\nRead-only: with no ledger yet (nothing has run here) it says so, creates none and exits 2.";

function ledgerCommand(program: Command, name: string, description: string): Command {
  return addLedgerOption(program.command(name).description(description).option("--json", "print JSON"));
}

export function registerLedgerCommands(program: Command): void {
  ledgerCommand(program, "jobs", "list jobs in the ledger with their partition counts")
    .addHelpText("after", LISTING_HELP)
    .action(async (flags: LedgerFlags, cmd: Command) =>
      (await import("./ledger-actions.js")).jobs(flags, cmd),
    );

  ledgerCommand(program, "status", "show a job's partitions (default: the newest job)")
    .argument("[job]", "job id")
    .addHelpText(
      "after",
      "\nExit 0 when shown, also when there is nothing to show yet (no ledger or no jobs; null with\n--json); exit 2 when JOB is not in the ledger. A ledger is never created.",
    )
    .action(async (jobId: string | undefined, flags: LedgerFlags, cmd: Command) =>
      (await import("./ledger-actions.js")).status(jobId, flags, cmd),
    );

  addDruidOptions(
    ledgerCommand(
      program,
      "cancel",
      "cancel a job or one partition (works while the job runs in another shell)",
    )
      .argument("<id>", "job id or ledger task id")
      .option(
        "--shutdown",
        "also ask Druid to shut down the canceled partitions' running tasks (needs --druid)",
      ),
  ).action(async (id: string, flags: LedgerFlags & DruidFlags & { shutdown?: boolean }, cmd: Command) =>
    (await import("./ledger-actions.js")).cancel(id, flags, cmd),
  );

  ledgerCommand(
    program,
    "retry",
    "send a job's failed, canceled and dead-lettered partitions (or one partition) back to run",
  )
    .argument("<id>", "job id or ledger task id")
    .action(async (id: string, flags: LedgerFlags, cmd: Command) =>
      (await import("./ledger-actions.js")).retry(id, flags, cmd),
    );

  const dlq = program.command("dlq").description("dead-lettered partitions: list, show, retry, drop");
  ledgerCommand(dlq, "list", "list dead-lettered partitions")
    .option("--job <id>", "only this job's")
    .addHelpText("after", LISTING_HELP)
    .action(async (flags: LedgerFlags & { job?: string }, cmd: Command) =>
      (await import("./ledger-actions.js")).dlqList(flags, cmd),
    );
  ledgerCommand(dlq, "show", "show one dead-lettered partition with its failure history")
    .argument("<id>", "ledger task id")
    .addHelpText("after", SHOW_HELP)
    .action(async (id: string, flags: LedgerFlags, cmd: Command) =>
      (await import("./ledger-actions.js")).dlqShow(id, flags, cmd),
    );
  for (const [name, verb, description] of [
    ["retry", "sent back to run", "send a dead-lettered partition back to run (after fixing its input)"],
    ["drop", "dropped", "give up on a dead-lettered partition for good (kept as failed)"],
  ] as const) {
    ledgerCommand(dlq, name, description)
      .argument("<id>", "ledger task id")
      .action(async (id: string, flags: LedgerFlags, cmd: Command) =>
        (await import("./ledger-actions.js")).dlqRetryOrDrop(name, verb, id, flags, cmd),
      );
  }
}
