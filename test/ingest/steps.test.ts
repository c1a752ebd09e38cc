import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { formatInterval, type Interval, parseInterval } from "../../src/core/interval.js";
import { TaskAbort, TaskProgress } from "../../src/driver/signals.js";
import type { DruidClient } from "../../src/druid/client.js";
import { SpecRejectedError, UnavailableError } from "../../src/druid/errors.js";
import type { DataSegment } from "../../src/druid/types.js";
import { CreatedTimes } from "../../src/ingest/created-times.js";
import { type Attempt, AttemptFailed, type StepIO } from "../../src/ingest/steps/attempt.js";
import { auditPartition } from "../../src/ingest/steps/audit.js";
import { awaitHandoff } from "../../src/ingest/steps/handoff.js";
import { prepareAttempt } from "../../src/ingest/steps/prepare.js";
import { awaitTerminal } from "../../src/ingest/steps/running.js";
import { submitNative } from "../../src/ingest/steps/submit.js";
import type { IngestPayload, IngestProgress } from "../../src/ingest/types.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import {
  type HandoffChecker,
  type HandoffQuestion,
  type HandoffVerdict,
  handoffVerdict,
} from "../../src/work/handoff.js";
import { segmentId, toTimelineSegment } from "../../src/work/segments.js";
import { StatusBatcher, type StatusResult, type TaskStatusSnapshot } from "../../src/work/status-batcher.js";
import { dailyTemplate } from "../helpers/dataset.js";

/**
 * Each step of the ingestion handler on its own, over fake Druid I/O (the other steps are not
 * involved). The end-to-end suites run them together against the emulator.
 */

const INTERVAL = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const TASK_ID = "segops_wiki_20260101_abc_a1";

const payload: IngestPayload = {
  datasource: "wiki",
  interval: INTERVAL,
  spec: dailyTemplate({ datasource: "wiki" }),
  specVersion: "1",
  idPrefix: "segops",
  mode: "replace",
  segmentGranularity: "day",
  slots: 1,
};

function attempt(
  progress: IngestProgress = {},
  pl: IngestPayload = payload,
): Attempt & { saved: IngestProgress[]; notes: string[] } {
  let p = progress;
  const saved: IngestProgress[] = [];
  const notes: string[] = [];
  const task = { id: "job/20260101", attempt: 1 } as TaskRow;
  return {
    task,
    payload: pl,
    interval: parseInterval(INTERVAL),
    taskId: TASK_ID,
    call: {},
    progress: () => p,
    save: async (patch) => {
      saved.push(patch);
      p = { ...p, ...patch };
    },
    note: (step, detail) => notes.push(`${step} ${detail}`),
    saved,
    notes,
  };
}

function io(over: {
  client?: Partial<Record<keyof DruidClient, unknown>>;
  status?: StatusResult;
  verdict?: HandoffVerdict;
  clock?: ManualClock;
}): StepIO {
  return {
    // No compact task by default: a newer version is never Druid's compaction of ours (steps/compacted.ts).
    client: { tasks: async () => [], ...over.client } as unknown as DruidClient,
    clock: over.clock ?? new ManualClock(Date.UTC(2026, 0, 2)),
    batcher: {
      get: async (id: string) => over.status ?? { id, state: "UNKNOWN" },
    } as unknown as StatusBatcher,
    handoff: {
      check: async () => over.verdict,
      // The baseline read rides the handoff checker's round: here, straight to the fake client.
      readUsed: (ds: string, interval: Interval) =>
        (over.client?.metadataSegments as DruidClient["metadataSegments"] | undefined)?.(ds, [
          formatInterval(interval),
        ]) ?? Promise.reject(new Error("no metadataSegments in this fake")),
    } as unknown as HandoffChecker,
    settings: { tickMs: 1000, handoffTimeoutMs: 60_000, sizeBand: DEFAULT_SIZE_BAND },
  };
}

const segment = (version: string): DataSegment => ({
  dataSource: "wiki",
  interval: INTERVAL,
  version,
  loadSpec: {},
  dimensions: "page",
  metrics: "count",
  shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
  binaryVersion: 9,
  size: 1000,
  identifier: `wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_${version}`,
});

/** One partition of a set of `partitions` at `version` (the `segment` above is a set of one). */
const part = (version: string, partitionNum = 0, partitions = 1, rows = 8): DataSegment => ({
  ...segment(version),
  shardSpec: { type: "numbered", partitionNum, partitions },
  identifier: `${segment(version).identifier}_${partitionNum}`,
  totalRows: rows,
});

/** What an audit reads afresh (no handoffSeen): the metadata and the served view of the interval. */
const druid = (used: DataSegment[], served: DataSegment[] = used) => ({
  metadataSegments: async () => used,
  servedInInterval: async () => served.map((s) => ({ segment: s, servers: [{ type: "historical" }] })),
});

