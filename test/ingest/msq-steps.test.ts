import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { TaskAbort, TaskDefer } from "../../src/driver/signals.js";
import { DruidClient } from "../../src/druid/client.js";
import type { TaskReports } from "../../src/druid/types.js";
import { contextWithGates, msqEvidence, slotsForSql } from "../../src/ingest/msq.js";
import { type Attempt, AttemptFailed, type StepIO } from "../../src/ingest/steps/attempt.js";
import { awaitTerminal } from "../../src/ingest/steps/running.js";
import { submitMsq } from "../../src/ingest/steps/submit-msq.js";
import type { IngestPayload, IngestProgress } from "../../src/ingest/types.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import { classifyTaskFailure } from "../../src/work/failure.js";
import type { HandoffChecker } from "../../src/work/handoff.js";
import type { StatusBatcher } from "../../src/work/status-batcher.js";
import { startTestSim } from "../helpers/sim.js";

/** The MSQ submit step and report reading on their own (docs/druid-api.md §6); msq-backfill.test.ts runs them together. */

const INTERVAL = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const QUERY = [
  "REPLACE INTO ev OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00'",
  `SELECT TIME_PARSE("ts") AS __time, "page" FROM TABLE(EXTERN('{"type":"inline","data":"{\\"ts\\":\\"2026-01-01T01:00:00Z\\",\\"page\\":\\"a\\"}"}', '{"type":"json"}', '[{"name":"ts","type":"string"},{"name":"page","type":"string"}]'))`,
  "PARTITIONED BY DAY",
].join("\n");

function attempt(query = QUERY, taskId = "query-segops_ev_20260101_abc_a1") {
  const payload: IngestPayload = {
    kind: "sql",
    datasource: "ev",
    interval: INTERVAL,
    spec: { query, context: { maxParseExceptions: 0, simDurationMs: 1000 } },
    specVersion: "1",
    idPrefix: "segops",
    mode: "replace",
    segmentGranularity: "day",
    slots: 2,
  };
  let p: IngestProgress = {};
  const saved: IngestProgress[] = [];
  const a: Attempt = {
    task: { id: "job/20260101", attempt: 1 } as TaskRow,
    payload,
    interval: parseInterval(INTERVAL),
    taskId,
    call: {},
    progress: () => p,
    save: async (patch) => {
      saved.push(patch);
      p = { ...p, ...patch };
    },
    note: () => {},
  };
  return { a, saved };
}

function stepIo(client: DruidClient, paused: number[] = []): StepIO {
  return {
    client,
    clock: new ManualClock(Date.UTC(2026, 0, 2)),
    batcher: {
      get: async (id: string) => {
        const s = await client.taskStatus(id).catch(() => null);
        return s?.status ? { id, state: s.status.statusCode } : { id, state: "UNKNOWN" };
      },
    } as unknown as StatusBatcher,
    handoff: {} as HandoffChecker,
    admission: {
      track: () => {},
      untrack: () => {},
      pause: (until: number) => paused.push(until),
    } as unknown as StepIO["admission"],
    settings: { tickMs: 1000, handoffTimeoutMs: 60_000, sizeBand: DEFAULT_SIZE_BAND },
  };
}

