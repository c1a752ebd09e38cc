import { type Command, Option } from "commander";
import type { KindCommand, KindFlag } from "../../driver/kind.js";
import { addDruidOptions, addLedgerOption, positiveInt } from "../options.js";
import { addRunControlOptions } from "./ingest-flags.js";
import type { KindCommandFlags, Kinds } from "./kind-flags.js";
import { collect } from "./render.js";

/**
 * The command of a kind that declares one (`KindRequest.command`): its flag table becomes commander options
 * beside the Druid, ledger and run-control flags every job command has; the action (kind-action.ts, loaded
 * when it runs) fills the kind's request body from them and runs the request as the API does.
 */

/** The commander option of a flag of the table. */
function optionOf(flag: KindFlag): Option {
  const option = new Option(flag.flag, flag.description);
  if (flag.value === "count") {
    option.argParser(positiveInt(option.long ?? flag.flag));
    if (flag.default !== undefined) option.default(flag.default);
  }
  if (flag.value === "list") option.argParser(collect).default([]);
  if (flag.required) option.makeOptionMandatory();
  return option;
}

/**
 * The commands whose partitions wait for Druid to serve what they changed, and give up after
 * `--handoff-timeout` (`abortWhenOverdue` in ops/step-table.ts): a compaction's new segments, a
 * rollback's version marked used again. A kill deletes: nothing of it is served.
 */
const WAITS_FOR_SERVING: Readonly<Record<string, string>> = {
  compact: "fail a chunk whose compacted segments are not served this long after they are published",
  rollback: "fail a chunk whose restored version is not served this long after it is marked used",
};

export function registerKindCommand(program: Command, kindCommand: KindCommand, kinds?: Kinds): void {
  const command = program
    .command(kindCommand.name)
    .description(kindCommand.description)
    .argument("<datasource>", kindCommand.datasource);
  for (const flag of kindCommand.flags) command.addOption(optionOf(flag));
  addDruidOptions(command);
  addLedgerOption(command);
  // No --poison-after: only an ingestion's partitions are dead-lettered (a kind's fail with their reason).
  addRunControlOptions(command, {
    poison: false,
    handoff: WAITS_FOR_SERVING[kindCommand.name] ?? false,
  }).action(async (datasource: string, flags: KindCommandFlags) =>
    (await import("./kind-action.js")).kindCommandAction(kindCommand, datasource, flags, kinds),
  );
  if (kindCommand.examples?.length)
    command.addHelpText(
      "after",
      `\nExamples:\n${kindCommand.examples.map((example) => `  $ segops ${example}`).join("\n")}\n`,
    );
}
