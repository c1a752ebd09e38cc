import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/serve/app.js";
import type { ApiDeps } from "../../src/serve/deps.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type CliRun, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * The OpenAPI document validates, and an API fuzzer (schemathesis, against a real
 * `segops serve` process on the emulator) finds no 5xx and no response that breaks the schema.
 *
 * schemathesis comes from the hashed lock test/fuzz/requirements.txt, installed into .venv-fuzz by
 * scripts/python-env.sh (run by scripts/provision.sh, and here: a no-op once installed); its settings,
 * and the reasons for the two checks whose accepted statuses are widened, are in
 * test/fuzz/schemathesis.toml. The run is seeded (SEGOPS_FUZZ_SEED overrides, SEGOPS_FUZZ_EXAMPLES the
 * examples per operation) so a failure reproduces.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCHEMATHESIS = join(ROOT, ".venv-fuzz", "bin", "schemathesis");
const CONFIG = join(ROOT, "test", "fuzz", "schemathesis.toml");
const TOKEN = "fuzz-token-0123456789abcdef";
const SEED = process.env.SEGOPS_FUZZ_SEED ?? "1";
const EXAMPLES = process.env.SEGOPS_FUZZ_EXAMPLES ?? "100";
/**
 * The run is bounded by its examples (about 4,700 requests), not by time: it takes 1 to 3 minutes depending
 * on the machine's load, most of it schemathesis generating data. This cap only stops a run that hangs, and
 * then the test shows what schemathesis had printed by then (the test's own timeout is a minute longer).
 */
const FUZZ_CAP_MS = 20 * 60_000;

/** The table the service registers its handlers from (building it touches none of the deps). */
const ROUTES = buildApp({ token: TOKEN, streams: { open: 0 } } as unknown as ApiDeps).routes;

let sim: SimHandle;
let serve: CliRun;
let base = "";
let serveLog = "";
let config = "";

async function api(path: string, init: RequestInit & { json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers,
    ...(init.json !== undefined ? { method: "POST", body: JSON.stringify(init.json) } : {}),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Lines cut to a readable length (a fuzzed URL can be many kilobytes). */
function readable(output: string): string {
  return output
    .split("\n")
    .map((line) => (line.length > 1000 ? `${line.slice(0, 1000)} … (${line.length} characters)` : line))
    .join("\n");
}

beforeAll(async () => {
  const env = spawnSync("bash", [join(ROOT, "scripts", "python-env.sh")], { encoding: "utf8" });
  if (env.status !== 0) throw new Error(`scripts/python-env.sh failed:\n${env.stdout}${env.stderr}`);

  sim = await startSim({ timeScale: 200, capacity: 8, handoffDelayMs: 2000, seed: 5 });
  const dir = mkdtempSync(join(tmpdir(), "segops-fuzz-"));
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, `${TOKEN}\n`);
  serve = runCli([
    "serve",
    "--port",
    "0",
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${join(dir, "ledger.db")}`,
    "--api-token-file",
    tokenFile,
    "--log-level",
    "warn",
    "--tick",
    "20",
  ]);
  serve.child.stderr?.on("data", (d) => {
    serveLog += d;
  });
  serve.child.stdout?.on("data", (d) => {
    serveLog += d;
  });
  await until("segops serve listening", () => /listening on http:\/\/\S+/.test(serveLog), {
    timeoutMs: 30_000,
    whileRunning: serve,
  });
  base = /listening on (http:\/\/[^\s]+)/.exec(serveLog)?.[1] ?? "";

  // Real data for the reads: a backfill, a run, and a backfill with a corrupt day that is dead-lettered.
  const good = writeDailyDataset({ from: "2026-03-01", days: 3, rowsPerDay: 24 });
  const poison = writeDailyDataset({ from: "2026-03-10", days: 2, rowsPerDay: 24 });
  writeFileSync(join(poison, "events-2026-03-11.json"), '{"ts": "2026-03-11T01:00:00Z", "channel": "#c1"\n');
  const requests: Array<[string, Record<string, unknown>]> = [
    [
      "/api/v1/backfills",
      {
        template: dailyTemplate({ datasource: "fuzz_daily" }),
        vars: { dataDir: good },
        from: "2026-03-01",
        to: "2026-03-04",
      },
    ],
    [
      "/api/v1/runs",
      {
        template: JSON.stringify(dailyTemplate({ datasource: "fuzz_run" })),
        templateName: "daily.json",
        vars: { dataDir: good },
        interval: "2026-03-02/2026-03-03",
      },
    ],
    [
      "/api/v1/backfills",
      {
        template: dailyTemplate({ datasource: "fuzz_poison" }),
        vars: { dataDir: poison },
        from: "2026-03-10",
        to: "2026-03-12",
        poisonAfter: 1,
      },
    ],
  ];
  const ids: string[] = [];
  for (const [path, body] of requests) {
    const res = await api(path, { json: body, headers: { "idempotency-key": `fuzz-setup-${ids.length}` } });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    ids.push(String(res.json.id));
  }
  for (const id of ids) {
    // Ended jobs answer waits and streams at once, so the fuzzer's long-polls stay short.
    await until(
      `job ${id} ended`,
      async () => (await api(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=5`)).json.ended === true,
      { timeoutMs: 60_000, whileRunning: serve },
    );
  }
  const dead = (await api("/api/v1/dead-letters")).json.items as Array<{ task: string }>;
  if (dead.length !== 1) throw new Error(`expected one dead letter, got ${JSON.stringify(dead)}`);

  // The committed settings, plus the ids of this data as dictionaries: half the generated ids, task ids and
  // datasources are real ones, so the fuzzed requests reach found jobs, dead letters and audits too.
  const toml = (values: string[]) => `[${values.map((v) => JSON.stringify(v)).join(", ")}]`;
  config = join(dir, "schemathesis.toml");
  writeFileSync(
    config,
    `${readFileSync(CONFIG, "utf8")}
# Added by test/serve/openapi.test.ts: the data it created.
[dictionaries.jobs]
values = ${toml(ids)}
[dictionaries.deadLetters]
values = ${toml(dead.map((d) => d.task))}
[dictionaries.datasources]
values = ${toml(["fuzz_daily", "fuzz_run", "fuzz_poison"])}
[parameters]
"path.id" = { dictionary = "jobs", probability = 0.5 }
"query.job" = { dictionary = "jobs", probability = 0.5 }
"path.taskId" = { dictionary = "deadLetters", probability = 0.5 }
"query.datasource" = { dictionary = "datasources", probability = 0.5 }
`,
  );
}, 120_000);

