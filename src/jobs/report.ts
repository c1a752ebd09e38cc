import { ExitCode } from "../core/errors.js";
import { emptyPartitionView, type KindOfWork, type PartitionView } from "../driver/kind.js";
import { describeRowStats } from "../ingest/gates.js";
import { INGEST_KIND } from "../ingest/types.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, JobState, StateCounts, TaskRow } from "../ledger/types.js";
import { describeGap, type Gap, type LedgerGapReason } from "../work/audit.js";
import { KINDS } from "./kinds.js";

/** One line per partition of a job: what happened, with the numbers a user checks. */
export interface PartitionReport extends Omit<PartitionView, "failures"> {
  task: string;
  /** The partition's kind of work. */
  kind: string;
  state: TaskRow["state"];
  attempts: number;
  error: string | null;
}

export interface JobReport {
  job: string;
  kind: string;
  state: JobRow["state"];
  options: JobRow["options"];
  counts: StateCounts;
  partitions: PartitionReport[];
  totals: { rows: number; segments: number; bytes: number };
  /**
   * The job's ingestion partitions that put no data in (dead-lettered, failed, canceled; pending ones once
   * none runs), one per partition. Ledger only: whether older data still covers them, `segops audit` says.
   */
  gaps: Gap[];
  exitCode: number;
}

/** A partition of a kind this build does not know: what the ledger row alone says. */
function unknownKind(task: TaskRow): PartitionView {
  return emptyPartitionView(typeof task.payload.interval === "string" ? task.payload.interval : task.id);
}

/** One partition of any kind, described by its kind (`KindOfWork.describe`). */
export function partitionReport(task: TaskRow, kinds: readonly KindOfWork<never>[] = KINDS): PartitionReport {
  const kind = kinds.find((k) => k.name === task.kind);
  const { failures: _failures, ...view } = kind ? kind.describe(task) : unknownKind(task);
  return {
    task: task.id,
    kind: task.kind,
    state: task.state,
    attempts: task.attempt,
    ...view,
    error: task.state === "done" ? null : task.lastError,
  };
}

/**
 * How a stopped job is picked up again. A `--new` job cannot be named by rerunning its command (that
 * would plan yet another job), so the hint names it by id.
 */
export function resumeHint(job: { id: string; options: JobRow["options"] }): string {
  return job.options.nonce
    ? `segops resume ${job.id}`
    : `segops resume ${job.id} (or rerun the same command)`;
}

/**
 * The state shown for a job. The stored state can lag (a run stopped before recording it), so an open
 * job whose partitions have all ended is shown as they ended; the stored state is not changed.
 */
export function shownState(state: JobState, c: StateCounts): JobState {
  const left = c.new + c.running + c.suspended;
  const total = left + c.done + c.failed + c.dead;
  if (state !== "open" || total === 0 || left > 0) return state;
  return c.failed + c.dead > 0 ? "failed" : "done";
}

/** Why a partition left its interval without data, or null when it finished (done). */
export function gapReasonOf(task: TaskRow): LedgerGapReason | null {
  if (task.state === "done") return null;
  if (task.state === "dead") return "dead-lettered";
  if (task.canceled) return "canceled";
  if (task.state === "failed") return "failed";
  return "pending";
}

/**
 * The partitions of a job that put no data in. While one runs, the pending ones are only not reached yet
 * (the verdict counts them), so they are listed once nothing runs (a deadline, a stopped run).
 */
export function jobGaps(
  jobId: string,
  tasks: readonly TaskRow[],
  kinds: readonly KindOfWork<never>[] = KINDS,
): Gap[] {
  const running = tasks.some((t) => t.state === "running");
  const gaps: Gap[] = [];
  for (const t of tasks) {
    const reason = t.kind === INGEST_KIND ? gapReasonOf(t) : null;
    if (!reason || (reason === "pending" && running)) continue;
    gaps.push({
      interval: partitionReport(t, kinds).interval,
      reason,
      job: jobId,
      task: t.id,
      ...(t.lastError ? { error: t.lastError } : {}),
    });
  }
  return gaps.sort((a, b) => (a.interval < b.interval ? -1 : a.interval > b.interval ? 1 : 0));
}

/** At most this many gaps in words; --json lists every one. */
const GAPS_SHOWN = 10;

/** The gaps section of a report: a header and one line per gap, or nothing when there is none. */
export function formatGaps(
  gaps: readonly Gap[],
  header: string,
  options: { inJob?: boolean } = {},
): string[] {
  if (gaps.length === 0) return [];
  const more = gaps.length - GAPS_SHOWN;
  return [
    header,
    ...gaps.slice(0, GAPS_SHOWN).map((g) => `  ${describeGap(g, options)}`),
    ...(more > 0 ? [`  … and ${more} more (--json lists every one)`] : []),
  ];
}

