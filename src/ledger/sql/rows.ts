import type { RenewedLease } from "../store.js";
import type { EventRow, JobRow, JobState, JsonObject, LedgerTaskState, TaskRow } from "../types.js";

/** A row as a driver returns it: snake_case columns, bigints possibly as strings (pg), booleans as 0/1 (SQLite). */
export type DbRow = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === "1" || v === "t";

function json(v: unknown): JsonObject {
  if (typeof v !== "string" || v === "") return {};
  return JSON.parse(v) as JsonObject;
}

export function toTask(r: DbRow): TaskRow {
  return {
    id: String(r.id),
    jobId: String(r.job_id),
    kind: String(r.kind),
    exclusionKey: strOrNull(r.exclusion_key),
    payload: json(r.payload),
    state: String(r.state) as LedgerTaskState,
    attempt: num(r.attempt),
    retry: num(r.retry),
    maxRetry: numOrNull(r.max_retry),
    progress: json(r.progress),
    leaseOwner: strOrNull(r.lease_owner),
    leaseExpiresAt: numOrNull(r.lease_expires_at),
    runAt: num(r.run_at),
    canceled: bool(r.canceled),
    reason: strOrNull(r.reason),
    lastError: strOrNull(r.last_error),
    version: num(r.version),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toRenewed(r: DbRow): RenewedLease {
  return { id: String(r.id), canceled: bool(r.canceled), reason: strOrNull(r.reason) };
}

export function toJob(r: DbRow): JobRow {
  return {
    id: String(r.id),
    kind: String(r.kind),
    options: json(r.options),
    state: String(r.state) as JobState,
    canceled: bool(r.canceled),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toEvent(r: DbRow): EventRow {
  return {
    id: num(r.id),
    jobId: String(r.job_id),
    taskId: strOrNull(r.task_id),
    fromState: strOrNull(r.from_state),
    toState: String(r.to_state),
    reason: String(r.reason),
    actor: String(r.actor),
    at: num(r.at),
    data: json(r.data),
  };
}
