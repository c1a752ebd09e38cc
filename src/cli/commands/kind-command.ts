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

export function registerKindCommand(program: Command, kindCommand: KindCommand, kinds?: Kinds): void {
  const command = program
    .command(kindCommand.name)
    .description(kindCommand.description)
    .argument("<datasource>", kindCommand.datasource);
  for (const flag of kindCommand.flags) command.addOption(optionOf(flag));
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command).action(async (datasource: string, flags: KindCommandFlags) =>
    (await import("./kind-action.js")).kindCommandAction(kindCommand, datasource, flags, kinds),
  );
  if (kindCommand.examples?.length)
    command.addHelpText(
      "after",
      `\nExamples:\n${kindCommand.examples.map((example) => `  $ segops ${example}`).join("\n")}\n`,
    );
}
