import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { TransientError } from "../../src/druid/errors.js";
import { OutageGuard, OutageMonitor } from "../../src/druid/outage.js";
import type { FaultRule } from "../../src/sim/faults.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";

/**
 * `segops poll` and `segops wait` while Druid does not answer (refused, or its status endpoints failing):
 * they say "Druid unreachable since …" with the failing call, stop past `--druid-outage-timeout` with
 * exit 4, and a deadline or timeout that comes first during the outage is exit 4 too, not a timeout.
 */

const STATUS_500: FaultRule[] = [{ path: "/druid/indexer/v1/task", kind: "status", status: 500 }];
const ID = "segops_x_20200101-20200102_abcdefabcdef_a1";
// The plain progress line (stderr), as a run's progress says it.
const SAID =
  /^(\[\s*[\d.]+s\] )?Druid unreachable since \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+s\): POST \/druid\/indexer\/v1\/taskStatus: /m;

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 2, seed: 55 });
});
afterAll(async () => {
  await sim.close();
});

/** A local port nothing listens on: connections to it are refused. */
async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 9}`;
}

async function withFaults<T>(rules: FaultRule[], body: () => Promise<T>): Promise<T> {
  sim.setFaults(rules);
  try {
    return await body();
  } finally {
    sim.setFaults([]);
  }
}

describe("segops poll while Druid does not answer", () => {
  it("refused: says so once, then exits 4 past --druid-outage-timeout", async () => {
    const r = await runCli([
      "poll",
      ID,
      "--druid",
      await refusedUrl(),
      "--tick",
      "50",
      "--druid-outage-timeout",
      "3",
    ]).done;
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(SAID);
    expect(r.stderr).toMatch(/refused/);
    expect(r.stderr.match(new RegExp(SAID.source, "gm"))).toHaveLength(1);
    expect(r.stderr).toMatch(
      /cannot reach Druid: Druid unreachable since \S+ \(POST \/druid\/indexer\/v1\/taskStatus: .*\), for longer than --druid-outage-timeout 3 s/,
    );
    expect(r.stdout).toContain(`${ID} -> UNREACHABLE`);
    expect(r.stdout).not.toMatch(/DEADLINE|TIMEOUT/);
  }, 60_000);

  it("status endpoints failing: the outage timeout ends it before a later --deadline (exit 4, not 3)", async () => {
    const r = await withFaults(
      STATUS_500,
      () =>
        runCli([
          "poll",
          ID,
          "--druid",
          sim.url,
          "--tick",
          "50",
          "--deadline",
          "600",
          "--druid-outage-timeout",
          "3",
          "--json",
        ]).done,
    );
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(SAID);
    const out = JSON.parse(r.stdout) as { ok: boolean; tasks: Array<{ outcome: string; errorMsg: string }> };
    expect(out.ok).toBe(false);
    expect(out.tasks[0]?.outcome).toBe("UNREACHABLE");
    expect(out.tasks[0]?.errorMsg).toMatch(
      /^Druid unreachable since .*POST \/druid\/indexer\/v1\/taskStatus.*500/,
    );
  }, 60_000);

  it("a --deadline that comes first during the outage is exit 4 too", async () => {
    const r = await withFaults(
      STATUS_500,
      () => runCli(["poll", ID, "--druid", sim.url, "--tick", "50", "--deadline", "3"]).done,
    );
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/cannot reach Druid: Druid unreachable since .*, when the deadline came/);
    expect(r.stdout).toContain(`${ID} -> UNREACHABLE`);
  }, 60_000);

  it("a --deadline while Druid answers is still DEADLINE, exit 3", async () => {
    const client = new DruidClient({ url: sim.url });
    const id = "poll_outage_running";
    try {
      await client.submitTask({
        type: "index_parallel",
        id,
        spec: {
          dataSchema: {
            dataSource: "outage_poll",
            timestampSpec: { column: "ts" },
            dimensionsSpec: { dimensions: [] },
            granularitySpec: { segmentGranularity: "day", intervals: ["2026-01-01/2026-01-02"] },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "s3", uris: ["s3://b/x.json"] },
            inputFormat: { type: "json" },
            appendToExisting: true,
          },
          tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
        },
        // Runs for 100 emulated days: RUNNING for the whole test.
        context: { simDurationMs: 100 * 86_400_000 },
      });
    } finally {
      await client.close();
    }
    const r = await runCli(["poll", id, "--druid", sim.url, "--tick", "50", "--deadline", "1"]).done;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(`${id} -> DEADLINE`);
    expect(r.stderr).not.toMatch(/unreachable/i);
  }, 60_000);
});

describe("segops wait while Druid does not answer", () => {
  it("status endpoints failing: says so, then exits 4 past --druid-outage-timeout", async () => {
    const r = await withFaults(
      STATUS_500,
      () =>
        runCli(["wait", ID, "--druid", sim.url, "--tick", "50", "--druid-outage-timeout", "3", "--json"])
          .done,
    );
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(SAID);
    const out = JSON.parse(r.stdout) as { outcome: string; errorMsg: string };
    expect(out.outcome).toBe("UNREACHABLE");
    expect(out.errorMsg).toMatch(
      /^cannot reach Druid: Druid unreachable since \S+ \(POST \/druid\/indexer\/v1\/taskStatus: .*500.*\), for longer than --druid-outage-timeout 3 s$/,
    );
  }, 60_000);

  it("a --timeout that comes first during the outage is exit 4, not 3", async () => {
    const r = await withFaults(
      STATUS_500,
      () => runCli(["wait", ID, "--druid", sim.url, "--tick", "50", "--timeout", "3"]).done,
    );
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toMatch(
      new RegExp(
        `^${ID} -> UNREACHABLE: cannot reach Druid: Druid unreachable since .*, when --timeout 3 s ran out`,
      ),
    );
    expect(r.stdout).not.toContain("TIMEOUT");
  }, 60_000);

  it("--druid-outage-timeout is in the help of both, as in run's and backfill's", async () => {
    const flagLine = async (command: string) => {
      // Whitespace collapsed: commander wraps help text to the terminal's width.
      const help = (await runCli([command, "--help"]).done).stdout.replace(/\s+/g, " ");
      return /--druid-outage-timeout <s> .*?\(default: \d+\)/.exec(help)?.[0];
    };
    const run = await flagLine("backfill");
    expect(run).toBe(
      "--druid-outage-timeout <s> stop (exit 4, resumable) when Druid has not answered for this long (default: 600)",
    );
    expect(await flagLine("poll")).toBe(run);
    expect(await flagLine("wait")).toBe(run);
  }, 60_000);
});

describe("OutageGuard", () => {
  const failure = (clock: ManualClock, monitor: OutageMonitor) =>
    monitor.record({
      reachable: false,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: null,
      error: new TransientError({
        endpoint: "POST /druid/indexer/v1/taskStatus",
        druidMessage: `refused at ${clock.now()}`,
        requestSent: false,
      }),
    });
  const answer = (monitor: OutageMonitor) =>
    monitor.record({
      reachable: true,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: 200,
    });

  it("trips once an outage has lasted the timeout, naming its start and the failing call", async () => {
    const start = Date.UTC(2026, 0, 1);
    const clock = new ManualClock(start);
    const monitor = new OutageMonitor(clock);
    const guard = new OutageGuard(monitor, clock, 60_000);
    try {
      await clock.advance(5_000);
      failure(clock, monitor);
      expect(guard.current()?.since).toBe(start + 5_000);
      await clock.advance(30_000);
      failure(clock, monitor);
      await clock.advance(29_000);
      expect(guard.signal.aborted).toBe(false);
      expect(guard.tripped).toBeNull();
      await clock.advance(1_000);
      expect(guard.signal.aborted).toBe(true);
      expect(guard.tripped).toEqual({
        since: start + 5_000,
        lastError: expect.stringMatching(/^POST \/druid\/indexer\/v1\/taskStatus: .*refused/),
      });
    } finally {
      await guard.stop();
    }
  });

  it("an answer ends the outage: failures after it start a new one", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const monitor = new OutageMonitor(clock);
    const guard = new OutageGuard(monitor, clock, 60_000);
    try {
      failure(clock, monitor);
      await clock.advance(50_000);
      answer(monitor);
      expect(guard.current()).toBeNull();
      await clock.advance(5_000);
      failure(clock, monitor);
      await clock.advance(50_000);
      expect(guard.signal.aborted).toBe(false);
      await clock.advance(10_000);
      expect(guard.signal.aborted).toBe(true);
    } finally {
      await guard.stop();
    }
  });
});
