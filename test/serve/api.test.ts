import { describe, expect, it } from "vitest";
import { dailyTemplate, writeCorruptDay, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The HTTP API of `segops serve`, route by route: success and error answers, authentication,
 * idempotent creation (one ledger job, one Druid submission per partition), long-poll waits and the
 * event stream — against a service on the emulator, through real HTTP.
 */

const TOKEN = "test-token-0123456789abcdef";

function backfillBody(dataDir: string, extra: Record<string, unknown> = {}) {
  return {
    template: dailyTemplate({ datasource: "api_events" }),
    templateName: "daily.json",
    from: "2026-01-01",
    to: "2026-01-04",
    vars: { dataDir },
    ...extra,
  };
}

const jobPath = (id: string, rest = "") => `/api/v1/jobs/${encodeURIComponent(id)}${rest}`;

/** Waits (long-poll) until the job ends; fails the test if it does not within a minute. */
async function waitEnded(t: TestService, id: string) {
  const res = await t.call(jobPath(id, "/wait?timeout=60"));
  expect(res.status).toBe(200);
  expect(res.json.ended).toBe(true);
  return res.json;
}

function expectProblem(
  res: { status: number; headers: Headers; json: unknown },
  status: number,
  type: string,
) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.json).toMatchObject({ status, type: `/problems/${type}` });
  // Never a stack trace.
  expect(JSON.stringify(res.json)).not.toMatch(/\n\s+at |\.ts:\d+/);
}