const rejects = async (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe("prepare: the id and baseline are recorded before anything is submitted", () => {
  it("trusts the baseline when Druid does not know the id yet", async () => {
    const a = attempt();
    await prepareAttempt(a, io({ client: { metadataSegments: async () => [segment("v0")] } }));
    expect(a.progress()).toMatchObject({
      step: "submit",
      taskId: TASK_ID,
      baselineTrusted: true,
      baseline: { versions: ["v0"] },
      taskIds: [TASK_ID],
    });
  });

  it("marks the baseline untrusted when Druid already knows the id (another job submitted it)", async () => {
    const a = attempt();
    const status: StatusResult = { id: TASK_ID, state: "SUCCESS", duration: 10, errorMsg: null };
    await prepareAttempt(a, io({ status, client: { metadataSegments: async () => [] } }));
    expect(a.progress().baselineTrusted).toBe(false);
  });

  it("does nothing for an attempt already prepared (a resumed task keeps its baseline)", async () => {
    const a = attempt({ taskId: TASK_ID, step: "running" });
    await prepareAttempt(a, io({}));
    expect(a.saved).toEqual([]);
  });
});

describe("submit", () => {
  it("moves to running on accepted, and reattaches on Druid's duplicate answer", async () => {
    for (const outcome of ["accepted", "duplicate"] as const) {
      const a = attempt({ step: "submit", taskId: TASK_ID });
      const sent: string[] = [];
      await submitNative(
        a,
        io({
          client: {
            submitTask: async (spec: { id: string }) => {
              sent.push(spec.id);
              return { outcome, taskId: spec.id };
            },
          },
        }),
      );
      expect(sent).toEqual([TASK_ID]);
      expect(a.progress()).toMatchObject({ step: "running", reattached: outcome === "duplicate" });
    }
  });

  it("aborts with Druid's words when it rejects the spec, and leaves retryable failures to the driver", async () => {
    const invalid = new SpecRejectedError({
      endpoint: "POST /druid/indexer/v1/task",
      status: 400,
      druidMessage: "bad granularity",
    });
    const a = attempt({ step: "submit" });
    const error = await rejects(
      submitNative(a, io({ client: { submitTask: async () => Promise.reject(invalid) } })),
    );
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toContain("bad granularity");
    const busy = new UnavailableError({ endpoint: "POST /druid/indexer/v1/task", status: 503 });
    expect(
      await rejects(
        submitNative(
          attempt({ step: "submit" }),
          io({ client: { submitTask: async () => Promise.reject(busy) } }),
        ),
      ),
    ).toBe(busy);
  });
});

describe("running: waiting for the Druid task to end", () => {
  const reports = (processed: number, unparseable: number) => ({
    ingestionStatsAndErrors: {
      type: "ingestionStatsAndErrors",
      taskId: TASK_ID,
      payload: {
        ingestionState: "COMPLETED",
        unparseableEvents: { buildSegments: unparseable > 0 ? ["Unable to parse row [x]"] : [] },
        rowStats: {
          totals: { buildSegments: { processed, unparseable, thrownAway: 0, processedWithError: 0 } },
        },
        errorMsg: null,
      },
    },
  });

  it("comes back next tick while RUNNING", async () => {
    const a = attempt({ step: "running" });
    const error = await rejects(
      awaitTerminal(a, io({ status: { id: TASK_ID, state: "RUNNING", duration: -1, errorMsg: null } })),
    );
    expect(error).toBeInstanceOf(TaskProgress);
    expect(a.progress().druidState).toBe("RUNNING");
  });

  it("once RUNNING is recorded, waits inside the handler run for the end: one wait, no checkpoint, no progress signal", async () => {
    const a = attempt({ step: "running", taskId: TASK_ID, druidState: "RUNNING" });
    // The real batcher over a Druid that answers RUNNING twice, then SUCCESS.
    const answers: TaskStatusSnapshot[] = [
      { id: TASK_ID, state: "RUNNING", duration: -1, errorMsg: null },
      { id: TASK_ID, state: "RUNNING", duration: -1, errorMsg: null },
      { id: TASK_ID, state: "SUCCESS", duration: 42, errorMsg: null },
    ];
    let lookups = 0;
    const clock = new ManualClock(0);
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      lookup: async () => new Map([[TASK_ID, answers[lookups++] as TaskStatusSnapshot]]),
    });
    let waits = 0;
    const counted = {
      get: () => {
        throw new Error("a recorded RUNNING asks for the end, not the next answer");
      },
      getEnded: (id: string, signal?: AbortSignal) => {
        waits++;
        return batcher.getEnded(id, signal);
      },
    } as unknown as StatusBatcher;
    const steps = io({
      client: {
        taskReports: async () => reports(10, 0),
        taskStatus: async () => ({ task: TASK_ID, status: { createdTime: "2026-01-01T00:00:00.000Z" } }),
      },
    });
    const done = awaitTerminal(a, { ...steps, batcher: counted });
    for (let i = 0; i < 3; i++) await clock.advance(1000);
    await done;
    await batcher.stop();
    expect(lookups).toBe(3);
    expect(waits).toBe(1);
    // The only write is the move to handoff at SUCCESS: nothing per RUNNING answer.
    expect(a.saved).toHaveLength(1);
    expect(a.progress()).toMatchObject({ step: "handoff", druidState: "SUCCESS", druidDurationMs: 42 });
  });

  it("a stop (cancel seen by the heartbeat, shutdown) ends the wait with the stop's reason", async () => {
    const a = attempt({ step: "running", taskId: TASK_ID, druidState: "RUNNING" });
    const stop = new AbortController();
    a.call.signal = stop.signal;
    const steps = io({});
    const waiting = awaitTerminal(a, {
      ...steps,
      batcher: {
        getEnded: (_id: string, signal: AbortSignal) =>
          new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
      } as unknown as StatusBatcher,
    });
    const reason = new Error("task stopped: canceled");
    stop.abort(reason);
    expect(await rejects(waiting)).toBe(reason);
    expect(a.saved).toEqual([]);
  });

  it("goes back to submit the same id when Druid does not know it", async () => {
    const a = attempt({ step: "running" });
    expect(await rejects(awaitTerminal(a, io({})))).toBeInstanceOf(TaskProgress);
    expect(a.progress().step).toBe("submit");
  });

  it("fails the attempt with Druid's message, its failure class and the row counters", async () => {
    const a = attempt({ step: "running" });
    const error = await rejects(
      awaitTerminal(
        a,
        io({
          status: { id: TASK_ID, state: "FAILED", duration: 5, errorMsg: "status says little" },
          client: {
            taskReports: async () => ({
              ingestionStatsAndErrors: {
                ...reports(0, 3).ingestionStatsAndErrors,
                payload: {
                  ...reports(0, 3).ingestionStatsAndErrors.payload,
                  errorMsg: "Max parse exceptions[0] exceeded",
                },
              },
            }),
          },
        }),
      ),
    );
    expect(error).toBeInstanceOf(AttemptFailed);
    expect(a.progress().failures?.[0]).toMatchObject({
      failureClass: "parse-exceptions",
      deterministic: true,
    });
    expect(a.progress().rowStats).toMatchObject({ unparseable: 3 });
  });

  it("takes a failed parallel supervisor's evidence from its sub-tasks (Druid 33 reports zeros there)", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 2));
    const submittedAt = clock.now() - 20 * 60_000;
    const a = attempt({ step: "running", submittedAt });
    const sub = "single_phase_sub_task_wiki_x";
    const filters: Array<{ datasource?: string; createdTimeInterval?: string }> = [];
    const error = await rejects(
      awaitTerminal(
        a,
        io({
          status: {
            id: TASK_ID,
            state: "FAILED",
            duration: 5,
            errorMsg: "Failed in phase[segment generation]. See task logs for details.",
          },
          client: {
            taskReports: async (id: string) =>
              id === sub
                ? reports(0, 50)
                : {
                    ingestionStatsAndErrors: {
                      ...reports(0, 0).ingestionStatsAndErrors,
                      payload: { ...reports(0, 0).ingestionStatsAndErrors.payload, errorMsg: null },
                    },
                  },
            tasks: async (filter: { datasource?: string; createdTimeInterval?: string }) => {
              filters.push(filter);
              return [
                {
                  id: TASK_ID,
                  groupId: TASK_ID,
                  statusCode: "FAILED",
                  errorMsg: "Failed in phase[segment generation]. See task logs for details.",
                },
                {
                  id: sub,
                  groupId: TASK_ID,
                  statusCode: "FAILED",
                  errorMsg: "Max parse exceptions[0] exceeded",
                },
                { id: "other_task", groupId: "other_task", statusCode: "SUCCESS", errorMsg: null },
              ];
            },
          },
          clock,
        }),
      ),
    );
    expect(error).toBeInstanceOf(AttemptFailed);
    // The list is bounded to tasks created since the submission (an hour's margin for clock skew), not the
    // datasource's last day of complete tasks.
    expect(filters).toHaveLength(1);
    const window = parseInterval(filters[0]?.createdTimeInterval ?? "");
    expect(filters[0]?.datasource).toBe("wiki");
    expect(window.start).toBe(submittedAt - 3_600_000);
    expect(window.end).toBe(clock.now() + 3_600_000);
    expect(a.progress().rowStats).toMatchObject({ processed: 0, unparseable: 50 });
    expect(a.progress().parseErrors).toEqual(["Unable to parse row [x]"]);
    expect(a.progress().failures?.[0]).toMatchObject({
      failureClass: "parse-exceptions",
      deterministic: true,
    });
    expect(a.progress().failures?.[0]?.errorMsg).toContain("(sub-task: Max parse exceptions[0] exceeded)");
  });

  it("fails an append's SUCCESS whose counters fail the data gate, deterministically", async () => {
    const a = attempt({ step: "running" }, { ...payload, mode: "append" });
    const error = await rejects(
      awaitTerminal(
        a,
        io({
          status: { id: TASK_ID, state: "SUCCESS", duration: 5, errorMsg: null },
          client: {
            taskReports: async () => reports(0, 20),
            taskStatus: async () => ({ status: { createdTime: "x" } }),
          },
        }),
      ),
    );
    expect(error).toBeInstanceOf(AttemptFailed);
    expect(a.progress().failures?.[0]).toMatchObject({ failureClass: "data-gate", deterministic: true });
    expect(a.progress().step).toBe("running");
  });

  it("sends a replace whose SUCCESS fails the data gate to the undo, recording the failure only when it ends", async () => {
    const a = attempt({ step: "running" });
    await awaitTerminal(
      a,
      io({
        status: { id: TASK_ID, state: "SUCCESS", duration: 5, errorMsg: null },
        client: {
          taskReports: async () => reports(0, 20),
          taskStatus: async () => ({ status: { createdTime: "2026-01-02T00:00:00.000Z" } }),
        },
      }),
    );
    expect(a.progress()).toMatchObject({ step: "undo", undo: { phase: "unmark" }, druidState: "SUCCESS" });
    expect(a.progress().failures ?? []).toEqual([]);
  });

  it("never lets a replace that ingested nothing leave live data empty (unless --allow-empty)", async () => {
    const live = { segments: 2, versions: ["v0"], rows: 40, bytes: 10 };
    const success = io({
      status: { id: TASK_ID, state: "SUCCESS", duration: 5, errorMsg: null },
      client: {
        taskReports: async () => reports(0, 0),
        taskStatus: async () => ({ status: { createdTime: "2026-01-02T00:00:00.000Z" } }),
      },
    });
    const a = attempt({ step: "running", liveBefore: live });
    await awaitTerminal(a, success);
    expect(a.progress().step).toBe("undo");
    expect(a.progress().undo?.reason).toMatch(
      /the task ingested no rows, while 40 row\(s\) in 2 segment\(s\) of version v0 were live/,
    );
    const allowed = attempt({ step: "running", liveBefore: live }, { ...payload, allowEmpty: true });
    await awaitTerminal(allowed, success);
    expect(allowed.progress().step).toBe("handoff");
  });

  it("moves a clean SUCCESS to handoff with Druid's createdTime and duration", async () => {
    const a = attempt({ step: "running" });
    await awaitTerminal(
      a,
      io({
        status: { id: TASK_ID, state: "SUCCESS", duration: 5000, errorMsg: null },
        client: {
          taskReports: async () => reports(8, 0),
          taskStatus: async () => ({ status: { createdTime: "2026-01-02T00:00:00.000Z" } }),
        },
      }),
    );
    expect(a.progress()).toMatchObject({
      step: "handoff",
      druidState: "SUCCESS",
      druidDurationMs: 5000,
      druidCreatedTime: "2026-01-02T00:00:00.000Z",
      rowStats: { processed: 8 },
    });
  });

  describe("Druid's createdTime for the ownership proof", () => {
    it("takes a running task's createdTime from the datasource's active-task list, with no status GET", async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 2));
      const statusGets: string[] = [];
      const lists: Array<{ datasource: string; max: number }> = [];
      const createdTimes = new CreatedTimes({
        clock,
        listEveryMs: 30_000,
        source: {
          tasks: async (filter) => {
            lists.push(filter);
            return [
              { id: "someone_else", createdTime: "2026-01-01T23:00:00.000Z" },
              { id: TASK_ID, createdTime: "2026-01-02T00:00:00.000Z" },
            ];
          },
          taskStatus: async (id) => {
            statusGets.push(id);
            return null;
          },
        },
      });
      let ended: (s: StatusResult) => void = () => {};
      const base = io({ clock, client: { taskReports: async () => reports(8, 0) } });
      const steps: StepIO = {
        ...base,
        createdTimes,
        batcher: {
          get: async (id: string) => ({ id, state: "RUNNING", duration: -1, errorMsg: null }),
          getEnded: () =>
            new Promise<StatusResult>((resolve) => {
              ended = resolve;
            }),
        } as unknown as StatusBatcher,
      };
      const a = attempt({ step: "running" });
      // The first RUNNING is recorded and the step comes back next tick; the task stays watched meanwhile.
      await expect(awaitTerminal(a, steps)).rejects.toBeInstanceOf(TaskProgress);
      const waiting = awaitTerminal(a, steps);
      await clock.advance(30_000);
      expect(lists).toEqual([{ datasource: "wiki", max: 0 }]);
      ended({ id: TASK_ID, state: "SUCCESS", duration: 5000, errorMsg: null });
      await waiting;
      expect(a.progress()).toMatchObject({ step: "handoff", druidCreatedTime: "2026-01-02T00:00:00.000Z" });
      expect(statusGets).toEqual([]);
    });

    it("asks the task's own status when it ended before a list, and stops watching a failed attempt", async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 2));
      const statusGets: string[] = [];
      const lists: string[] = [];
      const createdTimes = new CreatedTimes({
        clock,
        listEveryMs: 30_000,
        source: {
          tasks: async (filter) => {
            lists.push(filter.datasource);
            return [];
          },
          taskStatus: async (id) => {
            statusGets.push(id);
            return { status: { createdTime: "2026-01-02T00:00:01.000Z" } };
          },
        },
      });
      const succeeded = attempt({ step: "running" });
      await awaitTerminal(succeeded, {
        ...io({
          clock,
          status: { id: TASK_ID, state: "SUCCESS", duration: 5000, errorMsg: null },
          client: { taskReports: async () => reports(8, 0) },
        }),
        createdTimes,
      });
      expect(succeeded.progress().druidCreatedTime).toBe("2026-01-02T00:00:01.000Z");
      expect(statusGets).toEqual([TASK_ID]);
      const failed = attempt({ step: "running" });
      await expect(
        awaitTerminal(failed, {
          ...io({
            clock,
            status: { id: TASK_ID, state: "FAILED", duration: 5000, errorMsg: "boom" },
            client: { taskReports: async () => null },
          }),
          createdTimes,
        }),
      ).rejects.toBeInstanceOf(AttemptFailed);
      // Nothing is watched any more: no list is ever sent.
      await clock.advance(120_000);
      expect(lists).toEqual([]);
      expect(clock.pendingSleeps).toBe(0);
    });
  });
});

