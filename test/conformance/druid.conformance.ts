// What a Druid (or the segops emulator) answers on the REST paths segops depends on. Every expectation here was
// observed on a real Druid 33.0.0 (docs/real-druid.md, "Observed on Druid 33.0.0") and is cited against
// /work/shared/druid/api-contract.md. Opt-in: see test/conformance/vitest.config.ts for how to run it.
import { beforeAll, describe, expect, it } from "vitest";
import {
  call,
  conformanceBaseUrl,
  type Exchange,
  eventually,
  freshId,
  indexParallelSpec,
  json,
  writeInput,
} from "./support.js";

// Fail the whole file at load time when no target is given: a missing service must never look like a pass.
conformanceBaseUrl();

const OV = "/druid/indexer/v1";
const CO = "/druid/coordinator/v1";
const UNKNOWN_TASK = "segops_conformance_no_such_task";

const dataSource = freshId("segops_conf");
const okId = freshId("segops_conf_ok");
const badId = freshId("segops_conf_bad");
const days = ["2026-03-01", "2026-03-02"];
const rowsPerDay = 5;
const interval = "2026-03-01T00:00:00.000Z/2026-03-03T00:00:00.000Z";

let goodDir = "";
let okSubmit: Exchange;
let badSubmit: Exchange;

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

async function statusOf(id: string): Promise<TaskStatusPlus> {
  const ex = await call("GET", `${OV}/task/${id}/status`);
  expect(ex.status).toBe(200);
  return (json(ex) as { status: TaskStatusPlus }).status;
}

async function finished(id: string): Promise<TaskStatusPlus> {
  return eventually(`task ${id} to finish`, async () => {
    const s = await statusOf(id);
    return s.statusCode === "RUNNING" ? undefined : s;
  });
}

beforeAll(async () => {
  goodDir = writeInput(
    Object.fromEntries(
      days.map((d) => [
        `${d}.json`,
        Array.from({ length: rowsPerDay }, (_, i) => ({
          time: `${d}T0${i}:00:00Z`,
          page: `p${i}`,
          added: i + 1,
        })),
      ]),
    ),
  );
  const badDir = writeInput({
    "bad.json": [{ time: "2026-03-01T00:00:00Z", page: "a", added: 1 }, "not json"],
  });
  okSubmit = await call("POST", `${OV}/task`, indexParallelSpec({ id: okId, dataSource, baseDir: goodDir }));
  badSubmit = await call(
    "POST",
    `${OV}/task`,
    indexParallelSpec({ id: badId, dataSource, baseDir: badDir, maxParseExceptions: 0 }),
  );
  if (okSubmit.status === 200) await finished(okId);
  if (badSubmit.status === 200) await finished(badId);
});

describe("POST /task (api-contract §2.2)", () => {
  it("accepts a valid spec with 200 and echoes the submitted id", () => {
    expect(okSubmit.status).toBe(200);
    expect(json(okSubmit)).toEqual({ task: okId });
    expect(badSubmit.status).toBe(200);
  });

  it("answers a duplicate id after SUCCESS with a 400 entryAlreadyExists ErrorResponse", async () => {
    const ex = await call(
      "POST",
      `${OV}/task`,
      indexParallelSpec({ id: okId, dataSource, baseDir: goodDir }),
    );
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
    const ex = await call(
      "POST",
      `${OV}/task`,
      indexParallelSpec({ id: badId, dataSource, baseDir: goodDir }),
    );
    expect(ex.status).toBe(400);
    expect(json(ex)).toMatchObject({
      errorCode: "entryAlreadyExists",
      errorMessage: `Task[${badId}] already exists`,
    });
  });

  it("rejects a spec that fails constructor validation with 400 and a single 'Cannot construct instance' string", async () => {
    const spec = indexParallelSpec({
      id: freshId("segops_conf_inv"),
      dataSource,
      baseDir: goodDir,
      dropExisting: true,
    });
    const ex = await call("POST", `${OV}/task`, spec);
    expect(ex.status).toBe(400);
    expect(json(ex)).toEqual({
      error:
        "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexSupervisorTask`, " +
        "problem: GranularitySpec's intervals cannot be empty when using replace.",
    });
  });

  it("rejects a body that is not declared as JSON with 415", async () => {
    const spec = indexParallelSpec({ id: freshId("segops_conf_ct"), dataSource, baseDir: goodDir });
    const ex = await call("POST", `${OV}/task`, JSON.stringify(spec), "text/plain");
    expect(ex.status).toBe(415);
  });
});

describe("task status (api-contract §2.3)", () => {
  it.each([
    ["GET", `/task/${UNKNOWN_TASK}/status`],
    ["GET", `/task/${UNKNOWN_TASK}`],
    ["GET", `/task/${UNKNOWN_TASK}/reports`],
    ["POST", `/task/${UNKNOWN_TASK}/shutdown`],
  ] as const)("answers %s %s for an unknown id with a plain-text 404", async (method, path) => {
    const ex = await call(method, `${OV}${path}`);
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
  });
});

