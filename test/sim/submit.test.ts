import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const SUBMIT = "/druid/indexer/v1/task";
const PT = "org.apache.druid.indexing.common.task.batch.parallel";

describe("POST /druid/indexer/v1/task (docs/druid-api.md §2.2)", () => {
  it("accepts a pinned id and answers 200 {task: id}", async () => {
    const s = await startTestSim();
    const res = await s.post(SUBMIT, parallelTask({ id: "segops_wiki_a1" }));
    expect(res.status).toBe(200);
    expect(res.contentType).toBe("application/json");
    expect(res.json).toEqual({ task: "segops_wiki_a1" });
  });

  it("generates <type>_<dataSource>_<8 random a-p>_<nowISO> when no id is given", async () => {
    const s = await startTestSim();
    const res = await s.post(SUBMIT, parallelTask());
    expect(res.json.task).toMatch(/^index_parallel_wiki_[a-p]{8}_2026-03-01T00:00:00\.000Z$/);
  });

  it("rejects a duplicate id with the entryAlreadyExists ErrorResponse, also after the task completed", async () => {
    const s = await startTestSim();
    const task = parallelTask({ id: "dup", context: { simDurationMs: 1000 } });
    await s.post(SUBMIT, task);
    const expected = {
      error: "druidException",
      errorCode: "entryAlreadyExists",
      persona: "USER",
      category: "INVALID_INPUT",
      errorMessage: "Task[dup] already exists",
      context: {},
    };
    const running = await s.post(SUBMIT, task);
    expect(running.status).toBe(400);
    expect(running.text).toBe(JSON.stringify(expected));
    await s.advance(5000);
    expect((await s.get("/druid/indexer/v1/task/dup/status")).json.status.statusCode).toBe("SUCCESS");
    const after = await s.post(SUBMIT, task);
    expect(after.status).toBe(400);
    expect(after.json).toEqual(expected);
  });

  it("rejects a duplicate of a FAILED task too", async () => {
    const s = await startTestSim();
    const task = parallelTask({ id: "dupf", context: { simDurationMs: 10, simFail: "boom" } });
    await s.post(SUBMIT, task);
    await s.advance(100);
    expect((await s.get("/druid/indexer/v1/task/dupf/status")).json.status.statusCode).toBe("FAILED");
    expect((await s.post(SUBMIT, task)).json.errorCode).toBe("entryAlreadyExists");
  });

  it.each([
    [26, { error: "Task[v] already exists!" }],
    [28, { error: "Task [v] already exists." }],
  ])("gives the Druid %i duplicate body (docs/druid-api.md §8)", async (druidVersion, body) => {
    const s = await startTestSim({ druidVersion });
    await s.post(SUBMIT, parallelTask({ id: "v" }));
    const res = await s.post(SUBMIT, parallelTask({ id: "v" }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual(body);
  });

  it.each([
    [".hidden", "Invalid value for field [Task ID]: Value [.hidden] cannot start with '.'."],
    ["a/b", "Invalid value for field [Task ID]: Value [a/b] cannot contain '/'."],
    [
      "a\tb",
      "Invalid value for field [Task ID]: Value [a\tb] contains illegal whitespace characters.  Only space is allowed.",
    ],
    [
      "a\u0001b",
      "Invalid value for field [Task ID]: Value [a\u0001b] contains illegal UTF8 character [#1] at position [1]",
    ],
    ["", "Invalid value for field [Task ID]: must not be null"],
  ])("rejects the task id %j with invalidInput (IdUtils.validateId)", async (id, message) => {
    const s = await startTestSim();
    const res = await s.post(SUBMIT, parallelTask({ id }));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: "druidException",
      errorCode: "invalidInput",
      persona: "USER",
      category: "INVALID_INPUT",
      errorMessage: message,
      context: {},
    });
  });

  const construct = (cls: string, msg: string) => ({
    error: `Cannot construct instance of \`${cls}\`, problem: ${msg}`,
  });

  it.each([
    [
      "appendToExisting with dropExisting",
      parallelTask({ ioConfig: { appendToExisting: true, dropExisting: true } }),
      construct(
        `${PT}.ParallelIndexSupervisorTask`,
        "Cannot simultaneously replace and append to existing segments. Either dropExisting or appendToExisting should be set to false",
      ),
    ],
    [
      "dropExisting without intervals",
      parallelTask({ intervals: null, ioConfig: { dropExisting: true } }),
      construct(
        `${PT}.ParallelIndexSupervisorTask`,
        "GranularitySpec's intervals cannot be empty when using replace.",
      ),
    ],
    [
      "forceGuaranteedRollup with appendToExisting",
      parallelTask({
        ioConfig: { appendToExisting: true },
        tuningConfig: { forceGuaranteedRollup: true, partitionsSpec: { type: "hashed", numShards: 2 } },
      }),
      construct(
        `${PT}.ParallelIndexSupervisorTask`,
        "Perfect rollup cannot be guaranteed when appending to existing dataSources",
      ),
    ],
    [
      "a hashed partitionsSpec without forceGuaranteedRollup",
      parallelTask({ tuningConfig: { partitionsSpec: { type: "hashed" } } }),
      construct(
        `${PT}.ParallelIndexTuningConfig`,
        "DynamicPartitionsSpec must be used for best-effort rollup",
      ),
    ],
    [
      "dynamic with forceGuaranteedRollup",
      parallelTask({ tuningConfig: { forceGuaranteedRollup: true, partitionsSpec: { type: "dynamic" } } }),
      construct(`${PT}.ParallelIndexTuningConfig`, "DynamicPartitionsSpec cannot be used for perfect rollup"),
    ],
    [
      "range without partitionDimensions",
      parallelTask({ tuningConfig: { forceGuaranteedRollup: true, partitionsSpec: { type: "range" } } }),
      construct(`${PT}.ParallelIndexTuningConfig`, "partitionDimensions must be specified"),
    ],
    [
      "maxNumSubTasks with maxNumConcurrentSubTasks",
      parallelTask({ tuningConfig: { maxNumSubTasks: 2, maxNumConcurrentSubTasks: 2 } }),
      construct(
        `${PT}.ParallelIndexTuningConfig`,
        "Can't use both maxNumSubTasks and maxNumConcurrentSubTasks. Use maxNumConcurrentSubTasks instead",
      ),
    ],
    [
      "maxNumConcurrentSubTasks of 0",
      parallelTask({ tuningConfig: { maxNumConcurrentSubTasks: 0 } }),
      construct(`${PT}.ParallelIndexTuningConfig`, "maxNumConcurrentSubTasks must be positive"),
    ],
    [
      "a missing timestampSpec",
      parallelTask({ dataSchema: { timestampSpec: undefined } }),
      construct("org.apache.druid.segment.indexing.DataSchema", "timestampSpec must not be null"),
    ],
    [
      "a missing inputSource",
      parallelTask({ ioConfig: { inputSource: undefined } }),
      construct(`${PT}.ParallelIndexIngestionSpec`, "inputSource must not be null"),
    ],
    [
      "a missing inputFormat",
      parallelTask({ inputFormat: null }),
      construct(`${PT}.ParallelIndexIngestionSpec`, "inputFormat must not be null"),
    ],
    [
      "a parser",
      parallelTask({ dataSchema: { parser: { type: "string" } } }),
      construct(
        "org.apache.druid.segment.indexing.DataSchema",
        "parser was removed in Druid 37, define the timestampSpec and dimensionsSpec on the schema directly instead of nested inside the parser definition",
      ),
    ],
    [
      "a column both dimension and metric",
      parallelTask({ dataSchema: { metricsSpec: [{ type: "count", name: "page" }] } }),
      construct(
        "org.apache.druid.segment.indexing.DataSchema",
        "Cannot specify a column more than once: [page] seen in dimensions list, metricsSpec list",
      ),
    ],
    [
      "an invalid dataSource",
      parallelTask({ dataSource: "a/b" }),
      construct(
        "org.apache.druid.segment.indexing.DataSchema",
        "Invalid value for field [dataSource]: Value [a/b] cannot contain '/'.",
      ),
    ],
    [
      "index (sequential) REPLACE without intervals",
      parallelTask({ type: "index", intervals: null, ioConfig: { dropExisting: true } }),
      construct(
        "org.apache.druid.indexing.common.task.IndexTask",
        "GranularitySpec's intervals cannot be empty for replace.",
      ),
    ],
  ])("rejects %s with Druid's Jackson 400 (docs/druid-api.md §5)", async (_name, task, body) => {
    const s = await startTestSim();
    const res = await s.post(SUBMIT, task);
    expect(res.status).toBe(400);
    expect(res.contentType).toBe("application/json");
    expect(res.json).toEqual(body);
    expect(s.sim.engine.tasks.size).toBe(0);
  });

  it("rejects an unknown task type with the load-all-extensions message", async () => {
    const s = await startTestSim();
    const res = await s.post(SUBMIT, { type: "index_hadoop", spec: {} });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(
      /^Please make sure to load all the necessary extensions and jars with type 'index_hadoop' on 'druid\/coordinator' service\. Could not resolve type id 'index_hadoop' as a subtype of `org\.apache\.druid\.indexing\.common\.task\.Task` known type ids = \[.*index_parallel.*\]$/,
    );
  });

  it("answers malformed JSON with 500 and a wrong content type with 415", async () => {
    const s = await startTestSim();
    const bad = await s.post(SUBMIT, "{not json");
    expect(bad.status).toBe(500);
    const wrong = await s.post(SUBMIT, JSON.stringify(parallelTask()), "text/plain");
    expect(wrong.status).toBe(415);
    expect(wrong.text).toBe("");
  });

  it("answers 429 with the queue-full ErrorResponse when maxQueueSize active tasks exist", async () => {
    const s = await startTestSim({ maxQueueSize: 1 });
    expect((await s.post(SUBMIT, parallelTask({ id: "q1" }))).status).toBe(200);
    const res = await s.post(SUBMIT, parallelTask({ id: "q2" }));
    expect(res.status).toBe(429);
    expect(res.json).toEqual({
      error: "druidException",
      errorCode: "general",
      persona: "ADMIN",
      category: "CAPACITY_EXCEEDED",
      errorMessage:
        "Task queue already contains [1] tasks. Retry later or increase 'druid.indexer.queue.maxSize'[1].",
      context: {},
    });
  });

  it("records every submission attempt, accepted or rejected with the reason", async () => {
    const s = await startTestSim();
    await s.post(SUBMIT, parallelTask({ id: "s1" }));
    await s.post(SUBMIT, parallelTask({ id: "s1" }));
    await s.post(SUBMIT, parallelTask({ id: "s2", tuningConfig: { maxNumConcurrentSubTasks: -1 } }));
    const stats = (await s.get("/__sim/stats")).json;
    expect(stats.submissions).toEqual([
      { id: "s1", at: "2026-03-01T00:00:00.000Z", accepted: true, status: 200 },
      {
        id: "s1",
        at: "2026-03-01T00:00:00.000Z",
        accepted: false,
        status: 400,
        reason: "Task[s1] already exists",
      },
      {
        id: "s2",
        at: "2026-03-01T00:00:00.000Z",
        accepted: false,
        status: 400,
        reason: `Cannot construct instance of \`${PT}.ParallelIndexTuningConfig\`, problem: maxNumConcurrentSubTasks must be positive`,
      },
    ]);
    expect(stats.requests["POST /druid/indexer/v1/task"]).toBe(3);
    expect(stats.requests["GET /__sim/stats"]).toBe(1);
  });
});
