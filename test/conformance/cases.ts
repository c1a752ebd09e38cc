// The conformance cases: what a Druid answers on the REST paths segops depends on. Every expectation was
// observed on a real Druid 33.0.0 (docs/real-druid.md, "Observed on Druid 33.0.0" and "Conformance cases") and
// is cited against docs/druid-api.md. The same cases run against a real Druid
// (druid.conformance.ts, opt-in) and against the emulator with druidVersion 33 (test/sim/conformance.test.ts,
// default suite); where the two differ, the emulator is what gets fixed.
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  type Exchange,
  eventually,
  freshId,
  indexParallelSpec,
  json,
  samplerSpec,
  writeInput,
} from "./support.js";

const OV = "/druid/indexer/v1";
const CO = "/druid/coordinator/v1";
const UNKNOWN_TASK = "segops_conformance_no_such_task";
const SHUTDOWN_MESSAGE = "Shutdown request from user";
const PARALLEL_TASK = "org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexSupervisorTask";

interface TaskStatusPlus {
  id: string;
  groupId: string;
  type: string;
  createdTime: string;
  queueInsertionTime: string;
  statusCode: string;
  status: string;
  runnerStatusCode: string;
  duration: number;
  location: { host: string | null; port: number; tlsPort: number };
  dataSource: string;
  errorMsg: string | null;
}

interface BulkStatus {
  id: string;
  status: string;
  duration: number;
  errorMsg: string | null;
}

interface DataSegment {
  dataSource: string;
  interval: string;
  version: string;
  shardSpec: { type: string; partitionNum: number; partitions: number };
  dimensions: string;
  metrics: string;
  identifier: string;
  /** Only on segments a compaction task published. */
  lastCompactionState?: Record<string, unknown>;
}

interface Row {
  time: string;
  page: string;
  added: number;
}

/** Rows for one day: `n` rows, `added` 1..n scaled by `scale`. */
function dayRows(day: string, n: number, scale = 1): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    time: `${day}T${String(i).padStart(2, "0")}:00:00Z`,
    page: `p${i}`,
    added: (i + 1) * scale,
  }));
}

/** Per-day [day, COUNT(*), SUM(added)] the way Broker SQL answers with resultFormat "array". */
function expectedDays(rows: readonly Row[]): [string, number, number][] {
  const byDay = new Map<string, [number, number]>();
  for (const r of rows) {
    const day = `${r.time.slice(0, 10)}T00:00:00.000Z`;
    const [n, sum] = byDay.get(day) ?? [0, 0];
    byDay.set(day, [n + 1, sum + r.added]);
  }
  return [...byDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([d, [n, s]]) => [d, n, s]);
}

