export { LedgerError, redactUrl } from "./errors.js";
export { DEFAULT_LEDGER_URL, type OpenStoreOptions, openStore } from "./open.js";
export { LATEST_VERSION as LEDGER_SCHEMA_VERSION } from "./sql/schema.js";
export type * from "./store.js";
export * from "./types.js";
