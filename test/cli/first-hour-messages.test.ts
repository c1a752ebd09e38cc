import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatJobReport, type JobReport } from "../../src/jobs/report.js";
import { openStore } from "../../src/ledger/open.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";
import { dailyTemplate } from "../helpers/dataset.js";

/**
 * What a new user meets in the first hour: each message names the field or flag, what was expected and
 * what to do. Refusals found while planning need no Druid: the URL below is never called.
 */

const dir = mkdtempSync(join(tmpdir(), "segops-first-hour-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NO_DRUID = "http://127.0.0.1:9";

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return path;
}

function backfill(template: string, from: string, to: string, ...extra: string[]) {
  return segopsInProcess([
    "backfill",
    template,
    "--from",
    from,
    "--to",
    to,
    "--druid",
    NO_DRUID,
    "--ledger",
    `sqlite:${join(dir, "ledger.db")}`,
    "--var",
    "dataDir=/nowhere",
    ...extra,
  ]);
}

describe("range and datasource refusals name what to fix", () => {
  const good = file("good.json", dailyTemplate({ datasource: "first" }));

  it("a misaligned start is a --from problem, a misaligned end a --to problem", async () => {
    const start = await backfill(good, "2026-06-01T05:00", "2026-06-04");
    expect(start.code).toBe(2);
    expect(start.err).toMatch(
      /^segops: --from: range .* the start 2026-06-01T05:00:00\.000Z is not on a DAY boundary/,
    );
    const end = await backfill(good, "2026-06-01", "2026-06-04T03:00");
    expect(end.code).toBe(2);
    expect(end.err).toMatch(
      /^segops: --to: range .* the end 2026-06-04T03:00:00\.000Z is not on a DAY boundary/,
    );
  });

  it("an empty dataSource says which field is empty and to set it in the template", async () => {
    const template = dailyTemplate({ datasource: "" });
    const r = await backfill(file("empty-ds.json", template), "2026-06-01", "2026-06-04");
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "segops: spec.dataSchema.dataSource is empty: set spec.dataSchema.dataSource in the template",
    );
    expect(r.err).not.toContain("--from/--to");
    expect(r.err).not.toContain("cannot derive a task id");
  });
});

describe("spec errors during a backfill", () => {
  it("are said once with the partitions they are in, after the warnings that explain them", async () => {
    const template = dailyTemplate({ datasource: "first" }) as {
      spec: { dataSchema: Record<string, unknown> };
    };
    // A misspelt key: Druid ignores timestampspec and misses timestampSpec, in every partition.
    template.spec.dataSchema.timestampspec = template.spec.dataSchema.timestampSpec;
    delete template.spec.dataSchema.timestampSpec;
    const r = await backfill(file("misspelt.json", template), "2026-06-01", "2026-06-10");
    expect(r.code).toBe(2);
    const lines = r.err.trim().split("\n");
    expect(lines).toEqual([
      expect.stringMatching(
        /^warning: spec\.dataSchema\.timestampspec: unknown field: .*check the spelling$/,
      ),
      "spec.dataSchema.timestampSpec: in 9 partitions (first 2026-06-01T00:00:00.000Z/2026-06-02T00:00:00.000Z, last 2026-06-09T00:00:00.000Z/2026-06-10T00:00:00.000Z): timestampSpec must not be null",
      expect.stringMatching(/^segops: .*misspelt\.json: 1 error in 9 partitions, nothing submitted/),
    ]);
    expect(r.err).not.toContain("more)");
  });
});

describe("a template that is not JSON", () => {
  it("is refused with its file, line and column and what was expected there", async () => {
    const text = JSON.stringify(dailyTemplate({ datasource: "first" }), null, 2).replace(
      '"queryGranularity": "none",',
      '"queryGranularity": "none"',
    );
    const path = file("syntax.json", text);
    const line = text.split("\n").findIndex((l) => l.includes('"rollup"')) + 1;
    for (const args of [
      ["validate", path, "--interval", "2026-06-01/P1D"],
      ["backfill", path, "--from", "2026-06-01", "--to", "2026-06-04", "--druid", NO_DRUID],
    ]) {
      const r = await segopsInProcess(args);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`segops: ${path}:${line}:9: expected ',' or '}' after a property\n`);
    }
  });
});

describe("a job's report", () => {
  const report = (counts: Partial<JobReport["counts"]>): JobReport => ({
    job: "backfill_x",
    kind: "backfill",
    state: "failed",
    options: {},
    counts: { new: 0, running: 0, suspended: 0, done: 0, failed: 0, dead: 0, ...counts },
    partitions: [],
    totals: { rows: 0, segments: 0, bytes: 0 },
    gaps: [],
    exitCode: 1,
  });
  const verdict = (r: JobReport) => formatJobReport(r).split("\n").at(-1);

  it("names the dead-letter queue only when something is in it", () => {
    expect(verdict(report({ failed: 2 }))).toBe(
      "NOT ALL DONE: 2 failed; segops retry backfill_x sends them back to run once the cause is fixed",
    );
    expect(verdict(report({ failed: 1, dead: 2 }))).toBe(
      "NOT ALL DONE: 1 failed, 2 dead-lettered; segops dlq list --job backfill_x shows why they were dead-lettered; segops retry backfill_x sends them back to run once the cause is fixed",
    );
  });

  it("calls a partition not run yet pending in status, as jobs and the dashboard do", async () => {
    const ledger = `sqlite:${join(dir, "pending.db")}`;
    const store = await openStore(ledger);
    try {
      const interval = "2026-06-01T00:00:00.000Z/2026-06-02T00:00:00.000Z";
      await store.createJob({ id: "job-pending", kind: "backfill", options: {} }, [
        { id: "job-pending/20260601", kind: "ingest", payload: { interval }, exclusionKey: null },
      ]);
    } finally {
      await store.close();
    }
    const status = await segopsInProcess(["status", "job-pending", "--ledger", ledger]);
    const jobs = await segopsInProcess(["jobs", "--ledger", ledger]);
    expect(status.out).toMatch(/^2026-06-01\/2026-06-02\s+pending\s/m);
    expect(status.out).not.toMatch(/\bnew\b/);
    expect(jobs.out).toContain("pending 1");
  });
});
