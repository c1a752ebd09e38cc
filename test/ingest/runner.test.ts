import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { TaskContext } from "../../src/driver/runner.js";
import type { DruidClient } from "../../src/druid/client.js";
import { ingestRunner } from "../../src/ingest/runner.js";
import { HandoffChecker } from "../../src/work/handoff.js";
import { StatusBatcher } from "../../src/work/status-batcher.js";
import { ingestTaskRow } from "../helpers/task-row.js";

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
    await expect(runner.handler(ingestTaskRow(), ctx)).rejects.toThrow("canceled");
    // The id was never submitted: the checkpoint recording it came first and was refused.
    expect(submitted).toEqual([]);
  });
});
