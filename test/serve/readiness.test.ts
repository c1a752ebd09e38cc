import { describe, expect, it } from "vitest";
import { workerReadiness } from "../../src/serve/readiness.js";

/** The worker's part of `/readyz`: which states keep a host ready, and what the answer says of a stall. */

const at = Date.UTC(2026, 0, 1, 12);
const moving = { stalled: false, since: null, reason: null, lastProgressAt: at };

describe("workerReadiness", () => {
  it("a running or paused worker that moves is ready; a stopped one is not", () => {
    for (const state of ["running", "paused"])
      expect(workerReadiness({ state, inFlight: 2, progress: moving })).toEqual({
        ok: true,
        view: { state, inFlight: 2, stalled: false, lastProgressAt: "2026-01-01T12:00:00.000Z" },
      });
    for (const state of ["stopping", "stopped", "created"])
      expect(workerReadiness({ state, inFlight: 0, progress: moving }).ok).toBe(false);
  });

  it("a stalled worker is not ready, and says since when and why", () => {
    const progress = {
      stalled: true,
      since: at + 60_000,
      reason: "partitions of its jobs are due, it holds none",
      lastProgressAt: at,
    };
    expect(workerReadiness({ state: "running", inFlight: 0, progress })).toEqual({
      ok: false,
      view: {
        state: "running",
        inFlight: 0,
        stalled: true,
        lastProgressAt: "2026-01-01T12:00:00.000Z",
        stalledSince: "2026-01-01T12:01:00.000Z",
        reason: "partitions of its jobs are due, it holds none",
      },
    });
  });

  it("no worker (the API alone), or one that does not watch its progress: ready, never stalled", () => {
    expect(workerReadiness(null)).toEqual({
      ok: true,
      view: { state: "none", inFlight: 0, stalled: false, lastProgressAt: null },
    });
    expect(workerReadiness({ state: "running", inFlight: 1 })).toEqual({
      ok: true,
      view: { state: "running", inFlight: 1, stalled: false, lastProgressAt: null },
    });
  });
});