afterAll(async () => {
  if (serve && !serve.exited) {
    serve.child.kill("SIGTERM");
    const killer = setTimeout(() => serve.child.kill("SIGKILL"), 10_000);
    await serve.done;
    clearTimeout(killer);
  }
  await sim?.close();
}, 30_000);

describe("the OpenAPI document of segops serve", () => {
  it("validates as OpenAPI 3.1 (swagger-parser: structure, and every $ref resolves)", async () => {
    const res = await fetch(`${base}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc.openapi).toBe("3.1.0");
    await SwaggerParser.validate(structuredClone(doc) as never);
  });

  it("describes every route of the route table, and nothing else", async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string; security: unknown[] }>>;
    };
    const routes = ROUTES;
    expect(routes.length).toBeGreaterThan(10);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(documented.sort()).toEqual(
      routes.map((r) => `${r.method.toUpperCase()} ${r.path} ${r.operationId}`).sort(),
    );
    for (const r of routes)
      expect(doc.paths[r.path]?.[r.method]?.security, `${r.operationId} security`).toEqual(
        r.auth ? [{ bearer: [] }] : [],
      );
  });

  it("answers what the fuzzer first found with problems (regressions)", async () => {
    for (const query of ["limit=1&limit=2", "limit=", "limit=%20", "limit=0x10"]) {
      const res = await api(`/api/v1/jobs?${query}`);
      expect(res.status, query).toBe(400);
      expect((res.json.errors as Array<{ path: string }>)[0]?.path, query).toBe("limit");
    }
    const put = await fetch(`${base}/api/v1/jobs`, { method: "PUT" });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "GET"]);
    const long = await fetch(`${base}/api/v1/jobs?cursor=${"a".repeat(20_000)}`);
    expect([long.status, long.headers.get("content-type")]).toEqual([431, "application/problem+json"]);
    expect(((await long.json()) as { type: string }).type).toBe("/problems/headers-too-large");
  });

  it("holds against schemathesis: no 5xx, every response as documented, bad input refused with a problem", async () => {
    const args = [
      "--config-file",
      config,
      "run",
      `${base}/openapi.json`,
      "--header",
      `Authorization: Bearer ${TOKEN}`,
      "--max-examples",
      EXAMPLES,
      "--seed",
      SEED,
      // One worker: schemathesis parses in threads, and CPython 3.11's ast module is not thread-safe
      // (gh-106905: a spurious "AST constructor recursion depth mismatch" SystemError).
      "--workers",
      "1",
      // A cap for a request that never answers (the slowest seen take under a second), not a speed check.
      "--request-timeout",
      "120",
      "--generation-database",
      "none",
      "--no-color",
      ...(process.env.SEGOPS_FUZZ_REPORT_DIR
        ? ["--report", "har", "--report-dir", process.env.SEGOPS_FUZZ_REPORT_DIR]
        : []),
    ];
    const started = Date.now();
    const fuzzer = spawn(SCHEMATHESIS, args, {
      cwd: mkdtempSync(join(tmpdir(), "segops-schemathesis-")),
      env: { ...process.env, NO_COLOR: "1", COLUMNS: "120" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    fuzzer.stdout.on("data", (d) => {
      output += d;
    });
    fuzzer.stderr.on("data", (d) => {
      output += d;
    });
    let capped = false;
    const killer = setTimeout(() => {
      capped = true;
      fuzzer.kill("SIGKILL");
    }, FUZZ_CAP_MS);
    const code = await new Promise<number | null>((resolve) => fuzzer.on("close", resolve));
    clearTimeout(killer);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (process.env.SEGOPS_FUZZ_VERBOSE) console.log(`schemathesis (${seconds} s):\n${readable(output)}`);
    const ended = capped ? `was stopped at the ${FUZZ_CAP_MS / 60_000}-minute cap` : `exited ${code}`;
    expect(
      code,
      `schemathesis ${ended} after ${seconds} s (seed ${SEED}, load average ${loadavg()[0]?.toFixed(1)}):\n${readable(output)}\n--- segops serve output ---\n${readable(serveLog)}`,
    ).toBe(0);
    // A run that tested nothing would pass too.
    expect(output).toMatch(new RegExp(`Tested: ${ROUTES.length}\\b`));
    expect(serve.exited, "segops serve is still running").toBeNull();
    // Nor a process warning (e.g. listeners piling up on a signal every request shares).
    expect(serveLog).not.toMatch(/Warning:/);
  }, 1_260_000);
});
