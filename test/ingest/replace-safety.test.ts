import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { formatInterval, type Interval, parseInterval } from "../../src/core/interval.js";
import { TaskAbort } from "../../src/driver/signals.js";
import type { DruidClient } from "../../src/druid/client.js";
import { BadRequestError, NotFoundError, SpecRejectedError } from "../../src/druid/errors.js";
import type { DataSegment } from "../../src/druid/types.js";
import {
  judgeSample,
  PREFLIGHT_ROWS,
  PREFLIGHT_TIMEOUT_MS,
  refusal,
  samplerSpecOf,
} from "../../src/ingest/preflight.js";
import type { Attempt, PreflightState, StepIO } from "../../src/ingest/steps/attempt.js";
import { prepareAttempt } from "../../src/ingest/steps/prepare.js";
import { undoReplace } from "../../src/ingest/steps/undo.js";
import type { IngestPayload, IngestProgress } from "../../src/ingest/types.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import type { HandoffChecker } from "../../src/work/handoff.js";
import { toTimelineSegment } from "../../src/work/segments.js";
import type { StatusBatcher } from "../../src/work/status-batcher.js";
import { liveDataOf } from "../../src/work/timeline.js";
import { dailyTemplate } from "../helpers/dataset.js";

// The pre-flight of a replace: Druid's sampler reads the partition's input before anything is submitted,
// and an input that provably yields nothing for the interval may not replace the data served there.

const INTERVAL = "2026-01-08T00:00:00.000Z/2026-01-09T00:00:00.000Z";
const window = parseInterval(INTERVAL);
const TASK_ID = "segops_wiki_20260108-20260109_abc_a1";
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

const segment = (version: string, type = "numbered"): DataSegment => ({
  dataSource: "wiki",
  interval: INTERVAL,
  version,
  loadSpec: type === "tombstone" ? { type: "tombstone" } : {},
  dimensions: "page",
  metrics: "count",
  shardSpec: { type, partitionNum: 0, partitions: 1 },
  binaryVersion: 9,
  size: 1000,
  identifier: `wiki_${INTERVAL.replace("/", "_")}_${version}`,
});

const live = (segments: DataSegment[]) =>
  liveDataOf(
    segments.map((s) => toTimelineSegment(s, new Set())),
    window,
  );

const rowAt = (iso: string) => ({ parsed: { __time: Date.parse(iso), page: "p" } });

