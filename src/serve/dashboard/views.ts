import type { z } from "zod";
import { parseInterval } from "../../core/interval.js";
import type { KindOfWork } from "../../driver/kind.js";
import { KINDS } from "../../jobs/kinds.js";
import { partitionReport } from "../../jobs/report.js";
import type { Store } from "../../ledger/store.js";
import type { EventRow, JobRow, TaskRow } from "../../ledger/types.js";
import type * as D from "../dashboard-schemas.js";
import { iso } from "../http.js";
import { jobSummary } from "../job-view.js";
import { ProblemError } from "../problems.js";
import type * as S from "../schemas.js";

/** How the dashboard draws jobs and partitions: a job with its datasource, a partition as a grid cell. */

/** The summary `jobSummary` gives, with the datasource and range from the job's options. */
export function dashboardJob(summary: S.JobSummary, job: JobRow): D.DashboardJob {
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return { ...summary, datasource: str(job.options.datasource), range: str(job.options.range) };
}

type Num = number | undefined;

function taskIdsOf(p: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const summary = p.summary as { taskIds?: unknown } | undefined;
  for (const list of [summary?.taskIds, p.taskIds])
    if (Array.isArray(list)) for (const id of list) if (typeof id === "string") ids.add(id);
  if (Array.isArray(p.failures))
    for (const f of p.failures as Array<{ taskId?: unknown }>)
      if (typeof f.taskId === "string") ids.add(f.taskId);
  if (typeof p.taskId === "string") ids.add(p.taskId);
  return [...ids];
}

export function cellOf(
  task: TaskRow,
  kinds: readonly KindOfWork<never, never>[] = KINDS,
): z.infer<typeof D.Cell> {
  const report = partitionReport(task, kinds);
  const p = task.progress as Record<string, unknown>;
  let start = "";
  let end = "";
  try {
    const i = parseInterval(report.interval);
    start = iso(i.start);
    end = iso(i.end);
  } catch {
    // A kind without an interval: the cell still shows, placed by its order.
  }
  return {
    task: task.id,
    state: task.state,
    canceled: task.canceled,
    interval: report.interval,
    start,
    end,
    attempts: task.attempt,
    step: report.step,
    druidTaskIds: taskIdsOf(p),
    druidState: report.druidState,
    rows: report.rows,
    rowStats: report.rowStats,
    durationMs: typeof p.druidDurationMs === "number" ? p.druidDurationMs : null,
    error: report.error,
    outcome: report.outcome ?? null,
  };
}

/** The ingest steps with when each happened, from the partition's progress and its events. */
export function stepsOf(task: TaskRow, events: readonly EventRow[]): z.infer<typeof D.Step>[] {
  const p = task.progress as Record<string, unknown>;
  const at = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? iso(v) : null);
  const runningEvent = events.find((e) => e.toState === "running" && /RUNNING|running/.test(e.reason));
  const audit = p.audit as { ok?: boolean } | undefined;
  const doneEvent = events.findLast((e) => e.toState === "done");
  return [
    { name: "submitted", at: at(p.submittedAt as Num) },
    {
      name: "running",
      at: runningEvent ? iso(runningEvent.at) : p.succeededAt !== undefined ? at(p.submittedAt as Num) : null,
    },
    { name: "succeeded", at: at(p.succeededAt as Num) },
    { name: "handed off", at: at(p.handedOffAt as Num) },
    { name: "audited", at: audit?.ok && doneEvent ? iso(doneEvent.at) : null },
  ];
}

export function actionsOf(task: TaskRow): z.infer<typeof D.PartitionDetail>["actions"] {
  switch (task.state) {
    case "dead":
      return ["dead-letter-retry", "dead-letter-drop"];
    case "failed":
      // A rolled-back replace would fail the same way on the same input: the way on is new input.
      return (task.progress as { outcome?: unknown }).outcome === "rolled-back" ? [] : ["retry"];
    case "done":
      return [];
    default:
      return task.canceled ? [] : ["cancel"];
  }
}

/** A job as the dashboard lists it (its summary, with the datasource and range it is over). */
export async function dashboardJobOf(store: Store, job: JobRow): Promise<D.DashboardJob> {
  return dashboardJob(jobSummary(job, await store.countTasks(job.id)), job);
}

export async function mustGetTask(store: Store, id: string): Promise<TaskRow> {
  const task = await store.getTask(id);
  if (!task) throw new ProblemError("not-found", `no partition ${id}`);
  return task;
}