/** 0 all done and audited · 1 some failed or dead-lettered · 3 work left (deadline) — architecture doc. */
export function exitCodeFor(counts: StateCounts): number {
  if (counts.failed + counts.dead > 0) return ExitCode.SomeFailed;
  if (counts.new + counts.running + counts.suspended > 0) return ExitCode.Deadline;
  return ExitCode.Ok;
}

export async function jobReport(
  store: Store,
  job: JobRow,
  kinds: readonly KindOfWork<never>[] = KINDS,
): Promise<JobReport> {
  const [tasks, counts] = await Promise.all([store.listTasks(job.id), store.countTasks(job.id)]);
  const partitions = tasks
    .map((t) => partitionReport(t, kinds))
    .sort((a, b) => (a.interval < b.interval ? -1 : 1));
  const totals = { rows: 0, segments: 0, bytes: 0 };
  for (const p of partitions) {
    totals.rows += p.rows ?? 0;
    totals.segments += p.segments ?? 0;
    totals.bytes += p.bytes ?? 0;
  }
  return {
    job: job.id,
    kind: job.kind,
    state: job.state,
    options: job.options,
    counts,
    partitions,
    totals,
    gaps: jobGaps(job.id, tasks, kinds),
    exitCode: exitCodeFor(counts),
  };
}

function bytes(n: number | null): string {
  if (n === null) return "-";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/**
 * A partition's state in words, as `jobs` and the dashboard say it: not started and waiting for a slot
 * are both "pending" (the ledger's `new` and `suspended`; --json keeps the ledger's word).
 */
export function stateWord(state: TaskRow["state"]): string {
  return state === "new" || state === "suspended" ? "pending" : state;
}

/** The verdict of a job with failed or dead-lettered partitions: what there is, and only the hints that apply. */
function failedVerdict(c: StateCounts, job: string): string {
  const what = [
    ...(c.failed > 0 ? [`${c.failed} failed`] : []),
    ...(c.dead > 0 ? [`${c.dead} dead-lettered`] : []),
  ];
  const next = [
    ...(c.dead > 0 ? [`segops dlq list --job ${job} shows why they were dead-lettered`] : []),
    `segops retry ${job} sends them back to run once the cause is fixed`,
  ];
  return `NOT ALL DONE: ${what.join(", ")}; ${next.join("; ")}`;
}

/** The human form of a job report: a table of partitions and a verdict line. */
export function formatJobReport(report: JobReport): string {
  const rows = report.partitions.map((p) => [
    p.interval.replace(/T00:00:00\.000Z/g, ""),
    // A failed partition whose replace was undone, or refused before it was submitted, says so.
    p.state === "failed" && (p.outcome === "rolled-back" || p.outcome === "refused-empty")
      ? p.outcome
      : stateWord(p.state),
    String(p.attempts),
    p.rows === null ? "-" : String(p.rows),
    p.segments === null ? "-" : String(p.segments),
    bytes(p.bytes),
    p.state === "done" ? (p.version ?? "(no new data)") : (p.error ?? p.step ?? ""),
  ]);
  const header = ["interval", "state", "attempts", "rows", "segments", "size", "version / reason"];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => Math.min(60, (r[i] ?? "").length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const c = report.counts;
  const verdict =
    report.exitCode === ExitCode.Ok
      ? `ALL ${report.partitions.length} PARTITIONS DONE AND AUDITED`
      : report.exitCode === ExitCode.Deadline
        ? `UNFINISHED: ${c.new + c.running + c.suspended} partition(s) left; resume with ${resumeHint({ id: report.job, options: report.options })}`
        : failedVerdict(c, report.job);
  // The evidence of each partition that did not finish well: Druid's counters and first parse errors.
  const evidence = report.partitions
    .filter((p) => (p.state === "failed" || p.state === "dead") && (p.rowStats || p.parseErrors.length > 0))
    .map(
      (p) =>
        `  ${p.interval.replace(/T00:00:00\.000Z/g, "")}: ${p.rowStats ? describeRowStats(p.rowStats) : "no row counters"}${p.parseErrors.length > 0 ? `; first parse errors: ${p.parseErrors.slice(0, 3).join(" | ")}` : ""}`,
    );
  return [
    `job ${report.job}`,
    line(header),
    ...rows.map(line),
    ...evidence,
    ...formatGaps(
      report.gaps,
      `GAPS: ${report.gaps.length} of ${report.partitions.length} partition(s) put no data in (segops audit shows what Druid serves there):`,
      { inJob: false },
    ),
    `done ${c.done} · failed ${c.failed} · dead ${c.dead} · left ${c.new + c.running + c.suspended} · rows ${report.totals.rows} · segments ${report.totals.segments} · ${bytes(report.totals.bytes)}`,
    verdict,
  ].join("\n");
}
