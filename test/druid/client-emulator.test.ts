/**
 * The client against the Druid emulator with faults on: calls succeed within the retry budget under
 * 5xx / resets / 307 failover / 503 no-leader / 429, 4xx are not retried, and the requests made are
 * counted from the emulator's own accounting (`stats().requests`, keyed by route pattern).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { CapacityError, NotFoundError, SpecRejectedError, TransientError } from "../../src/druid/errors.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { InstantClock } from "./helpers/fake-druid.js";

const SUBMIT = "POST /druid/indexer/v1/task";
const BULK = "POST /druid/indexer/v1/taskStatus";
const WORKERS = "GET /druid/indexer/v1/workers";

function spec(id: string, extra: { appendToExisting?: boolean; dropExisting?: boolean } = {}) {
  return {
    type: "index_parallel",
    id,
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page"] },
        metricsSpec: [],
        granularitySpec: {
          type: "uniform",
          segmentGranularity: "day",
          queryGranularity: "none",
          rollup: false,
          intervals: ["2015-09-12/2015-09-13"],
        },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "inline", data: '{"time":"2015-09-12T01:00:00Z","page":"a"}\n' },
        inputFormat: { type: "json" },
        appendToExisting: extra.appendToExisting ?? false,
        dropExisting: extra.dropExisting ?? false,
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
  };
}

let sim: SimHandle;
let simClock: ManualClock;
let clock: InstantClock;
let druid: DruidClient;
const retry = { baseMs: 100, capMs: 5000, maxAttempts: 5, maxTotalWaitMs: 60_000 };

function requests(key: string): number {
  return sim.stats().requests[key] ?? 0;
}

beforeEach(async () => {
  simClock = new ManualClock(Date.UTC(2026, 0, 1));
  sim = await startSim({ clock: simClock, seed: 7 });
  clock = new InstantClock();
  druid = new DruidClient({ url: sim.url, clock, retry, random: () => 0.5 });
});

afterEach(async () => {
  await druid.close();
  await sim.close();
});

describe("client against the emulator with faults", () => {
  it("submits through two 500s within the budget: three requests, one task", async () => {
    sim.setFaults([
      { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 500, count: 2 },
    ]);
    await expect(druid.submitTask(spec("t_500"))).resolves.toEqual({ outcome: "accepted", taskId: "t_500" });
    expect(requests(SUBMIT)).toBe(3);
    expect(clock.sleeps).toHaveLength(2);
    expect(sim.stats().submissions.filter((s) => s.accepted)).toHaveLength(1);
  });

  it("survives a connection reset on submit and a 502 from a proxy", async () => {
    sim.setFaults([
      { path: "/druid/indexer/v1/task", method: "POST", kind: "reset", count: 1 },
      { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 502, count: 1 },
    ]);
    const result = await druid.submitTask(spec("t_reset"));
    expect(result.taskId).toBe("t_reset");
    expect(requests(SUBMIT)).toBe(3);
    expect(sim.stats().faultsInjected).toBe(2);
  });

  it("follows 307 failover redirects without spending retries", async () => {
    sim.setFaults([{ path: "/druid/indexer/v1/task", kind: "failover", count: 3 }]);
    await expect(druid.submitTask(spec("t_307"))).resolves.toMatchObject({ outcome: "accepted" });
    expect(requests(SUBMIT)).toBe(4);
    expect(clock.sleeps).toEqual([]);
  });

  it("waits out a leaderless 503 and a full queue (429), even for a submit without a pinned id", async () => {
    sim.setFaults([
      { path: "/druid/indexer/v1/task", method: "POST", kind: "noLeader", count: 2 },
      { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 429, count: 1 },
    ]);
    const { id: _drop, ...unpinned } = spec("unused");
    const result = await druid.submitTask(unpinned);
    expect(result.outcome).toBe("accepted");
    expect(requests(SUBMIT)).toBe(4);
    expect(clock.sleeps).toHaveLength(3);
  });

  it("reattaches when the same pinned id is submitted again (duplicate, one request)", async () => {
    await druid.submitTask(spec("t_dup"));
    sim.resetStats();
    await expect(druid.submitTask(spec("t_dup"))).resolves.toEqual({ outcome: "duplicate", taskId: "t_dup" });
    expect(requests(SUBMIT)).toBe(1);
  });

  it("does not retry an invalid spec", async () => {
    const error = await druid
      .submitTask(spec("t_bad", { appendToExisting: true, dropExisting: true }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpecRejectedError);
    expect((error as SpecRejectedError).druidMessage).toContain("Cannot simultaneously replace and append");
    expect(requests(SUBMIT)).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("does not retry an unknown task's 404", async () => {
    const error = await druid.taskStatus("nope").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).taskId).toBe("nope");
    expect(requests("GET /druid/indexer/v1/task/:taskId/status")).toBe(1);
  });

  it("gives up after maxAttempts when every attempt fails", async () => {
    sim.setFaults([{ path: "/druid/indexer/v1/workers", kind: "status", status: 500 }]);
    const error = await druid.workers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(requests(WORKERS)).toBe(5);
  });

  it("reports a capacity error that outlasts the budget as Capacity", async () => {
    sim.setFaults([{ path: "/druid/indexer/v1/task", kind: "status", status: 429 }]);
    const error = await druid.submitTask(spec("t_429")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CapacityError);
    expect(requests(SUBMIT)).toBe(5);
    expect(sim.stats().submissions.filter((s) => s.accepted)).toHaveLength(0);
  });

  it("polls many tasks in bulk through random faults, each request accounted for", async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `t_bulk_${i}`);
    for (const id of ids) await druid.submitTask(spec(id));
    sim.resetStats();
    sim.setFaults([
      { path: "/druid/indexer/v1/taskStatus", kind: "status", status: 503, rate: 0.5, count: 3 },
    ]);
    const polls = 4;
    for (let i = 0; i < polls; i++) {
      const statuses = await druid.bulkTaskStatus([...ids, "never_submitted"]);
      expect(statuses.get("never_submitted")).toEqual({ id: "never_submitted", found: false });
      for (const id of ids) expect(statuses.get(id)?.found).toBe(true);
    }
    const { faultsInjected } = sim.stats();
    expect(requests(BULK)).toBe(polls + faultsInjected);
    expect(druid.bulkStatusSupported).toBe(true);
  });

  it("follows a task to SUCCESS and sees its segments served", async () => {
    await druid.submitTask(spec("t_e2e"));
    await simClock.advance(10 * 60_000);
    const status = (await druid.bulkTaskStatus(["t_e2e"])).get("t_e2e");
    expect(status).toMatchObject({ found: true, status: { status: "SUCCESS" } });
    const load = await druid.datasourceLoadStatus("wiki", {
      forceMetadataRefresh: true,
      interval: "2015-09-12/2015-09-13",
    });
    expect(load).toEqual({ wiki: 100 });
    const served = await druid.servedSegments("wiki", { full: true });
    expect(served.length).toBeGreaterThan(0);
    expect(served.every((s) => s.interval.startsWith("2015-09-12"))).toBe(true);
  });
});
