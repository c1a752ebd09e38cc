import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

describe("fault injection", () => {
  it("answers 503 with an empty body, like a leader whose queue is not ready (docs/druid-api.md §2.1)", async () => {
    const s = await startTestSim({
      faults: [{ kind: "status", status: 503, path: `${V1}/task`, method: "POST", count: 1 }],
    });
    const first = await s.post(`${V1}/task`, parallelTask({ id: "a" }));
    expect([first.status, first.text]).toEqual([503, ""]);
    expect(s.sim.engine.tasks.has("a")).toBe(false);
    expect((await s.post(`${V1}/task`, parallelTask({ id: "a" }))).status).toBe(200);
    expect(s.sim.stats().faultsInjected).toBe(1);
  });

  it("answers 429 with Druid's queue-full ErrorResponse", async () => {
    const s = await startTestSim({ faults: [{ kind: "status", status: 429 }] });
    const res = await s.post(`${V1}/task`, parallelTask());
    expect(res.status).toBe(429);
    expect(res.json).toEqual({
      error: "druidException",
      errorCode: "general",
      persona: "ADMIN",
      category: "CAPACITY_EXCEEDED",
      errorMessage:
        "Task queue already contains [0] tasks. Retry later or increase 'druid.indexer.queue.maxSize'[2147483647].",
      context: {},
    });
  });

  it("answers 500 with an ErrorResponse and 502 with a proxy error page", async () => {
    const s = await startTestSim({
      faults: [
        { kind: "status", status: 500, path: `${V1}/tasks` },
        { kind: "status", status: 502, path: `${V1}/workers` },
      ],
    });
    const e500 = await s.get(`${V1}/tasks`);
    expect(e500.status).toBe(500);
    expect(e500.json).toMatchObject({ error: "druidException", category: "UNCATEGORIZED" });
    const e502 = await s.get(`${V1}/workers`);
    expect(e502.status).toBe(502);
    expect(e502.contentType).toContain("text/html");
  });

  it("redirects with 307 to the same server on failover, keeping path and query, with an empty body", async () => {
    const s = await startTestSim({ faults: [{ kind: "failover", count: 1 }] });
    const res = await s.get(`${V1}/tasks?state=running`);
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe(`${s.url}${V1}/tasks?state=running`);
    expect(res.text).toBe("");
    expect((await s.get(`${V1}/tasks?state=running`)).status).toBe(200);
  });

  it("answers 503 empty for noLeader and resets the socket for reset", async () => {
    const s = await startTestSim({
      faults: [
        { kind: "noLeader", path: "/druid/coordinator" },
        { kind: "reset", path: `${V1}/taskStatus` },
      ],
    });
    const res = await s.get("/druid/coordinator/v1/loadstatus");
    expect([res.status, res.text]).toEqual([503, ""]);
    await expect(s.post(`${V1}/taskStatus`, ["x"])).rejects.toThrow();
    expect(s.sim.stats().faultsInjected).toBe(2);
  });

  it("delays then serves normally for latency faults", async () => {
    const s = await startTestSim({ faults: [{ kind: "latency", latencyMs: 1 }] });
    const res = await s.get(`${V1}/isLeader`);
    expect([res.status, res.json]).toEqual([200, { leader: true }]);
    expect(s.sim.stats().faultsInjected).toBe(1);
  });

  it("never faults /status/health or /__sim/*", async () => {
    const s = await startTestSim({ faults: [{ kind: "status", status: 500 }] });
    expect((await s.get("/status/health")).status).toBe(200);
    expect((await s.get("/__sim/stats")).status).toBe(200);
    expect((await s.get(`${V1}/isLeader`)).status).toBe(500);
  });

  it("draws rates from the seeded RNG: same seed, same faulted requests", async () => {
    const pattern = async (seed: number) => {
      const s = await startTestSim({ seed, faults: [{ kind: "status", status: 503, rate: 0.5 }] });
      const out: number[] = [];
      for (let i = 0; i < 40; i++) out.push((await s.get(`${V1}/isLeader`)).status);
      return out;
    };
    const a = await pattern(11);
    expect(await pattern(11)).toEqual(a);
    const faulted = a.filter((x) => x === 503).length;
    expect(faulted).toBeGreaterThan(5);
    expect(faulted).toBeLessThan(35);
  });

  it("replaces rules with setFaults or POST /__sim/faults, and rejects invalid rules precisely", async () => {
    const s = await startTestSim();
    s.sim.setFaults([{ kind: "status", status: 503, method: "GET" }]);
    expect((await s.get(`${V1}/isLeader`)).status).toBe(503);
    expect((await s.post(`${V1}/taskStatus`, ["x"])).status).toBe(200);
    expect((await s.post("/__sim/faults", [])).status).toBe(200);
    expect((await s.get(`${V1}/isLeader`)).status).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: deliberately invalid input
    expect(() => s.sim.setFaults([{ kind: "status", status: 404 } as any])).toThrow(
      'Expected fault `status` to be 500, 502, 503 or 429 for kind "status", got {"kind":"status","status":404}',
    );
    const bad = await s.post("/__sim/faults", [{ kind: "explode" }]);
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("Expected fault `kind`");
  });
});
