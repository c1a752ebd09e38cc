import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver } from "../../src/driver/driver.js";
import { AWAITING_DRUID, decide } from "../../src/driver/outcome.js";
import type { Runner } from "../../src/driver/runner.js";
import { DruidUnreachableError } from "../../src/druid/host-backoff.js";
import { openStore } from "../../src/ledger/open.js";
import type { TaskRow } from "../../src/ledger/types.js";

/**
 * What the work does with a call refused because Druid does not answer: it is no failure of the
 * partition. The partition keeps its lease, comes back when the next probe may have found Druid, and
 * counts no retry (however long the outage, nothing is dead-lettered or failed for it); its first wait is
 * one event, the rest are quiet; a runner's upkeep that meets it logs nothing (the monitor has said so).
 */

const NOW = Date.UTC(2026, 0, 1, 12, 3);
const refused = (retryAt = NOW + 8000) =>
  new DruidUnreachableError({
    endpoint: "GET /druid/indexer/v1/tasks",
    host: "http://druid:8888",
    since: NOW - 60_000,
    retryAt,
  });

const row: TaskRow = {
  id: "t",
  jobId: "j",
  kind: "k",
  exclusionKey: null,
  payload: {},
  state: "running",
  attempt: 1,
  retry: 2,
  maxRetry: null,
  progress: {},
  leaseOwner: "me",
  leaseExpiresAt: NOW + 1,
  runAt: NOW,
  canceled: false,
  reason: "polling",
  lastError: null,
  version: 3,
  createdAt: 0,
  updatedAt: 0,
};
const runner: Runner = {
  kind: "k",
  concurrency: 1,
  maxRetry: 5,
  progressDelayMs: 1000,
  isPoison: () => true, // would dead-letter any failure: this one must never get there
  handler: async () => undefined,
};
const ctx = { task: row, runner, now: NOW, leaseMs: 30_000, stopping: false, random: () => 0.5 };

describe("a call refused while Druid does not answer", () => {
  it("keeps the partition (its lease, its retries) and brings it back at the next probe", () => {
    expect(decide({ ok: false, error: refused() }, ctx)).toEqual({
      to: "progress",
      reason: AWAITING_DRUID,
      runAt: NOW + 8000,
      leaseExpiresAt: NOW + 30_000,
      quiet: false,
    });
    // Again and again: quiet (no event, no log line), however long it lasts.
    expect(
      decide({ ok: false, error: refused() }, { ...ctx, task: { ...row, reason: AWAITING_DRUID } }),
    ).toMatchObject({ to: "progress", quiet: true });
    // Never sooner than the runner's own polling delay.
    expect(decide({ ok: false, error: refused(NOW) }, ctx)).toMatchObject({ runAt: NOW + 1000 });
  });

  it("while the driver stops, hands the partition back like any unfinished work", () => {
    expect(decide({ ok: false, error: refused() }, { ...ctx, stopping: true })).toEqual({
      to: "suspended",
      runAt: NOW,
      reason: "handed back: driver shutting down",
    });
  });

  it("through a driver: a hundred refusals cost no retry and one event, then the partition finishes", async () => {
    const clock = new ManualClock(NOW);
    const store = await openStore("sqlite::memory:", { clock });
    await store.createJob({ id: "j", kind: "test" }, [{ id: "a", kind: "k", maxRetry: 1 }]);
    let runs = 0;
    let cycles = 0;
    const warnings: string[] = [];
    const driver = new Driver({
      store,
      clock,
      pollMs: 10,
      log: { warn: (_d, m) => warnings.push(m) },
      runners: [
        {
          ...runner,
          onCycle: async () => {
            cycles++;
            if (runs < 100) throw refused(clock.now() + 1000);
          },
          handler: async () => {
            runs++;
            if (runs <= 100) throw refused(clock.now() + 1000);
          },
        },
      ],
    });
    driver.start();
    for (let i = 0; i < 5000 && (await store.getTask("a"))?.state !== "done"; i++) await clock.advance(500);
    await driver.stop();
    const task = await store.getTask("a");
    const events = await store.listEvents({ jobId: "j", limit: 1000 });
    await store.close();
    expect(task).toMatchObject({ state: "done", retry: 0, attempt: 1 });
    expect(runs).toBe(101);
    expect(cycles).toBeGreaterThan(100);
    expect(events.filter((e) => e.reason === AWAITING_DRUID)).toHaveLength(1);
    expect(warnings).toEqual([]);
  });
});
