import { spawnSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { otherUsersTask, startTestService, type TestService } from "../helpers/serve.js";

/**
 * `GET /metrics` of `segops serve` after a backfill through the API: the text is valid Prometheus
 * exposition format with no lint complaint (`promtool check metrics`), the Druid request counters agree
 * with what the emulator received, route by route, and the partition, attempt, retry, dead-letter and
 * latency metrics agree with the ledger. The example alert rules of docs/operations.md (docs/alerts.yml)
 * pass `promtool check rules`.
 *
 * promtool comes from Debian's `prometheus` package (scripts/provision.sh installs it); without it these
 * tests fail, they never skip.
 */

const TOKEN = "metrics-token-0123456789abcdef";

function promtool(args: string[], input?: string): { status: number; output: string } {
  const r = spawnSync("promtool", args, { input, encoding: "utf8", timeout: 30_000 });
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === "ENOENT";
    throw new Error(
      missing
        ? "promtool is not installed: run `bash scripts/provision.sh` (it installs Debian's prometheus package, which ships promtool)"
        : `promtool ${args.join(" ")} could not run: ${r.error.message}`,
    );
  }
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}`.trim() };
}

/** One sample of the text exposition format: `name{label="value",…} value [timestamp]`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parser of the text format's sample lines (comments skipped), enough for prom-client's output. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  const line = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
  const label = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
  for (const raw of text.split("\n")) {
    if (raw.trim() === "" || raw.startsWith("#")) continue;
    const m = line.exec(raw);
    if (!m) throw new Error(`not a sample line: ${raw}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? "";
    label.lastIndex = 0;
    while (label.lastIndex < body.length) {
      const l = label.exec(body);
      if (!l) throw new Error(`bad labels in: ${raw}`);
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    const v = m[3] as string;
    const value =
      v === "+Inf" ? Number.POSITIVE_INFINITY : v === "-Inf" ? Number.NEGATIVE_INFINITY : Number(v);
    samples.push({ name: m[1] as string, labels, value });
  }
  return samples;
}

const select = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  select(samples, name, labels).reduce((sum, s) => sum + s.value, 0);

const jobPath = (id: string, rest = "") => `/api/v1/jobs/${encodeURIComponent(id)}${rest}`;

async function backfill(t: TestService, dataDir: string, datasource: string, days: number) {
  const created = await t.call("/api/v1/backfills", {
    json: {
      template: dailyTemplate({ datasource }),
      templateName: "daily.json",
      from: "2026-01-01",
      to: `2026-01-0${1 + days}`,
      vars: { dataDir },
    },
  });
  expect(created.status, created.text).toBe(201);
  const ended = await t.call(jobPath(created.json.id, "/wait?timeout=60"));
  expect(ended.status).toBe(200);
  expect(ended.json.ended).toBe(true);
  return { id: created.json.id as string, partitions: created.json.partitions.length as number, ended };
}

/**
 * Waits until the emulator has received no request for `quietMs`: the job has ended, but the last status
 * poll or admission refresh may still be on the wire, and the client counts an attempt when its answer
 * arrives. Nothing but the service's client talks to the emulator (the test reads `sim.stats()` in
 * process), so a quiet emulator means every request it counted has been answered.
 */
async function quiet(t: TestService, quietMs = 500, timeoutMs = 20_000): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let last = JSON.stringify(t.sim.stats().requests);
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    const now = JSON.stringify(t.sim.stats().requests);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return JSON.parse(now);
  }
  throw new Error(`the emulator kept receiving requests for ${timeoutMs} ms after the job ended: ${last}`);
}

