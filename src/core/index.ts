export * from "./backoff.js";
export * from "./canonical-json.js";
export * from "./clock.js";
export * from "./errors.js";
export * from "./granularity.js";
export * from "./interval.js";
export * from "./partition.js";
export * from "./task-id.js";
