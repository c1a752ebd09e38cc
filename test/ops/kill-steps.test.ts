import { describe, expect, it } from "vitest";
import { TaskAbort, TaskProgress, TaskRetry } from "../../src/driver/signals.js";
import type { KillPayload } from "../../src/ops/kill/plan.js";
import { KILL_STEPS } from "../../src/ops/kill/runner.js";
import { awaitKill, submitKill, verifyKill } from "../../src/ops/kill/steps.js";
import type { KillProgress } from "../../src/ops/kill/types.js";
import { runSteps } from "../../src/ops/step-table.js";
import { segmentId } from "../../src/work/segments.js";
import type { StatusResult } from "../../src/work/status-batcher.js";
import { CHUNK, DS, type FakeDruid, fakeClient, fakePart, fakeTaskIO, segment, thrown } from "./fakes.js";

/**
 * Each step of a kill batch on its own, over a fake Druid (the emulator suite, kill.test.ts, runs them
 * together).
 */

const doomed = [segment("v1"), segment("v1", { partitionNum: 1 })];
const live = segment("v2");
const TASK_ID = "segops_kill_wiki_20260101_abc";
const CUTOFF = Date.UTC(2026, 0, 1, 12);
const payload = (versions: string[] | null = ["v1"]): KillPayload => ({
  datasource: DS,
  interval: CHUNK,
  versions,
  maxUsedStatusLastUpdatedTime: CUTOFF,
  segmentIds: doomed.map(segmentId),
  bytes: 2000,
  taskId: TASK_ID,
});

const part = (progress: KillProgress, versions?: string[] | null) =>
  fakePart<KillPayload, KillProgress>(payload(versions), progress);

/** A client over `druid` that records the kill specs it is sent. */
function killClient(druid: FakeDruid) {
  const sent: Array<Record<string, unknown>> = [];
  const client = fakeClient(druid, {
    submitTask: async (spec: Record<string, unknown>) => {
      sent.push(spec);
      return { outcome: "accepted" };
    },
  });
  return { client, sent };
}

describe("submit", () => {
  it("submits the kill task under its pinned id, deleting only what was unused at the plan's cut-off", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    const io = fakeTaskIO(client, { budget: 1 });
    const a = part({});
    await submitKill(a, io);
    expect(sent).toEqual([
      {
        type: "kill",
        id: TASK_ID,
        dataSource: DS,
        interval: CHUNK,
        versions: ["v1"],
        maxUsedStatusLastUpdatedTime: "2026-01-01T12:00:00.000Z",
      },
    ]);
    expect(a.saved).toEqual([{ step: "running" }]);
    expect(io.tasks.holds(a.task.id)).toBe(true);
  });

  it("kills every unused version while the chunk still has a used one", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    await submitKill(part({}, null), fakeTaskIO(client));
    expect(sent[0]).not.toHaveProperty("versions");
  });

  it("refuses, submitting nothing, when a rollback since left the chunk with no used version", async () => {
    const { client, sent } = killClient({ used: [], unused: doomed });
    const io = fakeTaskIO(client, { budget: 1 });
    const a = part({}, null);
    const e = await thrown(submitKill(a, io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/^refused to kill in .*: no version of it is used any more/);
    expect([sent, a.saved, io.tasks.holds(a.task.id)]).toEqual([[], [], false]);
  });
});

describe("running", () => {
  const io = (status: StatusResult) =>
    fakeTaskIO(killClient({ used: [], unused: [] }).client, { statuses: new Map([[TASK_ID, status]]) });

  it("comes back a tick later while the kill task runs", async () => {
    const e = await thrown(awaitKill(part({ step: "running" }), io({ id: TASK_ID, state: "UNKNOWN" })));
    expect(e).toBeInstanceOf(TaskProgress);
  });

  it("verifies once it succeeded", async () => {
    const a = part({ step: "running" });
    await awaitKill(a, io({ id: TASK_ID, state: "SUCCESS", duration: 1, errorMsg: null }));
    expect(a.saved).toEqual([{ step: "verify", druidState: "SUCCESS" }]);
  });

  it("ends the partition with Druid's words when the kill task failed", async () => {
    const a = part({ step: "running" });
    const e = await thrown(awaitKill(a, io({ id: TASK_ID, state: "FAILED", duration: 1, errorMsg: "boom" })));
    expect(e).toEqual(new TaskAbort(`kill task ${TASK_ID} FAILED: boom`));
    expect(a.progress()).toMatchObject({ step: "running", druidState: "FAILED", errorMsg: "boom" });
  });
});

describe("verify", () => {
  it("is done when every planned segment is gone", async () => {
    const a = part({ step: "verify" });
    await verifyKill(a, fakeTaskIO(killClient({ used: [live], unused: [] }).client));
    expect(a.progress()).toMatchObject({ step: "done", left: [] });
  });

  it("retries when segments are still listed unused after the kill task succeeded, naming them", async () => {
    const a = part({ step: "verify" });
    const io = fakeTaskIO(killClient({ used: [live], unused: [doomed[1]!] }).client);
    const e = await thrown(verifyKill(a, io));
    expect(e).toBeInstanceOf(TaskRetry);
    expect((e as TaskRetry).options.newAttempt).toBeFalsy(); // the same kill: verify again, no new task
    expect((e as Error).message).toBe(
      `1 planned segment(s) still unused after the kill task: ${segmentId(doomed[1]!)}`,
    );
    expect(a.progress()).toMatchObject({ step: "verify", left: [segmentId(doomed[1]!)] });
  });

  it("is done when a planned segment was marked used again since: Druid's kill skipped it, as it must", async () => {
    const a = part({ step: "verify" });
    await verifyKill(a, fakeTaskIO(killClient({ used: [live, doomed[0]!], unused: [] }).client));
    expect(a.progress()).toMatchObject({ step: "done", left: [] });
  });
});

describe("the kill's step table", () => {
  it("resumes at the recorded step: a batch whose task succeeded is verified, not submitted again", async () => {
    const { client, sent } = killClient({ used: [live], unused: [] });
    const a = part({ step: "verify", druidState: "SUCCESS" });
    await runSteps(KILL_STEPS, a, fakeTaskIO(client));
    expect(sent).toEqual([]);
    expect(a.progress().step).toBe("done");
  });

  it("runs a fresh batch through submit, then follows its task", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    const a = part({});
    expect(await thrown(runSteps(KILL_STEPS, a, fakeTaskIO(client)))).toBeInstanceOf(TaskProgress);
    expect([sent.length, a.progress().step]).toEqual([1, "running"]);
  });
});
