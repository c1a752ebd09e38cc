/**
 * segops as a library: the same calls the CLI makes. Druid's client and wire types live under the `druid`
 * namespace (their names — TaskState, InvalidSpecError — would otherwise collide with segops' own).
 */
export * from "./core/backoff.js";
export * from "./core/canonical-json.js";
export * from "./core/clock.js";
export * from "./core/errors.js";
export * from "./core/granularity.js";
export * from "./core/interval.js";
export * from "./core/partition.js";
export * from "./core/task-id.js";
export * from "./driver/index.js";
export * as druid from "./druid/index.js";
export { DruidClient, type DruidClientOptions } from "./druid/index.js";
export * from "./ingest/index.js";
export * from "./jobs/index.js";
export * from "./ledger/index.js";
export * from "./sim/index.js";
export * from "./spec/index.js";
