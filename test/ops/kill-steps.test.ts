import { describe, expect, it } from "vitest";
import { TaskAbort, TaskProgress, TaskRetry } from "../../src/driver/signals.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { killKind } from "../../src/ops/kill/kind.js";
import type { KillPayload } from "../../src/ops/kill/plan.js";
import { KILL_STEPS } from "../../src/ops/kill/runner.js";
import { awaitKill, startKillAttempt, submitKill, verifyKill } from "../../src/ops/kill/steps.js";
import { type KillProgress, killTaskId } from "../../src/ops/kill/types.js";
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

const part = (progress: KillProgress, versions?: string[] | null, attempt = 1) =>
  fakePart<KillPayload, KillProgress>(payload(versions), progress, attempt);
/** What a kill task that lost its lock reports: the emulator's words, as Druid's batch tasks say it. */
const REVOKED = `Lock revoked: [TimeChunkLock{type=EXCLUSIVE, groupId='${TASK_ID}', dataSource='${DS}', interval=${CHUNK}, version='2026-01-02T00:00:00.000Z', priority=0, revoked=true}]`;

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
    expect(a.saved).toEqual([{ step: "running", attempt: 1, druidTaskId: TASK_ID }]);
    expect(io.tasks.holds(a.task.id)).toBe(true);
  });

  it("submits a later attempt under its own id, with the plan's versions and cut-off", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    const a = part({ step: "submit", attempt: 2 }, ["v1"], 2);
    await submitKill(a, fakeTaskIO(client));
    expect(sent).toEqual([
      {
        type: "kill",
        id: `${TASK_ID}_a2`,
        dataSource: DS,
        interval: CHUNK,
        versions: ["v1"],
        maxUsedStatusLastUpdatedTime: "2026-01-01T12:00:00.000Z",
      },
    ]);
    expect(a.saved).toEqual([{ step: "running", attempt: 2, druidTaskId: `${TASK_ID}_a2` }]);
  });

  it("checks a later attempt of every unused version again: refused, submitting nothing, once the chunk has no used version", async () => {
    const { client, sent } = killClient({ used: [], unused: doomed });
    const a = part({ step: "submit", attempt: 2 }, null, 2);
    const e = await thrown(submitKill(a, fakeTaskIO(client)));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/^refused to kill in .*: no version of it is used any more/);
    expect([sent, a.saved]).toEqual([[], []]);
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
    fakeTaskIO(killClient({ used: [], unused: [] }).client, { statuses: new Map([[status.id, status]]) });

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

  it("tries a kill task whose lock another writer revoked again, in a new attempt", async () => {
    const a = part({ step: "running", attempt: 1, druidTaskId: TASK_ID });
    const e = await thrown(
      awaitKill(a, io({ id: TASK_ID, state: "FAILED", duration: 1, errorMsg: REVOKED })),
    );
    expect(e).toBeInstanceOf(TaskRetry);
    expect((e as TaskRetry).options.newAttempt).toBe(true);
    expect((e as Error).message).toBe(`kill task ${TASK_ID} lost its lock to another writer: ${REVOKED}`);
    expect(a.progress()).toMatchObject({ step: "running", druidState: "FAILED", errorMsg: REVOKED });
  });

  it("follows the current attempt's kill task", async () => {
    const a = part({ step: "running", attempt: 2, druidTaskId: `${TASK_ID}_a2` }, ["v1"], 2);
    const tasks = io({ id: `${TASK_ID}_a2`, state: "SUCCESS", duration: 1, errorMsg: null });
    await awaitKill(a, tasks);
    expect(a.saved).toEqual([{ step: "verify", druidState: "SUCCESS" }]);
  });

  it("follows the first attempt's id for a batch submitted before attempts were recorded", async () => {
    const a = part({ step: "running" });
    await awaitKill(a, io({ id: TASK_ID, state: "SUCCESS", duration: 1, errorMsg: null }));
    expect(a.progress().step).toBe("verify");
  });
});