describe("the pre-flight's judgement (pure)", () => {
  it("counts live data without tombstones, from the newest complete version", () => {
    expect(live([segment("v1"), segment("v2")])).toMatchObject({ segments: 1, versions: ["v2"] });
    expect(live([segment("v1"), segment("v2", "tombstone")])).toMatchObject({ segments: 0 });
    expect(live([])).toMatchObject({ segments: 0, versions: [] });
  });

  it("samples a native partition's input and dataSchema as the one sampler type Druid registers, bounded", () => {
    const request = samplerSpecOf(payload);
    expect(request).toMatchObject({
      timed: true,
      spec: {
        type: "index",
        spec: {
          ioConfig: { type: "index", inputSource: { type: "local" }, inputFormat: { type: "json" } },
          dataSchema: { dataSource: "wiki" },
        },
        samplerConfig: { numRows: PREFLIGHT_ROWS, timeoutMs: PREFLIGHT_TIMEOUT_MS },
      },
    });
    // The parallel task's tuningConfig is no IndexTuningConfig field set the sampler needs.
    expect((request?.spec.spec as Record<string, unknown> | undefined)?.tuningConfig).toBeUndefined();
  });

  it("samples an SQL partition's one EXTERN input as raw rows; not one that reads several or none", () => {
    const source = { type: "local", baseDir: "/d", filter: "e-2026-01-08.json" };
    const query = `REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '2026-01-08' AND __time < TIMESTAMP '2026-01-09'
SELECT TIME_PARSE(ts) AS __time, page FROM TABLE(EXTERN('${JSON.stringify(source)}', '{"type":"json"}', '[{"name":"ts","type":"string"}]'))
PARTITIONED BY DAY`;
    const sql = { ...payload, kind: "sql" as const, spec: { query, context: {} } };
    expect(samplerSpecOf(sql)).toMatchObject({
      timed: false,
      spec: {
        spec: {
          ioConfig: { inputSource: source, inputFormat: { type: "json" } },
          dataSchema: { timestampSpec: { missingValue: expect.any(String) } },
        },
      },
    });
    const named = query.replace(
      /EXTERN\('([^']*)', '([^']*)', '[^']*'\)/,
      "EXTERN(inputSource => '$1', inputFormat => '$2')",
    );
    expect(samplerSpecOf({ ...sql, spec: { query: named, context: {} } })?.spec).toMatchObject({
      spec: { ioConfig: { inputSource: source } },
    });
    const twice = `${query} UNION ALL SELECT * FROM TABLE(EXTERN('{"type":"inline","data":"x"}', '{"type":"csv"}', '[]'))`;
    expect(samplerSpecOf({ ...sql, spec: { query: twice, context: {} } })).toBeNull();
    expect(samplerSpecOf({ ...sql, spec: { query: "SELECT 1", context: {} } })).toBeNull();
    // Without the partition's time, an SQL sample refuses only an input with no rows at all.
    const liveNow = live([segment("v1")]);
    const some = judgeSample({ numRowsRead: 2, numRowsIndexed: 2, data: [] }, window, liveNow, 5, false);
    expect(refusal(some, window, "x")).toBeNull();
    const none = judgeSample({ numRowsRead: 0, numRowsIndexed: 0, data: [] }, window, liveNow, 5, false);
    expect(refusal(none, window, "x")).toMatch(/yields no rows/);
  });

  it("refuses only on conclusive evidence: the whole input read, no row inside the interval", () => {
    const liveNow = live([segment("v1")]);
    const empty = judgeSample({ numRowsRead: 0, numRowsIndexed: 0, data: [] }, window, liveNow, 5);
    expect(refusal(empty, window, "local baseDir /d")).toMatch(
      /refused to replace 2026-01-08T00:00:00.000Z\/2026-01-09T00:00:00.000Z: its input \(local baseDir \/d\) yields no rows, while 1 segment\(s\) of version v1 are live there; nothing was submitted.*--allow-empty/,
    );
    const elsewhere = judgeSample(
      {
        numRowsRead: 2,
        numRowsIndexed: 2,
        data: [rowAt("2026-01-07T10:00:00Z"), rowAt("2026-01-09T00:00:00Z")],
      },
      window,
      liveNow,
      5,
    );
    expect(refusal(elsewhere, window, "x")).toMatch(/none of the 2 row\(s\) .* falls inside the interval/);
    const unparseable = judgeSample(
      { numRowsRead: 1, numRowsIndexed: 0, data: [{ unparseable: true, error: "no timestamp" }] },
      window,
      liveNow,
      5,
    );
    expect(refusal(unparseable, window, "x")).toMatch(
      /none of the 1 row\(s\) .* parses \(first error: no timestamp\)/,
    );
    const fine = judgeSample(
      { numRowsRead: 1, numRowsIndexed: 1, data: [rowAt("2026-01-08T10:00:00Z")] },
      window,
      liveNow,
      5,
    );
    expect(fine.rowsInInterval).toBe(1);
    expect(refusal(fine, window, "x")).toBeNull();
    // Cut at the row limit, or near Druid's own read timeout (it stops silently): not conclusive.
    const cut = judgeSample(
      { numRowsRead: PREFLIGHT_ROWS, numRowsIndexed: PREFLIGHT_ROWS, data: [rowAt("2026-01-07T10:00:00Z")] },
      window,
      liveNow,
      5,
    );
    expect(refusal(cut, window, "x")).toBeNull();
    const slow = judgeSample(
      { numRowsRead: 0, numRowsIndexed: 0, data: [] },
      window,
      liveNow,
      PREFLIGHT_TIMEOUT_MS,
    );
    expect(refusal(slow, window, "x")).toBeNull();
  });
});

function attempt(p0: IngestProgress = {}, pl: IngestPayload = payload) {
  let p = p0;
  const notes: string[] = [];
  const a: Attempt = {
    task: { id: "job/20260108", attempt: 1 } as TaskRow,
    payload: pl,
    interval: window,
    taskId: TASK_ID,
    call: {},
    progress: () => p,
    save: async (patch) => {
      p = { ...p, ...patch };
    },
    note: (step, detail) => notes.push(`${step} ${detail}`),
  };
  return { a, notes };
}

function io(
  client: Partial<Record<keyof DruidClient, unknown>>,
  state: PreflightState = { unavailable: null },
): StepIO {
  return {
    client: client as unknown as DruidClient,
    clock: new ManualClock(Date.UTC(2026, 0, 9)),
    batcher: { get: async (id: string) => ({ id, state: "UNKNOWN" }) } as unknown as StatusBatcher,
    // The baseline read rides the handoff checker's round: here, straight to the fake client.
    handoff: {
      readUsed: (ds: string, interval: Interval) =>
        (client.metadataSegments as DruidClient["metadataSegments"])(ds, [formatInterval(interval)]),
    } as unknown as HandoffChecker,
    preflight: state,
    settings: { tickMs: 1000, handoffTimeoutMs: 60_000, sizeBand: DEFAULT_SIZE_BAND },
  };
}

