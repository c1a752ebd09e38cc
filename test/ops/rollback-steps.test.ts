import { describe, expect, it } from "vitest";
import { TaskAbort, TaskDefer, TaskProgress } from "../../src/driver/signals.js";
import { rollbackKind } from "../../src/ops/rollback/kind.js";
import type { RollbackPayload } from "../../src/ops/rollback/plan.js";
import { ROLLBACK_STEPS } from "../../src/ops/rollback/runner.js";
import { auditRollback } from "../../src/ops/rollback/steps/audit.js";
import { markTarget } from "../../src/ops/rollback/steps/mark.js";
import { awaitRestored } from "../../src/ops/rollback/steps/served.js";
import { unmarkNewer } from "../../src/ops/rollback/steps/unmark.js";
import type { RollbackProgress } from "../../src/ops/rollback/types.js";
import { runSteps } from "../../src/ops/step-table.js";
import { segmentId } from "../../src/work/segments.js";
import { CHUNK, DS, type FakeDruid, fakeClient, fakeIO, fakePart, START, segment, thrown } from "./fakes.js";

/**
 * Each step of a chunk's rollback on its own, over a fake Druid and a manual clock (the emulator suite,
 * rollback.test.ts, runs them together).
 */

const target = segment("v1");
const bad = segment("v2");
const payload: RollbackPayload = {
  datasource: DS,
  interval: CHUNK,
  toVersion: "v1",
  segmentIds: [segmentId(target)],
  newerVersions: ["v2"],
};

const part = (progress: RollbackProgress) => fakePart<RollbackPayload, RollbackProgress>(payload, progress);

/** A client over `druid` whose marks move segments between its used and unused lists, and are recorded. */
function marking(druid: FakeDruid, kills: string[][] = []) {
  const marks: string[] = [];
  const client = fakeClient(druid, {
    // Each listing of Druid's active kill tasks answers the next entry (none once they run out).
    tasks: async () => (kills.shift() ?? []).map((id) => ({ id, type: "kill", statusCode: "RUNNING" })),
    markSegments: async (_ds: string, to: "used" | "unused", filter: { versions: string[] }) => {
      marks.push(`${to} ${filter.versions.join(",")}`);
      const moving = [...druid.used, ...druid.unused].filter((s) => filter.versions.includes(s.version));
      const rest = (list: typeof moving) => list.filter((s) => !moving.includes(s));
      [druid.used, druid.unused] =
        to === "used"
          ? [[...rest(druid.used), ...moving], rest(druid.unused)]
          : [rest(druid.used), [...rest(druid.unused), ...moving]];
      return moving.length;
    },
  });
  return { io: fakeIO(client), marks };
}