describe("a new attempt", () => {
  const io = () => fakeTaskIO(killClient({ used: [live], unused: doomed }).client);

  it("submits again, forgetting the last attempt's failed kill task", async () => {
    const a = part(
      { step: "running", attempt: 1, druidTaskId: TASK_ID, druidState: "FAILED", errorMsg: REVOKED },
      ["v1"],
      2,
    );
    await startKillAttempt(a, io());
    expect(a.saved).toEqual([
      { step: "submit", attempt: 2, druidTaskId: null, druidState: null, errorMsg: null },
    ]);
  });

  it("moves a partition sent back to run after its kill task FAILED on to a new attempt", async () => {
    const a = part({ step: "running", attempt: 1, druidState: "FAILED", errorMsg: "boom" });
    const e = await thrown(startKillAttempt(a, io()));
    expect(e).toBeInstanceOf(TaskRetry);
    expect((e as TaskRetry).options.newAttempt).toBe(true);
    expect((e as Error).message).toContain(`kill task ${TASK_ID} FAILED`);
    expect(a.saved).toEqual([]);
    // Once the driver has moved the attempt on, the new attempt starts from submit.
    const next = part({ step: "running", attempt: 1, druidState: "FAILED", errorMsg: "boom" }, ["v1"], 2);
    await startKillAttempt(next, io());
    expect(next.progress()).toMatchObject({ step: "submit", attempt: 2, druidState: null });
  });

  it("changes nothing for the same attempt, a fresh batch, or a first attempt recorded before attempts were", async () => {
    const same = part({ step: "running", attempt: 2, druidTaskId: `${TASK_ID}_a2` }, ["v1"], 2);
    const fresh = part({}, ["v1"], 1);
    const before = part({ step: "running" });
    for (const a of [same, fresh, before]) await startKillAttempt(a, io());
    expect([same.saved, fresh.saved, before.saved]).toEqual([[], [], []]);
  });
});

describe("killTaskId", () => {
  it("is the plan's id for the first attempt and a deterministic new one for each later attempt", () => {
    const p = payload();
    expect(killTaskId(p, 1)).toBe(TASK_ID);
    expect(killTaskId(p, 2)).toBe(`${TASK_ID}_a2`);
    expect(killTaskId(p, 2)).toBe(killTaskId(payload(null), 2));
    expect(new Set([1, 2, 3, 10].map((n) => killTaskId(p, n))).size).toBe(4);
    // A later batch of the same chunk ends in `_<part>`: no attempt of the first batch is named like it.
    expect(killTaskId(p, 2)).not.toBe(`${TASK_ID}_2`);
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

  it("a kill whose lock was revoked is submitted again in the next attempt, under a new id", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    const statuses = new Map<string, StatusResult>([
      [TASK_ID, { id: TASK_ID, state: "FAILED", duration: 1, errorMsg: REVOKED }],
    ]);
    const first = part({});
    // Submitted, then found FAILED on the same run: the lock went to another writer.
    const lost = await thrown(runSteps(KILL_STEPS, first, fakeTaskIO(client, { statuses })));
    expect((lost as TaskRetry).options.newAttempt).toBe(true);
    // The driver commits the retry as attempt 2; the partition runs again from its checkpoint.
    const second = part(first.progress(), ["v1"], 2);
    expect(await thrown(runSteps(KILL_STEPS, second, fakeTaskIO(client, { statuses })))).toBeInstanceOf(
      TaskProgress,
    );
    expect(sent.map((s) => s.id)).toEqual([TASK_ID, `${TASK_ID}_a2`]);
    expect(sent[1]).toMatchObject({
      versions: ["v1"],
      maxUsedStatusLastUpdatedTime: sent[0]?.maxUsedStatusLastUpdatedTime,
    });
    expect(second.progress()).toMatchObject({ step: "running", attempt: 2, druidTaskId: `${TASK_ID}_a2` });
  });

  it("runs a fresh batch through submit, then follows its task", async () => {
    const { client, sent } = killClient({ used: [live], unused: doomed });
    const a = part({});
    expect(await thrown(runSteps(KILL_STEPS, a, fakeTaskIO(client)))).toBeInstanceOf(TaskProgress);
    expect([sent.length, a.progress().step]).toEqual([1, "running"]);
  });
});

describe("the kill partition as reports and cancel see it", () => {
  const row = (progress: KillProgress, attempt = 1) =>
    ({ id: "job/20260101", kind: "kill", attempt, payload: payload(), progress }) as unknown as TaskRow;

  it("names the current attempt's kill task", () => {
    const second = row({ step: "running", attempt: 2, druidTaskId: `${TASK_ID}_a2` }, 2);
    expect(killKind.describe(second).druidTaskId).toBe(`${TASK_ID}_a2`);
    expect(killKind.activeDruidTasks(second)).toEqual([`${TASK_ID}_a2`]);
    // A row from before attempts were recorded: the first attempt's id, as before.
    expect(killKind.describe(row({ step: "running" })).druidTaskId).toBe(TASK_ID);
    expect(killKind.activeDruidTasks(row({ step: "running" }))).toEqual([TASK_ID]);
  });

  it("has nothing to stop once its kill task FAILED", () => {
    const failed = row({ step: "running", attempt: 1, druidTaskId: TASK_ID, druidState: "FAILED" });
    expect(killKind.activeDruidTasks(failed)).toEqual([]);
  });
});