const rejects = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe("the pre-flight step (in prepare, before the id is recorded)", () => {
  it("refuses an empty input over live data: nothing recorded to submit, the evidence kept", async () => {
    const { a } = attempt();
    let sampled = 0;
    const error = await rejects(
      prepareAttempt(
        a,
        io({
          metadataSegments: async () => [segment("v1")],
          sample: async () => {
            sampled++;
            return { numRowsRead: 0, numRowsIndexed: 0, data: [] };
          },
        }),
      ),
    );
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(/refused to replace .* yields no rows/);
    expect(sampled).toBe(1);
    expect(a.progress()).toMatchObject({
      outcome: "refused-empty",
      preflight: { rowsRead: 0, complete: true },
    });
    expect(a.progress().taskId).toBeUndefined();
    expect(a.progress().step).toBeUndefined();
  });

  it("does not sample where nothing is live, for an append, with --allow-empty, or for a known id", async () => {
    const never = async () => {
      throw new Error("sampled");
    };
    for (const [p, segments] of [
      [payload, []],
      [{ ...payload, mode: "append" as const }, [segment("v1")]],
      [{ ...payload, allowEmpty: true }, [segment("v1")]],
    ] as const) {
      const { a } = attempt({}, p);
      await prepareAttempt(a, io({ metadataSegments: async () => segments, sample: never }));
      expect(a.progress().step).toBe("submit");
    }
    const { a } = attempt();
    const known = io({ metadataSegments: async () => [segment("v1")], sample: never });
    await prepareAttempt(a, {
      ...known,
      batcher: { get: async (id: string) => ({ id, state: "RUNNING" }) } as unknown as StatusBatcher,
    });
    expect(a.progress().step).toBe("submit");
  });

  it("keeps the evidence of a passing sample with the attempt", async () => {
    const { a } = attempt();
    await prepareAttempt(
      a,
      io({
        metadataSegments: async () => [segment("v1")],
        sample: async () => ({ numRowsRead: 1, numRowsIndexed: 1, data: [rowAt("2026-01-08T01:00:00Z")] }),
      }),
    );
    expect(a.progress()).toMatchObject({ step: "submit", preflight: { rowsInInterval: 1, complete: true } });
  });

  it("a sampler Druid does not offer is said once, then the gates decide; a refused sample falls back too", async () => {
    const state: PreflightState = { unavailable: null };
    let sampled = 0;
    const client = {
      metadataSegments: async () => [segment("v1")],
      sample: async () => {
        sampled++;
        throw new NotFoundError({ endpoint: "POST /druid/indexer/v1/sampler", status: 404 });
      },
    };
    const first = attempt();
    await prepareAttempt(first.a, io(client, state));
    expect(first.a.progress().step).toBe("submit");
    expect(first.notes.join("\n")).toMatch(/sampler is unavailable .* data gates only/);
    const second = attempt();
    await prepareAttempt(second.a, io(client, state));
    expect(second.a.progress().step).toBe("submit");
    expect(sampled).toBe(1);
    expect(second.notes).toEqual([]);

    for (const refused of [
      new SpecRejectedError({ endpoint: "POST /druid/indexer/v1/sampler", status: 400, druidMessage: "bad" }),
      new BadRequestError({ endpoint: "POST /druid/indexer/v1/sampler", status: 400 }),
    ]) {
      const { a, notes } = attempt();
      await prepareAttempt(
        a,
        io({
          metadataSegments: async () => [segment("v1")],
          sample: async () => {
            throw refused;
          },
        }),
      );
      expect(a.progress().step).toBe("submit");
      expect(notes.join("\n")).toMatch(/could not sample the input .* the data gates decide/);
    }
  });
});

