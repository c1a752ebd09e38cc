import type { Command } from "commander";
import { addPrepareOptions, type PrepareFlags, prepareFromFlags, printWarnings, writers } from "./render.js";

/** `segops id <template|spec> --interval I`: prints the deterministic Druid task id. */
export function registerId(program: Command): void {
  addPrepareOptions(
    program
      .command("id")
      .description(
        "print the deterministic Druid task id of a template or spec for one partition and attempt",
      )
      .argument("<template>", "template or spec file: JSON, YAML or SQL"),
  ).action(async (file: string, flags: PrepareFlags, cmd: Command) => {
    const { out, err } = writers(cmd);
    const prepared = await prepareFromFlags(file, flags);
    printWarnings(err, prepared.warnings);
    out(`${prepared.taskId}\n`);
  });
}
