import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DruidClient, type DruidClientOptions } from "../../src/druid/client.js";
import {
  DuplicateTaskError,
  NotFoundError,
  TransientError,
  UnexpectedResponseError,
} from "../../src/druid/errors.js";
import { commaList } from "../../src/druid/types.js";
import { RECORDED_BODIES } from "./fixtures/bodies.js";
import { FakeDruid, InstantClock } from "./helpers/fake-druid.js";

const O = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";
const ID = "index_parallel_wiki_2015-09-12_3f9a0c1b2d4e_a1";

let druid: FakeDruid;
let clock: InstantClock;
const clients: DruidClient[] = [];

function client(options: Partial<DruidClientOptions> = {}): DruidClient {
  const c = new DruidClient({
    url: druid.url,
    clock,
    retry: { maxAttempts: 3 },
    random: () => 0,
    ...options,
  });
  clients.push(c);
  return c;
}

beforeEach(async () => {
  druid = new FakeDruid();
  clock = new InstantClock();
  await druid.start();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await druid.close();
});

const statusPlus = (id: string, statusCode: "RUNNING" | "SUCCESS" | "FAILED", runner = "RUNNING") => ({
  id,
  groupId: id,
  type: "index_parallel",
  createdTime: "2026-01-01T00:00:00.000Z",
  queueInsertionTime: "1970-01-01T00:00:00.000Z",
  statusCode,
  status: statusCode,
  runnerStatusCode: runner,
  duration: statusCode === "RUNNING" ? -1 : 1000,
  location: { host: null, port: -1, tlsPort: -1 },
  dataSource: "wiki",
  errorMsg: statusCode === "FAILED" ? "boom" : null,
});

describe("submitTask", () => {
  it("posts the spec as JSON and reports acceptance", async () => {
    druid.on("POST", `${O}/task`, { status: 200, body: { task: ID } });
    const spec = { type: "index_parallel", id: ID, spec: { ioConfig: { type: "index_parallel" } } };
    await expect(client().submitTask(spec)).resolves.toEqual({ outcome: "accepted", taskId: ID });
    const req = druid.requests[0];
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(req?.body ?? "")).toEqual(spec);
  });

  const duplicates = RECORDED_BODIES.filter(
    (r) => r.expect.code === "DuplicateTask" && r.expect.taskId === ID,
  );

  it.each(duplicates.map((r) => [r.name, r] as const))(
    "a duplicate-id 400 naming our pinned id reattaches instead of failing (%s)",
    async (_name, recorded) => {
      druid.on("POST", `${O}/task`, { status: recorded.status, body: recorded.body });
      await expect(client().submitTask({ type: "index_parallel", id: ID })).resolves.toEqual({
        outcome: "duplicate",
        taskId: ID,
      });
      expect(druid.count()).toBe(1);
    },
  );

  it("covers all four historic duplicate bodies", () => {
    expect(duplicates).toHaveLength(4);
  });

  it("a duplicate naming another id is an error, not a reattach", async () => {
    druid.on("POST", `${O}/task`, { status: 400, body: { error: "Task[someone_else] already exists!" } });
    const error = await client()
      .submitTask({ type: "index_parallel", id: ID })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateTaskError);
    expect((error as DuplicateTaskError).taskId).toBe("someone_else");
  });

  it("refuses an answer that names a different task id than the pinned one", async () => {
    druid.on("POST", `${O}/task`, { status: 200, body: { task: "other" } });
    await expect(client().submitTask({ type: "index_parallel", id: ID })).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });

  it("submits MSQ SQL and accepts a 202", async () => {
    druid.on("POST", "/druid/v2/sql/task", { status: 202, body: { taskId: "query-abc", state: "RUNNING" } });
    const result = await client().submitSqlTask("REPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY", {
      context: { maxNumTasks: 2 },
    });
    expect(result).toEqual({ taskId: "query-abc", state: "RUNNING" });
    expect(JSON.parse(druid.requests[0]?.body ?? "")).toEqual({
      query: "REPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY",
      context: { maxNumTasks: 2 },
    });
  });
});

