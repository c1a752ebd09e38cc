/**
 * segops as a library: the handful of things a program calls to run Druid work the way the CLI does.
 * Everything else is under subpath exports: `segops/druid` (client, wire types, error classes),
 * `segops/ledger`, `segops/driver`, `segops/work` (the Druid machinery every kind of work shares), `segops/ingest`, `segops/jobs`, `segops/spec`, `segops/core`,
 * `segops/sim` (the emulator) and `segops/testing` (`ManualClock` and the emulator for tests).
 *
 * Importing this module loads neither the emulator nor a database driver: `openStore` loads the SQLite or
 * PostgreSQL backend when a ledger of that kind is opened.
 *
 * @example
 * ```ts
 * import { DruidClient, openStore, planIngestJob, readTemplateFile, runJob, systemClock, clusterOf } from "segops";
 *
 * const client = new DruidClient({ url: "http://router:8888" });
 * const store = await openStore("sqlite:.segops/ledger.db");
 * const template = await readTemplateFile("daily.json");
 * const range = { start: Date.parse("2026-01-01"), end: Date.parse("2026-02-01") };
 * const plan = planIngestJob({ kind: "backfill", template, templateName: "daily.json", range, cluster: clusterOf(client) });
 * await store.createJob(plan.job, plan.tasks);
 * const result = await runJob({ store, client, clock: systemClock, jobId: plan.job.id });
 * console.log(result.job.state, result.counts); // "done" { done: 31, … }
 * await store.close();
 * await client.close();
 * ```
 */

export { type Clock, systemClock } from "./core/clock.js";
// Errors and time.
export { ExitCode, SegopsError, UsageError } from "./core/errors.js";
// The driver, for kinds of work of your own.
export type { KindOfWork, PartitionView } from "./driver/kind.js";
export type { Runner, TaskContext } from "./driver/runner.js";
export { TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "./driver/signals.js";
// Druid.
export { DruidClient, type DruidClientOptions } from "./druid/client.js";
export { type ClusterBinding, ClusterMismatchError, clusterOf } from "./druid/cluster.js";
export { DruidError } from "./druid/errors.js";
export { type DataGates, DEFAULT_GATES } from "./ingest/gates.js";
export { type IngestJobInput, type PlannedJob, planIngestJob } from "./ingest/plan.js";
// Plan, run and report work.
export { type EngineOptions, type EngineResult, runJob, settleJob } from "./jobs/engine.js";
export { KINDS } from "./jobs/kinds.js";
export { formatJobReport, type JobReport, jobReport, type PartitionReport } from "./jobs/report.js";
export { LedgerError } from "./ledger/errors.js";
// The ledger.
export { type OpenStoreOptions, openStore } from "./ledger/open.js";
export type { Store } from "./ledger/store.js";
export type { JobRow, TaskRow } from "./ledger/types.js";
export { InvalidSpecError } from "./spec/issues.js";
export { readTemplateFile } from "./spec/load.js";
