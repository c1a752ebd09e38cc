import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type KindOfWork, payloadOf, progressOf } from "../../src/driver/kind.js";
import { TaskAbort, TaskProgress } from "../../src/driver/signals.js";
import { DruidClient } from "../../src/druid/client.js";
import { runJob } from "../../src/jobs/engine.js";
import { jobKinds, KINDS } from "../../src/jobs/kinds.js";
import { jobReport } from "../../src/jobs/report.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import type { TaskRow } from "../../src/ledger/types.js";
import type { DruidServices } from "../../src/work/services.js";

/**
 * A kind of work is one object; a second kind registered in one line runs through planning,
 * the driver, reports, status, retry and cancel like ingestion does.
 */

const echoPayload = z.object({ label: z.string(), steps: z.number().int().positive() });
const echoProgress = z.looseObject({ count: z.number().int().optional() });
let failing = false;

/** Counts to `steps`, one checkpointed step at a time; fails while `failing` is set. */
const echoKind: KindOfWork<DruidServices, { job: string; labels: string[]; steps: number }> = {
  name: "echo",
  plan: ({ job, labels, steps }) => ({
    job: { id: job, kind: "echo", options: {} },
    tasks: labels.map((label) => ({ id: `${job}/${label}`, kind: "echo", payload: { label, steps } })),
  }),
  payload: echoPayload,
  progress: echoProgress,
  runner: () => ({
    kind: "echo",
    concurrency: 4,
    maxRetry: 0,
    progressDelayMs: 1,
    handler: async (task, ctx) => {
      const payload = echoPayload.parse(task.payload);
      if (failing) throw new TaskAbort(`echo ${payload.label} told to fail`);
      const count = (echoProgress.parse(task.progress).count ?? 0) + 1;
      if (!(await ctx.checkpoint({ count }))) throw new Error("checkpoint refused");
      if (count < payload.steps) throw new TaskProgress(`counted ${count}`, 1);
    },
  }),
  describe: (task: TaskRow) => ({
    interval: echoPayload.parse(task.payload).label,
    step: `count ${echoProgress.parse(task.progress).count ?? 0}`,
    druidTaskId: null,
    druidState: null,
    version: null,
    rows: echoProgress.parse(task.progress).count ?? null,
    segments: null,
    bytes: null,
    rowStats: null,
    parseErrors: [],
    failures: [],
  }),
  activeDruidTasks: () => [],
};
const kinds = [...KINDS, echoKind]; // the one registration line

let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await store?.close();
  await client?.close();
  store = undefined;
  client = undefined;
  failing = false;
});

async function setup(steps: number) {
  store = await openStore("sqlite::memory:");
  client = new DruidClient({ url: "http://127.0.0.1:9" });
  const planned = echoKind.plan({ job: "echo_job", labels: ["a", "b", "c"], steps });
  await store.createJob(planned.job, planned.tasks);
  return { store, client };
}

describe("a second kind of work", () => {
  it("runs through the driver and is reported by its own description; the job settles done", async () => {
    const { store, client } = await setup(3);
    const result = await runJob({
      store,
      client,
      clock: new RealTicks(),
      jobId: "echo_job",
      kinds,
      tickMs: 5,
    });
    expect(result.counts.done).toBe(3);
    expect(result.job.state).toBe("done");
    const report = await jobReport(store, result.job, kinds);
    expect(report.partitions.map((p) => [p.kind, p.interval, p.step, p.rows])).toEqual([
      ["echo", "a", "count 3", 3],
      ["echo", "b", "count 3", 3],
      ["echo", "c", "count 3", 3],
    ]);
    expect(report.exitCode).toBe(0);
  });

  it("fails, is sent back by retry, and finishes; the job goes failed, open, done", async () => {
    const { store, client } = await setup(2);
    failing = true;
    const first = await runJob({
      store,
      client,
      clock: new RealTicks(),
      jobId: "echo_job",
      kinds,
      tickMs: 5,
    });
    expect(first.counts.failed).toBe(3);
    expect(first.job.state).toBe("failed");
    expect((await jobReport(store, first.job, kinds)).partitions[0]?.error).toMatch(/echo a told to fail/);
    failing = false;
    for (const t of await store.listTasks("echo_job"))
      expect(await store.retryTask(t.id, "test")).not.toBeNull();
    const second = await runJob({
      store,
      client,
      clock: new RealTicks(),
      jobId: "echo_job",
      kinds,
      tickMs: 5,
    });
    expect(second.counts.done).toBe(3);
    expect(second.job.state).toBe("done");
  });

  it("names its kind of job from the registry: resume and the kind lists take it without another change", () => {
    expect(jobKinds()).toEqual(["run", "backfill", "rollback", "kill", "compact"]);
    expect(jobKinds([...KINDS, echoKind as unknown as (typeof KINDS)[number]])).toContain("echo");
  });

  it("is canceled like any partition", async () => {
    const { store, client } = await setup(1_000_000);
    const run = runJob({ store, client, clock: new RealTicks(), jobId: "echo_job", kinds, tickMs: 5 });
    await store.cancelJob("echo_job", "test cancel", "test");
    const result = await run;
    expect(result.counts.failed + result.counts.done).toBe(3);
    const tasks = await store.listTasks("echo_job");
    expect(tasks.every((t) => t.state === "failed" && t.lastError?.startsWith("canceled"))).toBe(true);
  });
});

/** The system clock with sleeps capped to a few ms, so a test's driver loop turns fast without timers to wait on. */
class RealTicks {
  now(): number {
    return Date.now();
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setTimeout(resolve, Math.min(ms, 5));
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(t);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }
}

describe("a kind's encodings", () => {
  it("decode a task's payload and progress with the kind's schemas, naming the field that is wrong", () => {
    const task = {
      id: "echo_job/a",
      payload: { label: "a", steps: 2 },
      progress: { count: 1 },
    } as unknown as TaskRow;
    expect(payloadOf(echoKind, task)).toEqual({ label: "a", steps: 2 });
    expect(progressOf(echoKind, task)).toEqual({ count: 1 });
    const bad = { ...task, payload: { label: "a", steps: "two" } } as unknown as TaskRow;
    expect(() => payloadOf(echoKind, bad)).toThrow(/payload of echo_job\/a is not a echo payload: steps:/);
  });
});
