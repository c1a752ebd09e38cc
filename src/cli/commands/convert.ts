import type { Command } from "commander";
import type { ConvertFlags } from "./convert-action.js";

/**
 * `segops convert <hadoop-spec> [-o FILE] [--force] [--json]`: an `index_hadoop` spec (Druid 37 removed Hadoop
 * ingestion) → an `index_parallel` template segops runs per partition, with a note per field changed or dropped.
 * Exit 0 when written, 2 when the spec cannot be converted (nothing written). The implementation
 * (convert-action.ts) loads when it runs.
 */
export function registerConvert(program: Command): void {
  program
    .command("convert")
    .description(
      "convert an index_hadoop spec into an index_parallel template (Druid 37 removed Hadoop ingestion)",
    )
    .argument("<spec>", "index_hadoop task spec: JSON or YAML")
    .option("-o, --output <file>", "write the template here (default: stdout)")
    .option("--force", "replace --output if it exists")
    .option("--json", "print {template|output, notes} as JSON on stdout")
    .action(async (file: string, flags: ConvertFlags, cmd: Command) =>
      (await import("./convert-action.js")).convertAction(file, flags, cmd),
    );
}
