import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ManualClock } from "../../src/core/clock.js";
import type { TaskContext } from "../../src/driver/runner.js";
import { TaskAbort, TaskDefer, TaskProgress } from "../../src/driver/signals.js";
import { SpecRejectedError, UnavailableError } from "../../src/druid/errors.js";
import type { JsonObject, TaskRow } from "../../src/ledger/types.js";
import { type OpsStep, type StepTable, stepRunner } from "../../src/ops/step-table.js";
import type { DruidServices } from "../../src/work/services.js";
import type { StatusResult } from "../../src/work/status-batcher.js";
import { fakeAdmission, fakeClient, fakeIO, fakeTaskIO, thrown } from "./fakes.js";

/**
 * What every segment operation's runner shares: the step table (resume at the recorded step, checkpoints
 * that stop a canceled partition, Druid's refusals ended), and the budget its Druid tasks run under.
 */

type Payload = { name: string };
type Progress = { step?: "one" | "two" | "done" | undefined; seen?: string[] };

const encoding = {
  name: "test-op",
  payload: z.object({ name: z.string() }),
  progress: z.looseObject({
    step: z.enum(["one", "two", "done"]).optional(),
    seen: z.array(z.string()).optional(),
  }),
};

function table(two: OpsStep<Payload, Progress> = async (p) => p.save({ step: "done" })) {
  const t: StepTable<Payload, Progress, ReturnType<typeof fakeIO>> = {
    encoding,
    first: "one",
    steps: [
      ["one", async (p) => p.save({ step: "two", seen: [...(p.progress().seen ?? []), "one"] })],
      ["two", two],
    ],
  };
  return t;
}

function run(t: ReturnType<typeof table>, progress: JsonObject, refuse = false) {
  const io = fakeIO(fakeClient({ used: [], unused: [] }));
  const runner = stepRunner({} as DruidServices, t, io);
  const checkpoints: JsonObject[] = [];
  const ctx = {
    signal: new AbortController().signal,
    owner: "me",
    clock: new ManualClock(),
    checkpoint: async (patch: JsonObject) => {
      checkpoints.push(patch);
      return refuse ? null : ({} as TaskRow);
    },
  } satisfies TaskContext;
  const task = {
    id: "job/a",
    kind: "test-op",
    attempt: 1,
    payload: { name: "a" },
    progress,
  } as unknown as TaskRow;
  return { done: runner.handler(task, ctx), checkpoints, runner };
}

describe("a step table", () => {
  it("runs a fresh partition from its first step, each step after the one it checkpointed", async () => {
    const r = run(table(), {});
    await r.done;
    expect(r.checkpoints).toEqual([{ step: "two", seen: ["one"] }, { step: "done" }]);
    expect(r.runner.kind).toBe("test-op");
  });

  it("resumes at the recorded step", async () => {
    const r = run(table(), { step: "two" });
    await r.done;
    expect(r.checkpoints).toEqual([{ step: "done" }]);
  });

  it("stops at a refused checkpoint (canceled or taken over) instead of going on", async () => {
    const r = run(table(), {}, true);
    expect(await thrown(r.done)).toEqual(new TaskAbort("canceled or taken over"));
    expect(r.checkpoints).toHaveLength(1);
  });

  it("ends a partition Druid refuses for good, and leaves what may pass to the driver's retries", async () => {
    const invalid = new SpecRejectedError({ endpoint: "POST /x", status: 400, druidMessage: "bad version" });
    const refused = await thrown(
      run(
        table(() => Promise.reject(invalid)),
        { step: "two" },
      ).done,
    );
    expect(refused).toBeInstanceOf(TaskAbort);
    expect((refused as Error).message).toMatch(/^Druid refused: .*bad version/);
    const busy = new UnavailableError({ endpoint: "POST /x", status: 503 });
    expect(
      await thrown(
        run(
          table(() => Promise.reject(busy)),
          { step: "two" },
        ).done,
      ),
    ).toBe(busy);
  });

  it("aborts a malformed row with the field instead of retrying it", async () => {
    const e = await thrown(run(table(), { step: "three" }).done);
    expect(e).toBeInstanceOf(TaskAbort);
    expect((e as Error).message).toMatch(/step/);
  });
});

