import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { LOST_WORKER_MESSAGE, startSim } from "../../src/sim/index.js";
import { parallelTask, startTestSim, T0 } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

async function post(url: string, path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("persistence (dataDir)", () => {
  it("keeps tasks, segments and versions across a restart; running tasks fail as lost, queued ones run again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-sim-state-"));
    const clock = new ManualClock(T0);
    const first = await startSim({ clock, dataDir: dir, capacity: 1, handoffDelayMs: 0 });
    await post(first.url, `${V1}/task`, parallelTask({ id: "done", context: { simDurationMs: 10 } }));
    await clock.advance(10);
    await post(
      first.url,
      `${V1}/task`,
      parallelTask({ id: "running", intervals: ["2026-01-02/2026-01-03"], context: { simDurationMs: 1000 } }),
    );
    await post(
      first.url,
      `${V1}/task`,
      parallelTask({ id: "queued", intervals: ["2026-01-03/2026-01-04"], context: { simDurationMs: 10 } }),
    );
    await first.close();
    expect(readdirSync(dir)).toEqual(["sim-state.json"]);

    // A restarted emulator whose clock reads earlier than before still moves forward from the saved time.
    const clock2 = new ManualClock(T0 - 3_600_000);
    const second = await startSim({ clock: clock2, dataDir: dir, capacity: 1, handoffDelayMs: 0 });
    try {
      const statuses = (await post(second.url, `${V1}/taskStatus`, ["done", "running", "queued"]))
        .json as Record<string, { status: string; errorMsg: string | null }>;
      expect(statuses.done?.status).toBe("SUCCESS");
      expect(statuses.running).toMatchObject({ status: "FAILED", errorMsg: LOST_WORKER_MESSAGE });
      expect(statuses.queued?.status).toBe("RUNNING");
      await clock2.advance(10);
      const again = (await post(second.url, `${V1}/taskStatus`, ["queued"])).json as Record<
        string,
        { status: string }
      >;
      expect(again.queued?.status).toBe("SUCCESS");
      const dup = await post(second.url, `${V1}/task`, parallelTask({ id: "done" }));
      expect([dup.status, dup.json.errorCode]).toEqual([400, "entryAlreadyExists"]);
      const segs = (await (
        await fetch(`${second.url}/druid/coordinator/v1/metadata/datasources/wiki/segments?full`)
      ).json()) as Array<{ version: string }>;
      const versions = segs.map((x) => x.version);
      expect(versions[0]).toBe("2026-03-01T00:00:00.000Z");
      expect(versions.at(-1)! > versions[0]!).toBe(true);
      expect(new Set(versions).size).toBe(versions.length);
    } finally {
      await second.close();
    }
  });
});

describe("sim time", () => {
  it("runs timeScale sim milliseconds per base-clock millisecond", async () => {
    const s = await startTestSim({ timeScale: 1000 });
    await s.post(`${V1}/task`, parallelTask({ id: "fast", context: { simDurationMs: 10_000 } }));
    await s.advance(9);
    expect((await s.get(`${V1}/task/fast/status`)).json.status.statusCode).toBe("RUNNING");
    await s.advance(1);
    expect((await s.get(`${V1}/task/fast/status`)).json.status).toMatchObject({
      statusCode: "SUCCESS",
      duration: 10_000,
    });
  });

  it("rejects invalid options with precise messages", async () => {
    await expect(startSim({ capacity: 0 })).rejects.toThrow(
      "Expected `capacity` to be a whole number from 1 and up, got 0",
    );
    await expect(startSim({ timeScale: -1 })).rejects.toThrow(
      "Expected `timeScale` to be a number above 0, got -1",
    );
  });
});