describe("segops serve: probes", () => {
  it("/healthz answers while the process is up; /readyz names the dependency that fails", async () => {
    const t = await startTestService();
    expect(await t.call("/healthz")).toMatchObject({ status: 200, json: { status: "ok" } });
    const ready = await t.call("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.json).toMatchObject({ ready: true, ledger: { ok: true }, druid: { ok: true } });

    const down = await startTestService({ druidUrl: "http://127.0.0.1:9" });
    const notReady = await down.call("/readyz");
    expect(notReady.status).toBe(503);
    expect(notReady.json.ready).toBe(false);
    expect(notReady.json.ledger).toEqual({ ok: true });
    expect(notReady.json.druid.ok).toBe(false);
    expect(notReady.json.druid.error).toMatch(/Druid/);
  });

  it("unknown routes are 404 and wrong methods 405, both as problem details", async () => {
    const t = await startTestService();
    expectProblem(await t.call("/api/v1/nothing"), 404, "not-found");
    expectProblem(await t.call("/api/v1/runs"), 405, "method-not-allowed");
    expectProblem(await t.call("/api/v1/jobs", { method: "POST" }), 405, "method-not-allowed");
  });
});

describe("segops serve: authentication", () => {
  it("without or with a wrong token the API is 401; probes and the OpenAPI document stay open; the token is never logged", async () => {
    const t = await startTestService({ token: TOKEN });
    const none = await t.call("/api/v1/jobs", { token: null });
    expectProblem(none, 401, "unauthorized");
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expectProblem(await t.call("/api/v1/jobs", { token: `${TOKEN}x` }), 401, "unauthorized");
    expectProblem(await t.call("/api/v1/jobs", { token: TOKEN.slice(0, -1) }), 401, "unauthorized");
    expectProblem(await t.call("/metrics", { token: null }), 401, "unauthorized");
    expectProblem(
      await t.call("/api/v1/jobs", { token: null, headers: { authorization: `Basic ${TOKEN}` } }),
      401,
      "unauthorized",
    );
    expect((await t.call("/api/v1/jobs")).status).toBe(200);
    expect((await t.call("/healthz", { token: null })).status).toBe(200);
    expect((await t.call("/readyz", { token: null })).status).toBe(200);
    const doc = await t.call("/openapi.json", { token: null });
    expect(doc.status).toBe(200);
    expect(doc.json.paths["/api/v1/jobs"].get.security).toEqual([{ bearer: [] }]);
    expect(t.logs.length).toBeGreaterThan(5);
    expect(t.logs.join("\n")).not.toContain(TOKEN);
    expect(t.logs.join("\n")).not.toContain(TOKEN.slice(0, -1));
  });

  it("refuses to listen beyond loopback without a token (nothing started)", async () => {
    await expect(startTestService({ service: { host: "0.0.0.0" } })).rejects.toThrow(/without a token/);
  });
});

describe("segops serve: creating work", () => {
  it("a repeated POST returns the same job (200 instead of 201): one ledger job, one Druid submission per partition", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 20 });
    const first = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    expect(first.status).toBe(201);
    expect(first.headers.get("location")).toBe(jobPath(first.json.id));
    expect(first.json.partitions).toHaveLength(3);
    await waitEnded(t, first.json.id);
    const again = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    expect(again.json.state).toBe("done");
    expect(await t.store.listJobs({ limit: 10 })).toHaveLength(1);
    const accepted = t.sim.stats().submissions.filter((s) => s.accepted);
    expect(accepted).toHaveLength(3);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(3);
    const job = await t.call(jobPath(first.json.id));
    expect(job.status).toBe(200);
    expect(job.json.partitions.map((p: { state: string; rows: number }) => [p.state, p.rows])).toEqual([
      ["done", 20],
      ["done", 20],
      ["done", 20],
    ]);
    expect(job.json.partitions.every((p: { druidTaskId: string | null }) => p.druidTaskId !== null)).toBe(
      true,
    );
    expect(job.json.totals.rows).toBe(60);
    expect(job.json.exitCode).toBe(0);
    // JSON log lines: one per request (with the job id) and one per state change this host committed.
    const lines = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "request",
        route: "/api/v1/jobs/:id",
        status: 200,
        jobId: first.json.id,
      }),
    );
    const changes = lines.filter((l) => l.msg === "state change" && l.jobId === first.json.id);
    expect(
      changes.filter((l) => l.to === "done" && l.taskId !== null && l.actor === t.service.owner),
    ).toHaveLength(3);
  });

  it("POST /runs creates one partition over the interval; the CLI's request names the same job", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 5 });
    const { from: _f, to: _t, ...rest } = backfillBody(dataDir);
    const run = await t.call("/api/v1/runs", { json: { ...rest, interval: "2026-01-01/2026-01-02" } });
    expect(run.status).toBe(201);
    expect(run.json.kind).toBe("run");
    expect(run.json.partitions).toHaveLength(1);
    const ended = await waitEnded(t, run.json.id);
    expect(ended.job.state).toBe("done");
  });

  it("Idempotency-Key: the same key and body return the first job; the same key with another body is 409", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const headers = { "idempotency-key": "nightly-2026-01-01" };
    // `new` plans a fresh job each time, unless a key names it: then the key is what makes it new.
    const body = backfillBody(dataDir, { new: true });
    const first = await t.call("/api/v1/backfills", { json: body, headers });
    expect(first.status).toBe(201);
    await waitEnded(t, first.json.id);
    const again = await t.call("/api/v1/backfills", { json: body, headers });
    expect(again.status).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    const other = await t.call("/api/v1/backfills", { json: { ...body, to: "2026-01-03" }, headers });
    expectProblem(other, 409, "idempotency-key-reused");
    expect(other.json.detail).toContain(first.json.id);
    expectProblem(
      await t.call("/api/v1/backfills", {
        json: body,
        headers: { "idempotency-key": "bad key with spaces" },
      }),
      400,
      "invalid-request",
    );
    // Another key: a new job, as `new` asks.
    const second = await t.call("/api/v1/backfills", { json: body, headers: { "idempotency-key": "k2" } });
    expect(second.status).toBe(201);
    expect(second.json.id).not.toBe(first.json.id);
    expect(await t.store.listJobs({ limit: 10 })).toHaveLength(2);
  });

  it("bad input is a 400 naming each field; nothing is written", async () => {
    const t = await startTestService({ service: { maxBodyBytes: 64 * 1024 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 5 });
    const missing = await t.call("/api/v1/backfills", {
      json: { template: dailyTemplate({ datasource: "x" }) },
    });
    expectProblem(missing, 400, "invalid-request");
    expect(missing.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["from", "to"]);
    expect(missing.json.errors[0].in).toBe("body");

    const badVar = await t.call("/api/v1/backfills", {
      json: backfillBody(dataDir, { vars: { "1x": "a" } }),
    });
    expectProblem(badVar, 400, "invalid-request");
    expect(badVar.json.errors[0].path).toBe("vars.1x");

    const unknown = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, { colour: "red" }) });
    expectProblem(unknown, 400, "invalid-request");
    expect(unknown.json.detail).toMatch(/colour/);

    const order = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, { to: "2025-12-01" }) });
    expectProblem(order, 400, "invalid-request");
    expect(order.json.errors).toEqual([expect.objectContaining({ path: "to" })]);

    const rate = await t.call("/api/v1/backfills", {
      json: backfillBody(dataDir, { maxUnparseable: "lots" }),
    });
    expect(rate.json.errors[0].path).toBe("maxUnparseable");

    const spec = dailyTemplate({ datasource: "x" }) as { spec: { dataSchema: { granularitySpec: object } } };
    spec.spec.dataSchema.granularitySpec = { segmentGranularity: "fortnightly" };
    const invalid = await t.call("/api/v1/backfills", { json: { ...backfillBody(dataDir), template: spec } });
    expectProblem(invalid, 400, "invalid-spec");
    expect(invalid.json.errors[0]).toMatchObject({
      in: "spec",
      path: "spec.dataSchema.granularitySpec.segmentGranularity",
    });

    const text = await t.call("/api/v1/backfills", {
      json: backfillBody(dataDir, { template: "{ not json" }),
    });
    expectProblem(text, 400, "invalid-request");
    expect(text.json.errors[0].path).toBe("template");
    // Where the text goes wrong, as line and column (V8 says a position, or nothing).
    expect(text.json.errors[0].message).toMatch(/:1:3: expected a double-quoted property name or '}'$/);

    const notJson = await t.call("/api/v1/backfills", {
      method: "POST",
      body: "{",
      headers: { "content-type": "application/json" },
    });
    expectProblem(notJson, 400, "invalid-request");
    expect(notJson.json.detail).toBe(
      "the body is not JSON: line 1, column 2: expected a double-quoted property name or '}'",
    );
    const wrongType = await t.call("/api/v1/backfills", {
      method: "POST",
      body: "from=2026",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectProblem(wrongType, 415, "unsupported-media-type");
    const big = await t.call("/api/v1/backfills", {
      json: backfillBody(dataDir, { templateName: "x", vars: { dataDir, pad: "p".repeat(100 * 1024) } }),
    });
    expectProblem(big, 413, "payload-too-large");

    expect(await t.store.listJobs({ limit: 10 })).toEqual([]);
    expect(t.sim.stats().submissions).toEqual([]);
  });
});

