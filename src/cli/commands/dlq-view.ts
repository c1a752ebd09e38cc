import { describeRowStats } from "../../ingest/gates.js";
import type { PartitionReport } from "../../jobs/report.js";
import type { EventRow, JsonObject } from "../../ledger/types.js";

/**
 * `segops dlq show` for people (pure): what the partition is, why it was dead-lettered, each failed
 * attempt and each state change on one line with its time in ISO-8601 (UTC), and what to do next. The
 * JSON (`--json`) keeps every field; this leaves out the events' data and the payload.
 */

export interface DeadLetterShown extends PartitionReport {
  failures: JsonObject[];
  events: readonly EventRow[];
}

/** Longest message shown on one line; `--json` has them whole. */
const CLIP = 240;

function clip(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > CLIP ? `${one.slice(0, CLIP - 1)}…` : one;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function failureLine(f: JsonObject): string {
  const attempt = typeof f.attempt === "number" ? `attempt ${f.attempt}` : "attempt ?";
  const cls = text(f.failureClass) ?? "unclassified";
  const kind = f.deterministic === true ? "deterministic" : f.deterministic === false ? "transient" : null;
  const druid = text(f.taskId);
  const message = text(f.errorMsg);
  return [
    `  ${attempt}`,
    kind ? `${cls} (${kind})` : cls,
    ...(druid ? [druid] : []),
    ...(message ? [clip(message)] : []),
  ].join("  ");
}

function eventLine(e: EventRow): string {
  const change = e.fromState && e.fromState !== e.toState ? `${e.fromState} → ${e.toState}` : e.toState;
  return `  ${new Date(e.at).toISOString()}  ${change}  ${clip(e.reason)}  (${e.actor})`;
}

/** A progress checkpoint: no state change, and many of them per attempt. */
function isCheckpoint(e: EventRow): boolean {
  return e.reason === "checkpoint" && (e.fromState === null || e.fromState === e.toState);
}

export function formatDeadLetter(d: DeadLetterShown): string {
  const history = d.events.filter((e) => !isCheckpoint(e));
  const checkpoints = d.events.length - history.length;
  const lines = [
    `${d.task}: dead-lettered after ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}`,
    `  ${d.kind} of ${d.interval}${d.druidTaskId ? `, last Druid task ${d.druidTaskId}` : ""}`,
    ...(d.error ? [`  error: ${clip(d.error)}`] : []),
    ...(d.rowStats ? [`  rows: ${describeRowStats(d.rowStats)}`] : []),
    ...d.parseErrors.slice(0, 3).map((p) => `  parse error: ${clip(p)}`),
    ...(d.failures.length > 0 ? ["failed attempts:", ...d.failures.map(failureLine)] : []),
    ...(history.length > 0 ? ["history:", ...history.map(eventLine)] : []),
    ...(checkpoints > 0 ? [`  (${checkpoints} progress checkpoints left out)`] : []),
    `next: fix the cause, then segops dlq retry ${d.task} (or segops dlq drop ${d.task} to give it up); --json shows everything`,
  ];
  return `${lines.join("\n")}\n`;
}