describe("Druid tasks under a budget", () => {
  const client = fakeClient({ used: [], unused: [] });
  const sent: string[] = [];
  const send = (id: string) => async () => {
    sent.push(id);
  };

  it("defers a submission while the budget is in use, and takes the place freed when a task ends", async () => {
    const success: StatusResult = { id: "druid-a", state: "SUCCESS", duration: 1, errorMsg: null };
    const statuses = new Map<string, StatusResult>([
      ["druid-a", { id: "druid-a", state: "RUNNING", duration: -1, errorMsg: null }],
    ]);
    const { tasks } = fakeTaskIO(client, { budget: 1, statuses });
    const signal = new AbortController().signal;
    sent.length = 0;
    await tasks.submit("a", "druid-a", signal, send("druid-a"));
    const deferred = await thrown(tasks.submit("b", "druid-b", signal, send("druid-b")));
    expect(deferred).toEqual(new TaskDefer("Druid's test budget (1 task(s)) is in use", 1000));
    expect(await thrown(tasks.ended("a", "druid-a", signal))).toEqual(
      new TaskProgress("test task druid-a RUNNING", 1000),
    );
    statuses.set("druid-a", success);
    expect(await tasks.ended("a", "druid-a", signal)).toEqual({ state: "SUCCESS", errorMsg: null });
    await tasks.submit("b", "druid-b", signal, send("druid-b"));
    expect(sent).toEqual(["druid-a", "druid-b"]);
  });

  it("holds no place for a task that waits for a worker slot or was not submitted", async () => {
    const { admission, tracked } = fakeAdmission(false);
    const { tasks } = fakeTaskIO(client, { budget: 1, admission });
    const signal = new AbortController().signal;
    expect(await thrown(tasks.submit("a", "druid-a", signal, send("druid-a")))).toEqual(
      new TaskDefer("waiting for a free worker slot", 1000),
    );
    expect(tasks.holds("a")).toBe(false);
    admission.free = true;
    const down = new Error("connection reset");
    expect(await thrown(tasks.submit("a", "druid-a", signal, () => Promise.reject(down)))).toBe(down);
    expect(tasks.holds("a")).toBe(false);
    await tasks.submit("a", "druid-a", signal, send("druid-a"));
    expect(tracked.get("a")).toBe("druid-a");
  });

  it("takes its place and its worker slot again for a task a crashed run submitted", async () => {
    const running: StatusResult = { id: "druid-a", state: "RUNNING", duration: -1, errorMsg: null };
    const { admission, tracked } = fakeAdmission();
    const { tasks } = fakeTaskIO(client, { budget: 1, admission, statuses: new Map([["druid-a", running]]) });
    await thrown(tasks.ended("a", "druid-a", new AbortController().signal));
    expect([tasks.holds("a"), tracked.get("a")]).toEqual([true, "druid-a"]);
  });

  it("is not claimed to submit while the budget is known to be in use; one that leaves this host holds nothing here", async () => {
    const { admission, tracked } = fakeAdmission();
    const { tasks } = fakeTaskIO(client, { budget: 1, admission });
    const hooks = tasks.hooks("submit", "measure");
    const row = (id: string, step?: string) => ({ id, progress: step ? { step } : {} }) as unknown as TaskRow;
    // The budget is not known before its first read: claim, the submit step reads it.
    expect(hooks.isEligible?.(row("b", "submit"))).toBe(true);
    await tasks.submit("a", "druid-a", new AbortController().signal, send("druid-a"));
    expect(hooks.isEligible?.(row("b", "submit"))).toBe(false);
    expect(hooks.isEligible?.(row("a", "submit"))).toBe(true);
    expect(hooks.isEligible?.(row("b"))).toBe(true); // measure first: holds no place
    expect(hooks.isEligible?.(row("b", "running"))).toBe(true);
    // Put back to wait, any host may claim it next: kept here, its place and slot would outlive its task
    // when another host ends it.
    hooks.abandon?.("a", "waiting");
    expect([tasks.holds("a"), tracked.has("a")]).toEqual([false, false]);
    await tasks.submit("a", "druid-a", new AbortController().signal, send("druid-a"));
    hooks.abandon?.("a", "lost");
    expect([tasks.holds("a"), tracked.has("a")]).toEqual([false, false]);
    await tasks.submit("a", "druid-a", new AbortController().signal, send("druid-a"));
    await hooks.onFinish?.(row("a"));
    expect([tasks.holds("a"), tracked.has("a")]).toEqual([false, false]);
  });
});
