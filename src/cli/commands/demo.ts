import type { Command } from "commander";
import { positiveInt } from "../options.js";
import type { DemoFlags } from "./demo-action.js";

/**
 * `segops demo`: the embedded default with no setup. An in-process Druid emulator (with injected faults), a
 * generated week of data with one poison day, a backfill with the live progress display, the report, and
 * where the ledger is. Exit 0 when it ran as designed: six partitions done and audited, the poison one
 * dead-lettered after three identical parse failures. The implementation (demo-action.ts) is imported when
 * the command runs.
 */
export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "run a backfill against the built-in Druid emulator, with faults and a poison partition (no setup)",
    )
    .option("--dir <path>", "where the demo's data and ledger go (recreated)", ".segops/demo")
    .option("--time-scale <x>", "emulator speed-up", positiveInt("--time-scale"), 10)
    .option("--json", "print the report as JSON")
    .action(async (flags: DemoFlags, cmd: Command) =>
      (await import("./demo-action.js")).demoAction(flags, cmd),
    );
}
