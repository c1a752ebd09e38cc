import { describe, expect, it } from "vitest";
import type { HostOutage } from "../../src/druid/outage.js";
import { druidReachability } from "../../src/serve/readiness.js";

/**
 * Druid's reachability as `/readyz`, `/metrics` and the dashboard's banner show it: one function of the
 * outage monitor and the worker, so the three never disagree.
 */

const at = Date.UTC(2026, 0, 1, 12, 3);
const host: HostOutage = {
  host: "http://druid:8888",
  since: at,
  lastError: "GET /druid/indexer/v1/workers: Druid request failed: the connection was refused",
  nextProbeAt: at + 90_000,
  probes: 7,
  refused: 1234,
};
const monitor = (outage: HostOutage | null, since: number | null = outage?.since ?? null) => ({
  hostOutage: () => outage,
  since,
  lastError: outage?.lastError ?? null,
});

describe("druidReachability", () => {
  it("reachable while every host answers and the worker runs", () => {
    expect(druidReachability(monitor(null), { state: "running", inFlight: 3 }, at)).toEqual({
      reachable: true,
      workerPaused: false,
    });
    expect(druidReachability(undefined, null, at)).toEqual({ reachable: true, workerPaused: false });
    // One endpoint failing while the host answers is that call's business, not "Druid unreachable".
    expect(druidReachability(monitor(null, at), { state: "running", inFlight: 0 }, at).reachable).toBe(true);
  });

  it("unreachable while a host's calls are refused: since when, why, the next probe, what was refused", () => {
    expect(druidReachability(monitor(host), { state: "running", inFlight: 3 }, at + 60_000)).toEqual({
      reachable: false,
      since: "2026-01-01T12:03:00.000Z",
      lastError: host.lastError,
      nextProbeAt: "2026-01-01T12:04:30.000Z",
      refused: 1234,
      workerPaused: false,
    });
  });

  it("unreachable while the worker has handed its work back for Druid, even before the monitor's next probe says more", () => {
    const paused = { state: "paused", pausedFor: "druid", inFlight: 0 };
    expect(druidReachability(monitor(null, at), paused, at + 700_000)).toEqual({
      reachable: false,
      since: "2026-01-01T12:03:00.000Z",
      workerPaused: true,
    });
    // Paused for the ledger is not Druid's doing.
    const ledger = { state: "paused", pausedFor: "ledger", inFlight: 0 };
    expect(druidReachability(monitor(null), ledger, at).reachable).toBe(true);
  });
});