describe("submitMsq", () => {
  it("submits under context.sqlQueryId = the id without query-, and a second submit reattaches (Druid's wrapped duplicate)", async () => {
    const s = await startTestSim();
    const client = new DruidClient({ url: s.url, retry: { baseMs: 1, capMs: 5 } });
    const first = attempt();
    await submitMsq(first.a, stepIo(client));
    expect(first.saved.at(-1)).toMatchObject({ step: "running", reattached: false });
    const task = s.sim.engine.tasks.get("query-segops_ev_20260101_abc_a1");
    expect(task?.plan.context.sqlQueryId).toBe("segops_ev_20260101_abc_a1");
    expect(task?.plan.context.maxParseExceptions).toBe(0);

    const again = attempt();
    await submitMsq(again.a, stepIo(client));
    expect(again.saved.at(-1)).toMatchObject({ step: "running", reattached: true });
    expect(s.sim.stats().submissions.map((x) => [x.accepted, x.status])).toEqual([
      [true, 202],
      [false, 500],
    ]);
  });

  it("a planning error aborts with Druid's words", async () => {
    const s = await startTestSim();
    const client = new DruidClient({ url: s.url, retry: { baseMs: 1, capMs: 5 } });
    const bad = attempt(QUERY.replace("TIMESTAMP '2026-01-02 00:00:00'", "TIMESTAMP '2026-01-01 12:00:00'"));
    const error = await submitMsq(bad.a, stepIo(client)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskAbort);
    // Druid prints the granularity as its object (CalciteReplaceDmlTest): DAY is a one-day period in UTC.
    expect((error as Error).message).toMatch(
      /which is not aligned with PARTITIONED BY granularity \[\{type=period, period=P1D, timeZone=UTC, origin=null\}\]/,
    );
    expect(bad.saved).toEqual([]);
  });

  it("the Overlord's 429 wrapped in the 500 is backpressure: deferred, admission paused, nothing recorded", async () => {
    const s = await startTestSim({ maxQueueSize: 1 });
    const client = new DruidClient({ url: s.url, retry: { baseMs: 1, capMs: 5 } });
    await submitMsq(attempt(QUERY, "query-other_a1").a, stepIo(client));
    const paused: number[] = [];
    const { a, saved } = attempt();
    const error = await submitMsq(a, stepIo(client, paused)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskDefer);
    expect(paused).toHaveLength(1);
    expect(saved).toEqual([]);
  });
});

describe("msqEvidence", () => {
  it("reads counters, warnings and the fault of the documented report shape", () => {
    const reports = {
      multiStageQuery: {
        type: "multiStageQuery",
        taskId: "query-x",
        payload: {
          status: {
            status: "FAILED",
            errorReport: {
              taskId: "query-x",
              error: {
                errorCode: "TooManyWarnings",
                maxWarnings: 10,
                rootErrorCode: "CannotParseExternalData",
                errorMessage: "Too many warnings of type CannotParseExternalData generated (max = 10)",
              },
            },
            warnings: [
              {
                taskId: "query-x-worker0_0",
                error: {
                  errorCode: "CannotParseExternalData",
                  errorMessage: "Unable to parse row [] (Line: 3)",
                },
              },
            ],
          },
          counters: {
            "0": {
              "0": {
                input0: { type: "channel", rows: [60, 5] },
                output: { type: "channel", rows: [50, 5] },
                warnings: { type: "warnings", CannotParseExternalData: 11 },
              },
              "1": { input0: { type: "channel", rows: [40] }, output: { type: "channel", rows: [40] } },
            },
            "1": {
              "0": { segmentGenerationProgress: { type: "segmentGenerationProgress", rowsProcessed: 60 } },
              "1": { segmentGenerationProgress: { type: "segmentGenerationProgress", rowsProcessed: 35 } },
            },
          },
        },
      },
    } as unknown as TaskReports;
    expect(msqEvidence(reports)).toEqual({
      status: "FAILED",
      errorMsg: "TooManyWarnings: Too many warnings of type CannotParseExternalData generated (max = 10)",
      parseErrors: ["Unable to parse row [] (Line: 3)"],
      rowStats: { processed: 95, processedWithError: 0, unparseable: 11, thrownAway: 10 },
    });
    expect(
      msqEvidence({
        ingestionStatsAndErrors: { type: "x", taskId: "t", payload: {} },
      } as unknown as TaskReports),
    ).toBeNull();
  });

  it("classifies TooManyWarnings as a deterministic parse failure; the gate and slots come from the context", () => {
    expect(
      classifyTaskFailure(
        "TooManyWarnings: Too many warnings of type CannotParseExternalData generated (max = 0)",
      ),
    ).toEqual({
      name: "parse-exceptions",
      deterministic: true,
    });
    const gates = (max: number | string) => ({
      maxUnparseable:
        typeof max === "number" ? { kind: "count" as const, max } : { kind: "percent" as const, max: 5 },
      minRows: 0,
    });
    expect(contextWithGates({}, "REPLACE …", gates(3))).toEqual({ maxParseExceptions: 3 });
    expect(contextWithGates({}, "REPLACE …", gates("5%"))).toEqual({ maxParseExceptions: -1 });
    expect(contextWithGates({ maxParseExceptions: 9 }, "REPLACE …", gates(3))).toEqual({
      maxParseExceptions: 9,
    });
    expect(contextWithGates({}, "SET maxParseExceptions = 7;\nREPLACE …", gates(3))).toEqual({});
    expect(slotsForSql({})).toBe(2);
    expect(slotsForSql({ maxNumTasks: 5 })).toBe(5);
    expect(slotsForSql({}, "SET maxNumTasks = 4;\nREPLACE …")).toBe(4);
  });
});