describe("task status", () => {
  it("reads a single status and encodes the id in the path", async () => {
    const id = "query-223549f8:odd id";
    druid.on("GET", `${O}/task/${encodeURIComponent(id)}/status`, {
      status: 200,
      body: { task: id, status: statusPlus(id, "RUNNING", "PENDING") },
    });
    const response = await client().taskStatus(id);
    expect(response.status?.runnerStatusCode).toBe("PENDING");
    expect(druid.requests[0]?.path).toBe(`${O}/task/query-223549f8%3Aodd%20id/status`);
  });

  it("batches ids 500 per request and reports omitted ids as unknown, not failed", async () => {
    const ids = Array.from({ length: 1203 }, (_, i) => `task_${i}`);
    druid.handle("POST", `${O}/taskStatus`, (req) => {
      const asked = JSON.parse(req.body) as string[];
      // Druid silently omits unknown ids (§2.4); here every third id is unknown.
      const known = asked.filter((id) => Number(id.slice(5)) % 3 !== 0);
      return {
        status: 200,
        body: Object.fromEntries(
          known.map((id) => [id, { id, status: "SUCCESS", duration: 5, errorMsg: null }]),
        ),
      };
    });
    const result = await client().bulkTaskStatus([...ids, "task_1", "task_2"]);
    expect(druid.count("POST", `${O}/taskStatus`)).toBe(3);
    expect(druid.requests.map((r) => (JSON.parse(r.body) as string[]).length)).toEqual([500, 500, 203]);
    expect(result.size).toBe(1203);
    expect(result.get("task_3")).toEqual({ id: "task_3", found: false });
    expect(result.get("task_4")).toMatchObject({ id: "task_4", found: true, status: { status: "SUCCESS" } });
    expect([...result.values()].filter((e) => !e.found)).toHaveLength(401);
  });

  it.each([404, 405])(
    "falls back to per-task GETs when the bulk endpoint answers %i, and remembers it",
    async (code) => {
      druid.on("POST", `${O}/taskStatus`, { status: code, body: "" });
      druid.on("GET", `${O}/task/a/status`, {
        status: 200,
        body: { task: "a", status: statusPlus("a", "FAILED", "NONE") },
      });
      druid.on("GET", `${O}/task/b/status`, { status: 404, body: "Cannot find any task with id: [b]" });
      druid.on("GET", `${O}/task/c/status`, { status: 404, body: { task: "c", status: null } });
      const c = client();
      const first = await c.bulkTaskStatus(["a", "b", "c"]);
      expect(first.get("a")).toEqual({
        id: "a",
        found: true,
        runnerStatusCode: "NONE",
        status: {
          id: "a",
          status: "FAILED",
          duration: 1000,
          errorMsg: "boom",
          location: { host: null, port: -1, tlsPort: -1 },
        },
      });
      expect(first.get("b")).toEqual({ id: "b", found: false });
      expect(first.get("c")).toEqual({ id: "c", found: false });
      expect(c.bulkStatusSupported).toBe(false);
      await c.bulkTaskStatus(["a"]);
      expect(druid.count("POST", `${O}/taskStatus`)).toBe(1);
      expect(druid.count("GET", `${O}/task/a/status`)).toBe(2);
    },
  );

  it("bulkTaskStates sends the same chunks and keeps only state, duration and error of the ids Druid knows", async () => {
    const ids = Array.from({ length: 1203 }, (_, i) => `task_${i}`);
    druid.handle("POST", `${O}/taskStatus`, (req) => {
      const asked = JSON.parse(req.body) as string[];
      const known = asked.filter((id) => Number(id.slice(5)) % 3 !== 0);
      return {
        status: 200,
        body: {
          ...Object.fromEntries(
            known.map((id) => [
              id,
              {
                id,
                status: id === "task_4" ? "FAILED" : "RUNNING",
                duration: id === "task_4" ? 12 : -1,
                errorMsg: id === "task_4" ? "boom" : null,
                location: { host: "mm1", port: 8100, tlsPort: -1 },
              },
            ]),
          ),
          // Not a status: unknown, as bulkTaskStatus reads it.
          ...(asked.includes("task_5") ? { task_5: { id: "task_5", status: "WAITING" } } : {}),
        },
      };
    });
    const c = client();
    const states = await c.bulkTaskStates(ids);
    const full = await c.bulkTaskStatus(ids);
    expect(druid.requests.map((r) => (JSON.parse(r.body) as string[]).length)).toEqual([
      500, 500, 203, 500, 500, 203,
    ]);
    expect(druid.requests.slice(0, 3).map((r) => r.body)).toEqual(druid.requests.slice(3).map((r) => r.body));
    expect(states.get("task_4")).toEqual({ id: "task_4", state: "FAILED", duration: 12, errorMsg: "boom" });
    expect(states.get("task_1")).toEqual({ id: "task_1", state: "RUNNING", duration: -1, errorMsg: null });
    expect(states.has("task_3")).toBe(false);
    expect(states.has("task_5")).toBe(false);
    // Exactly the ids bulkTaskStatus finds, with the same state, duration and error.
    const found = [...full.values()].filter((e) => e.found);
    expect([...states.keys()].sort()).toEqual(found.map((e) => e.id).sort());
    for (const e of found) {
      expect(states.get(e.id)).toEqual({
        id: e.id,
        state: e.status.status,
        duration: e.status.duration,
        errorMsg: e.status.errorMsg,
      });
    }
  });

  it("bulkTaskStates falls back to per-task GETs like bulkTaskStatus", async () => {
    druid.on("POST", `${O}/taskStatus`, { status: 404, body: "" });
    druid.on("GET", `${O}/task/a/status`, {
      status: 200,
      body: { task: "a", status: statusPlus("a", "FAILED", "NONE") },
    });
    druid.on("GET", `${O}/task/b/status`, { status: 404, body: "Cannot find any task with id: [b]" });
    const states = await client().bulkTaskStates(["a", "b"]);
    expect([...states.entries()]).toEqual([
      ["a", { id: "a", state: "FAILED", duration: 1000, errorMsg: "boom" }],
    ]);
  });

  it("does not read a misrouted 404 during fallback as 'unknown task'", async () => {
    druid.on("POST", `${O}/taskStatus`, { status: 404, body: "" });
    druid.on("GET", `${O}/task/a/status`, {
      status: 404,
      body: "<html><title>Error 404 Not Found</title></html>",
    });
    await expect(client().bulkTaskStatus(["a"])).rejects.toBeInstanceOf(NotFoundError);
  });

  it("lists tasks with filters, turning the interval's slash into Druid's underscore", async () => {
    druid.on("GET", `${O}/tasks`, { status: 200, body: [statusPlus("x", "SUCCESS", "NONE")] });
    const tasks = await client().tasks({
      state: "complete",
      datasource: "wiki",
      max: 10,
      type: "index_parallel",
      createdTimeInterval: "2026-01-01/2026-01-02",
    });
    expect(tasks[0]?.statusCode).toBe("SUCCESS");
    expect(druid.requests[0]?.query).toBe(
      "state=complete&datasource=wiki&max=10&type=index_parallel&createdTimeInterval=2026-01-01_2026-01-02",
    );
  });
});