describe("the undo of a replace that failed its gates (steps/undo.ts)", () => {
  const seg = (version: string) => segment(version);
  /** A fake Coordinator/Overlord: used segments by version, marks applied, everything served. */
  function druid(used: string[], existing: string[] = used) {
    const state = { used: new Set(used), marks: [] as string[] };
    const client = {
      metadataSegments: async () => [...state.used].map(seg),
      servedInInterval: async () =>
        [...state.used].map((v) => ({ segment: seg(v), servers: [{ type: "historical" }] })),
      markSegments: async (_ds: string, to: string, f: { versions: string[] }) => {
        state.marks.push(`${to} ${f.versions.join(",")}`);
        for (const v of f.versions) {
          if (to === "unused") state.used.delete(v);
          else if (existing.includes(v)) state.used.add(v);
        }
        return f.versions.length;
      },
    };
    return { state, client };
  }
  const undoing = (over: IngestProgress = {}) =>
    attempt({
      taskId: TASK_ID,
      step: "undo",
      baseline: { versions: ["2026-01-01T00:00:00.000Z"], segmentIds: [] },
      liveBefore: { segments: 1, versions: ["2026-01-01T00:00:00.000Z"], rows: 20, bytes: 1000 },
      druidCreatedTime: "2026-01-08T10:00:00.000Z",
      druidDurationMs: 60_000,
      rowStats: { processed: 5, processedWithError: 0, unparseable: 0, thrownAway: 0 },
      undo: { reason: "5 row(s) ingested, fewer than --min-rows 10", phase: "unmark" },
      ...over,
    });

  it("unmarks only our version, marks the earlier one used, and ends rolled back with both named", async () => {
    const ours = "2026-01-08T10:00:30.000Z";
    const later = "2026-01-08T12:00:00.000Z"; // another writer, after our task ended: not ours to take back
    const { state, client } = druid(["2026-01-01T00:00:00.000Z", ours, later]);
    const { a } = undoing();
    const error = await rejects(undoReplace(a, io(client)));
    expect(error).toBeInstanceOf(TaskAbort);
    expect(state.marks).toEqual([`unused ${ours}`, "used 2026-01-01T00:00:00.000Z"]);
    expect((error as Error).message).toMatch(
      /The replace was undone: our version 2026-01-08T10:00:30.000Z \(5 row\(s\) ingested\) is marked unused and .* serves version 2026-01-08T12:00:00.000Z, which another writer published after ours/,
    );
    expect(a.progress()).toMatchObject({
      outcome: "rolled-back",
      undo: { phase: "done", unmarked: [ours], killed: false },
      failures: [expect.objectContaining({ taskId: TASK_ID, failureClass: "data-gate" })],
    });
  });

  it("never calls the interval restored while a version neither ours nor the earlier one is live", async () => {
    // Our task's lock waited past its run (its version outside its lifetime): it cannot be told apart.
    const lateOurs = "2026-01-08T11:00:00.000Z";
    const { state, client } = druid(["2026-01-01T00:00:00.000Z", lateOurs]);
    const { a } = undoing();
    const error = await rejects(undoReplace(a, io(client)));
    expect(error).toBeInstanceOf(TaskAbort);
    expect((error as Error).message).toMatch(
      /could not be undone: .* serves version 2026-01-08T11:00:00.000Z, neither ours \(none found\) nor the one live before/,
    );
    expect(state.marks).toEqual(["used 2026-01-01T00:00:00.000Z"]);
    expect(a.progress()).toMatchObject({ outcome: "undo-failed", undo: { phase: "done" } });
  });

  it("resumes where it stopped: a crash after the unmark does not unmark again", async () => {
    const { state, client } = druid(["2026-01-01T00:00:00.000Z"]);
    const { a } = undoing({
      undo: { reason: "r", phase: "mark", unmarked: ["2026-01-08T10:00:30.000Z"] },
    });
    await rejects(undoReplace(a, io(client)));
    expect(state.marks).toEqual(["used 2026-01-01T00:00:00.000Z"]);
    expect(a.progress().outcome).toBe("rolled-back");
  });

  it("says so when the version live before was killed meanwhile, and when nothing was live before", async () => {
    const ours = "2026-01-08T10:00:30.000Z";
    const killed = druid([ours], [ours]);
    const first = undoing();
    const error = await rejects(undoReplace(first.a, io(killed.client)));
    expect((error as Error).message).toMatch(
      /the version live before \(2026-01-01T00:00:00.000Z\) is gone \(killed\).* now serves no data/,
    );
    expect(first.a.progress().undo?.killed).toBe(true);

    const empty = druid([ours]);
    const second = undoing({
      baseline: { versions: [], segmentIds: [] },
      liveBefore: { segments: 0, versions: [], rows: null, bytes: 0 },
    });
    const e2 = await rejects(undoReplace(second.a, io(empty.client)));
    expect((e2 as Error).message).toMatch(/held no data before and holds none now/);
    expect(empty.state.marks).toEqual([`unused ${ours}`]);
  });
});
