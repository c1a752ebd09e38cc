import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { histogramQuantile } from "../../src/serve/load-history.js";
import { findWebDir } from "../../src/serve/web.js";
import { dailyTemplate, writeCorruptDay, writeDailyDataset } from "../helpers/dataset.js";
import { otherUsersTask, startTestService, type TestService } from "../helpers/serve.js";

/**
 * The routes the dashboard reads (src/serve/dashboard/) and the static assets (web.ts), through
 * real HTTP against the service on the emulator: the login and its cookie, the job-list stream, grid
 * cells, one partition, per-partition actions, the segment timeline and the Druid load; bad input is a
 * 4xx problem, the token never reaches a log.
 */

const TOKEN = "dash-api-token-0123456789abcdef";

function body(dataDir: string, extra: Record<string, unknown> = {}) {
  return {
    template: dailyTemplate({ datasource: "dash_api" }),
    templateName: "daily.json",
    from: "2026-01-01",
    to: "2026-01-04",
    vars: { dataDir },
    ...extra,
  };
}

const enc = encodeURIComponent;

async function ended(t: TestService, id: string) {
  const res = await t.call(`/api/v1/jobs/${enc(id)}/wait?timeout=60`);
  expect(res.json.ended).toBe(true);
  return res.json;
}

function parseSse(text: string): { event: string; data: string }[] {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").filter((l) => l !== "" && !l.startsWith(":")))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const m = { event: "message", data: "" };
      for (const line of lines) {
        const [field, ...rest] = line.split(":");
        const value = rest.join(":").replace(/^ /, "");
        if (field === "event") m.event = value;
        else if (field === "data") m.data = value;
      }
      return m;
    });
}

describe("dashboard routes: the session", () => {
  it("login checks the token and sets an HttpOnly SameSite=Strict cookie; the cookie authenticates reads, and changes only from the same origin; logout clears it", async () => {
    const t = await startTestService({ token: TOKEN });
    expect((await t.call("/api/v1/session", { token: null })).json).toEqual({
      authRequired: true,
      authenticated: false,
    });
    expect((await t.call("/api/v1/session")).json).toEqual({ authRequired: true, authenticated: true });

    const wrong = await t.call("/api/v1/login", { token: null, json: { token: "nope" } });
    expect(wrong.status).toBe(401);
    expect(wrong.json.type).toBe("/problems/unauthorized");
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect((await t.call("/api/v1/login", { token: null, json: {} })).status).toBe(400);
    const extra = await t.call("/api/v1/login", { token: null, json: { token: TOKEN, extra: 1 } });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.json.errors)).toContain("extra");
    expect(JSON.stringify(extra.json)).not.toContain(TOKEN);
    const text = await t.call("/api/v1/login", {
      token: null,
      method: "POST",
      body: TOKEN,
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);

    const ok = await t.call("/api/v1/login", { token: null, json: { token: TOKEN } });
    expect(ok.status).toBe(204);
    const setCookie = ok.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^segops_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const cookie = setCookie.split(";")[0] as string;
    // The cookie is made from the token, not the token: no answer carries it, and it is no bearer token.
    expect(setCookie).not.toContain(TOKEN);
    expect((await t.call("/api/v1/jobs", { token: cookie.split("=")[1] })).status).toBe(401);
    expect(
      (await t.call("/api/v1/jobs", { token: null, headers: { cookie: `segops_session=${TOKEN}` } })).status,
    ).toBe(401);

    const read = await t.call("/api/v1/jobs", { token: null, headers: { cookie } });
    expect(read.status).toBe(200);
    expect((await t.call("/api/v1/session", { token: null, headers: { cookie } })).json.authenticated).toBe(
      true,
    );
    expect(
      (await t.call("/api/v1/jobs", { token: null, headers: { cookie: "segops_session=x" } })).status,
    ).toBe(401);
    // A change with the cookie must come from this origin (a cross-site form or fetch has another one).
    const host = new URL(t.service.url).host;
    const noOrigin = await t.call("/api/v1/jobs/x/retry", {
      token: null,
      method: "POST",
      headers: { cookie },
    });
    expect(noOrigin.status).toBe(401);
    const other = await t.call("/api/v1/jobs/x/retry", {
      token: null,
      method: "POST",
      headers: { cookie, origin: "http://elsewhere.example" },
    });
    expect(other.status).toBe(401);
    const same = await t.call("/api/v1/jobs/x/retry", {
      token: null,
      method: "POST",
      headers: { cookie, origin: `http://${host}` },
    });
    expect(same.status).toBe(404);
    // A bearer header is checked on its own: a wrong one is refused even with a good cookie.
    expect((await t.call("/api/v1/jobs", { token: "wrong", headers: { cookie } })).status).toBe(401);

    const out = await t.call("/api/v1/logout", { token: null, method: "POST" });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^segops_session=; .*Max-Age=0/);
    expect(t.logs.join("\n")).not.toContain(TOKEN);
  });

  it("without a token (loopback) the session needs nothing and login is a no-op", async () => {
    const t = await startTestService();
    expect((await t.call("/api/v1/session")).json).toEqual({ authRequired: false, authenticated: true });
    const login = await t.call("/api/v1/login", { json: { token: "anything" } });
    expect(login.status).toBe(204);
    expect(login.headers.get("set-cookie")).toBeNull();
  });
});