describe("the statements API as the MSQ evidence of last resort", () => {
  it("DruidClient.sqlStatement reads the emulator's statement (detail: counters), null for an unknown id", async () => {
    const s = await startTestSim();
    const client = new DruidClient({ url: s.url, retry: { baseMs: 1, capMs: 5 } });
    await submitMsq(attempt().a, stepIo(client));
    await s.advance(1000);
    const st = await client.sqlStatement("query-segops_ev_20260101_abc_a1", { detail: true });
    expect(st).toMatchObject({ queryId: "query-segops_ev_20260101_abc_a1", state: "SUCCESS" });
    expect(st?.counters).toBeDefined();
    expect(await client.sqlStatement("query-nope")).toBeNull();
  });

  function fakeIo(status: "SUCCESS" | "FAILED", statement: unknown): StepIO {
    const client = {
      taskReports: async () => {
        throw new Error("report gone");
      },
      taskStatus: async () => null,
      sqlStatement: async () => statement,
      tasks: async () => [],
    } as unknown as DruidClient;
    return {
      ...stepIo(client),
      batcher: {
        get: async (id: string) => ({
          id,
          state: status,
          duration: 10,
          errorMsg: status === "FAILED" ? null : null,
        }),
      } as unknown as StatusBatcher,
    };
  }

  it("a FAILED controller without its report: the fault and counters come from the statement", async () => {
    const { a, saved } = attempt();
    const io = fakeIo("FAILED", {
      queryId: a.taskId,
      state: "FAILED",
      errorDetails: {
        errorCode: "TooManyWarnings",
        errorMessage:
          "TooManyWarnings: Too many warnings of type CannotParseExternalData generated (max = 0)",
      },
      counters: {
        "0": {
          "0": {
            input0: { rows: [5] },
            output: { rows: [5] },
            warnings: { type: "warnings", CannotParseExternalData: 2 },
          },
        },
      },
      warnings: [
        { error: { errorCode: "CannotParseExternalData", errorMessage: "Unable to parse row [x]" } },
      ],
    });
    const error = await awaitTerminal(a, io).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AttemptFailed);
    expect(saved.at(-1)).toMatchObject({
      druidState: "FAILED",
      rowStats: { processed: 5, unparseable: 2, processedWithError: 0, thrownAway: 0 },
      parseErrors: ["Unable to parse row [x]"],
      failures: [{ failureClass: "parse-exceptions", deterministic: true }],
    });
    expect((error as AttemptFailed).failures[0]?.errorMsg).toMatch(/^TooManyWarnings: /);
  });

  it("a SUCCESS whose statement shows only warnings fails the data gate: the replace goes to the undo", async () => {
    const { a, saved } = attempt();
    const io = fakeIo("SUCCESS", {
      queryId: a.taskId,
      state: "SUCCESS",
      counters: {
        "0": {
          "0": {
            input0: { rows: [0] },
            output: { rows: [0] },
            warnings: { type: "warnings", CannotParseExternalData: 3 },
          },
        },
        "1": { "0": { segmentGenerationProgress: { rowsProcessed: 0 } } },
      },
    });
    const error = await awaitTerminal(a, io).catch((e: unknown) => e);
    expect(error).toBeUndefined();
    expect(saved.at(-1)).toMatchObject({
      step: "undo",
      undo: {
        phase: "unmark",
        reason: expect.stringMatching(/the input produced 3 row\(s\) but none was ingested/),
      },
      druidState: "SUCCESS",
      rowStats: { processed: 0, unparseable: 3 },
    });
  });
});
