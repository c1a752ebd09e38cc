import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { checkMultiActor } from "./multi-actor-check.js";

/**
 * The multi-actor checker sees what it is there to see: given a ledger and a Druid with a second open job
 * over the same inputs, partitions never run, a day whose rows differ from the source, a partition with
 * two successful Druid tasks and a racing request answered 500, it names each one.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
let store: Store | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = client = store = undefined;
});

const DS = "checked";

describe("the multi-actor checker", () => {
  it("names a second open job over the same inputs, lost partitions, wrong rows, a doubled partition and a 500", async () => {
    sim = await startSim({ timeScale: 1000, handoffDelayMs: 100, seed: 3 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 4 });
    const input = {
      kind: "backfill" as const,
      template: { kind: "task" as const, value: dailyTemplate({ datasource: DS }) },
      templateName: "daily.json",
      range: parseInterval("2026-01-01/2026-01-03"),
      vars: { dataDir },
    };
    const plain = planIngestJob(input);
    // A `new` job over the same inputs created while the plain one is unfinished, and never run.
    const again = planIngestJob({ ...input, nonce: "again" });
    await store.createJob(plain.job, plain.tasks);
    await store.createJob(again.job, again.tasks);
    const run = await runJob({ store, client, clock: systemClock, jobId: plain.job.id, tickMs: 20 });
    expect(run.job.state).toBe("done");
    // Two attempts of one partition, both successful.
    for (const id of ["segops_checked_twice_a1", "segops_checked_twice_a2"]) {
      const res = await fetch(`${sim.url}/druid/indexer/v1/task`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "noop", id }),
      });
      expect(res.status).toBe(200);
    }
    const engine = sim.engine;
    await until("both attempts succeeded", () => {
      engine.sync();
      return ["_a1", "_a2"].every((a) => engine.tasks.get(`segops_checked_twice${a}`)?.phase === "success");
    });

    const violations: string[] = [];
    const figures = await checkMultiActor({
      sim,
      store,
      datasource: DS,
      source: new Map([
        ["2026-01-01", 4],
        ["2026-01-02", 5],
      ]),
      answers: [{ burst: "test", isNew: true, status: 500, text: "boom" }],
      ops: [],
      hostOwners: new Set(),
      violations,
    });
    expect(figures).toMatchObject({ rowMismatches: 1, lost: 2, openTwice: 1, doubled: 1, unservedDone: 0 });
    expect(violations).toEqual(
      expect.arrayContaining([
        "2026-01-02: Druid serves 4 rows, the source has 5",
        expect.stringMatching(/^partition segops_checked_twice has 2 successful tasks/),
        expect.stringMatching(/^jobs .* over the same inputs were open at once/),
        expect.stringMatching(/ingest partition .* is still new/),
        "a racing request (test, new) was answered 500: boom",
      ]),
    );
    expect(violations).toHaveLength(6);
    const twice = violations.find((v) => v.includes("open at once")) ?? "";
    expect([plain.job.id, again.job.id].every((id) => twice.includes(id))).toBe(true);
  });
});
