import { describeSourceChange } from "../ingest/source.js";
import type { IngestPayload } from "../ingest/types.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, JsonObject, NewTask, TaskRow } from "../ledger/types.js";

/**
 * What a rerun of a command means, before anything runs. The same inputs name the same job; each
 * partition carries the version of its input (given or fingerprinted). A partition whose input changed
 * is planned anew — new payload, new Druid task id — and runs again; the others keep what they did (a
 * finished job from the same input says "already done … nothing submitted").
 */

export interface Adopted {
  /** The job as it stands after the replans (reopened when any partition runs again). */
  job: JobRow;
  /** One line per partition planned anew, saying what changed in its input. */
  changed: string[];
  /** Partitions whose input changed while a driver runs them: left as they are, to rerun once finished. */
  busy: string[];
}

const short = (interval: string) => interval.replace(/T00:00:00\.000Z/g, "");

/**
 * Brings a job found again (not created) up to the sources just planned: every stored partition whose
 * source version differs is replanned with its new payload (a CAS each, so racing reruns agree), and the
 * job is reopened if anything will run again. A partition stored without a source version (planned
 * before sources were recorded) is left alone: nothing says its input changed.
 */
export async function adoptSources(
  store: Store,
  job: JobRow,
  planned: readonly NewTask[],
  actor: string,
): Promise<Adopted> {
  // By the partition's part of the id: the job found again may be another one over the same inputs (a
  // plain request meeting an unfinished `new` job), its task ids under its own job id.
  const partOf = (id: string) => id.slice(id.indexOf("/") + 1);
  const next = new Map(planned.map((t) => [partOf(t.id), t.payload as unknown as IngestPayload]));
  const changed: string[] = [];
  const busy: string[] = [];
  for (const stored of await store.listTasks(job.id)) {
    const now = next.get(partOf(stored.id));
    if (!now) continue;
    const what = whatChanged(stored, now);
    if (what === null) continue;
    const replanned = await store.replanTask(
      { id: stored.id, version: stored.version },
      now as unknown as JsonObject,
      what,
      actor,
    );
    if (replanned) changed.push(`${what}: ingested again`);
    else {
      const current = await store.getTask(stored.id);
      // Another rerun may have planned it anew meanwhile: only a partition still as it was is busy.
      if (current && whatChanged(current, now) !== null)
        busy.push(`${what}, but it is running now: rerun once it has finished`);
    }
  }
  let current = job;
  if (changed.length > 0 && job.state !== "open")
    current = (await store.setJobState(job.id, "open", "source changed", actor)) ?? job;
  return { job: current, changed, busy };
}

/**
 * Why a stored partition must be planned anew for `now`, in words, or null: its input changed (source
 * versions differ; one stored without a version is left alone), or it was refused for an empty input and
 * the interval may now become empty (`allowEmpty`).
 */
function whatChanged(stored: TaskRow, now: IngestPayload): string | null {
  const was = stored.payload as unknown as IngestPayload;
  if (now.source && was.source && was.source.version !== now.source.version)
    return `${short(now.interval)}: source changed (${describeSourceChange(was.source, now.source)})`;
  const refused = (stored.progress as { outcome?: unknown }).outcome === "refused-empty";
  if (now.allowEmpty === true && was.allowEmpty !== true && stored.state === "failed" && refused)
    return `${short(now.interval)}: refused for an empty input before, allowed to be empty now`;
  return null;
}

/** For a rerun that found its job finished from the same input: what was done, when, and that nothing runs. */
export function alreadyFinished(job: JobRow): string | null {
  if (job.state === "open") return null;
  const when = new Date(job.updatedAt).toISOString();
  const retry =
    job.state === "done" ? "" : `; \`segops retry ${job.id}\` sends its failed partitions back to run`;
  return `job ${job.id} already ${job.state} on ${when}, from the same inputs and source: nothing submitted (changed input is new work${retry})`;
}
