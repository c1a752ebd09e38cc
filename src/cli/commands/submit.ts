import type { Command } from "commander";
import { addDruidOptions } from "../options.js";
import { addPrepareOptions } from "./render.js";
import type { SubmitFlags } from "./submit-action.js";

/**
 * `segops submit`: the operator half of an Airflow operator + deferrable sensor (or a Dagster op):
 * validates, derives the deterministic id, submits, prints the id and returns at once. Running it again is
 * harmless: Druid answers "already exists" for our own id and segops reattaches. The implementation
 * (submit-action.ts) is imported when the command runs.
 */
export function registerSubmit(program: Command): void {
  addDruidOptions(
    addPrepareOptions(
      program
        .command("submit")
        .description("validate and submit one partition with its deterministic id; print the Druid task id")
        .argument("<template>", "template or spec file: JSON, YAML or SQL")
        .option("--json", "print {taskId, outcome, datasource, interval} as JSON"),
    ),
  ).action(async (file: string, flags: SubmitFlags, cmd: Command) =>
    (await import("./submit-action.js")).submitAction(file, flags, cmd),
  );
}