async function scrape(t: TestService): Promise<{ text: string; samples: Sample[] }> {
  const res = await t.call("/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return { text: res.text, samples: parseExposition(res.text) };
}

describe("segops serve: /metrics", () => {
  it("after a backfill: valid exposition format, Druid requests equal the emulator's per route, partitions and latencies agree", async () => {
    // Real time in the emulator (time scale 1, short tasks): the detection latency compares Druid's
    // createdTime + duration with the service's clock, which a scaled emulator clock would run ahead of.
    const t = await startTestService({
      token: TOKEN,
      sim: { timeScale: 1, baseDurationMs: 400, perRowMs: 0, handoffDelayMs: 300 },
    });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 20 });
    const posted = Date.now() / 1000;
    const job = await backfill(t, dataDir, "metrics_events", 3);
    expect(job.ended.json.job.state).toBe("done");
    expect(job.partitions).toBe(3);

    const received = await quiet(t);
    const { text, samples } = await scrape(t);
    // Reading /metrics asked Druid nothing.
    expect(t.sim.stats().requests).toEqual(received);

    const check = promtool(["check", "metrics"], text);
    expect(check.output, "promtool check metrics").toBe("");
    expect(check.status).toBe(0);

    // Every endpoint: the sum over status codes equals what the emulator counted for that route, and
    // no route the emulator saw is missing from the metrics.
    const counted: Record<string, number> = {};
    for (const s of select(samples, "segops_druid_requests_total")) {
      const endpoint = s.labels.endpoint as string;
      counted[endpoint] = (counted[endpoint] ?? 0) + s.value;
    }
    expect(counted).toEqual(received);
    expect(Object.keys(received)).toEqual(
      expect.arrayContaining([
        "POST /druid/indexer/v1/task",
        "POST /druid/indexer/v1/taskStatus",
        "POST /druid/coordinator/v1/metadata/datasources/:dataSource/segments",
      ]),
    );
    expect(select(samples, "segops_druid_requests_total", { code: "none" })).toEqual([]);
    // Response bytes by the same routes: one series per endpoint requested, and the submissions' answers
    // ({"task": id}, as the emulator serialises them, gzipped as the client asks) to the byte, as sent.
    const bytes = select(samples, "segops_druid_response_bytes_total");
    expect(bytes.map((s) => s.labels.endpoint).sort()).toEqual(Object.keys(received).sort());
    const accepted = t.sim.stats().submissions.filter((r) => r.accepted && r.id !== null);
    expect(accepted).toHaveLength(3);
    expect(
      total(samples, "segops_druid_response_bytes_total", { endpoint: "POST /druid/indexer/v1/task" }),
    ).toBe(accepted.reduce((n, r) => n + gzipSync(JSON.stringify({ task: r.id })).length, 0));
    expect(
      total(samples, "segops_druid_response_bytes_total", { endpoint: "POST /druid/indexer/v1/taskStatus" }),
    ).toBeGreaterThan(0);

    expect(total(samples, "segops_partitions", { kind: "ingest", state: "done" })).toBe(3);
    expect(total(samples, "segops_partitions", { kind: "ingest" })).toBe(3);
    expect(total(samples, "segops_attempts_total", { kind: "ingest" })).toBeGreaterThanOrEqual(3);
    expect(total(samples, "segops_ledger_transitions_total", { kind: "ingest", to: "done" })).toBe(3);
    expect(total(samples, "segops_retries_total")).toBe(0);
    expect(total(samples, "segops_dead_letters_total")).toBe(0);
    expect(total(samples, "segops_handoff_latency_seconds_count")).toBe(3);
    expect(total(samples, "segops_detection_latency_seconds_count")).toBe(3);
    expect(total(samples, "segops_handoff_latency_seconds_sum")).toBeGreaterThan(0);
    expect(total(samples, "segops_status_poll_seconds_count")).toBeGreaterThan(0);
    // The feed has been read within the last minute (the staleness alert's input).
    const feedRead = total(samples, "segops_feed_last_read_timestamp_seconds");
    expect(Math.abs(Date.now() / 1000 - feedRead)).toBeLessThan(60);
    expect(total(samples, "segops_http_requests_total", { route: "/api/v1/backfills", code: "201" })).toBe(1);
    expect(total(samples, "segops_druid_worker_capacity_slots")).toBe(8);
    expect(total(samples, "segops_admission_reserved_slots")).toBe(0);
    // The worker moved (it claimed and finished the partitions) after the backfill was posted.
    expect(select(samples, "segops_worker_stalled").map((s) => s.value)).toEqual([0]);
    const lastProgress = total(samples, "segops_worker_last_progress_timestamp_seconds");
    expect(lastProgress).toBeGreaterThanOrEqual(posted);
    expect(lastProgress).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it("a host blocked by slots other tasks hold says since when; the gauge goes once a partition is admitted", async () => {
    const t = await startTestService({ token: TOKEN, sim: { capacity: 1, workers: 1 } });
    // Another user's task holds the cluster's only slot for far longer than this test.
    const blocker = await otherUsersTask(t);
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 3 });
    const before = Date.now() / 1000;
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "blocked" }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-02",
        vars: { dataDir },
      },
    });
    expect(created.status, created.text).toBe(201);
    const blocked = async () =>
      select((await scrape(t)).samples, "segops_admission_blocked_since_timestamp_seconds");
    for (let i = 0; i < 2000 && (await blocked()).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    const [since] = await blocked();
    expect(since?.value).toBeGreaterThanOrEqual(Math.floor(before));
    expect(since?.value).toBeLessThanOrEqual(Date.now() / 1000);
    expect(t.sim.stats().submissions.map((s) => s.id)).toEqual(["other_users_task"]);
    // The slot frees: the partition is admitted, the job ends, and the gauge is gone.
    await blocker.free();
    const ended = await t.call(jobPath(created.json.id, "/wait?timeout=60"));
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
    expect(await blocked()).toEqual([]);
  });

  it("retries and dead letters are counted: a corrupt day fails its data gate, is retried, then dead-lettered", async () => {
    const t = await startTestService({ token: TOKEN, service: { poisonAfter: 2 } });
    // Before any work the per-kind counters exist at 0, so `increase()` sees the first dead letter.
    const before = (await scrape(t)).samples;
    for (const name of ["segops_dead_letters_total", "segops_retries_total", "segops_attempts_total"])
      expect(select(before, name, { kind: "ingest" }).map((s) => s.value)).toEqual([0]);
    // Nothing is reported about Druid's slots before the first /workers answer.
    expect(select(before, "segops_druid_worker_capacity_slots")).toEqual([]);
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 20 });
    // One row of 2026-01-02 cannot be parsed: the default gate (no parse errors) hands Druid
    // maxParseExceptions 0, so every attempt of that day fails the same way.
    appendFileSync(
      join(dataDir, "events-2026-01-02.json"),
      '{"ts": "2026-01-02T12:00:00Z", "channel": "#c1"\n',
    );
    const job = await backfill(t, dataDir, "metrics_poison", 3);
    expect(job.ended.json.job.state).toBe("failed");

    await quiet(t);
    const { text, samples } = await scrape(t);
    expect(promtool(["check", "metrics"], text)).toEqual({ status: 0, output: "" });
    expect(total(samples, "segops_partitions", { kind: "ingest", state: "done" })).toBe(2);
    expect(total(samples, "segops_partitions", { kind: "ingest", state: "dead" })).toBe(1);
    expect(total(samples, "segops_dead_letters_total", { kind: "ingest" })).toBe(1);
    // poisonAfter 2: the first failure is retried under a new attempt, the second dead-letters.
    expect(total(samples, "segops_retries_total", { kind: "ingest" })).toBe(1);
    expect(total(samples, "segops_ledger_transitions_total", { kind: "ingest", to: "dead" })).toBe(1);
    expect(total(samples, "segops_ledger_transitions_total", { kind: "ingest", to: "retry" })).toBe(1);
    expect(total(samples, "segops_attempts_total", { kind: "ingest" })).toBeGreaterThanOrEqual(4);
    expect(total(samples, "segops_handoff_latency_seconds_count")).toBe(2);
  });
});

describe("docs/alerts.yml", () => {
  const root = join(import.meta.dirname, "../..");

  it("the example alert rules of docs/operations.md pass promtool check rules", () => {
    const check = promtool(["check", "rules", join(root, "docs/alerts.yml")]);
    expect(check.output).toMatch(/SUCCESS: 10 rules found/);
    expect(check.status).toBe(0);
  });

  it("fire as documented (promtool test rules: dead letter, stale feed, stalled worker, Druid unreachable, ledger-wide gauge under max)", () => {
    const run = promtool(["test", "rules", join(root, "test/serve/alerts.promtest.yml")]);
    expect(run.output).toMatch(/SUCCESS/);
    expect(run.status).toBe(0);
  });
});