describe("handoff", () => {
  it("moves to audit once handed off, recording the version and its proof", async () => {
    const a = attempt({ step: "handoff" });
    const seen = [toTimelineSegment(segment("v1"), new Set([segmentId(segment("v1"))]))];
    await awaitHandoff(
      a,
      io({ verdict: { state: "handed-off", version: "v1", segments: [], proof: "window", seen } }),
    );
    expect(a.progress()).toMatchObject({ step: "audit", version: "v1", versionProof: "window" });
    // What the gate judged goes to the audit of the same run, in memory only (never checkpointed).
    expect(a.handoffSeen).toBe(seen);
    expect(JSON.stringify(a.saved)).not.toContain("handoffSeen");
  });

  it("waits, and fails 'SUCCESS but never queryable' past the timeout", async () => {
    const clock = new ManualClock(1_000_000);
    const a = attempt({ step: "handoff", handoffSince: 1_000_000 });
    const verdict: HandoffVerdict = {
      state: "waiting",
      version: "v1",
      missing: ["wiki_v1_0 not served"],
      proof: "window",
    };
    expect(await rejects(awaitHandoff(a, io({ verdict, clock })))).toBeInstanceOf(TaskProgress);
    expect(a.progress().version).toBe("v1");
    await clock.advance(60_000);
    const error = await rejects(awaitHandoff(a, io({ verdict, clock })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/SUCCESS but never queryable: .* missing: wiki_v1_0 not served/);
    expect(a.progress()).toMatchObject({ handoffTimedOut: true, outcome: "handoff-timeout" });
  });

  it("once the wait is recorded, waits inside the handler run until handed off, saving only what changed", async () => {
    const clock = new ManualClock(1_000_000);
    const a = attempt({ step: "handoff", handoffSince: 1_000_000, version: "v1", missing: ["a not served"] });
    const verdicts: HandoffVerdict[] = [
      { state: "waiting", version: "v1", missing: ["a not served"], proof: "window" },
      { state: "waiting", version: "v1", missing: ["b not served"], proof: "window" },
      { state: "handed-off", version: "v1", segments: [], proof: "window" },
    ];
    let asked = 0;
    await awaitHandoff(a, {
      ...io({ clock }),
      handoff: { check: async () => verdicts[asked++] } as unknown as HandoffChecker,
    });
    expect(asked).toBe(3);
    expect(a.saved).toEqual([{ missing: ["b not served"] }, expect.objectContaining({ step: "audit" })]);
  });

  it("records a version proven by no other task having been created in between, then checks again", async () => {
    const a = attempt({ step: "handoff", druidCreatedTime: "2026-01-02T00:00:00.000Z" });
    const verdict: HandoffVerdict = {
      state: "unproven",
      candidate: "2026-01-02T05:00:00.000Z",
      reason: "late",
    };
    const error = await rejects(
      awaitHandoff(
        a,
        io({
          verdict,
          client: { tasks: async () => [{ id: TASK_ID, createdTime: "2026-01-02T00:00:00.000Z" }] },
        }),
      ),
    );
    expect(error).toBeInstanceOf(TaskProgress);
    expect(a.progress()).toMatchObject({ version: "2026-01-02T05:00:00.000Z", versionProof: "sole-task" });
  });

  it("reads the task list on Druid's clock: a window on segops' (behind Druid's) cannot miss a task in between", async () => {
    // Druid's now is three days ahead of segops' clock (an emulator's time scale, or skew). Druid reads
    // createdTimeInterval as a length counted back from its own now.
    const druidNow = Date.UTC(2026, 0, 5);
    const created = "2026-01-02T00:00:00.000Z";
    const all = [
      { id: TASK_ID, createdTime: created },
      { id: "someone_else", createdTime: "2026-01-02T02:00:00.000Z" },
    ];
    const asked: string[] = [];
    const tasks = async (filter: { createdTimeInterval: string }) => {
      asked.push(filter.createdTimeInterval);
      const [from, to] = filter.createdTimeInterval.split("/").map((t) => Date.parse(t)) as [number, number];
      return all.filter((t) => Date.parse(t.createdTime) >= druidNow - (to - from));
    };
    const a = attempt({ step: "handoff", druidCreatedTime: created });
    const verdict: HandoffVerdict = {
      state: "unproven",
      candidate: "2026-01-02T05:00:00.000Z",
      reason: "late",
    };
    const none = async () => [];
    const error = await rejects(
      awaitHandoff(a, io({ verdict, client: { tasks, unusedSegments: none, metadataSegments: none } })),
    );
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(
      /1 other task\(s\) of wiki were created in between \(someone_else\)/,
    );
    expect(asked.length).toBeGreaterThan(1);
    expect(a.progress().outcome).toBe("unproven");
  });

  it("ends superseded when ours was replaced and marked unused before the gate first saw it", async () => {
    // Our task ran 00:00–00:10; another writer's compaction (05:00) replaced the day and the Coordinator
    // marked ours (00:00:01) unused before the first look: the only new used version is past our lifetime,
    // another task was created in between, and ours is among the unused.
    const created = "2026-01-02T00:00:00.000Z";
    const ours = "2026-01-02T00:00:01.000Z";
    const foreign = "2026-01-02T05:00:00.000Z";
    const a = attempt({ step: "handoff", druidCreatedTime: created, druidDurationMs: 600_000 });
    const verdict: HandoffVerdict = { state: "unproven", candidate: foreign, reason: "late" };
    const tasks = async () => [
      { id: TASK_ID, createdTime: created },
      { id: "segops_compact_wiki", createdTime: "2026-01-02T04:59:00.000Z" },
    ];
    const error = await rejects(
      awaitHandoff(
        a,
        io({
          verdict,
          client: {
            tasks,
            unusedSegments: async () => [{ segment: segment(ours), unusedSince: null }],
            metadataSegments: async () => [segment(foreign)],
          },
        }),
      ),
    );
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toBe(
      `superseded: a newer version (${foreign}) replaced ours (${ours}) in ${a.payload.interval}`,
    );
    expect(a.progress().outcome).toBe("superseded");
  });

  it("is never done when a replace's interval serves more rows than its task ingested", async () => {
    const a = attempt({
      step: "audit",
      version: "v1",
      rowStats: { processed: 10, processedWithError: 0, unparseable: 0, thrownAway: 0 },
    });
    a.handoffSeen = [
      { ...toTimelineSegment(segment("v1"), new Set([segmentId(segment("v1"))])), numRows: 100 },
    ];
    const error = await rejects(auditPartition(a, io({})));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(
      /serves 100 row\(s\) but .* ingested 10: the live data is not \(only\) ours/,
    );
    expect(a.progress()).toMatchObject({ outcome: "lost" });
  });

  it("is never done when the task ingested rows but the interval serves none (a tombstone at our version)", async () => {
    const a = attempt({
      step: "audit",
      version: "v1",
      rowStats: { processed: 100, processedWithError: 0, unparseable: 0, thrownAway: 0 },
    });
    const tombstone = toTimelineSegment(
      { ...segment("v1"), shardSpec: { type: "tombstone", partitionNum: 0, partitions: 1 } },
      new Set([segmentId(segment("v1"))]),
    );
    a.handoffSeen = [tombstone];
    const error = await rejects(auditPartition(a, io({})));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/ingested 100 row\(s\) but .* serves none at version v1/);
    expect(a.progress()).toMatchObject({ outcome: "lost" });
    expect(a.progress().step).toBe("audit");
  });

  it("ends superseded, lost and never-loaded partitions with the evidence", async () => {
    const cases: Array<[HandoffVerdict, RegExp, string]> = [
      [
        { state: "superseded", version: "v1", liveVersions: ["v2"] },
        /superseded: a newer version \(v2\)/,
        "superseded",
      ],
      [{ state: "lost", reason: "gone" }, /its data is gone: gone/, "lost"],
      [
        { state: "never-loaded", version: "v1", reason: "dropForever" },
        /never queryable under the load rules/,
        "never-loaded",
      ],
    ];
    for (const [verdict, message, outcome] of cases) {
      const a = attempt({ step: "handoff" });
      const error = await rejects(awaitHandoff(a, io({ verdict })));
      expect(error).toBeInstanceOf(TaskAbort);
      expect((error as Error).message).toMatch(message);
      expect(a.progress().outcome).toBe(outcome);
    }
  });
});