describe("segops serve: reading", () => {
  it("lists jobs newest first with filters and a cursor; 404 and 400 where due", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const ids: string[] = [];
    for (const to of ["2026-01-02", "2026-01-03", "2026-01-04"]) {
      const res = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, { to }) });
      expect(res.status).toBe(201);
      ids.push(res.json.id);
    }
    const { from: _f, to: _t, ...rest } = backfillBody(dataDir);
    const run = await t.call("/api/v1/runs", { json: { ...rest, interval: "2026-01-01/2026-01-02" } });
    ids.push(run.json.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; json: { items: { id: string }[]; nextCursor: string | null } } =
        await t.call(`/api/v1/jobs?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.json.items.map((j) => j.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect([...seen].sort()).toEqual([...ids].sort());
    expect(new Set(seen).size).toBe(4);
    const runs = await t.call("/api/v1/jobs?kind=run");
    expect(runs.json.items.map((j: { id: string }) => j.id)).toEqual([run.json.id]);
    expectProblem(await t.call("/api/v1/jobs?state=sleeping"), 400, "invalid-request");
    expectProblem(await t.call("/api/v1/jobs?limit=0"), 400, "invalid-request");
    expectProblem(await t.call("/api/v1/jobs?cursor=garbage"), 400, "invalid-request");
    expectProblem(await t.call("/api/v1/jobs?sort=asc"), 400, "invalid-request");
    expectProblem(await t.call(jobPath("no-such-job")), 404, "not-found");
    expectProblem(await t.call(jobPath("no-such-job", "/events")), 404, "not-found");
    expectProblem(await t.call(jobPath("no-such-job", "/wait?timeout=1")), 404, "not-found");
  });

  it("a job's events page through `after`, oldest first", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const job = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    await waitEnded(t, job.json.id);
    const all = await t.call(jobPath(job.json.id, "/events?limit=1000"));
    expect(all.status).toBe(200);
    const events = all.json.items as { id: number; toState: string; taskId: string | null }[];
    expect(events[0]).toMatchObject({ toState: "open", taskId: null });
    expect(events.filter((e) => e.toState === "done" && e.taskId !== null)).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ toState: "done", taskId: null });
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const page = await t.call(jobPath(job.json.id, `/events?after=${ids[2]}&limit=2`));
    expect(page.json.items.map((e: { id: number }) => e.id)).toEqual(ids.slice(3, 5));
    expect(page.json.next).toBe(ids[4]);
    expectProblem(await t.call(jobPath(job.json.id, "/events?after=-1")), 400, "invalid-request");
  });
});

describe("segops serve: waiting", () => {
  it("a long-poll answers as soon as the job ends (here: canceled while waiting for a handoff that never comes)", async () => {
    // The datasource never loads: the partitions wait at the handoff gate until canceled.
    const t = await startTestService({ sim: { neverLoadDataSources: ["api_events"] } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const job = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    const id = job.json.id as string;
    const early = await t.call(jobPath(id, "/wait?timeout=0.2"));
    expect(early.json).toMatchObject({ ended: false, job: { id, state: "open" } });
    // Many waiters on one job, parked for two minutes (longer than this test may take). Each listens for
    // the service's shutdown: Node must not call that a listener leak.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const waiters = Array.from({ length: 20 }, () => t.call(jobPath(id, "/wait?timeout=120")));
    const running = async () => (await t.store.listTasks(id)).every((p) => p.progress.step === "handoff");
    for (let i = 0; i < 2000 && !(await running()); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await running()).toBe(true);
    const cancel = await t.call(jobPath(id, "/cancel"), { method: "POST", json: { reason: "test over" } });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toEqual({ flagged: 3, shutdown: [] });
    const answers = await Promise.all(waiters);
    process.off("warning", onWarning);
    expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.json.ended).toBe(true);
      expect(a.json.job.counts.failed).toBe(3);
    }
    const failed = await t.call(jobPath(id));
    expect(failed.json.partitions.every((p: { error: string }) => /canceled: test over/.test(p.error))).toBe(
      true,
    );
    expect(failed.json).toMatchObject({ state: "failed", canceled: true });
    // A retry asks for the work again: the job reopens and is no longer canceled.
    expect((await t.call(jobPath(id, "/retry"), { method: "POST" })).status).toBe(200);
    expect((await t.call(jobPath(id))).json).toMatchObject({ state: "open", canceled: false });
    // A cancel is the flag, not a job state: there is no such state to list by.
    expectProblem(await t.call("/api/v1/jobs?state=canceled"), 400, "invalid-request");
    expectProblem(await t.call(jobPath(id, "/wait?timeout=301")), 400, "invalid-request");
    expectProblem(await t.call(jobPath("nope", "/cancel"), { method: "POST" }), 404, "not-found");
    expectProblem(
      await t.call(jobPath(id, "/cancel"), { method: "POST", json: { shutdown: "yes" } }),
      400,
      "invalid-request",
    );
  });

  it("the event stream sends the job's events as they commit and `end` once it has ended; Last-Event-ID resumes", async () => {
    const t = await startTestService({ sim: { timeScale: 20 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const job = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    const id = job.json.id as string;
    const res = await fetch(`${t.service.url}${jobPath(id, "/stream")}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const messages = parseSse(await res.text());
    const events = messages.filter((m) => m.event === "event");
    const end = messages.at(-1);
    expect(end?.event).toBe("end");
    expect(JSON.parse(end?.data ?? "{}")).toMatchObject({ ended: true, job: { id, state: "done" } });
    const stored = (await t.store.listEvents({ jobId: id })).map((e) => e.id);
    expect(events.map((m) => Number(m.id))).toEqual(stored);
    expect(events.map((m) => JSON.parse(m.data).id)).toEqual(stored);
    // Reconnecting after the third event replays only what came after it.
    const resumed = await fetch(`${t.service.url}${jobPath(id, "/stream")}`, {
      headers: { "last-event-id": String(stored[2]) },
    });
    const again = parseSse(await resumed.text()).filter((m) => m.event === "event");
    expect(again.map((m) => Number(m.id))).toEqual(stored.slice(3));
    expectProblem(await t.call(jobPath("nope", "/stream")), 404, "not-found");
  });
});