describe("reports, payload, shutdown, workers, leadership", () => {
  it("returns reports, null while none exist yet, and NotFound for an unknown task", async () => {
    const report = {
      ingestionStatsAndErrors: {
        type: "ingestionStatsAndErrors",
        taskId: "a",
        payload: { ingestionState: "COMPLETED", unparseableEvents: {}, rowStats: {}, errorMsg: null },
      },
    };
    druid.on("GET", `${O}/task/a/reports`, { status: 200, body: report });
    druid.on("GET", `${O}/task/b/reports`, {
      status: 404,
      body: "No task reports were found for this task. The task may not exist, or it may not have completed yet.",
    });
    druid.on("GET", `${O}/task/c/reports`, { status: 404, body: "Cannot find any task with id: [c]" });
    const c = client();
    expect((await c.taskReports("a"))?.ingestionStatsAndErrors?.payload.ingestionState).toBe("COMPLETED");
    expect(await c.taskReports("b")).toBeNull();
    const error = await c.taskReports("c").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).taskId).toBe("c");
    expect(druid.count()).toBe(3);
  });

  it("reads payload, shuts down, lists workers and capacity", async () => {
    druid.on("GET", `${O}/task/a`, { status: 200, body: { task: "a", payload: { type: "index_parallel" } } });
    druid.on("POST", `${O}/task/a/shutdown`, { status: 200, body: { task: "a" } });
    druid.on("GET", `${O}/workers`, {
      status: 200,
      body: [
        {
          worker: { scheme: "http", host: "mm:8091", ip: "10.0.0.1", capacity: 4, version: "0" },
          currCapacityUsed: 1,
          availabilityGroups: [],
          runningTasks: ["a"],
          lastCompletedTaskTime: "2026-01-01T00:00:00.000Z",
        },
      ],
    });
    druid.on("GET", `${O}/totalWorkerCapacity`, {
      status: 200,
      body: { currentClusterCapacity: 4, maximumCapacityWithAutoScale: -1, usedClusterCapacity: 1 },
    });
    const c = client();
    expect((await c.taskPayload("a")).payload).toEqual({ type: "index_parallel" });
    expect(await c.shutdownTask("a")).toEqual({ task: "a" });
    expect((await c.workers())[0]?.worker.capacity).toBe(4);
    expect((await c.totalWorkerCapacity()).maximumCapacityWithAutoScale).toBe(-1);
  });

  it("reads the leader as raw text and isLeader from 200 or 404", async () => {
    druid.on("GET", `${O}/leader`, {
      status: 200,
      headers: { "content-type": "text/plain" },
      body: "http://overlord-2:8090",
    });
    druid.on(
      "GET",
      `${O}/isLeader`,
      { status: 200, body: { leader: true } },
      { status: 404, body: { leader: false } },
    );
    const c = client();
    expect(await c.leader()).toBe("http://overlord-2:8090");
    expect(await c.isLeader()).toBe(true);
    expect(await c.isLeader()).toBe(false);
  });

  it("rejects a 2xx answer that is not JSON", async () => {
    druid.on("GET", `${O}/workers`, { status: 200, body: "<html>console</html>" });
    const error = await client()
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(druid.count()).toBe(1);
  });
});

