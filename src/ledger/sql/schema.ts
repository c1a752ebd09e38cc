import type { Dialect } from "../store.js";

/**
 * Versioned migrations, applied in order inside one lock (Postgres advisory lock, SQLite
 * BEGIN IMMEDIATE). Append new versions; never edit a released one.
 */
export interface Migration {
  readonly version: number;
  readonly description: string;
  statements(dialect: Dialect): string[];
}

const bigint = (d: Dialect) => (d === "postgres" ? "BIGINT" : "INTEGER");

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "jobs, tasks, events",
    statements: (d) => [
      `CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        options TEXT NOT NULL,
        state TEXT NOT NULL,
        canceled BOOLEAN NOT NULL DEFAULT FALSE,
        created_at ${bigint(d)} NOT NULL,
        updated_at ${bigint(d)} NOT NULL
      )`,
      `CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES jobs(id),
        kind TEXT NOT NULL,
        exclusion_key TEXT,
        payload TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('new', 'running', 'suspended', 'done', 'failed', 'dead')),
        attempt INTEGER NOT NULL DEFAULT 1,
        retry INTEGER NOT NULL DEFAULT 0,
        max_retry INTEGER,
        progress TEXT NOT NULL DEFAULT '{}',
        lease_owner TEXT,
        lease_expires_at ${bigint(d)},
        run_at ${bigint(d)} NOT NULL,
        canceled BOOLEAN NOT NULL DEFAULT FALSE,
        reason TEXT,
        last_error TEXT,
        version INTEGER NOT NULL DEFAULT 0,
        created_at ${bigint(d)} NOT NULL,
        updated_at ${bigint(d)} NOT NULL
      )`,
      "CREATE INDEX tasks_due ON tasks (kind, run_at) WHERE state IN ('new', 'suspended', 'running')",
      "CREATE INDEX tasks_job ON tasks (job_id, state)",
      // The race-safe exclusion: at most one running task per key, enforced by the database itself.
      `CREATE UNIQUE INDEX tasks_running_key ON tasks (exclusion_key)
        WHERE state = 'running' AND exclusion_key IS NOT NULL`,
      `CREATE TABLE events (
        id ${d === "postgres" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"},
        job_id TEXT NOT NULL,
        task_id TEXT,
        from_state TEXT,
        to_state TEXT NOT NULL,
        reason TEXT NOT NULL,
        actor TEXT NOT NULL,
        at ${bigint(d)} NOT NULL,
        data TEXT NOT NULL DEFAULT '{}'
      )`,
      "CREATE INDEX events_task ON events (task_id, id)",
      "CREATE INDEX events_job ON events (job_id, id)",
    ],
  },
  {
    version: 2,
    description: "idempotency keys of the HTTP API",
    statements: (d) => [
      // A client's Idempotency-Key names one request body (by hash) and the job it created, for every host.
      `CREATE TABLE idempotency_keys (
        key TEXT PRIMARY KEY,
        request_hash TEXT NOT NULL,
        job_id TEXT NOT NULL,
        created_at ${bigint(d)} NOT NULL
      )`,
    ],
  },
  {
    version: 3,
    description: "claim indexes: waiting tasks by due time, running tasks by lease expiry",
    statements: () => [
      // A claim reaches waiting tasks and expired leases through one index each, so 10,000 running
      // partitions with live leases cost a claim nothing (every freed slot runs a claim cycle,
      // and `tasks_due` made each of them visit every running row).
      "CREATE INDEX tasks_waiting ON tasks (kind, run_at) WHERE state IN ('new', 'suspended')",
      "CREATE INDEX tasks_leased ON tasks (kind, lease_expires_at) WHERE state = 'running'",
    ],
  },
  {
    version: 4,
    description: "claim order by index: waiting tasks by state and due time, canceled unfinished tasks",
    statements: () => [
      // A claim reads each rank of its order (canceled, suspended, expired lease, new) through an index
      // in (run_at, id) order and stops at its limit, instead of sorting every due row (sql/claim.ts).
      "DROP INDEX tasks_waiting",
      "CREATE INDEX tasks_waiting_order ON tasks (kind, state, run_at, id) WHERE state IN ('new', 'suspended')",
      "CREATE INDEX tasks_canceled ON tasks (kind, run_at, id) WHERE canceled AND state IN ('new', 'running', 'suspended')",
    ],
  },
  {
    version: 5,
    description: "a job's partitions in id order, a page at a time",
    statements: () => [
      // The API shows a large job's partitions a page at a time (`listTasks` after an id): each page is
      // read through this index from where the last ended, not by sorting the job's every row again.
      "CREATE INDEX tasks_job_order ON tasks (job_id, id)",
    ],
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** The bookkeeping table; created before the lock is taken is not possible, so it is idempotent DDL. */
export function metaTable(dialect: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS segops_schema (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at ${bigint(dialect)} NOT NULL)`;
}

export const currentVersionSql = "SELECT COALESCE(MAX(version), 0) AS version FROM segops_schema";
export const recordVersionSql =
  "INSERT INTO segops_schema (version, description, applied_at) VALUES ($1, $2, $3)";
