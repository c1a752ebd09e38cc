import type { Command } from "commander";
import { formatInterval, parseInterval } from "../../core/interval.js";
import type { DruidClient, TaskSpec } from "../../druid/client.js";
import { isDruidError } from "../../druid/errors.js";
import { InvalidSpecError, validateSpec, validateSql } from "../../spec/index.js";
import { connectDruid } from "../context.js";
import type { DruidFlags } from "../options.js";
import { type PrepareFlags, prepareFromFlags, printWarnings, writers } from "./render.js";

/** `segops submit`'s implementation, loaded when the command runs (its flags are in submit.ts). */

export type SubmitFlags = PrepareFlags & DruidFlags & { json?: boolean };

export async function submitAction(file: string, flags: SubmitFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  const prepared = await prepareFromFlags(file, flags);
  const partition = parseInterval(flags.interval);
  const result =
    prepared.kind === "task"
      ? validateSpec(prepared.spec, { partition })
      : validateSql(prepared.body.query, { partition });
  printWarnings(err, [...prepared.warnings, ...result.warnings]);
  if (!result.valid) throw new InvalidSpecError(result.errors, { template: file });
  const client = await connectDruid(flags);
  try {
    const submitted =
      prepared.kind === "task"
        ? await client.submitTask(prepared.spec as TaskSpec)
        : await submitSql(client, prepared.body, prepared.taskId);
    const datasource =
      prepared.kind === "task"
        ? (((prepared.spec.spec as Record<string, unknown>)?.dataSchema as Record<string, unknown>)
            ?.dataSource ?? null)
        : null;
    if (flags.json) {
      out(
        `${JSON.stringify({ taskId: submitted.taskId, outcome: submitted.outcome, datasource, interval: formatInterval(partition) })}\n`,
      );
    } else {
      if (submitted.outcome === "duplicate") err(`already submitted: reattached to ${submitted.taskId}\n`);
      out(`${submitted.taskId}\n`);
    }
  } finally {
    await client.close();
  }
}

/**
 * An MSQ query under its pinned controller id. Druid has no duplicate answer of its own: a rerun gets the
 * Overlord's "already exists" wrapped in a 500 (docs/druid-api.md §6.1), which is a reattach here too.
 */
async function submitSql(
  client: DruidClient,
  body: { query: string; context: Record<string, unknown> },
  taskId: string,
): Promise<{ outcome: "accepted" | "duplicate"; taskId: string }> {
  try {
    return {
      outcome: "accepted",
      taskId: (await client.submitSqlTask(body.query, { context: body.context })).taskId,
    };
  } catch (error) {
    const message = isDruidError(error) ? (error.druidMessage ?? "") : "";
    if (/already exists/.test(message) && message.includes(taskId)) return { outcome: "duplicate", taskId };
    throw error;
  }
}