describe("coordinator", () => {
  it("asks for each loadstatus form", async () => {
    druid.handle("GET", `${C}/loadstatus`, (req) => ({
      status: 200,
      body:
        req.query === "full"
          ? { _default_tier: { wiki: 0 } }
          : req.query === "simple"
            ? { wiki: 0 }
            : { wiki: 100 },
    }));
    const c = client();
    expect(await c.loadStatus()).toEqual({ wiki: 100 });
    expect(await c.loadStatus("simple")).toEqual({ wiki: 0 });
    expect(await c.loadStatus("full")).toEqual({ _default_tier: { wiki: 0 } });
    expect(druid.requests.map((r) => r.query)).toEqual(["", "simple", "full"]);
  });

  it("passes forceMetadataRefresh and the interval, and maps 204 to null", async () => {
    druid.on("GET", `${C}/datasources/wiki/loadstatus`, { status: 200, body: { wiki: 50 } }, { status: 204 });
    const c = client();
    expect(
      await c.datasourceLoadStatus("wiki", { forceMetadataRefresh: true, interval: "2015-09-12/2015-09-13" }),
    ).toEqual({ wiki: 50 });
    expect(await c.datasourceLoadStatus("wiki", { forceMetadataRefresh: false, form: "full" })).toBeNull();
    expect(druid.requests.map((r) => r.query)).toEqual([
      "forceMetadataRefresh=true&interval=2015-09-12%2F2015-09-13",
      "forceMetadataRefresh=false&full",
    ]);
  });

  it("lists served segments and intervals, [] when served nowhere (204)", async () => {
    const segment = {
      dataSource: "wiki",
      interval: "2015-09-12T00:00:00.000Z/2015-09-13T00:00:00.000Z",
      version: "v1",
      loadSpec: { type: "local", path: "/x/index.zip" },
      dimensions: "channel,page,user",
      metrics: "count,added",
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      binaryVersion: 9,
      size: 10,
      identifier: "wiki_2015-09-12T00:00:00.000Z_2015-09-13T00:00:00.000Z_v1",
    };
    druid.on("GET", `${C}/datasources/wiki/segments`, { status: 200, body: [segment] });
    druid.on("GET", `${C}/datasources/none/segments`, { status: 204 });
    druid.on("GET", `${C}/datasources/wiki/intervals`, { status: 200, body: [segment.interval] });
    druid.on("GET", `${C}/datasources/none/intervals`, { status: 204 });
    const c = client();
    const served = await c.servedSegments("wiki", { full: true });
    expect(commaList(served[0]?.dimensions)).toEqual(["channel", "page", "user"]);
    expect(druid.requests[0]?.query).toBe("full");
    expect(await c.servedSegments("none")).toEqual([]);
    expect(await c.datasourceIntervals("wiki")).toEqual([segment.interval]);
    expect(await c.datasourceIntervals("none")).toEqual([]);
  });

  it("reads the served view of one interval with '_' in the path, and refuses a body of another shape", async () => {
    const segment = {
      dataSource: "wiki",
      interval: "2015-09-12T00:00:00.000Z/2015-09-13T00:00:00.000Z",
      version: "v1",
      loadSpec: { type: "local", path: "/x/index.zip" },
      dimensions: "page",
      metrics: "",
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      binaryVersion: 9,
      size: 10,
      identifier: "wiki_2015-09-12T00:00:00.000Z_2015-09-13T00:00:00.000Z_v1",
    };
    const path = (ds: string) =>
      `${C}/datasources/${ds}/intervals/2015-09-12T00:00:00.000Z_2015-09-13T00:00:00.000Z/serverview`;
    const info = { segment, servers: [{ name: "h:8083", host: "h:8083", type: "historical", tier: "t" }] };
    druid.on("GET", path("wiki"), { status: 200, body: [info] });
    druid.on("GET", path("none"), { status: 200, body: [] });
    druid.on("GET", path("odd"), { status: 200, body: { segments: [] } });
    const c = client();
    expect(await c.servedInInterval("wiki", segment.interval)).toEqual([info]);
    expect(druid.requests[0]?.path).toBe(path("wiki"));
    expect(await c.servedInInterval("none", segment.interval)).toEqual([]);
    await expect(c.servedInInterval("odd", segment.interval)).rejects.toBeInstanceOf(UnexpectedResponseError);
  });

  it("posts intervals to the metadata endpoint to include overshadowed segments", async () => {
    druid.on("POST", `${C}/metadata/datasources/wiki/segments`, { status: 200, body: [] });
    await client().metadataSegments("wiki", ["2015-09-12/2015-09-13", "2015-09-14/2015-09-15"]);
    const req = druid.requests[0];
    expect(req?.query).toBe("full");
    expect(JSON.parse(req?.body ?? "")).toEqual(["2015-09-12/2015-09-13", "2015-09-14/2015-09-15"]);
  });

  it("splits comma lists and passes arrays through", () => {
    expect(commaList("a,b")).toEqual(["a", "b"]);
    expect(commaList(["a", "b"])).toEqual(["a", "b"]);
    expect(commaList("")).toEqual([]);
    expect(commaList(undefined)).toEqual([]);
  });
});

