import { describe, expect, it } from "vitest";
import { TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "../../src/driver/signals.js";
import type { CompactPayload } from "../../src/ops/compact/plan.js";
import { COMPACT_STEPS } from "../../src/ops/compact/runner.js";
import { auditCompaction } from "../../src/ops/compact/steps/audit.js";
import { measureChunk, startAttempt } from "../../src/ops/compact/steps/measure.js";
import { awaitCompaction } from "../../src/ops/compact/steps/running.js";
import { awaitServed } from "../../src/ops/compact/steps/served.js";
import { submitCompaction } from "../../src/ops/compact/steps/submit.js";
import type { CompactProgress } from "../../src/ops/compact/types.js";
import { runSteps } from "../../src/ops/step-table.js";
import { DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import { segmentId } from "../../src/work/segments.js";
import type { StatusResult } from "../../src/work/status-batcher.js";
import {
  CHUNK,
  DS,
  type FakeDruid,
  fakeAdmission,
  fakeClient,
  fakePart,
  fakeTaskIO,
  START,
  segment,
  thrown,
} from "./fakes.js";

/**
 * Each step of a chunk's compaction on its own, over a fake Druid and a manual clock (the emulator suite,
 * compact.test.ts, runs them together).
 */

const inputs = [0, 1, 2].map((p) => segment("v1", { partitionNum: p }));
const payload: CompactPayload = {
  datasource: DS,
  interval: CHUNK,
  maxRowsPerSegment: 5_000_000,
  sizeBand: DEFAULT_SIZE_BAND,
  reasons: ["3 segments, 3 below the size band"],
  inputs: inputs.map(segmentId),
  bytes: 3000,
  taskIdBase: "segops_compact_wiki_20260101_abc",
};
const TASK_ID = "segops_compact_wiki_20260101_abc_1";
const BEFORE = { rows: 12, sums: { added: 120 } };
const BEFORE_T = { rows: 12, added: 120 };

/** A client over `druid` whose Broker answers `totals` for the chunk (one numeric column, `added`). */
function broker(druid: FakeDruid, totals: { rows: number; added: number }, over = {}) {
  return fakeClient(druid, {
    sql: async (query: string) =>
      query.includes("INFORMATION_SCHEMA")
        ? { rows: [{ COLUMN_NAME: "added", DATA_TYPE: "BIGINT" }] }
        : { rows: [{ rows: totals.rows, s0: totals.added }] },
    ...over,
  });
}

const part = (progress: CompactProgress, attempt = 1) =>
  fakePart<CompactPayload, CompactProgress>(payload, progress, attempt);

describe("a new attempt", () => {
  it("starts over at measure, forgetting the last attempt's Druid task", async () => {
    const a = part({ step: "running", attempt: 1, druidTaskId: TASK_ID, druidState: "FAILED" }, 2);
    await startAttempt(a, fakeTaskIO(broker({ used: [], unused: [] }, BEFORE_T)));
    expect(a.saved).toEqual([{ step: "measure", attempt: 2, druidTaskId: null, druidState: null }]);
  });

  it("changes nothing for the same attempt or a fresh partition", async () => {
    const io = fakeTaskIO(broker({ used: [], unused: [] }, BEFORE_T));
    const same = part({ step: "running", attempt: 1 });
    const fresh = part({}, 2);
    await startAttempt(same, io);
    await startAttempt(fresh, io);
    expect([...same.saved, ...fresh.saved]).toEqual([]);
  });
});

describe("measure", () => {
  it("records the rows, column totals and live versions once the chunk is served and unlocked", async () => {
    const a = part({});
    const io = fakeTaskIO(
      broker({ used: inputs, unused: [] }, BEFORE_T, { lockedIntervals: async () => [] }),
    );
    await measureChunk(a, io);
    expect(a.saved).toEqual([{ step: "submit", attempt: 1, before: BEFORE, measured: ["v1"] }]);
  });

  it("waits ten ticks while a running task holds a lock on the chunk", async () => {
    const a = part({});
    const io = fakeTaskIO(
      broker({ used: inputs, unused: [] }, BEFORE_T, { lockedIntervals: async () => [CHUNK] }),
    );
    const e = await thrown(measureChunk(a, io));
    expect(e).toBeInstanceOf(TaskDefer);
    expect((e as TaskDefer).delayMs).toBe(10_000);
    expect(a.saved).toEqual([]);
  });

  it("waits until every live segment is served: the Broker would count part of the chunk", async () => {
    const a = part({});
    const druid = { used: inputs, unused: [], served: new Set([segmentId(inputs[0]!)]) };
    const e = await thrown(
      measureChunk(a, fakeTaskIO(broker(druid, BEFORE_T, { lockedIntervals: async () => [] }))),
    );
    expect(e).toBeInstanceOf(TaskDefer);
    expect((e as Error).message).toMatch(/waiting until the chunk is served to measure it/);
    expect(a.saved).toEqual([]);
  });
});

describe("submit", () => {
  it("submits the compact task under its pinned id and records it", async () => {
    const specs: Array<{ id: string; type: string }> = [];
    const io = fakeTaskIO(
      broker({ used: inputs, unused: [] }, BEFORE_T, {
        submitTask: async (spec: { id: string; type: string }) => {
          specs.push(spec);
          return { outcome: "accepted", taskId: spec.id };
        },
      }),
      { budget: 2 },
    );
    const a = part({ step: "submit", attempt: 1, before: BEFORE });
    await submitCompaction(a, io);
    expect(specs).toMatchObject([{ type: "compact", id: TASK_ID, dataSource: DS }]);
    expect(a.saved).toEqual([{ step: "running", druidTaskId: TASK_ID }]);
    expect(io.tasks.holds(a.task.id)).toBe(true);
  });
});

describe("running", () => {
  const status = (state: StatusResult["state"], errorMsg: string | null = null): StatusResult =>
    state === "UNKNOWN" ? { id: TASK_ID, state } : { id: TASK_ID, state, duration: 1, errorMsg };
  const io = (s: StatusResult) =>
    fakeTaskIO(broker({ used: [], unused: [] }, BEFORE_T), { statuses: new Map([[TASK_ID, s]]) });

  it("comes back a tick later while the task runs", async () => {
    const a = part({ step: "running", attempt: 1 });
    expect(await thrown(awaitCompaction(a, io(status("RUNNING"))))).toBeInstanceOf(TaskProgress);
    expect(a.saved).toEqual([]);
  });

  it("on success records when, for the handoff timeout, and waits for the segments to be served", async () => {
    const a = part({ step: "running", attempt: 1 });
    await awaitCompaction(a, io(status("SUCCESS")));
    expect(a.progress()).toMatchObject({ step: "served", druidState: "SUCCESS", succeededAt: START });
  });

  it("is done when the chunk's data went away since planning: nothing left to compact", async () => {
    const a = part({ step: "running", attempt: 1 });
    await awaitCompaction(a, io(status("FAILED", "No segments found for compaction")));
    expect(a.progress()).toMatchObject({ step: "done", note: "no segments left to compact" });
  });

  it("tries a failed compaction (an ingestion took its lock) again in a new attempt", async () => {
    const a = part({ step: "running", attempt: 1 });
    const e = await thrown(awaitCompaction(a, io(status("FAILED", "lock revoked"))));
    expect(e).toBeInstanceOf(TaskRetry);
    expect((e as TaskRetry).options.newAttempt).toBe(true);
    expect(a.progress()).toMatchObject({ step: "running", druidState: "FAILED", errorMsg: "lock revoked" });
  });
});

describe("served", () => {
  const compacted = segment("v2", { compacted: true });

  it("waits while the compacted segments are not served, and gives up after the handoff timeout", async () => {
    const druid = { used: [compacted], unused: inputs, served: new Set<string>() };
    const io = fakeTaskIO(broker(druid, BEFORE_T));
    const a = part({ step: "served", attempt: 1, succeededAt: START });
    expect(await thrown(awaitServed(a, io))).toBeInstanceOf(TaskProgress);
    io.clock.set(START + 61_000);
    const e = await thrown(awaitServed(a, io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/are not served 61 s after the task succeeded/);
    expect(a.saved).toEqual([]);
  });

  it("goes on to the audit once they are", async () => {
    const a = part({ step: "served", attempt: 1, succeededAt: START });
    await awaitServed(a, fakeTaskIO(broker({ used: [compacted], unused: inputs }, BEFORE_T)));
    expect(a.saved).toEqual([{ step: "audit" }]);
  });
});

describe("audit", () => {
  const own = segment("v2", { compacted: true });
  const measuredAt: CompactProgress = { step: "audit", attempt: 1, before: BEFORE, measured: ["v1"] };

  it("is done with the same rows and totals under one live version", async () => {
    const a = part({ ...measuredAt });
    await auditCompaction(a, fakeTaskIO(broker({ used: [own], unused: inputs }, BEFORE_T)));
    expect(a.progress()).toMatchObject({ step: "done", after: BEFORE, liveVersion: "v2", segmentsAfter: 1 });
  });

  it("aborts with the alarm when the totals differ under the compaction's own version: the data changed", async () => {
    const a = part({ ...measuredAt });
    const e = await thrown(
      auditCompaction(a, fakeTaskIO(broker({ used: [own], unused: inputs }, { rows: 11, added: 110 }))),
    );
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toBe(`the compaction of ${CHUNK} changed the data: rows 12 → 11`);
    // What was found is recorded for the report; the partition is not done.
    expect(a.progress()).toMatchObject({ step: "audit", after: { rows: 11, sums: { added: 110 } } });
  });

  it("is superseded, not an alarm, when another writer replaced the chunk after it was measured", async () => {
    // v3 is newer than what was measured and not a compaction's output: another writer's replace.
    const theirs = segment("v3");
    const a = part({ ...measuredAt });
    await auditCompaction(
      a,
      fakeTaskIO(broker({ used: [theirs], unused: [...inputs, own] }, { rows: 5, added: 50 })),
    );
    expect(a.progress()).toMatchObject({ step: "done", outcome: "superseded" });
    expect(a.progress().note).toMatch(
      /replaced by another writer since it was measured \(version v3; rows 12 → 5\)/,
    );
  });

  it("takes the planned inputs' versions as measured when measure recorded none", async () => {
    const theirs = segment("v3");
    const a = part({ step: "audit", attempt: 1, before: BEFORE });
    await auditCompaction(
      a,
      fakeTaskIO(broker({ used: [theirs], unused: [...inputs, own] }, { rows: 5, added: 50 })),
    );
    expect(a.progress()).toMatchObject({ step: "done", outcome: "superseded" });
  });

  it("measures and compacts again in a new attempt when another task appended to the chunk meanwhile", async () => {
    const appended = segment("v2", { partitionNum: 1 });
    const a = part({ ...measuredAt });
    const e = await thrown(
      auditCompaction(
        a,
        fakeTaskIO(broker({ used: [own, appended], unused: inputs }, { rows: 13, added: 130 })),
      ),
    );
    expect(e).toBeInstanceOf(TaskRetry);
    expect((e as TaskRetry).options.newAttempt).toBe(true);
    expect((e as Error).message).toMatch(
      /was rewritten by another task during the compaction \(rows 12 → 13\)/,
    );
  });
});

describe("the compaction's step table", () => {
  it("resumes at the recorded step: a chunk past its task is not measured or submitted again", async () => {
    const own = segment("v2", { compacted: true });
    const notCalled = async () => {
      throw new Error("not to be called after the task succeeded");
    };
    const io = fakeTaskIO(
      broker({ used: [own], unused: inputs }, BEFORE_T, {
        lockedIntervals: notCalled,
        submitTask: notCalled,
      }),
    );
    const a = part({ step: "served", attempt: 1, before: BEFORE, measured: ["v1"], succeededAt: START });
    await runSteps(COMPACT_STEPS, a, io);
    expect(a.saved.map((s) => s.step)).toEqual(["audit", undefined, "done"]);
  });

  it("runs a fresh partition from measure through submit, then follows its task", async () => {
    const io = fakeTaskIO(
      broker({ used: inputs, unused: [] }, BEFORE_T, {
        lockedIntervals: async () => [],
        submitTask: async () => ({ outcome: "accepted" }),
      }),
      { admission: fakeAdmission().admission },
    );
    const a = part({});
    expect(await thrown(runSteps(COMPACT_STEPS, a, io))).toBeInstanceOf(TaskProgress);
    expect(a.saved.map((s) => s.step)).toEqual(["submit", "running"]);
  });
});