describe("audit", () => {
  const asked: string[] = [];
  const client = (versions: string[], serverType = "historical") => ({
    metadataSegments: async () => versions.map(segment),
    // The served view of the partition's interval only (never the datasource's whole served list).
    servedInInterval: async (_ds: string, interval: string) => {
      asked.push(interval);
      return versions.map((v) => ({ segment: segment(v), servers: [{ type: serverType }] }));
    },
  });

  it("records the summary and finishes when one live version, ours, is served", async () => {
    const a = attempt({
      step: "audit",
      version: "v1",
      taskIds: [TASK_ID],
      rowStats: { processed: 8, processedWithError: 0, unparseable: 0, thrownAway: 0 },
    });
    asked.length = 0;
    await auditPartition(a, io({ client: client(["v1"]) }));
    expect(a.progress()).toMatchObject({
      step: "done",
      summary: { version: "v1", segments: 1, rowsIngested: 8 },
    });
    expect(asked).toEqual([a.payload.interval]);
  });

  it("aborts when our live segment is announced only by a realtime task, not a Historical", async () => {
    const a = attempt({ step: "audit", version: "v1", taskIds: [TASK_ID] });
    const error = await rejects(auditPartition(a, io({ client: client(["v1"], "indexer-executor") })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/not served/);
  });

  it("judges what the handoff gate of the same run read, asking the Coordinator nothing again", async () => {
    const a = attempt({ step: "audit", version: "v1", taskIds: [TASK_ID] });
    const served = (segments: DataSegment[]) =>
      segments.map((s) => toTimelineSegment(s, new Set(segments.map(segmentId))));
    a.handoffSeen = served([segment("v1")]);
    const refuse = async () => {
      throw new Error("the audit asked again");
    };
    await auditPartition(a, io({ client: { metadataSegments: refuse, servedInInterval: refuse } }));
    expect(a.progress()).toMatchObject({ step: "done", summary: { version: "v1", segments: 1 } });
    // What the gate saw is still audited: an older version showing through ours fails the audit.
    const b = attempt({ step: "audit", version: "v1" });
    b.handoffSeen = served([part("v1", 0, 2), part("v0")]);
    expect((await rejects(auditPartition(b, io({})))) as Error).toBeInstanceOf(TaskAbort);
    expect(b.progress().outcome).toBe("audit-failed");
  });
});

describe("audit of a chunk another writer replaced after the handoff step saw ours live", () => {
  // Our version and a compaction's, as Druid writes them: lock timestamps, compared as strings.
  const OURS = "2026-01-02T00:00:00.000Z";
  const NEWER = "2026-01-02T00:05:00.000Z";
  const OLDER = "2026-01-01T12:00:00.000Z";
  const handedOff = (over: IngestProgress = {}) =>
    attempt({
      step: "audit",
      version: OURS,
      versionProof: "window",
      taskIds: [TASK_ID],
      handedOffAt: Date.UTC(2026, 0, 2, 0, 3),
      rowStats: { processed: 8, processedWithError: 0, unparseable: 0, thrownAway: 0 },
      ...over,
    });

  it("ends superseded, as the handoff step would, naming the newer version, not failed 'not ours'", async () => {
    const a = handedOff();
    const error = await rejects(auditPartition(a, io({ client: druid([part(OURS), part(NEWER)]) })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(
      new RegExp(`^superseded: a newer version \\(${NEWER}\\) replaced ours \\(${OURS}\\) in ${INTERVAL}`),
    );
    expect(a.progress()).toMatchObject({ step: "audit", outcome: "superseded" });
    expect(a.progress().summary).toBeUndefined();
  });

  it("says superseded too when the newer version serves more rows than ours ingested, or none", async () => {
    const more = handedOff();
    await rejects(auditPartition(more, io({ client: druid([part(OURS), part(NEWER, 0, 1, 100)]) })));
    expect(more.progress().outcome).toBe("superseded");
    const tombstone = {
      ...part(NEWER),
      shardSpec: { type: "tombstone", partitionNum: 0, partitions: 1 },
    } as DataSegment;
    const none = handedOff();
    await rejects(auditPartition(none, io({ client: druid([part(OURS), tombstone]) })));
    expect(none.progress().outcome).toBe("superseded");
  });

  it("still fails the audit when an older version is live where ours has segments (ours incomplete)", async () => {
    const a = handedOff();
    // Our set lost a partition (marked unused): the older complete version shows through.
    const error = await rejects(auditPartition(a, io({ client: druid([part(OURS, 0, 2), part(OLDER)]) })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(
      new RegExp(`audit failed .* not-ours: live version ${OLDER} is not ours \\(${OURS}\\)`),
    );
    expect(a.progress().outcome).toBe("audit-failed");
  });

  it("still fails the audit when ours is gone and a version that is not newer is live (rolled back)", async () => {
    const a = handedOff();
    const error = await rejects(auditPartition(a, io({ client: druid([part(OLDER)]) })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/missing-version: no segment of our version/);
    expect(a.progress().outcome).toBe("audit-failed");
  });

  it("still fails the audit when ours is live but not served", async () => {
    const a = handedOff();
    const error = await rejects(auditPartition(a, io({ client: druid([part(OURS)], []) })));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/not-served/);
    expect(a.progress().outcome).toBe("audit-failed");
  });
});

/**
 * The same chunk read after Druid's Coordinator marked our overshadowed version unused (its
 * `MarkOvershadowedSegmentsAsUnused` duty runs soon after the newer segments load): ours is gone from the used
 * metadata. Both steps judge it by the handoff gate's one rule: superseded when a newer version is live over the
 * whole interval, else lost or an audit failure, as before.
 */
describe("handoff and audit once the Coordinator marked our overshadowed version unused", () => {
  const OURS = "2026-01-02T00:00:00.000Z";
  const NEWER = "2026-01-02T00:05:00.000Z";
  const OLDER = "2026-01-01T12:00:00.000Z";
  const rowStats = { processed: 8, processedWithError: 0, unparseable: 0, thrownAway: 0 };
  /** Waiting for handoff with our version recorded (seen used and proven ours at an earlier check). */
  const waiting = () =>
    attempt({ step: "handoff", version: OURS, versionProof: "window", taskIds: [TASK_ID], rowStats });
  const handedOff = () =>
    attempt({
      step: "audit",
      version: OURS,
      versionProof: "window",
      taskIds: [TASK_ID],
      handedOffAt: Date.UTC(2026, 0, 2, 0, 3),
      rowStats,
    });
  /** The handoff gate over these used segments (all served), asked the step's own question. */
  const gate = (used: DataSegment[]) =>
    ({
      check: async (_ds: string, q: HandoffQuestion) =>
        handoffVerdict(
          q,
          used.map((s) => toTimelineSegment(s, new Set(used.map(segmentId)))),
        ),
    }) as unknown as HandoffChecker;
  const handoffOver = async (used: DataSegment[]) => {
    const a = waiting();
    const error = await rejects(awaitHandoff(a, { ...io({}), handoff: gate(used) }));
    return { error: error as Error, outcome: a.progress().outcome };
  };
  const auditOver = async (used: DataSegment[]) => {
    const a = handedOff();
    const error = await rejects(auditPartition(a, io({ client: druid(used) })));
    return { error: error as Error, outcome: a.progress().outcome, summary: a.progress().summary };
  };
  /** A newer version over the first half of the day only. */
  const newerHalf: DataSegment = {
    ...part(NEWER),
    interval: "2026-01-01T00:00:00.000Z/2026-01-01T12:00:00.000Z",
    identifier: `wiki_2026-01-01T00:00:00.000Z_2026-01-01T12:00:00.000Z_${NEWER}`,
  };

  it("the handoff step ends superseded when a newer version is live over the interval, not lost", async () => {
    const { error, outcome } = await handoffOver([part(NEWER)]);
    expect(error).toBeInstanceOf(TaskAbort);
    expect(error.message).toBe(
      `superseded: a newer version (${NEWER}) replaced ours (${OURS}) in ${INTERVAL}`,
    );
    expect(outcome).toBe("superseded");
  });

  it("the audit ends superseded too, in the handoff step's words, not 'missing-version'", async () => {
    const { error, outcome, summary } = await auditOver([part(NEWER)]);
    expect(error).toBeInstanceOf(TaskAbort);
    expect(error.message).toBe(
      `superseded: a newer version (${NEWER}) replaced ours (${OURS}) in ${INTERVAL} after it was handed off`,
    );
    expect(outcome).toBe("superseded");
    expect(summary).toBeUndefined();
  });

  it("with nothing live over the interval, the handoff step says lost and the audit fails, as before", async () => {
    const handoff = await handoffOver([]);
    expect(handoff.error.message).toMatch(/its data is gone: our version .* is no longer used/);
    expect(handoff.outcome).toBe("lost");
    const audit = await auditOver([]);
    expect(audit.error).toBeInstanceOf(TaskAbort);
    expect(audit.error.message).toMatch(/ingested 8 row\(s\) but .* serves none/);
    expect(audit.outcome).toBe("lost");
  });

  it("with an older version live (a rollback), or a newer one over part of the interval only, it still fails", async () => {
    const missing = [/missing-version: no segment of our version/, "audit-failed"] as const;
    const cases: Array<[DataSegment[], RegExp, string]> = [
      [[part(OLDER)], ...missing],
      [[newerHalf], ...missing],
      // Both halves' rows are live: more than our task ingested.
      [[part(OLDER), newerHalf], /serves 16 row\(s\) but .* ingested 8/, "lost"],
    ];
    for (const [used, message, ended] of cases) {
      const handoff = await handoffOver(used);
      expect(handoff.error.message).toMatch(/its data is gone: our version .* is no longer used/);
      expect(handoff.outcome).toBe("lost");
      const audit = await auditOver(used);
      expect(audit.error).toBeInstanceOf(TaskAbort);
      expect(audit.error.message).toMatch(message);
      expect(audit.outcome).toBe(ended);
    }
  });
});

describe("handoff and audit when Druid's own auto-compaction rewrote ours (steps/compacted.ts)", () => {
  const OURS = "2026-01-02T00:00:01.000Z";
  const COMPACTED = "2026-01-02T00:05:00.000Z";
  const AUTO = "auto_compact_wiki_2026-01-02T00:04:59.000Z_x";
  const superseded: HandoffVerdict = { state: "superseded", version: OURS, liveVersions: [COMPACTED] };
  const druid = (served: boolean) => ({
    tasks: async () => [
      {
        id: AUTO,
        type: "compact",
        statusCode: "SUCCESS",
        createdTime: "2026-01-02T00:04:59.000Z",
        duration: 60_000,
      },
    ],
    taskPayload: async (id: string) => ({
      task: id,
      payload: { type: "compact", ioConfig: { inputSpec: { type: "interval", interval: INTERVAL } } },
    }),
    metadataSegments: async () => [segment(OURS), { ...segment(COMPACTED), lastCompactionState: {} }],
    unusedSegments: async () => [],
    servedInInterval: async () =>
      served ? [{ segment: segment(COMPACTED), servers: [{ type: "historical" }] }] : [],
  });

  it("ends done with the note once the compacted data is served", async () => {
    const a = attempt({ step: "handoff", version: OURS, taskIds: [TASK_ID] });
    await awaitHandoff(a, io({ verdict: superseded, client: druid(true) }));
    expect(a.progress()).toMatchObject({
      step: "done",
      outcome: null,
      compactedBy: { by: [{ taskId: AUTO, version: COMPACTED }] },
      summary: { version: OURS, segments: 1 },
    });
    expect(a.progress().compactedBy?.note).toMatch(
      /\(Druid's auto-compaction\) as 2026-01-02T00:05:00.000Z$/,
    );
  });

  it("waits while the compacted data is not served, and past the handoff timeout ends superseded saying so", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 2));
    const a = attempt({ step: "audit", version: OURS, succeededAt: clock.now() });
    const waiting = await rejects(auditPartition(a, io({ clock, client: druid(false) })));
    expect(waiting).toBeInstanceOf(TaskProgress);
    await clock.advance(60_000);
    const late = await rejects(auditPartition(a, io({ clock, client: druid(false) })));
    expect(late).toBeInstanceOf(TaskAbort);
    expect((late as Error).message).toMatch(
      /not a compaction of ours by Druid: compacted by Druid from ours.*still not served after 60s/,
    );
    expect(a.progress().outcome).toBe("superseded");
  });
});