describe("broker SQL", () => {
  it("sends parameters and returns rows with the query id", async () => {
    druid.on("POST", "/druid/v2/sql", {
      status: 200,
      headers: { "x-druid-sql-query-id": "q-1" },
      body: [{ n: 1 }],
    });
    const result = await client().sql("SELECT COUNT(*) AS n FROM t WHERE x = ?", {
      parameters: [{ type: "VARCHAR", value: "y" }],
    });
    expect(result).toEqual({ rows: [{ n: 1 }], queryId: "q-1" });
    expect(JSON.parse(druid.requests[0]?.body ?? "")).toMatchObject({
      resultFormat: "object",
      parameters: [{ type: "VARCHAR", value: "y" }],
    });
  });

  it("retries a lines result cut off mid-stream (no trailing newline)", async () => {
    druid.on(
      "POST",
      "/druid/v2/sql",
      { status: 200, body: '{"a":1}\n{"a":' },
      { status: 200, body: '{"a":1}\n{"a":2}\n\n' },
    );
    const result = await client().sql("SELECT a FROM t", { resultFormat: "objectLines" });
    expect(result.rows).toEqual([{ a: 1 }, { a: 2 }]);
    expect(druid.count()).toBe(2);
  });

  it("gives up on a result that stays truncated", async () => {
    druid.on("POST", "/druid/v2/sql", { status: 200, body: "a,b\n1," });
    const error = await client()
      .sql("SELECT a, b FROM t", { resultFormat: "csv" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(druid.count()).toBe(3);
  });

  it("runs the §3.6 handoff query with the datasource and versions as parameters", async () => {
    druid.on("POST", "/druid/v2/sql", {
      status: 200,
      body: [
        {
          usedSegments: 4,
          precachedSegments: 4,
          onDemandSegments: 0,
          pendingSegments: 1,
          unknownSegments: 0,
        },
      ],
    });
    const counts = await client().segmentLoadCounts("wiki'; DROP", ["v1", "v2"]);
    expect(counts).toEqual({
      usedSegments: 4,
      precachedSegments: 4,
      onDemandSegments: 0,
      pendingSegments: 1,
      unknownSegments: 0,
    });
    const body = JSON.parse(druid.requests[0]?.body ?? "") as { query: string; parameters: unknown[] };
    expect(body.query).not.toContain("wiki'");
    expect(body.query).toContain("FROM sys.segments");
    expect(body.parameters).toEqual([
      { type: "VARCHAR", value: "wiki'; DROP" },
      { type: "VARCHAR", value: "v1" },
      { type: "VARCHAR", value: "v2" },
    ]);
  });
});

describe("configuration", () => {
  it("names the missing URL when a service has none, without sending or retrying", async () => {
    const c = new DruidClient({ overlordUrl: druid.url, clock });
    clients.push(c);
    await expect(c.sql("SELECT 1")).rejects.toThrow("No Broker URL configured");
    expect(clock.sleeps).toEqual([]);
    expect(druid.count()).toBe(0);
  });

  it("requires at least one URL and validates options eagerly", () => {
    expect(() => new DruidClient({})).toThrow("Expected `url`");
    expect(() => new DruidClient({ url: "ftp://x" })).toThrow("got protocol ftp:");
    expect(() => new DruidClient({ url: "http://x", connections: 0 })).toThrow("`connections`");
    expect(() => new DruidClient({ url: "http://x", retry: { maxAttempts: 0 } })).toThrow("`maxAttempts`");
  });

  it("sends nothing for an empty id list", async () => {
    const result = await client().bulkTaskStatus([]);
    expect(result.size).toBe(0);
    expect(druid.count()).toBe(0);
  });

  it("keeps a base URL's path prefix", async () => {
    druid.on("GET", "/proxy/druid/indexer/v1/workers", { status: 200, body: [] });
    await expect(client({ url: `${druid.url}/proxy/` }).workers()).resolves.toEqual([]);
    expect(druid.count("GET", "/proxy/druid/indexer/v1/workers")).toBe(1);
  });
});
