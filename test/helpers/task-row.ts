import type { JsonObject, TaskRow } from "../../src/ledger/types.js";
import { dailyTemplate } from "./dataset.js";

/** A claimed ingest task of one day of datasource "wiki", for handler tests without a ledger. */
export function ingestTaskRow(progress: JsonObject = {}): TaskRow {
  return {
    id: "job/20260101-20260102",
    jobId: "job",
    kind: "ingest",
    exclusionKey: null,
    payload: {
      datasource: "wiki",
      interval: "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      spec: dailyTemplate({ datasource: "wiki" }),
      specVersion: "1",
      idPrefix: "segops",
      mode: "replace",
      segmentGranularity: "day",
      slots: 1,
    },
    state: "running",
    attempt: 1,
    retry: 0,
    maxRetry: null,
    progress,
    leaseOwner: "me",
    leaseExpiresAt: 1,
    runAt: 0,
    canceled: false,
    reason: null,
    lastError: null,
    version: 3,
    createdAt: 0,
    updatedAt: 0,
  };
}