describe("POST /taskStatus (api-contract §2.4)", () => {
  it("rejects an empty id list with 400 and the text 'No Task IDs provided.'", async () => {
    const ex = await call("POST", `${OV}/taskStatus`, []);
    expect(ex.status).toBe(400);
    expect(ex.text).toBe("No Task IDs provided.");
  });

  it("returns known ids keyed by id and silently omits unknown ones", async () => {
    const ex = await call("POST", `${OV}/taskStatus`, [okId, UNKNOWN_TASK]);
    expect(ex.status).toBe(200);
    const body = json(ex) as Record<string, Record<string, unknown>>;
    expect(Object.keys(body)).toEqual([okId]);
    expect(body[okId]).toMatchObject({ id: okId, status: "SUCCESS", errorMsg: null });
    expect(Object.keys(body[okId] ?? {}).sort()).toEqual([
      "duration",
      "errorMsg",
      "id",
      "location",
      "status",
    ]);
  });
});

describe("GET /tasks (api-contract §2.5)", () => {
  it("rejects an unknown state with a plain-text 400 listing the valid ones", async () => {
    const ex = await call("GET", `${OV}/tasks?state=bogus`);
    expect(ex.status).toBe(400);
    expect(ex.text).toBe("Invalid task state[bogus]. Must be one of [pending, waiting, running, complete].");
  });

  it("lists complete tasks of a datasource with runnerStatusCode NONE", async () => {
    const ex = await call("GET", `${OV}/tasks?state=complete&datasource=${dataSource}`);
    expect(ex.status).toBe(200);
    const tasks = json(ex) as TaskStatusPlus[];
    expect(tasks.map((t) => t.id).sort()).toEqual([badId, okId].sort());
    for (const t of tasks) expect(t.runnerStatusCode).toBe("NONE");
  });
});

describe("GET /task/{id}/reports (api-contract §2.7)", () => {
  it("reports a sequential index_parallel run with determinePartitions and buildSegments row stats", async () => {
    const ex = await call("GET", `${OV}/task/${okId}/reports`);
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
      rowStats: { buildSegments: { processed: days.length * rowsPerDay, unparseable: 0, thrownAway: 0 } },
      segmentsPublished: days.length,
    });
    expect(report.taskContext?.type).toBe("taskContext");
  });
});

describe("POST /task/{id}/shutdown (api-contract §2.8)", () => {
  it("acknowledges shutdown of a completed task with 200 and leaves its status alone", async () => {
    const ex = await call("POST", `${OV}/task/${okId}/shutdown`);
    expect(ex.status).toBe(200);
    expect(json(ex)).toEqual({ task: okId });
    const s = await statusOf(okId);
    expect(s.statusCode).toBe("SUCCESS");
    expect(s.errorMsg).toBeNull();
  });
});

describe("leadership (api-contract §2.1)", () => {
  it.each([OV, CO])("answers %s/leader with the bare leader URL, not a JSON string", async (prefix) => {
    const ex = await call("GET", `${prefix}/leader`);
    expect(ex.status).toBe(200);
    expect(ex.text).toMatch(/^https?:\/\/[^"\s]+$/);
    expect(new URL(ex.text).port).not.toBe("");
  });

  it.each([OV, CO])("answers %s/isLeader on the leader with 200 {leader: true}", async (prefix) => {
    const ex = await call("GET", `${prefix}/isLeader`);
    expect(ex.status).toBe(200);
    expect(json(ex)).toEqual({ leader: true });
  });
});

describe("GET /workers (api-contract §2.9)", () => {
  it("lists each worker with its capacity, usage and running tasks", async () => {
    const ex = await call("GET", `${OV}/workers`);
    expect(ex.status).toBe(200);
    const workers = json(ex) as Array<Record<string, unknown>>;
    expect(workers.length).toBeGreaterThan(0);
    for (const w of workers) {
      expect(w.worker).toMatchObject({
        scheme: "http",
        host: expect.any(String),
        ip: expect.any(String),
        capacity: expect.any(Number),
        version: expect.any(String),
        category: expect.any(String),
      });
      expect(w).toMatchObject({
        currCapacityUsed: expect.any(Number),
        currParallelIndexCapacityUsed: expect.any(Number),
        availabilityGroups: expect.any(Array),
        runningTasks: expect.any(Array),
      });
    }
  });
});

describe("GET /datasources/{ds}/loadstatus (api-contract §3.3)", () => {
  it("refuses a request without forceMetadataRefresh with 400 and a plain message", async () => {
    const ex = await call("GET", `${CO}/datasources/${dataSource}/loadstatus`);
    expect(ex.status).toBe(400);
    expect(ex.text).toBe("Invalid request. forceMetadataRefresh must be specified");
  });

  it("reaches {ds: 100} once the ingested segments are loaded", async () => {
    const path = `${CO}/datasources/${dataSource}/loadstatus?forceMetadataRefresh=true&interval=${interval.replace("/", "_")}`;
    const loaded = await eventually("segments to load", async () => {
      const ex = await call("GET", path);
      if (ex.status !== 200) return undefined;
      const body = json(ex) as Record<string, number>;
      return body[dataSource] === 100 ? body : undefined;
    });
    expect(loaded).toEqual({ [dataSource]: 100 });
  });

  it("answers an unknown datasource with 204 and no body", async () => {
    const ex = await call(
      "GET",
      `${CO}/datasources/${freshId("segops_conf_none")}/loadstatus?forceMetadataRefresh=true`,
    );
    expect(ex.status).toBe(204);
    expect(ex.text).toBe("");
  });

  it("answers an interval without used segments with 200 and a plain message (not 204)", async () => {
    const ex = await call(
      "GET",
      `${CO}/datasources/${dataSource}/loadstatus?forceMetadataRefresh=true&interval=2000-01-01_2000-01-02`,
    );
    expect(ex.status).toBe(200);
    expect(ex.text).toBe("No used segment found for the given datasource and interval");
  });
});
