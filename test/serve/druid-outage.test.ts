import { describe, expect, it } from "vitest";
import { AWAITING_DRUID } from "../../src/driver/outcome.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startOutageService, until } from "./outage-helpers.js";

/**
 * A serve host whose Druid stops answering for ten minutes, mid-backfill (a proxy in front of the
 * emulator stops listening; the emulator's tasks run on). Measured on the service's own clock, which runs
 * thirty times faster than the system's: no real ten-minute wait, and no assertion on real time. Before
 * the per-host backoff such a host sent about ten requests a second and logged a warning or two a second;
 * now it sends about one probe per backoff step, logs the outage, not each call, and says so on /readyz,
 * /metrics and the dashboard's state. When Druid is back the job finishes with nothing lost or doubled.
 */

const DAYS = 4;
const ROWS = 8;
const MINUTES_10 = 600_000;

describe("segops serve while Druid does not answer", () => {
  it("ten simulated minutes: at most one request a second and twenty log lines; then the job finishes, each task accepted once, every day's rows", async () => {
    const t = await startOutageService({ scale: 30, sim: { baseDurationMs: 60_000 } });
    try {
      const dataDir = writeDailyDataset({ from: "2026-03-01", days: DAYS, rowsPerDay: ROWS });
      const created = await t.call("/api/v1/backfills", {
        json: {
          template: dailyTemplate({ datasource: "outage_ds" }),
          templateName: "daily.json",
          from: "2026-03-01",
          to: "2026-03-05",
          vars: { dataDir },
        },
      });
      expect(created.status, created.text).toBe(201);
      const id = created.json.id as string;
      await until("a partition's task is at Druid", () => t.sim.stats().submissions.some((s) => s.accepted));

      await t.proxy.down();
      const t0 = t.clock.now();
      await until("ten minutes passed on the service's clock", () => t.clock.now() - t0 >= MINUTES_10);
      const inWindow = <T extends { at: number }>(list: T[]) =>
        list.filter((x) => x.at >= t0 && x.at < t0 + MINUTES_10);
      const sent = inWindow(t.attempts);
      const lines = inWindow(t.logs).map((l) => l.line);
      const said = lines.map((l) => `${l.msg}`);
      if (process.env.SEGOPS_OUTAGE_FIGURES)
        console.log(
          `outage: ${sent.length} requests and ${lines.length} log lines in 600 simulated seconds:\n${said.join("\n")}`,
        );

      // About one probe per backoff step: the first failures, then 1, 2, 4, 8, 16 s apart and every ≤ 30 s.
      expect(sent.length / (MINUTES_10 / 1000), said.join("\n")).toBeLessThanOrEqual(1);
      expect(sent.length).toBeLessThan(100);
      // The outage in the log: once when it began, a summary every five minutes, the worker's pause at the
      // outage timeout (and its partitions' state changes); not one line per refused call.
      expect(lines.length, said.join("\n")).toBeLessThanOrEqual(20);
      expect(said.filter((m) => m.startsWith("Druid does not answer"))).toHaveLength(1);
      expect(said.filter((m) => m.startsWith("Druid still does not answer")).length).toBeGreaterThanOrEqual(
        1,
      );
      expect(said.filter((m) => /retry budget exhausted|onCycle failed/.test(m)).length).toBeLessThanOrEqual(
        3,
      );

      // The same state everywhere: the dashboard's, /readyz, /metrics.
      const state = await t.call("/api/v1/druid/reachability");
      expect(state.json).toMatchObject({ reachable: false, since: expect.any(String) });
      expect(Date.parse(state.json.since) - t0).toBeLessThan(10_000);
      expect(state.json.refused).toBeGreaterThan(100);
      const ready = await t.call("/readyz");
      expect(ready.status).toBe(503);
      expect(ready.json.druid).toMatchObject({ ok: false, since: state.json.since });
      const metrics = (await t.call("/metrics")).text;
      expect(metrics).toMatch(/^segops_druid_reachable 0$/m);
      expect(metrics).toMatch(/^segops_druid_unreachable_since_timestamp_seconds \d+(\.\d+)?$/m);
      const refused = Number(/^segops_druid_requests_refused_total (\d+)$/m.exec(metrics)?.[1]);
      expect(refused).toBeGreaterThan(100);

      // Nothing counted against a partition: no retry, nothing failed or dead-lettered.
      const during = await t.store.listTasks(id);
      expect(during.map((p) => p.retry)).toEqual(during.map(() => 0));
      expect(during.filter((p) => p.state === "failed" || p.state === "dead")).toEqual([]);

      // Druid is back: the next probe finds it, and everything resumes.
      await t.proxy.up();
      await until("the job ended", async () => (await t.store.getJob(id))?.state !== "open", 180_000).catch(
        async (error) => {
          // Say where the job stands, not only that it did not end.
          const tasks = await t.store.listTasks(id);
          const where = tasks.map((p) => `${p.id} ${p.state} (${p.reason})`).join("; ");
          throw new Error(`${(error as Error).message}: ${where}`);
        },
      );
      expect((await t.store.getJob(id))?.state).toBe("done");
      const after = await t.store.listTasks(id);
      expect(after.map((p) => [p.state, p.retry])).toEqual(after.map(() => ["done", 0]));
      const lastLines = t.logs.map((l) => `${l.line.msg}`);
      expect(
        lastLines.filter((m) => /^Druid answers again after \d+m\d\ds: work resumes$/.test(m)),
      ).toHaveLength(1);
      const reach = await t.call("/api/v1/druid/reachability");
      expect(reach.json).toEqual({ reachable: true, workerPaused: false });
      expect((await t.call("/metrics")).text).toMatch(/^segops_druid_reachable 1$/m);

      // Nothing lost, nothing doubled: each partition's task accepted once, every day's rows live.
      const accepted = t.sim
        .stats()
        .submissions.filter((s) => s.accepted && s.id?.includes("outage_ds"))
        .map((s) => s.id);
      expect(accepted).toHaveLength(DAYS);
      expect(new Set(accepted).size).toBe(DAYS);
      const audit = await t.call("/api/v1/audit?datasource=outage_ds&interval=2026-03-01/2026-03-05");
      expect(audit.json.ok, audit.text).toBe(true);
      expect(audit.json.chunks.map((c: { rows: number }) => c.rows)).toEqual(Array(DAYS).fill(ROWS));
      // The wait left one event per partition that met it, not one per refusal.
      const events = await t.store.listEvents({ jobId: id, limit: 10_000 });
      const waits = events.filter((e) => e.reason === AWAITING_DRUID);
      expect(waits.length).toBeLessThanOrEqual(DAYS * 2);
    } finally {
      await t.stop();
    }
  }, 300_000);
});
