import type { Command } from "commander";
import {
  addDruidOptions,
  addDruidOutageTimeoutOption,
  durationMs,
  durationSeconds,
  positiveInt,
} from "../options.js";
import type { PollFlags } from "./poll-action.js";

/** `segops poll`: watches existing tasks. The implementation (poll-action.ts) is imported when it runs. */
export function registerPoll(program: Command): void {
  addDruidOutageTimeoutOption(
    addDruidOptions(
      program
        .command("poll [ids...]")
        .description(
          "watch existing Druid tasks (bulk status, one request per tick) until each is SUCCESS or FAILED: exit 0 when all succeeded, 1 when one did not, 3 at the deadline, 4 when Druid cannot be reached",
        )
        .option("--file <path>", "read task ids from a file, one per line")
        .option(
          "--max-concurrency <n>",
          "status requests in flight when the cluster lacks bulk status",
          positiveInt("--max-concurrency"),
          8,
        )
        .option(
          "--deadline <s>",
          "stop after S seconds; unfinished tasks are reported as DEADLINE (UNREACHABLE while Druid is not answering)",
          durationSeconds("--deadline"),
        )
        .option(
          "--per-task-timeout <s>",
          "give up on a task after S seconds (TIMEOUT)",
          durationSeconds("--per-task-timeout"),
        )
        .option("--tick <ms>", "poll cadence in ms", durationMs("--tick"), 1000)
        .option("--json", "print the result as JSON"),
    ),
  ).action(async (ids: string[], flags: PollFlags) =>
    (await import("./poll-action.js")).pollAction(ids, flags),
  );
}
