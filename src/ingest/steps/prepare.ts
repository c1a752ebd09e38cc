import { TaskAbort } from "../../driver/signals.js";
import { type Baseline, readBaselineAndLive } from "../../work/handoff.js";
import type { LiveData } from "../../work/timeline.js";
import { type Attempt, describeError, isFatal, type StepIO } from "./attempt.js";
import { preflight } from "./preflight.js";

/**
 * Before anything is submitted: record this attempt's id with the baseline (what the interval holds
 * now), so that a resubmit after a crash is a duplicate that reattaches, never a second ingestion, and our
 * segments can later be told apart. A baseline proves what is ours only if it was read before the task
 * existed, so Druid is asked about the id with it: an id it already knows was submitted by someone else with
 * the same spec (another job or ledger), and the baseline is then marked untrusted. A new attempt of a replace over
 * live data passes the pre-flight first (steps/preflight.ts): an input that yields nothing is refused here.
 */
export async function prepareAttempt(a: Attempt, io: StepIO): Promise<void> {
  const p = a.progress();
  if (p.taskId === a.taskId) return;
  // The status lookup and the baseline read go together, each riding its batcher's next round (the baseline in
  // the handoff checks' metadata POST of the datasource, when one is due). Either order proves as much as asking
  // Druid first did: an id unknown at the lookup did not exist at a baseline read before it, and one read after
  // it is the order of old; an id Druid knows marks the baseline untrusted either way.
  const used = {
    metadataSegments: () => io.handoff.readUsed(a.payload.datasource, a.interval, a.call.signal),
  };
  const [known, read] = await Promise.all([
    io.batcher.get(a.taskId, a.call.signal),
    readBaselineAndLive(used, a.payload.datasource, a.interval, a.call.signal).catch((error: unknown) => {
      if (isFatal(error)) throw new TaskAbort(`cannot read existing segments: ${describeError(error)}`);
      throw error;
    }),
  ]);
  const baseline: Baseline = read.baseline;
  let live: LiveData = read.live;
  // Druid < 37 has no row counts in segment metadata: a row-drop gate asks the Broker what is served.
  if (a.payload.gates?.maxRowDrop !== undefined && live.segments > 0 && live.rows === null)
    live = { ...live, rows: await servedRows(a, io) };
  // An id Druid knows is already at work there: nothing to check before it; only new work is sampled.
  const evidence = known.state === "UNKNOWN" ? await preflight(a, io, live) : null;
  await a.save({
    step: "submit",
    taskId: a.taskId,
    attempt: a.task.attempt,
    baseline,
    baselineTrusted: known.state === "UNKNOWN",
    taskIds: [...(p.taskIds ?? []), a.taskId],
    version: null,
    versionProof: null,
    reattached: false,
    druidState: null,
    forgotten: 0,
    outcome: null,
    liveBefore: live,
    ...(evidence ? { preflight: evidence } : {}),
  });
}

/** Rows Druid serves in the partition's interval (Broker SQL), or null when the Broker cannot say. */
async function servedRows(a: Attempt, io: StepIO): Promise<number | null> {
  const ts = (ms: number) => `TIMESTAMP '${new Date(ms).toISOString().replace("T", " ").replace("Z", "")}'`;
  const table = `"${a.payload.datasource.replace(/"/g, '""')}"`;
  try {
    const result = await io.client.sql<{ n: number }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE __time >= ${ts(a.interval.start)} AND __time < ${ts(a.interval.end)}`,
      a.call,
    );
    const n = result.rows[0]?.n;
    return typeof n === "number" ? n : null;
  } catch (error) {
    a.note(
      "preflight",
      `the Broker could not count the rows served (${describeError(error)}): --max-row-drop is not checked`,
    );
    return null;
  }
}