describe("unmark", () => {
  it("marks the planned newer versions unused", async () => {
    const { io, marks } = marking({ used: [target, bad], unused: [] });
    const a = part({});
    await unmarkNewer(a, io);
    expect(marks).toEqual(["unused v2"]);
    expect(a.saved).toEqual([{ step: "mark", unmarked: 1 }]);
  });

  it("waits, changing nothing, while Druid runs a kill task of the datasource", async () => {
    const { io, marks } = marking({ used: [target, bad], unused: [] }, [["kill_wiki_other"]]);
    const a = part({});
    const e = await thrown(unmarkNewer(a, io));
    expect(e).toBeInstanceOf(TaskDefer);
    expect((e as Error).message).toMatch(
      /^waiting for Druid's kill task\(s\) of wiki to end before leaving .* with no used version: kill_wiki_other/,
    );
    expect([marks, a.saved]).toEqual([[], []]);
  });

  it("uses the newer versions again when a kill task appeared while it marked them unused, and waits", async () => {
    const druid = { used: [target, bad], unused: [] };
    const { io, marks } = marking(druid, [[], ["kill_wiki_other"]]);
    const a = part({});
    const e = await thrown(unmarkNewer(a, io));
    expect(e).toBeInstanceOf(TaskDefer);
    expect(marks).toEqual(["unused v2", "used v2"]);
    expect(druid.used.map((s) => s.version)).toContain("v2");
    expect(a.saved).toEqual([]);
  });

  it("changes nothing when the target lost a segment since the plan (killed)", async () => {
    const { io, marks } = marking({ used: [bad], unused: [] });
    const a = part({});
    const e = await thrown(unmarkNewer(a, io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(
      /^version v1 of .* lost 1 segment\(s\) since the rollback was planned/,
    );
    expect([marks, a.saved]).toEqual([[], []]);
  });

  it("stops, recording why, when a newer version the plan did not name was published since", async () => {
    const { io, marks } = marking({ used: [target, bad, segment("v3")], unused: [] });
    const a = part({});
    const e = await thrown(unmarkNewer(a, io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/^a newer version v3 was published after the rollback was planned/);
    expect(a.progress().stopped).toBe((e as Error).message);
    expect(marks).toEqual([]);
  });
});

describe("mark", () => {
  it("marks the target used and records when, for the handoff timeout", async () => {
    const { io, marks } = marking({ used: [], unused: [target, bad] });
    const a = part({ step: "mark", unmarked: 1 });
    await markTarget(a, io);
    expect(marks).toEqual(["used v1"]);
    expect(a.saved).toEqual([{ step: "served", marked: 1, markedAt: START }]);
  });
});

describe("served", () => {
  it("waits while the target is not served, recording what it waits for once, and gives up after the timeout", async () => {
    const { io } = marking({ used: [target], unused: [bad], served: new Set() });
    const a = part({ step: "served", markedAt: START });
    expect(await thrown(awaitRestored(a, io))).toBeInstanceOf(TaskProgress);
    expect(await thrown(awaitRestored(a, io))).toBeInstanceOf(TaskProgress);
    expect(a.saved).toEqual([{ waitingFor: [segmentId(target)] }]);
    io.clock.set(START + 61_000);
    const e = await thrown(awaitRestored(a, io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/not served 61 s after it was marked used/);
  });

  it("stops when a newer version is used again: an ingestion ran during the rollback", async () => {
    const { io } = marking({ used: [target, bad], unused: [] });
    const e = await thrown(awaitRestored(part({ step: "served", markedAt: START }), io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/^a newer version is used again in/);
  });

  it("goes on to the audit once the target is served", async () => {
    const { io } = marking({ used: [target], unused: [bad] });
    const a = part({ step: "served", markedAt: START, waitingFor: [segmentId(target)] });
    await awaitRestored(a, io);
    expect(a.saved).toEqual([{ step: "audit", servedAt: START, waitingFor: [] }]);
  });
});

describe("audit", () => {
  it("is done when the target is the one live version", async () => {
    const a = part({ step: "audit" });
    await auditRollback(a, marking({ used: [target], unused: [bad] }).io);
    expect(a.progress()).toMatchObject({ step: "done", audit: { ok: true, liveVersions: ["v1"] } });
  });

  it("fails, recording what it found, when another version is live", async () => {
    const a = part({ step: "audit" });
    const e = await thrown(auditRollback(a, marking({ used: [segment("v0")], unused: [target, bad] }).io));
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/^after the rollback .* serves v0, not only v1/);
    expect(a.progress()).toMatchObject({ step: "audit", audit: { ok: false, liveVersions: ["v0"] } });
  });
});

describe("the rollback's step table", () => {
  it("runs a fresh chunk through every step to done", async () => {
    const { io, marks } = marking({ used: [target, bad], unused: [] });
    const a = part({});
    await runSteps(ROLLBACK_STEPS, a, io);
    expect(marks).toEqual(["unused v2", "used v1"]);
    expect(a.saved.map((s) => s.step)).toEqual(["mark", "served", "audit", "done"]);
  });

  it("resumes at the recorded step: a chunk killed while its target loads marks nothing again", async () => {
    const { io, marks } = marking({ used: [target], unused: [bad] });
    const a = part({ step: "served", markedAt: START });
    await runSteps(ROLLBACK_STEPS, a, io);
    expect(marks).toEqual([]);
    expect(a.progress().step).toBe("done");
  });
});

describe("the partition's view", () => {
  const view = (progress: RollbackProgress) =>
    rollbackKind.describe({ payload, progress } as unknown as Parameters<typeof rollbackKind.describe>[0]);

  it("says the chunk is in rollback between its marks, and how to finish it", () => {
    for (const p of [
      { step: "unmark", unmarked: 1 },
      { step: "mark", unmarked: 2 },
    ] as RollbackProgress[])
      expect(view(p).step).toMatch(
        /: in rollback, the chunk between its marks \(newer versions unused, v1 not used again yet\); resume the job/,
      );
  });

  it("shows the plain step before the first mark and once the target is used again", () => {
    expect(view({ step: "unmark" }).step).toBe("unmark");
    expect(view({ step: "served", marked: 1 }).step).toBe("served");
    expect(view({ step: "done" })).toMatchObject({ step: "done", version: "v1" });
  });
});
