import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { BudgetedTasks } from "../../src/ops/druid-task.js";
import type { CachedBudget } from "../../src/ops/slots.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";
import type { StatusBatcher } from "../../src/work/status-batcher.js";

/**
 * A segment operation's Druid task with this host's real admission: a partition that leaves the host
 * (put back to wait after an error, when any host may claim it next) leaves nothing counted here, so
 * another host ending its task does not leave this one taking the task, gone from `/workers`, for one
 * still pending — which refused every admission on the host for good.
 */
describe("a budgeted Druid task and admission", () => {
  it("a partition put back to wait, ended by another host, leaves this host admitting", async () => {
    const clock = new ManualClock(0);
    const running = new Set<string>();
    const client = {
      workers: async () => [
        {
          worker: { scheme: "http", host: "mm", ip: "127.0.0.1", capacity: 8, version: "0", category: "c" },
          currCapacityUsed: running.size,
          availabilityGroups: [],
          runningTasks: [...running],
          lastCompletedTaskTime: "2026-01-01T00:00:00.000Z",
        },
      ],
      tasks: async () => [],
      totalWorkerCapacity: async () => ({ currentClusterCapacity: 8, maximumCapacityWithAutoScale: -1 }),
    };
    const admission = new AdmissionTracker({
      client: client as never,
      clock,
      maxConcurrency: 4,
      tickMs: 1000,
    });
    const budget = Object.assign(async () => null, { peek: () => null }) as unknown as CachedBudget;
    const statuses = new Map<string, "RUNNING" | "SUCCESS">();
    const batcher = {
      get: async (id: string) => ({ id, state: statuses.get(id) ?? "UNKNOWN", duration: -1, errorMsg: null }),
    } as unknown as StatusBatcher;
    const tasks = new BudgetedTasks({
      budget,
      batcher,
      admission,
      tickMs: 1000,
      budgetName: "b",
      taskType: "kill",
    });
    const signal = new AbortController().signal;
    await admission.refresh();
    await tasks.submit("kill-a", "druid-kill-a", signal, async () => {
      running.add("druid-kill-a");
      statuses.set("druid-kill-a", "RUNNING");
    });
    expect(admission.inFlight).toBe(1);

    tasks.hooks("submit", "plan").abandon?.("kill-a", "waiting");
    // Another host claims it and its kill task ends at Druid.
    running.delete("druid-kill-a");
    statuses.set("druid-kill-a", "SUCCESS");
    await clock.advance(1000);
    await admission.refresh();
    expect(admission.inFlight).toBe(0);
    expect(admission.admit("ingest-1", 1)).toBe(true);

    // Had it come back here while its task still ran, it would count again.
    running.add("druid-kill-b");
    statuses.set("druid-kill-b", "RUNNING");
    await tasks.submit("kill-b", "druid-kill-b", signal, async () => {});
    tasks.hooks("submit", "plan").abandon?.("kill-b", "waiting");
    expect(admission.inFlight).toBe(1); // ingest-1's reservation
    await tasks.ended("kill-b", "druid-kill-b", signal).catch(() => undefined);
    expect([admission.inFlight, tasks.holds("kill-b")]).toEqual([2, true]);
  });
});
