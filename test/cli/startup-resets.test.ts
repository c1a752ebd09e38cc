import { mkdtempSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDruid } from "../../src/cli/context.js";
import type { DruidAttempt } from "../../src/druid/http.js";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { ingestArgs, runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Connection resets at start-up (a Router restarting as the scheduler's morning burst begins) share the
 * start-up check's wait budget with 503s, instead of ending the run after the client's five attempts; a
 * refusal after a reset is the same restart's down time. A Druid that never answers still exits 4.
 * The run's one backoff per host (the outage gate, which refuses a host's calls after three unanswered
 * attempts) starts after this check, so the check's attempts still count past the client's five here
 * (test/cli/outage-gate.test.ts has the gate).
 */

const PROBE = "/druid/indexer/v1/totalWorkerCapacity";
let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-startup-resets-"));
const dataDir = writeDailyDataset({ from: "2026-03-01", days: 3, rowsPerDay: 4, dir: join(work, "data") });
const template = join(work, "t.json");
writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "resets" })));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000, seed: 5 });
});
afterAll(async () => {
  await sim.close();
});

const probes = () => sim.stats().requests[`GET ${PROBE}`] ?? 0;

describe("start-up resets", () => {
  it("five resets, then a healthy Druid: the backfill proceeds and exits 0", async () => {
    const ledger = join(work, "five.db");
    const before = probes();
    sim.setFaults([{ path: PROBE, kind: "reset", count: 5 }]);
    try {
      const r = await runCli([
        ...ingestArgs({
          template,
          dataDir,
          druid: sim.url,
          ledgerPath: ledger,
          range: { from: "2026-03-01", to: "2026-03-04" },
        }),
        "--tick",
        "20",
        "--json",
        // A 1 ms first backoff ceiling keeps the test quick; the curve and the budget are the real ones.
        "--retry-base",
        "1",
      ]).done;
      expect(r.code, r.stderr).toBe(0);
      // The five resets and the answer: more than the client's five attempts.
      expect(probes() - before).toBe(6);
      const store = await openStore(`sqlite:${ledger}`);
      try {
        const [job] = await store.listJobs();
        expect((await store.countTasks(job?.id as string)).done).toBe(3);
      } finally {
        await store.close();
      }
    } finally {
      sim.setFaults([]);
    }
  }, 60_000);

  it("resets that never stop still exit 4 once the budget is spent, with the reason", async () => {
    const before = probes();
    const submissions = sim.stats().submissions.length;
    sim.setFaults([{ path: PROBE, kind: "reset" }]);
    try {
      const r = await runCli([
        ...ingestArgs({
          template,
          dataDir,
          druid: sim.url,
          ledgerPath: join(work, "never.db"),
          range: { from: "2026-03-01", to: "2026-03-04" },
        }),
        "--retry-base",
        "1",
        "--retry-budget",
        "0.3",
      ]).done;
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(
        /cannot reach Druid at http:\/\/127\.0\.0\.1:\d+: .*connection failed.*; gave up after \d+ attempts \(retry budget 0\.3 s\)/,
      );
      expect(probes() - before).toBeGreaterThan(5);
      expect(sim.stats().submissions.length).toBe(submissions);
    } finally {
      sim.setFaults([]);
    }
  }, 60_000);
});

/**
 * A Router in front of the emulator that can drop every connection, stop listening (connections are
 * refused) and listen again on the same port, forwarding to the emulator.
 */
async function startRestartingRouter(target: number) {
  let mode: "reset" | "forward" = "reset";
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    if (mode === "reset") {
      socket.resetAndDestroy();
      return;
    }
    const upstream = connect(target, "127.0.0.1");
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  let listening: Promise<void> = Promise.resolve();
  return {
    url: `http://127.0.0.1:${port}`,
    /** Stops listening: from now on connections are refused. */
    down() {
      server.close();
      for (const s of sockets) s.destroy();
    },
    /** Listens again, forwarding to the emulator. */
    up() {
      mode = "forward";
      listening = listen(port);
    },
    async close() {
      await listening.catch(() => undefined);
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("a refusal after a reset is a restart in progress", () => {
  const failed = (attempts: DruidAttempt[], code: string) =>
    attempts.filter((a) => !a.reachable && a.error.druidErrorCode === code).length;

  it("resets, then refusals, then Druid back: the start-up check waits for it", async () => {
    const router = await startRestartingRouter(sim.port);
    const attempts: DruidAttempt[] = [];
    try {
      const client = await connectDruid(
        { druid: router.url, retryBase: 1 },
        {
          client: {
            onAttempt: (a) => {
              attempts.push(a);
              // Driven by what the check saw, not by time: two resets, then down; three refusals, then up.
              if (a.reachable) return;
              if (attempts.length === 2) router.down();
              if (failed(attempts, "ECONNREFUSED") === 3) router.up();
            },
          },
        },
      );
      await client.close();
      expect(failed(attempts, "ECONNREFUSED")).toBeGreaterThanOrEqual(3);
      expect(attempts.at(-1)?.reachable).toBe(true);
    } finally {
      await router.close();
    }
  }, 60_000);

  it("refusals that follow a reset and never stop exit like a persistent 503: after the budget, not 5 attempts", async () => {
    const router = await startRestartingRouter(sim.port);
    const attempts: DruidAttempt[] = [];
    try {
      const connecting = connectDruid(
        { druid: router.url, retryBase: 1, retryBudget: 0.3 },
        {
          client: {
            onAttempt: (a) => {
              attempts.push(a);
              if (attempts.length === 1) router.down();
            },
          },
        },
      );
      await expect(connecting).rejects.toThrow(
        /cannot reach Druid at http:\/\/127\.0\.0\.1:\d+: .*refused.*; gave up after \d+ attempts \(retry budget 0\.3 s\)/,
      );
      expect(failed(attempts, "ECONNREFUSED")).toBeGreaterThan(5);
    } finally {
      await router.close();
    }
  }, 60_000);
});