/** Defines the whole case list against `target`. */
export function conformanceSuite(target: ConformanceTarget): void {
  const get = (path: string) => call(target, "GET", path);
  const post = (path: string, body?: unknown, contentType?: string) =>
    call(target, "POST", path, body, contentType);

  /** `POST /rules/{ds}` with the audit headers. */
  async function setRules(ds: string, rules: unknown): Promise<Exchange> {
    const res = await request(`${target.url()}${CO}/rules/${ds}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-druid-author": "segops-conformance",
        "x-druid-comment": "conformance case",
      },
      body: JSON.stringify(rules),
    });
    const text = await res.body.text();
    const header = res.headers["content-type"];
    return { status: res.statusCode, contentType: (Array.isArray(header) ? header[0] : header) ?? "", text };
  }

  async function statusOf(id: string): Promise<TaskStatusPlus> {
    const ex = await get(`${OV}/task/${id}/status`);
    if (ex.status !== 200) throw new Error(`status of ${id}: ${ex.status} ${ex.text}`);
    return (json(ex) as { status: TaskStatusPlus }).status;
  }

  async function bulkStatus(ids: string[]): Promise<Record<string, BulkStatus>> {
    const ex = await post(`${OV}/taskStatus`, ids);
    if (ex.status !== 200) throw new Error(`taskStatus: ${ex.status} ${ex.text}`);
    return json(ex) as Record<string, BulkStatus>;
  }

  function finished(id: string): Promise<TaskStatusPlus> {
    return eventually(target, `task ${id} to finish`, async () => {
      const s = await statusOf(id);
      return s.statusCode === "RUNNING" ? undefined : s;
    });
  }

  async function submitted(spec: Record<string, unknown>): Promise<string> {
    const ex = await post(`${OV}/task`, spec);
    if (ex.status !== 200) throw new Error(`submit: ${ex.status} ${ex.text}`);
    return (json(ex) as { task: string }).task;
  }

  /** Submits, waits for SUCCESS, then for every segment of `interval` to be loaded (the handoff gate, §3.3). */
  async function ingested(
    spec: Record<string, unknown>,
    dataSource: string,
    interval: string,
  ): Promise<string> {
    const id = await submitted(spec);
    const s = await finished(id);
    if (s.statusCode !== "SUCCESS") throw new Error(`task ${id} ${s.statusCode}: ${s.errorMsg}`);
    await loaded(dataSource, interval);
    return id;
  }

  function loaded(dataSource: string, interval: string): Promise<void> {
    const path = `${CO}/datasources/${dataSource}/loadstatus?forceMetadataRefresh=true&interval=${interval.replace("/", "_")}`;
    return eventually(target, `segments of ${dataSource} ${interval} to load`, async () => {
      const ex = await get(path);
      if (ex.status === 200 && (json(ex) as Record<string, number>)[dataSource] === 100) return true;
      throw new Error(`loadstatus ${ex.status}: ${ex.text}`);
    }).then(() => undefined);
  }

  async function sql(query: string): Promise<Exchange> {
    return post("/druid/v2/sql", { query, resultFormat: "array" });
  }

  /** Polls Broker SQL until it answers `expected` (the Broker's view lags the handoff); shows the last answer. */
  function sqlEventually(query: string, expected: unknown): Promise<unknown> {
    return eventually(target, `SQL to answer ${JSON.stringify(expected)}`, async () => {
      const ex = await sql(query);
      const got = ex.status === 200 ? json(ex) : ex.text;
      if (JSON.stringify(got) !== JSON.stringify(expected))
        throw new Error(`last answer ${ex.status}: ${JSON.stringify(got)}`);
      return got;
    });
  }

  const perDay = (ds: string) =>
    `SELECT TIME_FLOOR(__time, 'P1D') AS "day", COUNT(*) AS "rows", SUM("added") AS "added" FROM "${ds}" GROUP BY 1 ORDER BY 1`;

  describe(`Druid REST conformance: ${target.name}`, () => {
    const dataSource = freshId("segops_conf");
    const okId = freshId("segops_conf_ok");
    const badId = freshId("segops_conf_bad");
    const days = ["2026-03-01", "2026-03-02"];
    const rowsPerDay = 5;
    const interval = "2026-03-01T00:00:00.000Z/2026-03-03T00:00:00.000Z";

    let goodDir = "";
    let okSubmit: Exchange;
    let badSubmit: Exchange;

    beforeAll(async () => {
      goodDir = writeInput(
        target.dataDir(),
        Object.fromEntries(days.map((d) => [`${d}.json`, dayRows(d, rowsPerDay)])),
      );
      const badDir = writeInput(target.dataDir(), {
        "bad.json": [{ time: "2026-03-01T00:00:00Z", page: "a", added: 1 }, "not json"],
      });
      okSubmit = await post(`${OV}/task`, indexParallelSpec({ id: okId, dataSource, baseDir: goodDir }));
      badSubmit = await post(
        `${OV}/task`,
        indexParallelSpec({ id: badId, dataSource, baseDir: badDir, maxParseExceptions: 0 }),
      );
      if (okSubmit.status === 200) await finished(okId);
      if (badSubmit.status === 200) await finished(badId);
    });

    describe("POST /task (docs/druid-api.md §2.2)", () => {
      it("accepts a valid spec with 200 and echoes the pinned id", () => {
        expect(okSubmit.status).toBe(200);
        expect(json(okSubmit)).toEqual({ task: okId });
        expect(badSubmit.status).toBe(200);
      });

      it("answers a duplicate id after SUCCESS with a 400 entryAlreadyExists ErrorResponse", async () => {
        const ex = await post(`${OV}/task`, indexParallelSpec({ id: okId, dataSource, baseDir: goodDir }));
        expect(ex.status).toBe(400);
        expect(json(ex)).toEqual({
          error: "druidException",
          errorCode: "entryAlreadyExists",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: `Task[${okId}] already exists`,
          context: {},
        });
      });

      it("answers a duplicate id after FAILED the same way, since failed tasks stay in the metadata store", async () => {
        const ex = await post(`${OV}/task`, indexParallelSpec({ id: badId, dataSource, baseDir: goodDir }));
        expect(ex.status).toBe(400);
        expect(json(ex)).toMatchObject({
          errorCode: "entryAlreadyExists",
          errorMessage: `Task[${badId}] already exists`,
        });
      });

      // Each entry: how to break a valid spec, and the exact `{"error"}` string Druid 33 answers (§2.2, §5).
      const invalid: [string, (spec: Record<string, unknown>) => void, string][] = [
        [
          "dropExisting without intervals",
          (s) => Object.assign(ioConfig(s), { dropExisting: true }),
          `Cannot construct instance of \`${PARALLEL_TASK}\`, problem: GranularitySpec's intervals cannot be empty when using replace.`,
        ],
        [
          "appendToExisting together with dropExisting",
          (s) => {
            Object.assign(ioConfig(s), { appendToExisting: true, dropExisting: true });
            Object.assign(granularity(s), { intervals: ["2026-03-01/2026-03-02"] });
          },
          `Cannot construct instance of \`${PARALLEL_TASK}\`, problem: Cannot simultaneously replace and append to existing segments. Either dropExisting or appendToExisting should be set to false`,
        ],
        [
          "a missing timestampSpec",
          (s) => delete dataSchema(s).timestampSpec,
          "Cannot construct instance of `org.apache.druid.segment.indexing.DataSchema`, problem: timestampSpec",
        ],
        [
          "a parser beside the inputSource (Druid 37 removes parser)",
          (s) =>
            Object.assign(dataSchema(s), {
              parser: {
                type: "string",
                parseSpec: {
                  format: "json",
                  timestampSpec: { column: "time" },
                  dimensionsSpec: { dimensions: [] },
                },
              },
            }),
          "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexIngestionSpec`, problem: Cannot use parser and inputSource together. Try using inputFormat instead of parser.",
        ],
        [
          "a missing inputSource",
          (s) => delete ioConfig(s).inputSource,
          `Cannot construct instance of \`${PARALLEL_TASK}\`, problem: inputSource`,
        ],
        [
          "an ioConfig without type",
          (s) => delete ioConfig(s).type,
          "Could not resolve subtype of [simple type, class org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexIOConfig]: missing type id property 'type' (for POJO property 'ioConfig')",
        ],
        [
          "maxNumConcurrentSubTasks 0",
          (s) => Object.assign(tuning(s), { maxNumConcurrentSubTasks: 0 }),
          "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexTuningConfig`, problem: maxNumConcurrentSubTasks must be positive",
        ],
        [
          "hashed partitions without forceGuaranteedRollup",
          (s) => Object.assign(tuning(s), { partitionsSpec: { type: "hashed" } }),
          "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexTuningConfig`, problem: DynamicPartitionsSpec must be used for best-effort rollup",
        ],
      ];
      it.each(invalid)(
        "rejects %s with 400 and Druid's single-string error",
        async (_case, breakIt, error) => {
          const spec = indexParallelSpec({ id: freshId("segops_conf_inv"), dataSource, baseDir: goodDir });
          breakIt(spec);
          const ex = await post(`${OV}/task`, spec);
          expect(ex.status).toBe(400);
          expect(json(ex)).toEqual({ error });
        },
      );

      it("rejects an unknown task type with 400 naming the type and the known ones", async () => {
        const spec = {
          ...indexParallelSpec({ id: freshId("segops_conf_inv"), dataSource, baseDir: goodDir }),
        };
        spec.type = "no_such_type";
        const ex = await post(`${OV}/task`, spec);
        expect(ex.status).toBe(400);
        const { error } = json(ex) as { error: string };
        expect(error).toMatch(
          /^Please make sure to load all the necessary extensions and jars with type 'no_such_type' on 'druid\/\w+' service\. Could not resolve type id 'no_such_type' as a subtype of `org\.apache\.druid\.indexing\.common\.task\.Task` known type ids = \[.*\bindex_parallel\b.*\]$/,
        );
      });

      it("rejects a task id containing '/' in the task's constructor (Druid 33 form)", async () => {
        const id = `${freshId("segops_conf")}/x`;
        const ex = await post(`${OV}/task`, indexParallelSpec({ id, dataSource, baseDir: goodDir }));
        expect(ex.status).toBe(400);
        expect(json(ex)).toEqual({
          error: `Cannot construct instance of \`${PARALLEL_TASK}\`, problem: Invalid value for field [task ID]: Value [${id}] cannot contain '/'.`,
        });
      });

      it("rejects a body that is not declared as JSON with 415", async () => {
        const spec = indexParallelSpec({ id: freshId("segops_conf_ct"), dataSource, baseDir: goodDir });
        const ex = await post(`${OV}/task`, JSON.stringify(spec), "text/plain");
        expect(ex.status).toBe(415);
      });

      it("answers malformed JSON with 500", async () => {
        const ex = await post(`${OV}/task`, '{"type":"index_parallel",');
        expect(ex.status).toBe(500);
      });
    });

    describe("task status (docs/druid-api.md §2.3)", () => {
      it.each([
        ["GET", `/task/${UNKNOWN_TASK}/status`],
        ["GET", `/task/${UNKNOWN_TASK}`],
        ["GET", `/task/${UNKNOWN_TASK}/reports`],
        ["POST", `/task/${UNKNOWN_TASK}/shutdown`],
      ] as const)("answers %s %s for an unknown id with a plain-text 404", async (method, path) => {
        const ex = await call(target, method, `${OV}${path}`);
        expect(ex.status).toBe(404);
        expect(ex.contentType).toMatch(/^text\/plain/);
        expect(ex.text).toBe(`Cannot find any task with id: [${UNKNOWN_TASK}]`);
      });

      it("shows a completed task as SUCCESS in statusCode and status, with a duration and runnerStatusCode WAITING", async () => {
        const s = await statusOf(okId);
        expect(s).toMatchObject({
          id: okId,
          groupId: okId,
          type: "index_parallel",
          statusCode: "SUCCESS",
          status: "SUCCESS",
          runnerStatusCode: "WAITING",
          queueInsertionTime: "1970-01-01T00:00:00.000Z",
          dataSource,
          errorMsg: null,
        });
        expect(s.duration).toBeGreaterThanOrEqual(0);
        expect(Object.keys(s.location).sort()).toEqual(["host", "port", "tlsPort"]);
      });

      it("shows a task that exceeded maxParseExceptions as FAILED with the reason in errorMsg", async () => {
        const s = await statusOf(badId);
        expect(s.statusCode).toBe("FAILED");
        expect(s.status).toBe("FAILED");
        expect(s.errorMsg).toContain("Max parse exceptions[0] exceeded");
        expect(s.duration).toBeGreaterThanOrEqual(0);
      });

      it("returns the stored payload of a task with its id and spec", async () => {
        const ex = await get(`${OV}/task/${okId}`);
        expect(ex.status).toBe(200);
        const body = json(ex) as { task: string; payload: { id: string; type: string; spec: unknown } };
        expect(body.task).toBe(okId);
        expect(body.payload).toMatchObject({ id: okId, type: "index_parallel", groupId: okId, dataSource });
        expect(body.payload.spec).toMatchObject({ dataSchema: { dataSource } });
      });
    });

    describe("POST /taskStatus (docs/druid-api.md §2.4)", () => {
      it("rejects an empty id list with 400 and the text 'No Task IDs provided.'", async () => {
        const ex = await post(`${OV}/taskStatus`, []);
        expect(ex.status).toBe(400);
        // Not JSON, although labelled so.
        expect(ex.contentType).toMatch(/^application\/json/);
        expect(ex.text).toBe("No Task IDs provided.");
      });

      it("returns known ids keyed by id and silently omits unknown ones", async () => {
        const body = await bulkStatus([okId, UNKNOWN_TASK, badId]);
        expect(Object.keys(body).sort()).toEqual([badId, okId].sort());
        expect(body[okId]).toMatchObject({ id: okId, status: "SUCCESS", errorMsg: null });
        expect(body[badId]?.status).toBe("FAILED");
        expect(body[badId]?.errorMsg).toContain("Max parse exceptions[0] exceeded");
        expect(Object.keys(body[okId] ?? {}).sort()).toEqual([
          "duration",
          "errorMsg",
          "id",
          "location",
          "status",
        ]);
      });

      it("answers only unknown ids with an empty object", async () => {
        expect(await bulkStatus([UNKNOWN_TASK])).toEqual({});
      });
    });

    describe("GET /tasks (docs/druid-api.md §2.5)", () => {
      it("rejects an unknown state with a plain-text 400 listing the valid ones", async () => {
        const ex = await get(`${OV}/tasks?state=bogus`);
        expect(ex.status).toBe(400);
        expect(ex.text).toBe(
          "Invalid task state[bogus]. Must be one of [pending, waiting, running, complete].",
        );
      });

      it("lists complete tasks of a datasource with runnerStatusCode NONE", async () => {
        const ex = await get(`${OV}/tasks?state=complete&datasource=${dataSource}`);
        expect(ex.status).toBe(200);
        const tasks = json(ex) as TaskStatusPlus[];
        expect(tasks.map((t) => t.id).sort()).toEqual([badId, okId].sort());
        for (const t of tasks) expect(t.runnerStatusCode).toBe("NONE");
      });

      it("bounds the complete tasks by max and by createdTimeInterval's length alone (docs/druid-api.md §12)", async () => {
        const ids = async (query: string) =>
          (json(await get(`${OV}/tasks?datasource=${dataSource}&${query}`)) as TaskStatusPlus[])
            .map((t) => t.id)
            .filter((id) => id === okId || id === badId)
            .sort();
        // max=0: no complete task at all (what a poller that wants only active ones sends).
        expect(await ids("max=0")).toEqual([]);
        expect(await ids("max=1")).toHaveLength(1);
        // A window one millisecond long, wherever it lies, holds no task created before the last millisecond…
        expect(await ids("createdTimeInterval=2000-01-01T00:00:00.000Z_2000-01-01T00:00:00.001Z")).toEqual(
          [],
        );
        // …and one of a century, though it ends in 2100, holds every task created within its length of now.
        expect(await ids("createdTimeInterval=2000-01-01_2100-01-01")).toEqual([badId, okId].sort());
      });
    });

    describe("GET /task/{id}/reports (docs/druid-api.md §2.7)", () => {
      it("reports a sequential index_parallel run with determinePartitions and buildSegments row stats", async () => {
        const ex = await get(`${OV}/task/${okId}/reports`);
        expect(ex.status).toBe(200);
        const report = json(ex) as Record<
          string,
          { type: string; taskId: string; payload: Record<string, unknown> }
        >;
        expect(Object.keys(report).sort()).toEqual(["ingestionStatsAndErrors", "taskContext"]);
        const stats = report.ingestionStatsAndErrors;
        expect(stats?.type).toBe("ingestionStatsAndErrors");
        expect(stats?.taskId).toBe(okId);
        expect(stats?.payload).toMatchObject({
          ingestionState: "COMPLETED",
          errorMsg: null,
          recordsProcessed: {},
          rowStats: {
            determinePartitions: expect.any(Object),
            buildSegments: { processed: days.length * rowsPerDay, unparseable: 0, thrownAway: 0 },
          },
          segmentsPublished: days.length,
        });
        // Druid 33 has no thrownAwayByReason (added later, docs/druid-api.md §2.7).
        const rowStats = stats?.payload.rowStats as { buildSegments?: object } | undefined;
        expect(rowStats?.buildSegments ?? {}).not.toHaveProperty("thrownAwayByReason");
        expect(report.taskContext?.type).toBe("taskContext");
      });

      it("reports a failed run with its error and no segmentsPublished", async () => {
        const ex = await get(`${OV}/task/${badId}/reports`);
        expect(ex.status).toBe(200);
        const payload = (json(ex) as { ingestionStatsAndErrors: { payload: Record<string, unknown> } })
          .ingestionStatsAndErrors.payload;
        expect(String(payload.errorMsg)).toContain("Max parse exceptions[0] exceeded");
        expect(payload).not.toHaveProperty("segmentsPublished");
        expect(payload.ingestionState).not.toBe("COMPLETED");
      });
    });

    describe("POST /task/{id}/shutdown of a completed task (docs/druid-api.md §2.8)", () => {
      it("acknowledges with 200 and leaves the status alone", async () => {
        const ex = await post(`${OV}/task/${okId}/shutdown`);
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual({ task: okId });
        const s = await statusOf(okId);
        expect(s.statusCode).toBe("SUCCESS");
        expect(s.errorMsg).toBeNull();
      });

      it("answers shutdownAllTasks of a datasource without active tasks with an empty 404", async () => {
        const ex = await post(`${OV}/datasources/${dataSource}/shutdownAllTasks`);
        expect(ex.status).toBe(404);
        expect(ex.text).toBe("");
      });
    });

    describe("leadership (docs/druid-api.md §2.1)", () => {
      it.each([OV, CO])("answers %s/leader with the bare leader URL, not a JSON string", async (prefix) => {
        const ex = await get(`${prefix}/leader`);
        expect(ex.status).toBe(200);
        expect(ex.text).toMatch(/^https?:\/\/[^"\s]+$/);
        expect(new URL(ex.text).port).not.toBe("");
      });

      it.each([OV, CO])("answers %s/isLeader on the leader with 200 {leader: true}", async (prefix) => {
        const ex = await get(`${prefix}/isLeader`);
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual({ leader: true });
      });
    });

    describe("workers and capacity (docs/druid-api.md §2.9)", () => {
      it("lists each worker with its capacity, usage and running tasks", async () => {
        const ex = await get(`${OV}/workers`);
        expect(ex.status).toBe(200);
        const workers = json(ex) as Array<Record<string, unknown>>;
        expect(workers.length).toBeGreaterThan(0);
        for (const w of workers) {
          // Druid 33 has no `worker.disabled` (docs/druid-api.md §2.9 lists it for current Druid).
          expect(Object.keys(w.worker as object).sort()).toEqual([
            "capacity",
            "category",
            "host",
            "ip",
            "scheme",
            "version",
          ]);
          expect(w.worker).toMatchObject({
            scheme: "http",
            host: expect.any(String),
            ip: expect.any(String),
            capacity: expect.any(Number),
            version: expect.any(String),
            category: "_default_worker_category",
          });
          expect(w).toMatchObject({
            currCapacityUsed: expect.any(Number),
            currParallelIndexCapacityUsed: expect.any(Number),
            availabilityGroups: expect.any(Array),
            runningTasks: expect.any(Array),
            lastCompletedTaskTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          });
        }
      });

      it("sums the workers' capacity in totalWorkerCapacity", async () => {
        const workers = json(await get(`${OV}/workers`)) as Array<{ worker: { capacity: number } }>;
        const ex = await get(`${OV}/totalWorkerCapacity`);
        expect(ex.status).toBe(200);
        const body = json(ex) as Record<string, number>;
        expect(Object.keys(body).sort()).toEqual([
          "currentClusterCapacity",
          "maximumCapacityWithAutoScale",
          "usedClusterCapacity",
        ]);
        expect(body.currentClusterCapacity).toBe(workers.reduce((n, w) => n + w.worker.capacity, 0));
        // Neither target has an autoscaler.
        expect(body.maximumCapacityWithAutoScale).toBe(-1);
        expect(body.usedClusterCapacity).toBeGreaterThanOrEqual(0);
      });
    });

    // InputSourceSampler.java, SamplerConfig.java, IndexTaskSamplerSpec.java, SamplerExceptionMapper.java and
    // LocalInputSource.java of Druid 33 (docs/druid-api.md §2.12). Message texts are asserted only where they are
    // Druid's own strings in those files; the rest by status, fields and counts.
    describe("the data sampler, POST /sampler (docs/druid-api.md §2.12)", () => {
      interface SampleAnswer {
        numRowsRead: number;
        numRowsIndexed: number;
        logicalSegmentSchema: Array<{ name: string; type: string }>;
        data: Array<{ input?: Row; parsed?: Record<string, unknown>; unparseable?: boolean; error?: string }>;
      }
      const sample = (spec: Record<string, unknown>) => post(`${OV}/sampler`, spec);
      const day = "2026-04-01";
      let dir = "";
      beforeAll(() => {
        // Two rows of the day and one of the next: the sampler does not filter by granularitySpec.intervals.
        dir = writeInput(target.dataDir(), {
          "rows.json": [...dayRows(day, 2), { time: "2026-04-02T05:00:00Z", page: "next", added: 9 }],
          "bad.txt": [
            { time: `${day}T00:00:00Z`, page: "a", added: 1 },
            "not json",
            { time: "never", page: "c" },
          ],
        });
      });

      it("reads a local baseDir: a row per record with __time in epoch ms, rows outside the intervals included", async () => {
        const ex = await sample(
          samplerSpec({ inputSource: { baseDir: dir }, intervals: [`${day}/2026-04-02`] }),
        );
        expect(ex.status).toBe(200);
        const answer = json(ex) as SampleAnswer;
        expect(answer.numRowsRead).toBe(3);
        expect(answer.numRowsIndexed).toBe(3);
        const rows = [...dayRows(day, 2), { time: "2026-04-02T05:00:00Z", page: "next", added: 9 }];
        expect(answer.data).toEqual(
          rows.map((r) => ({
            input: r,
            parsed: { __time: Date.parse(r.time), page: r.page, added: r.added },
          })),
        );
        expect(answer.logicalSegmentSchema).toEqual([
          { name: "__time", type: "LONG" },
          { name: "page", type: "STRING" },
          { name: "added", type: "LONG" },
        ]);
      });

      it("reports unparseable records as rows: a line that is not JSON, a timestamp that does not parse", async () => {
        const ex = await sample(samplerSpec({ inputSource: { baseDir: dir, filter: "bad.txt" } }));
        expect(ex.status).toBe(200);
        const answer = json(ex) as SampleAnswer;
        expect(answer.numRowsRead).toBe(3);
        expect(answer.numRowsIndexed).toBe(1);
        const [good, notJson, badTime] = answer.data;
        expect(good?.parsed).toEqual({ __time: Date.parse(`${day}T00:00:00Z`), page: "a", added: 1 });
        // The record never became a map: no input (IntermediateRowParsingReader#sample).
        expect(notJson).toEqual({ unparseable: true, error: expect.stringContaining("[not json]") });
        expect(badTime).toEqual({
          input: { time: "never", page: "c" },
          unparseable: true,
          error: expect.stringMatching(/^Timestamp\[never\] is unparseable!/),
        });
      });

      it("answers 200 with no rows when the filter matches no file", async () => {
        const ex = await sample(samplerSpec({ inputSource: { baseDir: dir, filter: "*.csv" } }));
        expect(ex.status).toBe(200);
        expect(json(ex)).toMatchObject({ numRowsRead: 0, numRowsIndexed: 0, data: [] });
      });

      it("answers 200 with no rows for a baseDir that does not exist", async () => {
        // LocalInputSource lists baseDir with commons-io's FileUtils.iterateFiles; Druid 33 ships commons-io 2.17,
        // whose listFiles continues past the failed visit of a missing root (visitFileFailed → CONTINUE) where
        // 2.11 threw: nothing is listed, and the sampler reads nothing.
        const ex = await sample(samplerSpec({ inputSource: { baseDir: join(dir, "no-such-dir") } }));
        expect(ex.status).toBe(200);
        expect(json(ex)).toMatchObject({ numRowsRead: 0, numRowsIndexed: 0, data: [] });
      });

      it("answers a file it cannot open with SamplerExceptionMapper's 400 Failed to sample data", async () => {
        // A directory named in `files` (non-empty, so LocalInputSource keeps it) fails in FileEntity#open.
        const ex = await sample(samplerSpec({ inputSource: { files: [dir] } }));
        expect(ex.status).toBe(400);
        expect(Object.keys(json(ex) as object)).toEqual(["error"]);
        expect((json(ex) as { error: string }).error).toMatch(/^Failed to sample data: /);
      });

      it.each([
        ["without inputSource", samplerSpec({ inputSource: null }), "inputSource"],
        [
          "without inputFormat for a local source",
          samplerSpec({ inputSource: { baseDir: "/" }, noInputFormat: true }),
          "inputFormat",
        ],
        [
          "asking for more than 5000 rows",
          samplerSpec({ inputSource: { baseDir: "/" }, numRows: 5001 }),
          "numRows must be <= 5000",
        ],
      ])("refuses a spec %s with a Jackson 400 {error}", async (_case, spec, mentions) => {
        const ex = await sample(spec);
        expect(ex.status).toBe(400);
        const { error } = json(ex) as { error: string };
        expect(error).toMatch(/^Cannot construct instance of `/);
        expect(error).toContain(mentions);
      });

      it("knows one sampler spec type, index: index_parallel is Jackson's unknown-type 400", async () => {
        const ex = await sample({
          ...samplerSpec({ inputSource: { baseDir: "/" } }),
          type: "index_parallel",
        });
        expect(ex.status).toBe(400);
        const { error } = json(ex) as { error: string };
        expect(error).toMatch(
          /^Please make sure to load all the necessary extensions and jars with type 'index_parallel' on 'druid\/\w+' service\. Could not resolve type id 'index_parallel' as a subtype of `org\.apache\.druid\.client\.indexing\.SamplerSpec`/,
        );
      });
    });

    describe("loadstatus (docs/druid-api.md §3.1, §3.3)", () => {
      it("refuses a request without forceMetadataRefresh with 400 and a plain message", async () => {
        const ex = await get(`${CO}/datasources/${dataSource}/loadstatus`);
        expect(ex.status).toBe(400);
        expect(ex.contentType).toMatch(/^application\/json/);
        expect(ex.text).toBe("Invalid request. forceMetadataRefresh must be specified");
      });

      it("reaches {ds: 100} once the ingested segments are loaded, for slash and underscore intervals", async () => {
        await loaded(dataSource, interval);
        for (const i of [interval, interval.replace("/", "_")]) {
          const ex = await get(
            `${CO}/datasources/${dataSource}/loadstatus?forceMetadataRefresh=false&interval=${i}`,
          );
          expect(ex.status).toBe(200);
          expect(json(ex)).toEqual({ [dataSource]: 100 });
        }
      });

      it("answers the simple form with the count of segments left to load, and the cluster-wide form by datasource", async () => {
        await loaded(dataSource, interval);
        const q = `forceMetadataRefresh=true&interval=${interval.replace("/", "_")}`;
        const simple = await get(`${CO}/datasources/${dataSource}/loadstatus?${q}&simple`);
        expect(simple.status).toBe(200);
        expect(json(simple)).toEqual({ [dataSource]: 0 });
        const all = await get(`${CO}/loadstatus`);
        expect(all.status).toBe(200);
        expect((json(all) as Record<string, number>)[dataSource]).toBe(100);
      });

      it("answers an unknown datasource with 204 and no body", async () => {
        const ex = await get(
          `${CO}/datasources/${freshId("segops_conf_none")}/loadstatus?forceMetadataRefresh=true`,
        );
        expect(ex.status).toBe(204);
        expect(ex.text).toBe("");
      });

      it("answers an interval without used segments with 200 and a plain message (not 204)", async () => {
        const ex = await get(
          `${CO}/datasources/${dataSource}/loadstatus?forceMetadataRefresh=true&interval=2000-01-01_2000-01-02`,
        );
        expect(ex.status).toBe(200);
        expect(ex.contentType).toMatch(/^application\/json/);
        expect(ex.text).toBe("No used segment found for the given datasource and interval");
      });
    });

    describe("datasources and segments (docs/druid-api.md §3.2, §3.4, §3.5)", () => {
      it("lists the served segment ids of a datasource", async () => {
        await loaded(dataSource, interval);
        const ex = await get(`${CO}/datasources/${dataSource}/segments`);
        expect(ex.status).toBe(200);
        const ids = json(ex) as string[];
        expect(ids).toHaveLength(days.length);
        for (const d of days)
          expect(ids.some((id) => id.startsWith(`${dataSource}_${d}T00:00:00.000Z_`))).toBe(true);
      });

      it("answers an unknown datasource with 204 on the served view and 404 on the metadata view", async () => {
        const none = freshId("segops_conf_none");
        const served = await get(`${CO}/datasources/${none}`);
        expect(served.status).toBe(204);
        const meta = await get(`${CO}/metadata/datasources/${none}/segments`);
        expect(meta.status).toBe(404);
        expect(meta.text).toBe("");
      });

      it("returns full DataSegments by interval, with comma-joined dimensions and an empty metrics string", async () => {
        const ex = await post(`${CO}/metadata/datasources/${dataSource}/segments?full`, [interval]);
        expect(ex.status).toBe(200);
        const segs = json(ex) as DataSegment[];
        expect(segs).toHaveLength(days.length);
        for (const s of segs) {
          expect(s).toMatchObject({
            dataSource,
            dimensions: "page,added",
            metrics: "",
            shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
            binaryVersion: 9,
            loadSpec: { type: "local" },
          });
          expect(s.identifier).toBe(`${dataSource}_${s.interval.replace("/", "_")}_${s.version}`);
          // Druid 33's DataSegment has neither (docs/druid-api.md §3.5 lists them for newer releases).
          expect(s).not.toHaveProperty("totalRows");
          expect(s).not.toHaveProperty("projections");
        }
      });

      it("shows the served segments overlapping an interval with the Historical serving each (serverview, §3.2a)", async () => {
        await loaded(dataSource, interval);
        const servedIds = json(await get(`${CO}/datasources/${dataSource}/segments`)) as string[];
        const view = (i: string) =>
          get(`${CO}/datasources/${dataSource}/intervals/${i.replace("/", "_")}/serverview`);
        const whole = await view(interval);
        expect(whole.status).toBe(200);
        expect(whole.contentType).toMatch(/^application\/json/);
        const items = json(whole) as Array<{ segment: DataSegment; servers: Array<Record<string, unknown>> }>;
        expect(items.map((i) => i.segment.identifier).sort()).toEqual([...servedIds].sort());
        for (const item of items) {
          expect(item.segment).toMatchObject({ dataSource, dimensions: "page,added", binaryVersion: 9 });
          expect(item.servers).toEqual([
            expect.objectContaining({ type: "historical", tier: "_default_tier", host: expect.any(String) }),
          ]);
        }
        // Overlap, not containment: an hour inside the first day brings back that day's segment.
        const hour = json(await view(`${days[0]}T05:00:00.000Z/${days[0]}T06:00:00.000Z`)) as typeof items;
        expect(hour.map((i) => i.segment.interval)).toEqual([
          `${days[0]}T00:00:00.000Z/${days[1]}T00:00:00.000Z`,
        ]);
      });

      it("answers the serverview of an interval or a datasource with nothing served with 200 [] (not 204)", async () => {
        const none = await get(
          `${CO}/datasources/${freshId("segops_conf_none")}/intervals/2026-03-01_2026-03-02/serverview`,
        );
        expect(none.status).toBe(200);
        expect(json(none)).toEqual([]);
        const empty = await get(
          `${CO}/datasources/${dataSource}/intervals/2000-01-01T00:00:00.000Z_2000-01-02T00:00:00.000Z/serverview`,
        );
        expect(empty.status).toBe(200);
        expect(json(empty)).toEqual([]);
      });

      it("answers an interval without segments with an empty list", async () => {
        const ex = await post(`${CO}/metadata/datasources/${dataSource}/segments`, ["2000-01-01/2000-01-02"]);
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual([]);
      });
    });

    describe("Broker SQL (docs/druid-api.md §3.6)", () => {
      it("counts and sums the ingested rows per day", async () => {
        await loaded(dataSource, interval);
        const expected = expectedDays(days.flatMap((d) => dayRows(d, rowsPerDay)));
        expect(await sqlEventually(perDay(dataSource), expected)).toEqual(expected);
      });

      it("answers an unknown table with a 400 invalidInput ErrorResponse that places the name", async () => {
        const ex = await sql(`SELECT COUNT(*) FROM "segops_no_such_table"`);
        expect(ex.status).toBe(400);
        expect(json(ex)).toEqual({
          error: "druidException",
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Object 'segops_no_such_table' not found (line [1], column [22])",
          // The span of the name as written, quotes included.
          context: { sourceType: "sql", line: "1", column: "22", endLine: "1", endColumn: "43" },
        });
      });
    });

    describe("Broker SQL: what tools send past the basics (§3.6)", () => {
      it("ends object and array bodies with a newline, caps rows at context.sqlOuterLimit, and refuses to order a scan by a column", async () => {
        await loaded(dataSource, interval);
        const limited = await post("/druid/v2/sql", {
          query: `SELECT "page" FROM "${dataSource}"`,
          resultFormat: "array",
          context: { sqlOuterLimit: 2 },
        });
        expect(limited.status).toBe(200);
        expect(limited.text.endsWith("]\n")).toBe(true);
        expect(json(limited)).toHaveLength(2);
        const objects = await post("/druid/v2/sql", {
          query: `SELECT COUNT(*) AS n FROM "${dataSource}"`,
          resultFormat: "object",
        });
        expect(objects.text).toMatch(/^\[\{"n":\d+\}\]\n$/);
        // A scan (no aggregation) can be ordered only by __time: the planner's refusal, not a sorted answer.
        const ordered = await sql(`SELECT "page" FROM "${dataSource}" ORDER BY "page" LIMIT 2`);
        expect(ordered.status).toBe(400);
        expect(json(ordered)).toEqual({
          error: "druidException",
          errorCode: "general",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Query could not be planned. A possible reason is [SQL query requires ordering a table by non-time column [[page]], which is not supported.]",
          context: {},
        });
      });
    });

    describe("Overlord: the supervisor list and a task body that is not JSON (§2.2)", () => {
      it("lists no supervisors as 200 [], and answers unparseable task JSON with Jetty's HTML 500 naming Jackson's error", async () => {
        const supervisors = await get(`${OV}/supervisor`);
        expect([supervisors.status, supervisors.contentType, json(supervisors)]).toEqual([
          200,
          "application/json",
          [],
        ]);
        const broken = await post(`${OV}/task`, '{"type": "index_parallel", bad');
        expect(broken.status).toBe(500);
        expect(broken.contentType).toMatch(/^text\/html/);
        expect(broken.text).toContain(
          "com.fasterxml.jackson.core.JsonParseException: Unexpected character (&apos;b&apos; (code 98)): was expecting double-quote to start field name",
        );
      });
    });

    // Compaction supervisors (apache/druid #16768, `CompactionSupervisorSpec`) and the cluster compaction config on
    // the Overlord (#16803, #17782): what segops' compaction guard reads, and the emulator's Druid 37 profile runs.
    describe("Overlord: an autocompact supervisor and the cluster compaction config", () => {
      it("takes a suspended autocompact supervisor, answers its spec with Druid's defaults, and refuses bad ones", async () => {
        const cluster = await get(`${OV}/compaction/config/cluster`);
        expect([cluster.status, json(cluster)]).toEqual([
          200,
          {
            compactionTaskSlotRatio: 0.1,
            maxCompactionTaskSlots: 2147483647,
            compactionPolicy: { type: "newestSegmentFirst", priorityDatasource: null },
            useSupervisors: false,
            engine: "native",
          },
        ]);
        const ds = freshId("segops_conf_autocompact");
        const id = `autocompact__${ds}`;
        const made = await post(`${OV}/supervisor`, {
          type: "autocompact",
          spec: { dataSource: ds },
          suspended: true,
        });
        try {
          expect([made.status, json(made)]).toEqual([200, { id }]);
          expect(json(await get(`${OV}/supervisor`))).toContain(id);
          const spec = await get(`${OV}/supervisor/${id}`);
          expect([spec.status, json(spec)]).toEqual([
            200,
            {
              type: "autocompact",
              spec: {
                type: "inline",
                dataSource: ds,
                taskPriority: 25,
                inputSegmentSizeBytes: 100000000000000,
                maxRowsPerSegment: null,
                skipOffsetFromLatest: "P1D",
                tuningConfig: null,
                granularitySpec: null,
                dimensionsSpec: null,
                metricsSpec: null,
                transformSpec: null,
                projections: null,
                ioConfig: null,
                engine: null,
                taskContext: null,
              },
              suspended: true,
            },
          ]);
        } finally {
          const gone = await post(`${OV}/supervisor/${id}/terminate`);
          expect([gone.status, json(gone)]).toEqual([200, { id }]);
        }
        const unknown = await get(`${OV}/supervisor/${id}`);
        expect([unknown.status, unknown.contentType, unknown.text]).toEqual([
          404,
          "text/plain",
          `Cannot find any supervisor with id: [${id}]`,
        ]);
        const nameless = await post(`${OV}/supervisor`, { type: "autocompact", spec: {} });
        expect([nameless.status, json(nameless)]).toEqual([
          400,
          {
            error:
              "Cannot construct instance of `org.apache.druid.server.coordinator.InlineSchemaDataSourceCompactionConfig`, problem: dataSource",
          },
        ]);
      });
    });

    // The Overlord's segment update APIs (docs/druid-api.md §3.7): a replacing version is marked unused and
    // used again by interval and versions; bad filters are refused in text.
    describe("segment update APIs: markUnused / markUsed by interval and versions (§3.7)", () => {
      const ds = freshId("segops_conf_mark");
      const day = "2026-03-01T00:00:00.000Z/2026-03-02T00:00:00.000Z";
      const seen: { v1?: DataSegment; v2?: DataSegment } = {};
      const metadata = async (): Promise<DataSegment[]> => {
        const ex = await post(`${CO}/metadata/datasources/${ds}/segments?full`, [day]);
        if (ex.status !== 200) throw new Error(`metadata segments: ${ex.status} ${ex.text}`);
        return json(ex) as DataSegment[];
      };

      beforeAll(async () => {
        const root = target.dataDir();
        const first = writeInput(root, { "mark1.json": dayRows("2026-03-01", 3) });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_m1"),
            dataSource: ds,
            baseDir: first,
            intervals: [day],
          }),
          ds,
          day,
        );
        seen.v1 = (await metadata())[0];
        const second = writeInput(root, { "mark2.json": dayRows("2026-03-01", 2, 5) });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_m2"),
            dataSource: ds,
            baseDir: second,
            intervals: [day],
          }),
          ds,
          day,
        );
        seen.v2 = (await metadata()).find((s) => s.version !== seen.v1?.version);
      });

      it("refuses a filter with neither or both of interval and segmentIds, or versions with ids, as 400 text", async () => {
        const message =
          "Invalid request payload. Specify either 'interval' or 'segmentIds', but not both. Optionally, include 'versions' only when 'interval' is provided.";
        for (const body of [
          {},
          { interval: day, segmentIds: [seen.v2?.identifier] },
          { segmentIds: ["x"], versions: ["v"] },
        ]) {
          const ex = await post(`${OV}/datasources/${ds}/markUnused`, body);
          expect(ex.status).toBe(400);
          expect(ex.text).toBe(message);
        }
      });

      it("marks the replacing version unused and lists it in unusedSegments, then marks it used again", async () => {
        const v2 = seen.v2 as DataSegment;
        const down = await post(`${OV}/datasources/${ds}/markUnused`, {
          interval: day,
          versions: [v2.version],
        });
        expect(down.status).toBe(200);
        expect(json(down)).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
        expect((await metadata()).map((s) => s.identifier)).not.toContain(v2.identifier);
        const unused = await get(
          `${CO}/metadata/datasources/${ds}/unusedSegments?interval=${day.replace("/", "_")}`,
        );
        expect(unused.status).toBe(200);
        const items = json(unused) as Array<{ dataSegment: DataSegment; used?: boolean }>;
        expect(items.map((i) => i.dataSegment.identifier)).toEqual([v2.identifier]);
        const again = await post(`${OV}/datasources/${ds}/markUnused`, {
          interval: day,
          versions: [v2.version],
        });
        expect(json(again)).toEqual({ numChangedSegments: 0, segmentStateChanged: false });
        // markUsed declares no response type (no @Produces, unlike markUnused): without an Accept header that
        // names JSON, Jersey has no writer for the answer (500, empty); segops' client always asks for JSON.
        const bare = await post(`${OV}/datasources/${ds}/markUsed`, { interval: day, versions: ["1999"] });
        expect(bare.status).toBe(500);
        expect(bare.text).toBe("");
        const res = await request(`${target.url()}${OV}/datasources/${ds}/markUsed`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ interval: day, versions: [v2.version] }),
        });
        const text = await res.body.text();
        expect(res.statusCode).toBe(200);
        expect(JSON.parse(text)).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
        expect((await metadata()).map((s) => s.identifier)).toContain(v2.identifier);
        // An empty id list counts as no filter at all; the text refusal comes labelled as JSON.
        const empty = await post(`${OV}/datasources/${ds}/markUnused`, { segmentIds: [] });
        expect(empty.status).toBe(400);
        expect(empty.contentType).toMatch(/^application\/json/);
        expect(empty.text).toMatch(/^Invalid request payload\. Specify either 'interval' or 'segmentIds'/);
      });

      it("kills an unused segment with a kill task filtered by version and unused time; the used one stays", async () => {
        const v1 = seen.v1 as DataSegment;
        const v2 = seen.v2 as DataSegment;
        // v1 is overshadowed; make it unused now rather than wait for the Coordinator's duty.
        const down = await post(`${OV}/datasources/${ds}/markUnused`, {
          interval: day,
          versions: [v1.version],
        });
        expect(down.status).toBe(200);
        const id = freshId("segops_conf_kill");
        const kill = await post(`${OV}/task`, {
          type: "kill",
          id,
          dataSource: ds,
          interval: day,
          versions: [v1.version],
          maxUsedStatusLastUpdatedTime: new Date(Date.now() + 60_000).toISOString(),
        });
        expect(kill.status).toBe(200);
        expect((await finished(id)).statusCode).toBe("SUCCESS");
        const unused = await get(
          `${CO}/metadata/datasources/${ds}/unusedSegments?interval=${day.replace("/", "_")}`,
        );
        expect(json(unused)).toEqual([]);
        expect((await metadata()).map((s) => s.identifier)).toEqual([v2.identifier]);
      });
    });

    // Compaction (docs/druid-api.md §3.9): a compact task rewrites a chunk's visible segments under a newer
    // version with the same rows and records how (lastCompactionState); an interval without segments FAILs.
    describe("compaction: one newer segment for an appended day, same rows; nothing to do FAILs (§3.9)", () => {
      const ds = freshId("segops_conf_cmp");
      const day = "2026-07-01T00:00:00.000Z/2026-07-02T00:00:00.000Z";
      let before: DataSegment[] = [];
      const metadata = async (): Promise<DataSegment[]> => {
        const ex = await post(`${CO}/metadata/datasources/${ds}/segments?full`, [day]);
        if (ex.status !== 200) throw new Error(`metadata segments: ${ex.status} ${ex.text}`);
        return json(ex) as DataSegment[];
      };
      const compactSpec = (id: string, interval: string) => ({
        type: "compact",
        id,
        dataSource: ds,
        ioConfig: { type: "compact", inputSpec: { type: "interval", interval } },
        tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
      });

      beforeAll(async () => {
        const root = target.dataDir();
        const first = writeInput(root, { "c1.json": dayRows("2026-07-01", 3) });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_c1"),
            dataSource: ds,
            baseDir: first,
            intervals: [day],
          }),
          ds,
          day,
        );
        const second = writeInput(root, { "c2.json": dayRows("2026-07-01", 2, 5) });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_c2"),
            dataSource: ds,
            baseDir: second,
            intervals: [day],
            appendToExisting: true,
          }),
          ds,
          day,
        );
        before = await metadata();
      });

      it("rewrites the day's two segments as one of a newer version with the same rows", async () => {
        expect(before).toHaveLength(2);
        const totals = await sqlEventually(`SELECT COUNT(*), SUM("added") FROM "${ds}"`, [[5, 21]]);
        const id = freshId("segops_conf_compact");
        const ex = await post(`${OV}/task`, compactSpec(id, day));
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual({ task: id });
        expect((await finished(id)).statusCode).toBe("SUCCESS");
        const after = (await metadata()).filter((s) => !before.some((b) => b.identifier === s.identifier));
        expect(after).toHaveLength(1);
        const [compacted] = after;
        expect((compacted?.version ?? "") > (before[0]?.version ?? "")).toBe(true);
        expect(compacted?.shardSpec).toMatchObject({ type: "numbered", partitionNum: 0, partitions: 1 });
        const state = compacted?.lastCompactionState as {
          partitionsSpec?: { type?: string; maxRowsPerSegment?: number };
          granularitySpec?: { rollup?: boolean };
        };
        expect(state.partitionsSpec).toMatchObject({ type: "dynamic", maxRowsPerSegment: 5000000 });
        expect(state.granularitySpec?.rollup).toBe(false);
        for (const s of before) expect(s.lastCompactionState).toBeUndefined();
        await loaded(ds, day);
        expect(await sqlEventually(`SELECT COUNT(*), SUM("added") FROM "${ds}"`, totals)).toEqual(totals);
      });

      it("reads the cluster compaction config: a tenth of the slots for compaction, no datasource configured", async () => {
        const ex = await get(`${CO}/config/compaction`);
        expect(ex.status).toBe(200);
        expect(json(ex)).toMatchObject({
          compactionConfigs: [],
          compactionTaskSlotRatio: 0.1,
          maxCompactionTaskSlots: 2147483647,
        });
      });

      it("FAILs a compaction of an interval without segments before it runs: no segments found", async () => {
        const id = freshId("segops_conf_compact_none");
        expect(
          (await post(`${OV}/task`, compactSpec(id, "2026-07-10T00:00:00.000Z/2026-07-11T00:00:00.000Z")))
            .status,
        ).toBe(200);
        const status = await finished(id);
        // It fails in `isReady`, which finds the segments to lock: it never runs (duration -1).
        expect(status).toMatchObject({
          statusCode: "FAILED",
          duration: -1,
          errorMsg:
            "Encountered error[No segments found for compaction. Please check that datasource name and interval are correct.] while waiting for task to be ready. See Overlord logs for more details.",
        });
      });
    });

    // APPEND, REPLACE and tombstones on one datasource, step by step (docs/druid-api.md §4.1–§4.3). Steps run in
    // `beforeAll`, each after the previous one's segments are loaded; the tests then read the results.
    describe("timeline: append double-counts, replace overshadows, dropExisting tombstones (§4)", () => {
      const ds = freshId("segops_conf_tl");
      const whole = "2026-02-01T00:00:00.000Z/2026-02-04T00:00:00.000Z";
      const v1Rows = [...dayRows("2026-02-01", 4), ...dayRows("2026-02-02", 3)];
      const appendRows = dayRows("2026-02-01", 2);
      const replaceRows = dayRows("2026-02-01", 1, 10);
      const seen: {
        afterV1?: unknown;
        afterAppend?: unknown;
        afterReplace?: unknown;
        v1: DataSegment[];
        append: DataSegment[];
        replace: DataSegment[];
      } = { v1: [], append: [], replace: [] };

      const metadata = async (): Promise<DataSegment[]> => {
        const ex = await post(`${CO}/metadata/datasources/${ds}/segments?full`, [whole]);
        if (ex.status !== 200) throw new Error(`metadata segments: ${ex.status} ${ex.text}`);
        return json(ex) as DataSegment[];
      };

      beforeAll(async () => {
        const root = target.dataDir();
        const v1 = writeInput(root, { "v1.json": v1Rows });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_v1"),
            dataSource: ds,
            baseDir: v1,
            intervals: [whole],
          }),
          ds,
          whole,
        );
        seen.v1 = await metadata();
        seen.afterV1 = await sqlEventually(perDay(ds), expectedDays(v1Rows));

        const app = writeInput(root, { "append.json": appendRows });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_app"),
            dataSource: ds,
            baseDir: app,
            appendToExisting: true,
            intervals: ["2026-02-01/2026-02-02"],
          }),
          ds,
          whole,
        );
        const afterAppend = await metadata();
        seen.append = afterAppend.filter((s) => !seen.v1.some((o) => o.identifier === s.identifier));
        seen.afterAppend = await sqlEventually(perDay(ds), expectedDays([...v1Rows, ...appendRows]));

        const rep = writeInput(root, { "replace.json": replaceRows });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_rep"),
            dataSource: ds,
            baseDir: rep,
            dropExisting: true,
            intervals: [whole],
          }),
          ds,
          whole,
        );
        seen.replace = (await metadata()).filter(
          (s) => !afterAppend.some((o) => o.identifier === s.identifier),
        );
        seen.afterReplace = await sqlEventually(perDay(ds), expectedDays(replaceRows));
      });

      it("publishes one numbered segment per day with data and none for the empty day", () => {
        expect(seen.v1.map((s) => s.interval).sort()).toEqual([
          "2026-02-01T00:00:00.000Z/2026-02-02T00:00:00.000Z",
          "2026-02-02T00:00:00.000Z/2026-02-03T00:00:00.000Z",
        ]);
        expect(new Set(seen.v1.map((s) => s.version)).size).toBe(1);
        expect(seen.afterV1).toEqual(expectedDays(v1Rows));
      });

      it("appends as partition 1 of the day's existing version, so the same rows count twice", () => {
        const day1 = seen.v1.find((s) => s.interval.startsWith("2026-02-01"));
        expect(seen.append).toHaveLength(1);
        const [appended] = seen.append;
        expect(appended?.version).toBe(day1?.version);
        expect(appended?.shardSpec).toEqual({ type: "numbered", partitionNum: 1, partitions: 1 });
        expect(appended?.identifier).toBe(`${day1?.identifier}_1`);
        const [day1Rows] = expectedDays([...v1Rows, ...appendRows]);
        expect(day1Rows?.[1]).toBe(6);
        expect(seen.afterAppend).toEqual(expectedDays([...v1Rows, ...appendRows]));
      });

      it("replaces with a newer version and a tombstone (partitions 0) only for the emptied day that had data", () => {
        const byDay = Object.fromEntries(seen.replace.map((s) => [s.interval.slice(0, 10), s]));
        expect(Object.keys(byDay).sort()).toEqual(["2026-02-01", "2026-02-02"]);
        expect(byDay["2026-02-01"]?.shardSpec).toEqual({ type: "numbered", partitionNum: 0, partitions: 1 });
        // Druid 33 writes the tombstone's core partition count as 0 (docs/druid-api.md §3.5 says 1).
        expect(byDay["2026-02-02"]?.shardSpec).toEqual({ type: "tombstone", partitionNum: 0, partitions: 0 });
        const old = seen.v1[0]?.version ?? "";
        for (const s of seen.replace) expect(s.version > old).toBe(true);
        expect(seen.afterReplace).toEqual(expectedDays(replaceRows));
      });

      it("keeps overshadowed segments used: the metadata POST by interval still returns them", async () => {
        const ids = (await metadata()).map((s) => s.identifier).sort();
        expect(ids).toEqual([...seen.v1, ...seen.append, ...seen.replace].map((s) => s.identifier).sort());
      });

      it("shows only the replacing version (tombstone included) in the serverview, though the old one is still used", async () => {
        const ex = await get(`${CO}/datasources/${ds}/intervals/${whole.replace("/", "_")}/serverview`);
        expect(ex.status).toBe(200);
        const items = json(ex) as Array<{ segment: DataSegment; servers: Array<{ type?: string }> }>;
        // The served timeline, in interval order: the replace's day 1 segment and its day 2 tombstone.
        const expected = [...seen.replace].sort((a, b) => (a.interval < b.interval ? -1 : 1));
        expect(items.map((i) => i.segment.identifier)).toEqual(expected.map((s) => s.identifier));
        for (const item of items) expect(item.servers.map((s) => s.type)).toContain("historical");
        // A tombstone carries no binaryVersion, here as in the metadata store.
        const tombstone = items.find((i) => i.segment.shardSpec.type === "tombstone");
        expect(tombstone?.segment).toMatchObject({ binaryVersion: null, loadSpec: { type: "tombstone" } });
      });

      it("answers a serverview interval that does not parse with Jetty's 500 page naming it", async () => {
        const ex = await get(`${CO}/datasources/${ds}/intervals/notaninterval/serverview`);
        expect(ex.status).toBe(500);
        expect(ex.contentType).toMatch(/^text\/html/);
        expect(ex.text).toContain(
          "Invalid interval[notaninterval]: [Format requires a &apos;/&apos; separator: notaninterval]",
        );
      });

      it("flags exactly the replaced segments as overshadowed in metadata/segments?includeOvershadowedStatus", async () => {
        const ex = await get(`${CO}/metadata/segments?includeOvershadowedStatus&datasources=${ds}`);
        expect(ex.status).toBe(200);
        const items = json(ex) as Array<DataSegment & { overshadowed: boolean; realtime: boolean }>;
        const flags = Object.fromEntries(items.map((s) => [s.identifier, s.overshadowed]));
        const expected = Object.fromEntries([
          ...[...seen.v1, ...seen.append].map((s) => [s.identifier, true] as const),
          ...seen.replace.map((s) => [s.identifier, false] as const),
        ]);
        expect(flags).toEqual(expected);
        for (const s of items) expect(s.realtime).toBe(false);
      });

      it("shows the same in sys.segments, with JSON-array dimensions and a JSON shard_spec", async () => {
        const query = `SELECT "segment_id", "is_overshadowed", "is_published", "dimensions", "shard_spec" FROM sys.segments WHERE "datasource" = '${ds}' ORDER BY "segment_id"`;
        // shard_spec is JSON text whose key order varies on a real Druid 33 (a tombstone's came back as
        // partitions-then-partitionNum in one run and the other way round in the next): compare it parsed.
        const sorted = (text: unknown) =>
          JSON.stringify(
            Object.fromEntries(Object.entries(JSON.parse(String(text)) as Record<string, unknown>).sort()),
          );
        const expected = [...seen.v1, ...seen.append, ...seen.replace]
          .sort((a, b) => (a.identifier < b.identifier ? -1 : 1))
          .map((s) => [
            s.identifier,
            seen.replace.includes(s) ? 0 : 1,
            1,
            s.shardSpec.type === "tombstone" ? "[]" : '["page","added"]',
            sorted(JSON.stringify(s.shardSpec)),
          ]);
        const got = await eventually(
          target,
          `sys.segments to answer ${JSON.stringify(expected)}`,
          async () => {
            const ex = await sql(query);
            const rows =
              ex.status === 200
                ? (json(ex) as unknown[][]).map((r) => [...r.slice(0, 4), sorted(r[4])])
                : ex.text;
            if (JSON.stringify(rows) !== JSON.stringify(expected))
              throw new Error(`last answer ${ex.status}: ${JSON.stringify(rows)}`);
            return rows;
          },
        );
        expect(got).toEqual(expected);
      });

      it("lists the sys.segments columns of Druid 33 (no projections)", async () => {
        const ex = await post("/druid/v2/sql", {
          query: `SELECT * FROM sys.segments WHERE "datasource" = '${ds}' LIMIT 1`,
          resultFormat: "object",
        });
        expect(ex.status).toBe(200);
        const [row] = json(ex) as Record<string, unknown>[];
        expect(Object.keys(row ?? {})).toEqual([
          "segment_id",
          "datasource",
          "start",
          "end",
          "size",
          "version",
          "partition_num",
          "num_replicas",
          "num_rows",
          "is_active",
          "is_published",
          "is_available",
          "is_realtime",
          "is_overshadowed",
          "shard_spec",
          "dimensions",
          "metrics",
          "last_compaction_state",
          "replication_factor",
        ]);
      });
    });

    // Tasks that are still running: a slow task (one sub-task per file, two at a time; on a real Druid each
    // sub-task is a task of its own, about a second each), locks and shutdown (docs/druid-api.md §2.3, §2.8, §4.4).
    describe("running tasks: overlapping locks WAIT, shutdown FAILs (§2.3, §2.8, §4.4)", () => {
      const ds = freshId("segops_conf_run");
      const day = "2026-04-01T00:00:00.000Z/2026-04-02T00:00:00.000Z";
      const slowFiles = 12;
      let slowDir = "";
      let fastDir = "";

      beforeAll(() => {
        const files: Record<string, Row[]> = {};
        for (let f = 0; f < slowFiles; f++) {
          files[`f${String(f).padStart(2, "0")}.json`] = [
            { time: `2026-04-01T${String(f).padStart(2, "0")}:00:00Z`, page: `f${f}`, added: 1 },
          ];
        }
        slowDir = writeInput(target.dataDir(), files);
        fastDir = writeInput(target.dataDir(), {
          "one.json": [{ time: "2026-04-01T12:30:00Z", page: "x", added: 7 }],
        });
      });

      it("makes a second task on an overlapping interval WAIT for the lock, then run after the first", async () => {
        const first = await submitted(
          indexParallelSpec({
            id: freshId("segops_conf_lk1"),
            dataSource: ds,
            baseDir: slowDir,
            intervals: [day],
            subTasks: 2,
          }),
        );
        const second = await submitted(
          indexParallelSpec({
            id: freshId("segops_conf_lk2"),
            dataSource: ds,
            baseDir: fastDir,
            intervals: [day],
          }),
        );
        const [s1, s2] = [await statusOf(first), await statusOf(second)];
        expect(s1.statusCode).toBe("RUNNING");
        expect(s2).toMatchObject({ statusCode: "RUNNING", runnerStatusCode: "WAITING", duration: -1 });
        expect(s2.location).toEqual({ host: null, port: -1, tlsPort: -1 });
        const waiting = json(await get(`${OV}/tasks?state=waiting&datasource=${ds}`)) as TaskStatusPlus[];
        expect(waiting.map((t) => t.id)).toContain(second);
        expect(waiting.map((t) => t.id)).not.toContain(first);
        expect((await bulkStatus([second]))[second]?.status).toBe("RUNNING");

        expect((await finished(first)).statusCode).toBe("SUCCESS");
        expect((await finished(second)).statusCode).toBe("SUCCESS");
        await loaded(ds, day);
        const segs = json(
          await post(`${CO}/metadata/datasources/${ds}/segments?full`, [day]),
        ) as DataSegment[];
        const versions = [...new Set(segs.map((s) => s.version))].sort();
        // The second task locked after the first released, so its version is newer and it wins (§4.1).
        expect(versions).toHaveLength(2);
        expect(await sqlEventually(`SELECT COUNT(*), SUM("added") FROM "${ds}"`, [[1, 7]])).toEqual([[1, 7]]);
      });

      it("FAILs a running task on shutdown with 'Shutdown request from user' and duration -1", async () => {
        const id = await submitted(
          indexParallelSpec({
            id: freshId("segops_conf_sd"),
            dataSource: ds,
            baseDir: slowDir,
            intervals: [day],
            subTasks: 2,
          }),
        );
        await eventually(target, `task ${id} to run`, async () => {
          const s = await statusOf(id);
          if (s.statusCode !== "RUNNING") throw new Error(`finished before shutdown: ${JSON.stringify(s)}`);
          return s.runnerStatusCode === "RUNNING" ? s : undefined;
        });
        // While it runs, its lock is listed by /lockedIntervals/v2 at or below its priority (50), not above.
        const locks = await post(`${OV}/lockedIntervals/v2`, [{ datasource: ds, priority: 0 }]);
        expect(locks.status).toBe(200);
        expect(Object.keys(json(locks) as object)).toEqual([ds]);
        expect(new Set((json(locks) as Record<string, string[]>)[ds])).toEqual(new Set([day]));
        expect(json(await post(`${OV}/lockedIntervals/v2`, [{ datasource: ds, priority: 100 }]))).toEqual({});
        const noFilter = await post(`${OV}/lockedIntervals/v2`, []);
        expect(noFilter.status).toBe(400);
        expect(noFilter.text).toBe("No filter provided");
        const ex = await post(`${OV}/task/${id}/shutdown`);
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual({ task: id });
        // The Overlord's own view flips at once; the runner's (bulk status) follows when the task's thread ends.
        expect(await statusOf(id)).toMatchObject({
          statusCode: "FAILED",
          errorMsg: SHUTDOWN_MESSAGE,
          duration: -1,
        });
        const bulk = await eventually(target, "bulk status to show the shutdown", async () => {
          const b = (await bulkStatus([id]))[id];
          return b?.status === "FAILED" ? b : undefined;
        });
        expect(bulk).toMatchObject({ status: "FAILED", errorMsg: SHUTDOWN_MESSAGE, duration: -1 });
        const after = await finished(id);
        expect(after).toMatchObject({ statusCode: "FAILED", errorMsg: SHUTDOWN_MESSAGE, duration: -1 });
        await eventually(target, "the worker to let go of the task", async () => {
          const workers = json(await get(`${OV}/workers`)) as Array<{ runningTasks: string[] }>;
          return workers.every((w) => !w.runningTasks.includes(id)) ? true : undefined;
        });
      });
    });

    // Queries without a table and the catalog tables, as JDBC/DB-API clients use them, and
    // the request fields of `SqlQuery`: query ids, sqlTimeZone, typesHeader (item 4).
    describe("Broker SQL: SELECT 1, INFORMATION_SCHEMA, sys tables, query ids, time zones (§3.6)", () => {
      const pydruid = (query: string) => ({ query, context: {}, header: true, resultFormat: "arrayLines" });

      it("answers SELECT 1 with Calcite's EXPR$0, also to the exact request of pydruid's DB-API cursor", async () => {
        const ex = await post("/druid/v2/sql", { query: "SELECT 1" });
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual([{ EXPR$0: 1 }]);
        // Airflow's DruidDbApiHook.test_connection() runs `select 1` this way (pydruid's default path ends in /).
        const hook = await post("/druid/v2/sql/", pydruid("select 1"));
        expect(hook.status).toBe(200);
        expect(hook.text).toBe('["EXPR$0"]\n[1]\n\n');
      });

      it("lists schemas, tables and a datasource's columns in INFORMATION_SCHEMA", async () => {
        await loaded(dataSource, interval);
        const schemata = await post("/druid/v2/sql", {
          query: "SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA",
          resultFormat: "array",
        });
        expect(json(schemata)).toEqual([["druid"], ["INFORMATION_SCHEMA"], ["lookup"], ["sys"], ["view"]]);
        const system = await post("/druid/v2/sql", {
          query:
            "SELECT * FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA IN ('INFORMATION_SCHEMA', 'sys') ORDER BY TABLE_SCHEMA, TABLE_NAME",
          resultFormat: "array",
        });
        expect(json(system)).toEqual(
          [
            ["INFORMATION_SCHEMA", "COLUMNS"],
            ["INFORMATION_SCHEMA", "ROUTINES"],
            ["INFORMATION_SCHEMA", "SCHEMATA"],
            ["INFORMATION_SCHEMA", "TABLES"],
            ["sys", "segments"],
            ["sys", "server_segments"],
            ["sys", "servers"],
            ["sys", "supervisors"],
            ["sys", "tasks"],
          ].map(([schema, name]) => ["druid", schema, name, "SYSTEM_TABLE", "NO", "NO"]),
        );
        const table = `SELECT * FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = '${dataSource}'`;
        expect(
          await sqlEventually(table, [["druid", "druid", dataSource, "TABLE", "NO", "NO"]]),
        ).toBeTruthy();
        const columns = `SELECT COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, JDBC_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'druid' AND TABLE_NAME = '${dataSource}'`;
        expect(
          await sqlEventually(columns, [
            ["__time", 1, "", "NO", "TIMESTAMP", 93],
            ["page", 2, "", "YES", "VARCHAR", 12],
            ["added", 3, "", "YES", "BIGINT", -5],
          ]),
        ).toBeTruthy();
      });

      it("answers SQLAlchemy's has_table with true, and with no row at all for an unknown table", async () => {
        await loaded(dataSource, interval);
        const has = (t: string) =>
          `SELECT COUNT(*) > 0 AS exists_ FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME = '${t}'`;
        expect(await sqlEventually(has(dataSource), [[true]])).toEqual([[true]]);
        // An aggregate over an empty system table gives no row in Druid 33 (not [[false]]).
        expect(json(await sql(has(freshId("segops_conf_none"))))).toEqual([]);
        expect(
          json(
            await sql(
              `SELECT COUNT(*) FROM sys.segments WHERE datasource = '${freshId("segops_conf_none")}'`,
            ),
          ),
        ).toEqual([]);
      });

      it("lists tasks in sys.tasks and the cluster in sys.servers with Druid's columns", async () => {
        const tasks = await post("/druid/v2/sql", {
          query: `SELECT * FROM sys.tasks WHERE task_id = '${okId}'`,
          resultFormat: "object",
        });
        expect(tasks.status).toBe(200);
        const [task] = json(tasks) as Record<string, unknown>[];
        expect(Object.keys(task ?? {})).toEqual([
          "task_id",
          "group_id",
          "type",
          "datasource",
          "created_time",
          "queue_insertion_time",
          "status",
          "runner_status",
          "duration",
          "location",
          "host",
          "plaintext_port",
          "tls_port",
          "error_msg",
        ]);
        expect(task).toMatchObject({
          task_id: okId,
          group_id: okId,
          type: "index_parallel",
          datasource: dataSource,
          queue_insertion_time: "1970-01-01T00:00:00.000Z",
          status: "SUCCESS",
          runner_status: "NONE",
          location: expect.stringMatching(/^[^:]+:\d+$/),
          tls_port: -1,
          error_msg: null,
        });
        const servers = json(
          await post("/druid/v2/sql", { query: "SELECT * FROM sys.servers", resultFormat: "object" }),
        ) as Record<string, unknown>[];
        expect(Object.keys(servers[0] ?? {})).toEqual([
          "server",
          "host",
          "plaintext_port",
          "tls_port",
          "server_type",
          "tier",
          "curr_size",
          "max_size",
          "is_leader",
          "start_time",
        ]);
        expect(servers.find((x) => x.server_type === "historical")).toMatchObject({ tier: "_default_tier" });
        for (const type of ["coordinator", "overlord"])
          expect(servers.find((x) => x.server_type === type)).toMatchObject({ is_leader: 1 });
        expect(servers.find((x) => x.server_type === "broker")).toMatchObject({
          is_leader: null,
          tier: null,
        });
      });

      it("echoes the context's sqlQueryId in X-Druid-SQL-Query-Id, on errors too", async () => {
        const id = freshId("segops_conf_q");
        const ok = await request(`${target.url()}/druid/v2/sql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: "SELECT 1", context: { sqlQueryId: id } }),
        });
        await ok.body.text();
        expect([ok.statusCode, ok.headers["x-druid-sql-query-id"]]).toEqual([200, id]);
        const bad = await request(`${target.url()}/druid/v2/sql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            query: "SELECT x FROM segops_no_such_table",
            context: { sqlQueryId: `${id}_e` },
          }),
        });
        await bad.body.text();
        expect([bad.statusCode, bad.headers["x-druid-sql-query-id"]]).toEqual([400, `${id}_e`]);
      });

      it("takes a TIMESTAMP parameter as epoch milliseconds or plain text, read as wall-clock time; fractional text is a 500", async () => {
        const at = Date.UTC(2026, 5, 1);
        const utc = await post("/druid/v2/sql", {
          query: `SELECT ? AS "t"`,
          parameters: [{ type: "TIMESTAMP", value: at }],
        });
        expect(utc.status).toBe(200);
        expect(json(utc)).toEqual([{ t: "2026-06-01T00:00:00.000Z" }]);
        // The milliseconds name a wall-clock time in sqlTimeZone, not an instant.
        const la = await post("/druid/v2/sql", {
          query: `SELECT ? AS "t"`,
          parameters: [{ type: "TIMESTAMP", value: at }],
          context: { sqlTimeZone: "America/Los_Angeles" },
        });
        expect(json(la)).toEqual([{ t: "2026-06-01T00:00:00.000-07:00" }]);
        // Over a datasource's __time: milliseconds and `yyyy-MM-dd HH:mm:ss` text both select the day; text
        // with fractional seconds fails in the planner (Jetty's 500 page).
        const count = (from: unknown, to: unknown) =>
          post("/druid/v2/sql", {
            query: `SELECT COUNT(*) AS "n" FROM "${dataSource}" WHERE "__time" >= ? AND "__time" < ?`,
            parameters: [
              { type: "TIMESTAMP", value: from },
              { type: "TIMESTAMP", value: to },
            ],
          });
        const millis = await count(Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 2));
        expect(millis.status).toBe(200);
        expect(json(millis)).toEqual([{ n: rowsPerDay }]);
        expect(json(await count("2026-03-01 00:00:00", "2026-03-02 00:00:00"))).toEqual([{ n: rowsPerDay }]);
        const fraction = await count("2026-03-01 00:00:00.000", "2026-03-02 00:00:00.000");
        expect(fraction.status).toBe(500);
        expect(fraction.text).toContain("java.lang.ClassCastException");
      });

      it("renders, floors and reads times in sqlTimeZone", async () => {
        await loaded(dataSource, interval);
        const zone = { sqlTimeZone: "America/Los_Angeles" };
        const literal = await post("/druid/v2/sql", {
          query:
            "SELECT TIMESTAMP '2026-03-01 00:00:00' AS t, TIME_FLOOR(TIMESTAMP '2026-03-01 05:00:00', 'P1D') AS d, TIME_FORMAT(TIMESTAMP '2026-03-01 00:00:00', 'yyyy-MM-dd HH:mm') AS f",
          resultFormat: "array",
          context: zone,
        });
        expect(json(literal)).toEqual([
          ["2026-03-01T00:00:00.000-08:00", "2026-03-01T00:00:00.000-08:00", "2026-03-01 00:00"],
        ]);
        // The rows are at 00:00-04:00 UTC, which is the previous evening in Los Angeles.
        const days = await post("/druid/v2/sql", {
          query: `SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS c FROM "${dataSource}" GROUP BY 1 ORDER BY 1`,
          resultFormat: "array",
          context: zone,
        });
        expect(json(days)).toEqual([
          ["2026-02-28T00:00:00.000-08:00", rowsPerDay],
          ["2026-03-01T00:00:00.000-08:00", rowsPerDay],
        ]);
      });

      it("adds typesHeader and sqlTypesHeader rows, and refuses typesHeader without header", async () => {
        await loaded(dataSource, interval);
        const ex = await post("/druid/v2/sql", {
          query: `SELECT COUNT(*) AS c, MIN(__time) AS t, 'x' AS s FROM "${dataSource}"`,
          resultFormat: "array",
          header: true,
          typesHeader: true,
          sqlTypesHeader: true,
        });
        expect(json(ex)).toEqual([
          ["c", "t", "s"],
          ["LONG", "LONG", "STRING"],
          ["BIGINT", "TIMESTAMP", "CHAR"],
          [days.length * rowsPerDay, "2026-03-01T00:00:00.000Z", "x"],
        ]);
        const obj = await post("/druid/v2/sql", {
          query: "SELECT 1",
          header: true,
          typesHeader: true,
          sqlTypesHeader: true,
        });
        expect(json(obj)).toEqual([{ EXPR$0: { type: "LONG", sqlType: "INTEGER" } }, { EXPR$0: 1 }]);
        const refused = await post("/druid/v2/sql", { query: "SELECT 1", typesHeader: true });
        expect(refused.status).toBe(400);
        expect(json(refused)).toMatchObject({
          error: "Unknown exception",
          errorClass: "com.fasterxml.jackson.databind.exc.ValueInstantiationException",
        });
        expect((json(refused) as { errorMessage: string }).errorMessage).toContain(
          "Cannot include 'typesHeader' without 'header'",
        );
      });

      it("names a case mismatch with did-you-mean and refuses a trailing semicolon", async () => {
        const ex = await sql("SELECT COUNT(*) FROM sys.SEGMENTS");
        expect(ex.status).toBe(400);
        expect(json(ex)).toMatchObject({
          errorCode: "invalidInput",
          errorMessage:
            "Object 'SEGMENTS' not found within 'sys'; did you mean 'segments'? (line [1], column [22])",
          context: { sourceType: "sql", line: "1", column: "22", endLine: "1", endColumn: "33" },
        });
        const semi = await sql("SELECT 1;");
        expect(semi.status).toBe(400);
        expect((json(semi) as { errorMessage: string }).errorMessage).toMatch(
          /^Received an unexpected token \[;\] \(line \[1\], column \[9\]\)/,
        );
      });
    });

    // Load rules through the Coordinator API and what RunRules does with them.
    describe("load rules: the rules API, and RunRules dropping or not loading segments", () => {
      const DEFAULT_RULE = {
        tieredReplicants: { _default_tier: 2 },
        useDefaultTierForNull: true,
        type: "loadForever",
      };
      const may = [
        "2026-05-01T00:00:00.000Z/2026-05-02T00:00:00.000Z",
        "2026-05-02T00:00:00.000Z/2026-05-03T00:00:00.000Z",
      ];
      const mayRows = [...dayRows("2026-05-01", 3), ...dayRows("2026-05-02", 2)];
      let mayDir = "";
      beforeAll(() => {
        mayDir = writeInput(target.dataDir(), { "may.json": mayRows });
      });

      /** Sets rules, then ingests two days of May into `ds` and waits for SUCCESS (not for handoff). */
      async function ingestUnder(ds: string, rules: unknown[]): Promise<void> {
        const set = await setRules(ds, rules);
        expect([set.status, set.text]).toEqual([200, ""]);
        const id = await submitted(
          indexParallelSpec({
            id: freshId("segops_conf_rl"),
            dataSource: ds,
            baseDir: mayDir,
            intervals: ["2026-05-01/2026-05-03"],
          }),
        );
        expect((await finished(id)).statusCode).toBe("SUCCESS");
      }

      it("answers the default rules: _default loads forever on two replicas; a datasource has none of its own", async () => {
        const all = json(await get(`${CO}/rules`)) as Record<string, unknown>;
        expect(all._default).toEqual([DEFAULT_RULE]);
        const ds = freshId("segops_conf_rules");
        expect(json(await get(`${CO}/rules/${ds}`))).toEqual([]);
        expect(json(await get(`${CO}/rules/${ds}?full`))).toEqual([DEFAULT_RULE]);
      });

      it("sets a datasource's rules with 200 and no body, and returns them as Druid serializes them", async () => {
        const ds = freshId("segops_conf_rules");
        const set = await setRules(ds, [
          { type: "loadByPeriod", period: "p1m" },
          { type: "dropByInterval", interval: "2020-01-01/2021-01-01" },
          { type: "loadForever", tieredReplicants: { _default_tier: 1 } },
        ]);
        expect([set.status, set.text]).toEqual([200, ""]);
        const stored = [
          {
            period: "P1M",
            includeFuture: true,
            tieredReplicants: { _default_tier: 2 },
            useDefaultTierForNull: true,
            type: "loadByPeriod",
          },
          { interval: "2020-01-01T00:00:00.000Z/2021-01-01T00:00:00.000Z", type: "dropByInterval" },
          { tieredReplicants: { _default_tier: 1 }, useDefaultTierForNull: true, type: "loadForever" },
        ];
        expect(json(await get(`${CO}/rules/${ds}`))).toEqual(stored);
        expect(json(await get(`${CO}/rules/${ds}?full`))).toEqual([...stored, DEFAULT_RULE]);
        expect((json(await get(`${CO}/rules`)) as Record<string, unknown>)[ds]).toEqual(stored);
        const [entry] = json(await get(`${CO}/rules/${ds}/history?count=1`)) as Array<
          Record<string, unknown>
        >;
        expect(entry).toMatchObject({
          key: ds,
          type: "rules",
          auditInfo: { author: "segops-conformance", comment: "conformance case", identity: "allowAll" },
          payload: JSON.stringify(stored),
        });
      });

      it("refuses an unknown rule type and a negative replica count with Druid's 400 bodies", async () => {
        const ds = freshId("segops_conf_rules");
        const unknown = await setRules(ds, [{ type: "nope" }]);
        expect(unknown.status).toBe(400);
        expect((json(unknown) as { error: string }).error).toMatch(
          /^Please make sure to load all the necessary extensions and jars with type 'nope' on 'druid\/coordinator' service\. Could not resolve type id 'nope' as a subtype of `org\.apache\.druid\.server\.coordinator\.rules\.Rule`/,
        );
        const negative = await setRules(ds, [
          { type: "loadForever", tieredReplicants: { _default_tier: -1 } },
        ]);
        expect([negative.status, json(negative)]).toEqual([
          400,
          {
            error:
              "Cannot construct instance of `org.apache.druid.server.coordinator.rules.ForeverLoadRule`, problem: Invalid number of replicas for tier [_default_tier]. Value [-1] must be positive.",
          },
        ]);
        // Druid 38's partial load rules are unknown types on 33, and nothing is stored.
        const partial = await setRules(ds, [
          {
            type: "loadPartialForever",
            tieredReplicants: { _default_tier: 1 },
            matcher: { type: "exactProjection" },
          },
        ]);
        expect([partial.status, json(partial)]).toEqual([
          400,
          {
            error:
              "Please make sure to load all the necessary extensions and jars with type 'loadPartialForever' on 'druid/coordinator' service. Could not resolve type id 'loadPartialForever' as a subtype of `org.apache.druid.server.coordinator.rules.Rule` known type ids = [broadcastByInterval, broadcastByPeriod, broadcastForever, dropBeforeByPeriod, dropByInterval, dropByPeriod, dropForever, loadByInterval, loadByPeriod, loadForever]",
          },
        ]);
        expect(json(await get(`${CO}/rules/${ds}`))).toEqual([]);
      });

      it("marks the segments a dropByInterval covers unused: they are never served nor queried", async () => {
        const ds = freshId("segops_conf_drop");
        await ingestUnder(ds, [
          { type: "dropByInterval", interval: "2026-05-01/2026-05-02" },
          { type: "loadForever" },
        ]);
        const kept = await eventually(target, "the dropped day to go unused", async () => {
          const ids = json(
            await post(`${CO}/metadata/datasources/${ds}/segments`, ["2026-05-01/2026-05-03"]),
          ) as string[];
          return ids.length === 1 ? ids : undefined;
        });
        expect(kept[0]?.startsWith(`${ds}_${may[1]?.replace("/", "_")}`)).toBe(true);
        await eventually(target, "the kept day to be served", async () => {
          const ex = await get(`${CO}/datasources/${ds}/segments`);
          return ex.status === 200 && JSON.stringify(json(ex)) === JSON.stringify(kept) ? true : undefined;
        });
        expect(
          await sqlEventually(`SELECT segment_id FROM sys.segments WHERE datasource = '${ds}'`, [[kept[0]]]),
        ).toBeTruthy();
        expect(await sqlEventually(`SELECT COUNT(*) FROM "${ds}"`, [[2]])).toEqual([[2]]);
      });

      it("keeps segments whose rule names only an absent tier published but unavailable, with no SQL table", async () => {
        const ds = freshId("segops_conf_tier");
        await ingestUnder(ds, [{ type: "loadForever", tieredReplicants: { no_such_tier: 1 } }]);
        const q = `SELECT is_published, is_available, num_replicas, num_rows, replication_factor FROM sys.segments WHERE datasource = '${ds}'`;
        expect(
          await sqlEventually(q, [
            [1, 0, 0, 0, 1],
            [1, 0, 0, 0, 1],
          ]),
        ).toBeTruthy();
        const count = await sql(`SELECT COUNT(*) FROM "${ds}"`);
        expect(count.status).toBe(400);
        expect((json(count) as { errorMessage: string }).errorMessage).toMatch(
          new RegExp(`^Object '${ds}' not found`),
        );
        expect((await get(`${CO}/datasources/${ds}/segments`)).status).toBe(204);
        const status = `${CO}/datasources/${ds}/loadstatus?forceMetadataRefresh=true&interval=2026-05-01_2026-05-03`;
        expect(json(await get(status))).toEqual({ [ds]: 0 });
        expect(json(await get(`${status}&simple`))).toEqual({ [ds]: 2 });
        expect(json(await get(`${status}&full`))).toEqual({ no_such_tier: { [ds]: 2 } });
      });

      it("keeps zero-replica segments used but unloaded, with replication factor 0 (query from deep storage only)", async () => {
        const ds = freshId("segops_conf_zero");
        await ingestUnder(ds, [{ type: "loadForever", tieredReplicants: {} }]);
        const q = `SELECT is_published, is_available, replication_factor FROM sys.segments WHERE datasource = '${ds}'`;
        expect(
          await sqlEventually(q, [
            [1, 0, 0],
            [1, 0, 0],
          ]),
        ).toBeTruthy();
        expect((await get(`${CO}/datasources/${ds}/segments`)).status).toBe(204);
        const full = `${CO}/datasources/${ds}/loadstatus?forceMetadataRefresh=true&interval=2026-05-01_2026-05-03&full`;
        expect(json(await get(full))).toEqual({ _default_tier: { [ds]: 0 } });
      });
    });

    // MarkOvershadowedSegmentsAsUnused marks a segment unused only once what overshadows it is served. Druid
    // waits millisToWaitBeforeDeleting (15 min) after the Coordinator starts before it marks any:
    // the case turns that off through the dynamic config and puts it back afterwards.
    describe("overshadowed segments go unused only once the overshadowing ones are served", () => {
      const ds = freshId("segops_conf_mark");
      const day = "2026-06-01T00:00:00.000Z/2026-06-02T00:00:00.000Z";
      let previousWait: unknown;

      beforeAll(async () => {
        previousWait = (json(await get(`${CO}/config`)) as Record<string, unknown>)
          .millisToWaitBeforeDeleting;
        const ex = await post(`${CO}/config`, { millisToWaitBeforeDeleting: 0 });
        if (ex.status !== 200) throw new Error(`dynamic config: ${ex.status} ${ex.text}`);
      });
      afterAll(async () => {
        await post(`${CO}/config`, { millisToWaitBeforeDeleting: previousWait ?? 900000 });
      });

      it("keeps the old version used while the new one is not served, and marks it unused once it is", async () => {
        const used = async () =>
          (json(await post(`${CO}/metadata/datasources/${ds}/segments`, [day])) as string[]).sort();
        const v1Dir = writeInput(target.dataDir(), { "v1.json": dayRows("2026-06-01", 3) });
        await ingested(
          indexParallelSpec({
            id: freshId("segops_conf_m1"),
            dataSource: ds,
            baseDir: v1Dir,
            intervals: [day],
          }),
          ds,
          day,
        );
        const v1 = await used();
        expect(v1).toHaveLength(1);
        // No replica can be placed any more: v1 leaves the Historical, and v2 will never load.
        expect(
          (await setRules(ds, [{ type: "loadForever", tieredReplicants: { no_such_tier: 1 } }])).status,
        ).toBe(200);
        await eventually(target, "v1 to be unloaded", async () =>
          (await get(`${CO}/datasources/${ds}/segments`)).status === 204 ? true : undefined,
        );
        const v2Dir = writeInput(target.dataDir(), { "v2.json": dayRows("2026-06-01", 1, 10) });
        const v2Id = await submitted(
          indexParallelSpec({
            id: freshId("segops_conf_m2"),
            dataSource: ds,
            baseDir: v2Dir,
            intervals: [day],
          }),
        );
        expect((await finished(v2Id)).statusCode).toBe("SUCCESS");
        const both = await used();
        expect(both).toHaveLength(2);
        // Several Coordinator runs later v1 is still used: nothing that overshadows it is served.
        for (let i = 0; i < 30; i++) {
          expect(await used()).toEqual(both);
          await target.pause();
        }
        // Back to the default rule: v2 loads, and then v1 is marked unused.
        expect((await setRules(ds, [])).status).toBe(200);
        const after = await eventually(target, "v1 to go unused", async () => {
          const ids = await used();
          return ids.length === 1 ? ids : undefined;
        });
        expect(after).not.toEqual(v1);
        expect(await sqlEventually(`SELECT COUNT(*), SUM("added") FROM "${ds}"`, [[1, 10]])).toEqual([
          [1, 10],
        ]);
      });
    });
  });
}

type Obj = Record<string, unknown>;
const part = (o: unknown, key: string): Obj => (o as Obj)[key] as Obj;
const dataSchema = (s: Obj): Obj => part(part(s, "spec"), "dataSchema");
const granularity = (s: Obj): Obj => part(dataSchema(s), "granularitySpec");
const ioConfig = (s: Obj): Obj => part(part(s, "spec"), "ioConfig");
const tuning = (s: Obj): Obj => part(part(s, "spec"), "tuningConfig");