describe("segops serve: acting on work", () => {
  it("dead letters are listed, shown, retried and dropped; a job's failed partitions are retried", async () => {
    // Two days' input files are corrupt: Druid fails them, dead-lettered on the first failure.
    const t = await startTestService({ service: { poisonAfter: 1 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 5 });
    writeCorruptDay(dataDir, "2026-01-03");
    writeCorruptDay(dataDir, "2026-01-04");
    const job = await t.call("/api/v1/backfills", {
      json: backfillBody(dataDir, { to: "2026-01-05" }),
    });
    const id = job.json.id as string;
    const ended = await waitEnded(t, id);
    expect(ended.job.counts).toMatchObject({ done: 2, dead: 2 });
    const list = await t.call(`/api/v1/dead-letters?job=${encodeURIComponent(id)}`);
    expect(list.status).toBe(200);
    const dead = list.json.items.map((p: { task: string }) => p.task).sort() as string[];
    expect(dead).toHaveLength(2);
    const [first, second] = dead as [string, string];
    const shown = await t.call(`/api/v1/dead-letters/${encodeURIComponent(first)}`);
    expect(shown.status).toBe(200);
    expect(shown.json.error).toMatch(/parse exceptions/i);
    expect(shown.json.events.length).toBeGreaterThan(1);
    const done = (await t.store.listTasks(id)).find((p) => p.state === "done")!;
    expectProblem(await t.call(`/api/v1/dead-letters/${encodeURIComponent(done.id)}`), 409, "conflict");
    expectProblem(await t.call("/api/v1/dead-letters/nope"), 404, "not-found");

    const dropped = await t.call(`/api/v1/dead-letters/${encodeURIComponent(second)}/drop`, {
      method: "POST",
    });
    expect(dropped.status).toBe(200);
    expect(dropped.json.state).toBe("failed");
    expectProblem(
      await t.call(`/api/v1/dead-letters/${encodeURIComponent(second)}/drop`, { method: "POST" }),
      409,
      "conflict",
    );
    // The corrected day arrives; the retried dead letter now finishes.
    writeDailyDataset({
      from: first.endsWith("20260103-20260104") ? "2026-01-03" : "2026-01-04",
      days: 1,
      rowsPerDay: 5,
      dir: dataDir,
    });
    const retried = await t.call(`/api/v1/dead-letters/${encodeURIComponent(first)}/retry`, {
      method: "POST",
    });
    expect(retried.status).toBe(200);
    expect(retried.json.state).toBe("new");
    expectProblem(await t.call("/api/v1/dead-letters/nope/retry", { method: "POST" }), 404, "not-found");
    const after = await waitEnded(t, id);
    expect(after.job.counts).toMatchObject({ done: 3, failed: 1, dead: 0 });

    // The dropped one is failed: a job retry sends it back (its input still corrupt, dead once more).
    const retry = await t.call(jobPath(id, "/retry"), { method: "POST" });
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({ jobId: id, sent: [second] });
    const last = await waitEnded(t, id);
    expect(last.job.counts).toMatchObject({ done: 3, dead: 1 });
    expectProblem(await t.call(jobPath("nope", "/retry"), { method: "POST" }), 404, "not-found");
  });

  it("a job's retry may name the partitions to send back: only those, and none when one cannot be", async () => {
    const t = await startTestService({ service: { poisonAfter: 1 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 5 });
    writeCorruptDay(dataDir, "2026-01-03");
    writeCorruptDay(dataDir, "2026-01-04");
    const id = (await t.call("/api/v1/backfills", { json: backfillBody(dataDir, { to: "2026-01-05" }) })).json
      .id as string;
    expect((await waitEnded(t, id)).job.counts).toMatchObject({ done: 2, dead: 2 });
    const tasks = await t.store.listTasks(id);
    const [deadA, deadB] = tasks.filter((p) => p.state === "dead").map((p) => p.id) as [string, string];
    const rowB = tasks.find((p) => p.id === deadB)!;
    const done = tasks.find((p) => p.state === "done")!.id;
    const retry = (partitions: unknown) => t.call(jobPath(id, "/retry"), { json: { partitions } });

    // A done partition among them: 409 naming it, and the dead one beside it is not sent back either.
    const refused = await retry([deadA, done]);
    expectProblem(refused, 409, "conflict");
    expect(refused.json.detail).toContain(`${done} is done`);
    expectProblem(await retry([deadA, `${id}/20260109-20260110`]), 404, "not-found");
    expectProblem(await retry([]), 400, "invalid-request");
    expect((await t.store.listTasks(id)).filter((p) => p.state === "dead").map((p) => p.id)).toEqual([
      deadA,
      deadB,
    ]);

    // deadA is fixed; only it is sent back, and deadB's row is not written at all.
    writeDailyDataset({ from: "2026-01-03", days: 1, rowsPerDay: 5, dir: dataDir });
    const sent = await retry([deadA]);
    expect(sent.status, sent.text).toBe(200);
    expect(sent.json).toEqual({ jobId: id, sent: [deadA] });
    expect((await waitEnded(t, id)).job.counts).toMatchObject({ done: 3, dead: 1 });
    expect((await t.store.listTasks(id)).find((p) => p.id === deadB)).toEqual(rowB);
  });

  it("the version audit of a datasource: ok after a backfill, not ok when there is nothing, 400 without a datasource", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const job = await t.call("/api/v1/backfills", { json: backfillBody(dataDir) });
    await waitEnded(t, job.json.id);
    const audit = await t.call(
      "/api/v1/audit?datasource=api_events&interval=2026-01-01/2026-01-04&granularity=day",
    );
    expect(audit.status).toBe(200);
    expect(audit.json).toMatchObject({ ok: true, noSegments: false, violations: [] });
    expect(audit.json.chunks).toHaveLength(3);
    // A period in a time zone, written as JSON as backfills take it (local days: 4 chunks over 3 UTC days).
    const zoned = encodeURIComponent(
      JSON.stringify({ type: "period", period: "P1D", timeZone: "America/New_York" }),
    );
    const local = await t.call(
      `/api/v1/audit?datasource=api_events&interval=2026-01-01/2026-01-04&granularity=${zoned}`,
    );
    expect(local.status).toBe(200);
    expect(local.json.chunks.length).toBeGreaterThan(0);
    const none = await t.call("/api/v1/audit?datasource=nothing_here");
    expect(none.json).toMatchObject({ ok: false, noSegments: true });
    expectProblem(await t.call("/api/v1/audit"), 400, "invalid-request");
    const badInterval = await t.call("/api/v1/audit?datasource=api_events&interval=yesterday");
    expectProblem(badInterval, 400, "invalid-request");
    expect(badInterval.json.errors[0].path).toBe("interval");
  });
});

/** Server-sent events as `{event, id, data}` (comments and keep-alives dropped). */
function parseSse(text: string): { event: string; id?: string; data: string }[] {
  const out: { event: string; id?: string; data: string }[] = [];
  for (const block of text.split("\n\n")) {
    const lines = block.split("\n").filter((l) => l !== "" && !l.startsWith(":"));
    if (lines.length === 0) continue;
    const m: { event: string; id?: string; data: string } = { event: "message", data: "" };
    for (const line of lines) {
      const [field, ...rest] = line.split(":");
      const value = rest.join(":").replace(/^ /, "");
      if (field === "event") m.event = value;
      else if (field === "id") m.id = value;
      else if (field === "data") m.data = m.data ? `${m.data}\n${value}` : value;
    }
    out.push(m);
  }
  return out;
}
