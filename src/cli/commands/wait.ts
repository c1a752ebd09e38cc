import type { Command } from "commander";
import { DEFAULTS } from "../../core/defaults.js";
import { addDruidOptions, addDruidOutageTimeoutOption, durationMs, durationSeconds } from "../options.js";
import type { WaitFlags } from "./wait-action.js";

/**
 * `segops wait`: the sensor half. Exit 0 only on SUCCESS (and handoff with --handoff), 1 on FAILED with
 * Druid's errorMsg (or data lost, never queryable, not provably this task's), 3 on timeout, 4 when Druid
 * cannot be reached (for `--druid-outage-timeout`, or when the timeout comes during an outage), 5 when a
 * later task replaced the interval (SUPERSEDED) — what an Airflow deferrable sensor or a Dagster op needs.
 */
export function registerWait(program: Command): void {
  addDruidOutageTimeoutOption(
    addDruidOptions(
      program
        .command("wait <taskId>")
        .description(
          "wait for a Druid task: exit 0 on SUCCESS (and handoff with --handoff), 1 on FAILED, 3 on timeout, 4 when Druid cannot be reached, 5 when superseded",
        )
        .option("--datasource <ds>", "datasource for --handoff (default: from the task's payload)")
        .option("--interval <interval>", "interval for --handoff (default: from the task's payload)")
        .option("--handoff", "also wait until the task's segments are served for the whole interval")
        .option(
          "--timeout <s>",
          "give up after S seconds (exit 3; 4 while Druid is not answering)",
          durationSeconds("--timeout"),
        )
        .option("--tick <ms>", "poll cadence in ms", durationMs("--tick"), DEFAULTS.tickMs)
        .option("--json", "print the outcome as JSON"),
    ),
  ).action(async (taskId: string, flags: WaitFlags, cmd: Command) =>
    (await import("./wait-action.js")).waitFor(taskId, flags, cmd),
  );
}
