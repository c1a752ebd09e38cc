import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { TaskContext } from "../../src/driver/runner.js";
import type { DruidClient } from "../../src/druid/client.js";
import { HandoffChecker } from "../../src/ingest/handoff.js";
import { ingestRunner } from "../../src/ingest/runner.js";
import { StatusBatcher } from "../../src/ingest/status-batcher.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { dailyTemplate } from "../helpers/dataset.js";

function row(): TaskRow {
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
    progress: {},
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

describe("the ingestion handler", () => {
  it("stops by throwing, never by returning (done), when its checkpoint is refused after a cancel", async () => {
    const clock = new ManualClock(0);
    const submitted: string[] = [];
    const client = {
      metadataSegments: async () => [],
      servedSegments: async () => [],
      submitTask: async (spec: { id: string }) => {
        submitted.push(spec.id);
        return { outcome: "accepted" as const, taskId: spec.id };
      },
    } as unknown as DruidClient;
    const runner = ingestRunner({
      client,
      clock,
      batcher: new StatusBatcher({ clock, lookup: async () => new Map() }),
      handoff: new HandoffChecker({ clock, source: client }),
    });
    const canceled = new AbortController();
    canceled.abort(new Error("canceled"));
    const ctx: TaskContext = { signal: canceled.signal, owner: "me", clock, checkpoint: async () => null };
    await expect(runner.handler(row(), ctx)).rejects.toThrow("canceled");
    // The id was never submitted: the checkpoint recording it came first and was refused.
    expect(submitted).toEqual([]);
  });
});
