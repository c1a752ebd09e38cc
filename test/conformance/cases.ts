// The conformance cases: what a Druid answers on the REST paths segops depends on. Every expectation was
// observed on a real Druid 33.0.0 (docs/real-druid.md, "Observed on Druid 33.0.0" and "Conformance cases") and
// is cited against /work/shared/druid/api-contract.md. The same cases run against a real Druid
// (druid.conformance.ts, opt-in) and against the emulator with druidVersion 33 (test/sim/conformance.test.ts,
// default suite); where the two differ, the emulator is what gets fixed.
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  type Exchange,
  eventually,
  freshId,
  indexParallelSpec,
  json,
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

    describe("POST /task (api-contract §2.2)", () => {
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

    describe("task status (api-contract §2.3)", () => {
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

    describe("POST /taskStatus (api-contract §2.4)", () => {
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

    describe("GET /tasks (api-contract §2.5)", () => {
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
    });

    describe("GET /task/{id}/reports (api-contract §2.7)", () => {
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
        // Druid 33 has no thrownAwayByReason (added later, api-contract §2.7).
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

    describe("POST /task/{id}/shutdown of a completed task (api-contract §2.8)", () => {
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

    describe("leadership (api-contract §2.1)", () => {
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

    describe("workers and capacity (api-contract §2.9)", () => {
      it("lists each worker with its capacity, usage and running tasks", async () => {
        const ex = await get(`${OV}/workers`);
        expect(ex.status).toBe(200);
        const workers = json(ex) as Array<Record<string, unknown>>;
        expect(workers.length).toBeGreaterThan(0);
        for (const w of workers) {
          // Druid 33 has no `worker.disabled` (api-contract §2.9 lists it for current Druid).
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

    describe("loadstatus (api-contract §3.1, §3.3)", () => {
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

    describe("datasources and segments (api-contract §3.2, §3.4, §3.5)", () => {
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
          // Druid 33's DataSegment has neither (api-contract §3.5 lists them for newer releases).
          expect(s).not.toHaveProperty("totalRows");
          expect(s).not.toHaveProperty("projections");
        }
      });

      it("answers an interval without segments with an empty list", async () => {
        const ex = await post(`${CO}/metadata/datasources/${dataSource}/segments`, ["2000-01-01/2000-01-02"]);
        expect(ex.status).toBe(200);
        expect(json(ex)).toEqual([]);
      });
    });

    describe("Broker SQL (api-contract §3.6)", () => {
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

    // APPEND, REPLACE and tombstones on one datasource, step by step (api-contract §4.1–§4.3). Steps run in
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
        // Druid 33 writes the tombstone's core partition count as 0 (api-contract §3.5 says 1).
        expect(byDay["2026-02-02"]?.shardSpec).toEqual({ type: "tombstone", partitionNum: 0, partitions: 0 });
        const old = seen.v1[0]?.version ?? "";
        for (const s of seen.replace) expect(s.version > old).toBe(true);
        expect(seen.afterReplace).toEqual(expectedDays(replaceRows));
      });

      it("keeps overshadowed segments used: the metadata POST by interval still returns them", async () => {
        const ids = (await metadata()).map((s) => s.identifier).sort();
        expect(ids).toEqual([...seen.v1, ...seen.append, ...seen.replace].map((s) => s.identifier).sort());
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
        const expected = [...seen.v1, ...seen.append, ...seen.replace]
          .sort((a, b) => (a.identifier < b.identifier ? -1 : 1))
          .map((s) => [
            s.identifier,
            seen.replace.includes(s) ? 0 : 1,
            1,
            s.shardSpec.type === "tombstone" ? "[]" : '["page","added"]',
            JSON.stringify(s.shardSpec),
          ]);
        const got = (await sqlEventually(query, expected)) as unknown[][];
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
    // sub-task is a task of its own, about a second each), locks and shutdown (api-contract §2.3, §2.8, §4.4).
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
  });
}

type Obj = Record<string, unknown>;
const part = (o: unknown, key: string): Obj => (o as Obj)[key] as Obj;
const dataSchema = (s: Obj): Obj => part(part(s, "spec"), "dataSchema");
const granularity = (s: Obj): Obj => part(dataSchema(s), "granularitySpec");
const ioConfig = (s: Obj): Obj => part(part(s, "spec"), "ioConfig");
const tuning = (s: Obj): Obj => part(part(s, "spec"), "tuningConfig");