describe("dashboard routes: data", () => {
  it("the job-list stream sends a snapshot, `ready`, each change of a job, and `end` once nothing is left to run; filters apply", async () => {
    const t = await startTestService({ sim: { timeScale: 50 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    // Nothing in the ledger: an empty snapshot, then `end` at once (an EventSource reconnects in 2 s).
    const empty = parseSse(await (await fetch(`${t.service.url}/api/v1/stream`)).text());
    expect(empty.map((m) => m.event)).toEqual(["ready", "end"]);
    expect(JSON.parse(empty[0]?.data ?? "{}")).toEqual({ jobs: 0 });

    const job = await t.call("/api/v1/backfills", { json: body(dataDir) });
    const id = job.json.id as string;
    const res = await fetch(`${t.service.url}/api/v1/stream`);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const messages = parseSse(await res.text());
    expect(messages[0]?.event).toBe("job");
    expect(JSON.parse(messages[0]?.data ?? "{}")).toMatchObject({ id, datasource: "dash_api" });
    expect(messages[1]).toMatchObject({ event: "ready", data: JSON.stringify({ jobs: 1 }) });
    expect(messages.at(-1)?.event).toBe("end");
    const last = messages.filter((m) => m.event === "job").at(-1);
    expect(JSON.parse(last?.data ?? "{}")).toMatchObject({
      id,
      state: "done",
      range: "2026-01-01T00:00:00.000Z/2026-01-04T00:00:00.000Z",
      counts: { done: 3 },
    });
    const filtered = parseSse(await (await fetch(`${t.service.url}/api/v1/stream?datasource=other`)).text());
    expect(filtered.map((m) => m.event)).toEqual(["ready", "end"]);
    const failed = parseSse(await (await fetch(`${t.service.url}/api/v1/stream?state=failed`)).text());
    expect(failed.map((m) => m.event)).toEqual(["ready", "end"]);
    expect((await t.call("/api/v1/stream?limit=0")).status).toBe(400);
    expect((await t.call("/api/v1/stream?state=bogus")).json.errors[0].path).toBe("state");
  });

  it("a job's partitions as grid cells; one partition with its steps, Druid ids and events; retry and cancel of one partition", async () => {
    const t = await startTestService({ service: { poisonAfter: 1 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 5 });
    writeCorruptDay(dataDir, "2026-01-03"); // Druid fails it: dead-lettered on the first failure
    const job = await t.call("/api/v1/backfills", { json: body(dataDir) });
    const id = job.json.id as string;
    await ended(t, id);
    const grid = await t.call(`/api/v1/jobs/${enc(id)}/grid`);
    expect(grid.status).toBe(200);
    expect(grid.json.granularity).toBe("day");
    expect(grid.json.items.map((c: { start: string; state: string }) => [c.start, c.state])).toEqual([
      ["2026-01-01T00:00:00.000Z", "done"],
      ["2026-01-02T00:00:00.000Z", "done"],
      ["2026-01-03T00:00:00.000Z", "dead"],
    ]);
    const [done, , dead] = grid.json.items;
    expect(done.druidTaskIds).toHaveLength(1);
    expect(done).toMatchObject({ rows: 5, attempts: 1, error: null });
    expect(done.durationMs).toBeGreaterThan(0);
    expect(dead.error).toMatch(/parse exceptions/i);

    const detail = await t.call(`/api/v1/partitions/${enc(done.task)}`);
    expect(detail.status).toBe(200);
    expect(
      detail.json.steps.map((s: { name: string; at: string | null }) => [s.name, s.at !== null]),
    ).toEqual([
      ["submitted", true],
      ["running", true],
      ["succeeded", true],
      ["handed off", true],
      ["audited", true],
    ]);
    expect(detail.json.actions).toEqual([]);
    expect(detail.json.events.at(-1).toState).toBe("done");
    expect((await t.call(`/api/v1/partitions/${enc(dead.task)}`)).json.actions).toEqual([
      "dead-letter-retry",
      "dead-letter-drop",
    ]);

    const conflict = await t.call(`/api/v1/partitions/${enc(done.task)}/retry`, { method: "POST" });
    expect(conflict.status).toBe(409);
    expect((await t.call(`/api/v1/partitions/${enc(done.task)}/cancel`, { method: "POST" })).status).toBe(
      409,
    );
    expect((await t.call("/api/v1/partitions/nope", {})).status).toBe(404);
    expect((await t.call("/api/v1/partitions/nope/retry", { method: "POST" })).status).toBe(404);
    expect((await t.call("/api/v1/jobs/nope/grid")).status).toBe(404);

    // The corrected day arrives; retrying that one partition sends it back, and it ends done.
    writeDailyDataset({ from: "2026-01-03", days: 1, rowsPerDay: 5, dir: dataDir });
    const retried = await t.call(`/api/v1/partitions/${enc(dead.task)}/retry`, { method: "POST" });
    expect(retried.json).toEqual({ jobId: id, changed: [dead.task] });
    expect((await ended(t, id)).job.counts).toMatchObject({ done: 3, dead: 0 });
  });

  it("cancel of one running partition flags it; the rest of the job runs on", async () => {
    const t = await startTestService({ sim: { timeScale: 1 }, service: { concurrency: 1 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const job = await t.call("/api/v1/backfills", { json: body(dataDir) });
    const id = job.json.id as string;
    const first = `${id}/20260101-20260102`;
    const res = await t.call(`/api/v1/partitions/${enc(first)}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jobId: id, changed: [first] });
    expect((await t.store.getTask(first))?.canceled).toBe(true);
    expect((await t.store.getTask(`${id}/20260102-20260103`))?.canceled).toBe(false);
    // While the worker carries the cancel out nothing more is offered; once it has (the partition failed,
    // which can be within a tick), a retry is. Which of the two this read sees is the worker's pace.
    const now = (await t.call(`/api/v1/partitions/${enc(first)}`)).json;
    expect(now.actions).toEqual(now.state === "failed" ? ["retry"] : []);
    // The canceled one fails; the next one starts (one at a time here), uncanceled.
    const second = `${id}/20260102-20260103`;
    const states = async () => [
      (await t.store.getTask(first))?.state,
      (await t.store.getTask(second))?.state,
    ];
    for (let i = 0; i < 3000 && (await states()).join() !== "failed,running"; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(await states()).toEqual(["failed", "running"]);
    expect((await t.store.getTask(second))?.canceled).toBe(false);
    expect((await t.call(`/api/v1/partitions/${enc(first)}`)).json.actions).toEqual(["retry"]);
  });

  it("the segment timeline: live and older versions with sizes and rows, the audit of the range; a bad interval is 400", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    await ended(t, (await t.call("/api/v1/backfills", { json: body(dataDir) })).json.id);
    await ended(t, (await t.call("/api/v1/backfills", { json: body(dataDir, { new: true }) })).json.id);
    const tl = await t.call("/api/v1/datasources/dash_api/timeline?interval=2026-01-01/2026-01-04");
    expect(tl.status).toBe(200);
    expect(tl.json.interval).toBe("2026-01-01T00:00:00.000Z/2026-01-04T00:00:00.000Z");
    const segs = tl.json.segments as { status: string; start: string; version: string; rows: number }[];
    const live = segs.filter((s) => s.status === "live");
    expect(live.map((s) => s.start).sort()).toEqual([
      "2026-01-01T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z",
    ]);
    expect(live.every((s) => s.rows === 5)).toBe(true);
    expect(segs.filter((s) => s.status !== "live")).toHaveLength(3);
    // Newest versions first; every older one is below a newer live one of its chunk.
    for (const s of segs.filter((x) => x.status !== "live"))
      expect(live.find((l) => l.start === s.start)!.version > s.version).toBe(true);
    expect(tl.json.audit).toMatchObject({ ok: true });
    expect(tl.json.audit.chunks).toHaveLength(3);
    const bad = await t.call("/api/v1/datasources/dash_api/timeline?interval=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].path).toBe("interval");
    const unknown = await t.call("/api/v1/datasources/dash_api/timeline?granularity=day");
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.json.errors)).toContain("granularity");
    const none = await t.call("/api/v1/datasources/nothing/timeline");
    expect(none.json).toMatchObject({ segments: [], audit: { ok: false, noSegments: true } });
  });

  it("the Druid load: slot samples, requests per minute by endpoint, latency quantiles", async () => {
    const t = await startTestService({ service: { loadSampleMs: 50 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    await ended(t, (await t.call("/api/v1/backfills", { json: body(dataDir) })).json.id);
    const load = await t.call("/api/v1/druid/load");
    expect(load.status).toBe(200);
    expect(load.json.sampleMs).toBe(50);
    expect(load.json.samples.length).toBeGreaterThan(1);
    expect(load.json.samples.at(-1)).toMatchObject({ capacity: 8 });
    const submit = load.json.requestsPerMinute.find(
      (r: { endpoint: string }) => r.endpoint === "POST /druid/indexer/v1/task",
    );
    expect(submit.values).toHaveLength(load.json.samples.length);
    // 3 submissions in 50 ms samples: 3 × 1,200 a minute in all.
    expect(submit.values.reduce((a: number, b: number) => a + b, 0)).toBe(3600);
    // Their answers' bytes ({"task": id}, as the emulator serialises them, gzipped as the client asks), 1,200 times
    // over in per-minute rates.
    const submitBytes = load.json.bytesPerMinute.find(
      (r: { endpoint: string }) => r.endpoint === "POST /druid/indexer/v1/task",
    );
    const accepted = t.sim.stats().submissions.filter((r) => r.accepted);
    expect(accepted).toHaveLength(3);
    expect(submitBytes.values.reduce((a: number, b: number) => a + b, 0)).toBe(
      1200 * accepted.reduce((n, r) => n + gzipSync(JSON.stringify({ task: r.id })).length, 0),
    );
    expect(load.json.bytesPerMinute.map((r: { endpoint: string }) => r.endpoint)).toEqual(
      load.json.requestsPerMinute.map((r: { endpoint: string }) => r.endpoint),
    );
    expect(load.json.latency.handoff.count).toBe(3);
    expect(load.json.latency.handoff.p50).toBeGreaterThan(0);
    expect(load.json.blocked).toBeNull();
  });

  it("the Druid load says since when and on what the cluster blocks this host, and no more once a slot frees", async () => {
    const t = await startTestService({ sim: { capacity: 1 } });
    const blocker = await otherUsersTask(t);
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 3 });
    const before = Date.now();
    const created = await t.call("/api/v1/backfills", { json: body(dataDir, { to: "2026-01-02" }) });
    expect(created.status, created.text).toBe(201);
    let load = await t.call("/api/v1/druid/load");
    for (let i = 0; i < 2000 && load.json.blocked === null; i++) {
      await new Promise((r) => setTimeout(r, 10));
      load = await t.call("/api/v1/druid/load");
    }
    const { since, reason } = load.json.blocked;
    expect(Date.parse(since)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(since)).toBeLessThanOrEqual(Date.now());
    expect(reason).toMatch(/1 of 1 worker slots in use by other tasks/);
    expect(t.sim.stats().submissions.map((s) => s.id)).toEqual(["other_users_task"]);
    await blocker.free();
    expect((await ended(t, created.json.id)).job.state).toBe("done");
    expect((await t.call("/api/v1/druid/load")).json.blocked).toBeNull();
  });
});

describe("the audit's bound", () => {
  it("an audit cut into more than 100,000 chunks is a 400 naming the granularity, refused before asking Druid", async () => {
    const t = await startTestService();
    // What an audit reads (the Coordinator's segments, the Broker); the worker's own polling aside.
    const reads = () =>
      Object.entries(t.sim.stats().requests).filter(([route]) => /\/druid\/(coordinator|v2)\//.test(route));
    const before = reads();
    const res = await t.call("/api/v1/audit?datasource=dash_api&granularity=hour");
    expect(res.status).toBe(400);
    expect(reads()).toEqual(before);
    expect(res.json.errors[0]).toMatchObject({ in: "query", path: "granularity" });
    expect(res.json.detail).toMatch(/more than 100,000; narrow the interval/);
    // The same granularity over a year is fine (no segments there: an empty audit, not an error).
    const year = await t.call(
      "/api/v1/audit?datasource=dash_api&granularity=hour&interval=2026-01-01/2027-01-01",
    );
    expect(year.status).toBe(200);
    expect(year.json.noSegments).toBe(true);
    expect(reads(), "an audit that runs reads Druid").not.toEqual(before);
  });
});

describe("dashboard: static assets", () => {
  it("serves index.html at / with a strict CSP, assets by name (gzip when asked), 404 for others; 503 when not built", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-web-test-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), '<!doctype html><script src="./assets/app-1.js"></script>');
    writeFileSync(join(dir, "assets", "app-1.js"), `console.log(${JSON.stringify("x".repeat(2000))});`);
    const t = await startTestService({ token: TOKEN, service: { webDir: dir } });
    const index = await fetch(`${t.service.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("content-security-policy")).toMatch(/default-src 'self'; script-src 'self'/);
    expect(index.headers.get("x-frame-options")).toBe("DENY");
    expect(await index.text()).toContain("app-1.js");
    const js = await fetch(`${t.service.url}/assets/app-1.js`, { headers: { "accept-encoding": "gzip" } });
    expect(js.headers.get("content-encoding")).toBe("gzip");
    expect(js.headers.get("cache-control")).toMatch(/immutable/);
    expect(await js.text()).toContain("xxxx"); // fetch decodes it
    expect((await fetch(`${t.service.url}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${t.service.url}/assets/..%2Findex.html`)).status).toBe(404);

    const none = await startTestService({ service: { webDir: null } });
    const res = await none.call("/");
    expect(res.status).toBe(503);
    expect(res.json.detail).toMatch(/npm run build/);
  });

  it("finds the build next to dist/serve (installed) and in the checkout's dist/web (run from src/)", () => {
    const root = mkdtempSync(join(tmpdir(), "segops-find-web-"));
    mkdirSync(join(root, "dist", "serve"), { recursive: true });
    mkdirSync(join(root, "src", "serve"), { recursive: true });
    expect(findWebDir(join(root, "dist", "serve"))).toBeNull();
    mkdirSync(join(root, "dist", "web"));
    writeFileSync(join(root, "dist", "web", "index.html"), "");
    expect(findWebDir(join(root, "dist", "serve"))).toBe(join(root, "dist", "web"));
    expect(findWebDir(join(root, "src", "serve"))).toBe(join(root, "dist", "web"));
  });

  it("histogram quantiles interpolate within buckets as Prometheus does", () => {
    const buckets = [
      { le: 1, count: 2 },
      { le: 2, count: 6 },
      { le: 4, count: 10 },
      { le: Number.POSITIVE_INFINITY, count: 10 },
    ];
    expect(histogramQuantile(0.5, buckets)).toBe(1.75);
    expect(histogramQuantile(0.1, buckets)).toBe(0.5);
    expect(histogramQuantile(0.9, buckets)).toBe(3.5);
    expect(histogramQuantile(0.5, [{ le: Number.POSITIVE_INFINITY, count: 0 }])).toBeNull();
    expect(
      histogramQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Number.POSITIVE_INFINITY, count: 5 },
      ]),
    ).toBe(1);
  });
});
