import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-regress-d-"));
const PROBE = "/druid/indexer/v1/totalWorkerCapacity";

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000, seed: 9 });
});
afterAll(async () => {
  await sim.close();
});

describe("task ids are checked before asking Druid", () => {
  it("segops wait 'bad id/with slash' is invalid input, exit 2", async () => {
    const r = await runCli(["wait", "bad id/with slash", "--tick", "20", "--druid", sim.url]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"bad id/with slash"');
    expect(r.stderr).toContain("cannot contain '/'");
  });

  it("segops wait '' (empty id) is invalid input, exit 2", async () => {
    const r = await runCli(["wait", "", "--druid", sim.url]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/task id "" .*must not be null|empty/);
  });

  it("segops poll with a bad id (argument or --file line) is invalid input, exit 2", async () => {
    const arg = await runCli(["poll", "good_id", "bad/id", "--tick", "20", "--druid", sim.url]).done;
    expect(arg.code).toBe(2);
    expect(arg.stderr).toContain('"bad/id"');
    const file = join(work, "ids.txt");
    writeFileSync(file, "good_id\n.hidden\n");
    const fromFile = await runCli(["poll", "--file", file, "--tick", "20", "--druid", sim.url]).done;
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain('".hidden"');
    expect(fromFile.stderr).toContain(`${file} line 2`);
  });
});

describe("audit of a datasource with no segments", () => {
  it("segops audit on a nonexistent datasource says it has no segments in the range, exit 1", async () => {
    const r = await runCli(["audit", "no_such_datasource", "--druid", sim.url]).done;
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("AUDIT OK");
    expect(r.stdout).toMatch(/no segments of no_such_datasource in .*; check the datasource name/);
    const ranged = await runCli([
      "audit",
      "no_such_datasource",
      "--interval",
      "2026-01-01/2026-01-02",
      "--druid",
      sim.url,
      "--json",
    ]).done;
    expect(ranged.code).toBe(1);
    const report = JSON.parse(ranged.stdout) as { ok: boolean; noSegments: boolean; chunks: unknown[] };
    expect(report).toMatchObject({ ok: false, noSegments: true, chunks: [] });
  });

  it("segops audit --help documents exit 1 for an empty range", async () => {
    const r = await runCli(["audit", "--help"]).done;
    expect(r.stdout).toMatch(/exit 1 .*no segments/);
  });
});

describe("the startup probe's retries", () => {
  const dataDir = writeDailyDataset({ from: "2026-07-01", days: 1, rowsPerDay: 5, dir: join(work, "data") });
  const template = join(work, "probe.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "probe" })));
  const submit = (extra: string[]) =>
    runCli([
      "submit",
      template,
      "--interval",
      "2026-07-01/P1D",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      sim.url,
      "--json",
      // A 1 ms first backoff ceiling keeps the test fast; the curve and budget logic are the real ones.
      "--retry-base",
      "1",
      ...extra,
    ]).done;

  it("five 503s then five 429s at startup are survived (segops submit exits 0)", async () => {
    const before = sim.stats().requests[`GET ${PROBE}`] ?? 0;
    sim.setFaults([
      { path: PROBE, kind: "status", status: 503, count: 5 },
      { path: PROBE, kind: "status", status: 429, count: 5 },
    ]);
    try {
      const r = await submit([]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: "accepted" });
      expect((sim.stats().requests[`GET ${PROBE}`] ?? 0) - before).toBe(11);
    } finally {
      sim.setFaults([]);
    }
  });

  it("a persistent 503 at startup still exits 4 once the retry budget is spent", async () => {
    const before = sim.stats().requests[`GET ${PROBE}`] ?? 0;
    const submissions = sim.stats().submissions.length;
    sim.setFaults([{ path: PROBE, kind: "status", status: 503 }]);
    try {
      const r = await submit(["--retry-budget", "0.3"]);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/cannot reach Druid at .*: .*503|unavailable/i);
      expect(r.stderr).toMatch(/gave up after \d+ attempts \(retry budget 0\.3 s\)/);
      // More than the client's five attempts per call: the probe kept going until the budget was spent.
      expect((sim.stats().requests[`GET ${PROBE}`] ?? 0) - before).toBeGreaterThan(5);
      expect(sim.stats().submissions.length).toBe(submissions);
    } finally {
      sim.setFaults([]);
    }
  });

  it("a refused connection at startup still exits 4 after the client's own attempts", async () => {
    const r = await runCli([
      "submit",
      template,
      "--interval",
      "2026-07-01/P1D",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      "http://127.0.0.1:9",
      "--retry-base",
      "1",
    ]).done;
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/cannot reach Druid at http:\/\/127\.0\.0\.1:9: .*refused/);
  });
});
