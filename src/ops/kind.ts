import {
  emptyPartitionView,
  type KindEncoding,
  type KindOfWork,
  type KindRequest,
  type PartitionView,
  type PlannedWork,
} from "../driver/kind.js";
import type { Runner } from "../driver/runner.js";
import type { DruidServices } from "../work/services.js";
import type { StepProgress } from "./step-table.js";

/**
 * A segment operation as a kind of work: its encoding names it, its plan is cut to the job and its tasks,
 * and a partition is shown by what the kind knows of it (`view`: read from the row unvalidated, for
 * reports), everything else in the view empty. `activeDruidTasks` is what `cancel --shutdown` stops.
 */
export function opsKind<F, P extends { interval: string }, G extends StepProgress>(o: {
  encoding: KindEncoding;
  plan: (facts: F) => PlannedWork;
  runner: (services: DruidServices) => Runner;
  view: (payload: Partial<P>, progress: G) => Partial<PartitionView>;
  activeDruidTasks: (payload: Partial<P>, progress: G) => string[];
  request?: KindRequest<unknown>;
}): KindOfWork<DruidServices, F> {
  const row = (task: { payload: unknown; progress: unknown }) =>
    [task.payload as Partial<P>, task.progress as G] as const;
  return {
    name: o.encoding.name,
    plan: (facts) => {
      const { job, tasks } = o.plan(facts);
      return { job, tasks };
    },
    payload: o.encoding.payload,
    progress: o.encoding.progress,
    runner: o.runner,
    describe: (task) => {
      const [payload, p] = row(task);
      return { ...emptyPartitionView(payload.interval ?? ""), step: p.step ?? null, ...o.view(payload, p) };
    },
    activeDruidTasks: (task) => o.activeDruidTasks(...row(task)),
    ...(o.request ? { request: o.request } : {}),
  };
}
