import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type CliResult, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Secrets never leak: every command and the service's routes run with known Druid
 * credentials and a known API token, on success and failure paths (Druid down, Druid 500s, bad input, a
 * wrong token); then every byte they printed or answered and every ledger file is searched for the
 * password, the token and the base64 of `user:password` (what a Basic header carries).
 */

const USER = "segops_reader";
const PASSWORD = "pw-7f3Kq-not-for-any-log";
const API_TOKEN = "api-token-Zx81-must-never-leak-0001";
const BASIC = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
const SECRETS = [PASSWORD, API_TOKEN, BASIC];
const DS = "secrets";

let sim: SimHandle | undefined;
let work = "";
let template = "";
let dataDir = "";
const outputs: Array<{ what: string; text: string }> = [];
const env = { SEGOPS_DRUID_USER: USER, SEGOPS_DRUID_PASSWORD: PASSWORD };

beforeAll(async () => {
  sim = await startSim({ timeScale: 1000, handoffDelayMs: 500, seed: 3 });
  work = mkdtempSync(join(tmpdir(), "segops-secrets-"));
  dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 6, dir: join(work, "data") });
  template = join(work, "daily.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: DS })));
});
afterAll(async () => {
  await sim?.close();
});

async function cli(args: string[]): Promise<CliResult> {
  const r = await runCli(args, env).done;
  outputs.push({ what: `segops ${args.join(" ")}`, text: `${r.stdout}\n${r.stderr}` });
  return r;
}

function leaks(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

describe("no secret in any output, answer or ledger row", () => {
  it("the CLI's commands, on success and on failure", async () => {
    const url = (sim as SimHandle).url;
    const ledger = `sqlite:${join(work, "cli.db")}`;
    const druid = ["--druid", url];
    const vars = ["--var", `dataDir=${dataDir}`];
    const validate = await cli(["validate", template, "--interval", "2026-01-01/2026-01-02", ...vars]);
    expect(validate.code, validate.stderr).toBe(0);
    expect((await cli(["render", template, "--interval", "2026-01-01/2026-01-02", ...vars])).code).toBe(0);
    const run = await cli([
      "run",
      template,
      "--interval",
      "2026-01-01/2026-01-02",
      ...vars,
      ...druid,
      "--ledger",
      ledger,
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const backfill = await cli([
      "backfill",
      template,
      "--from",
      "2026-01-01",
      "--to",
      "2026-01-04",
      ...vars,
      ...druid,
      "--ledger",
      ledger,
    ]);
    expect(backfill.code, backfill.stderr).toBe(0);
    for (const args of [["jobs"], ["status"], ["dlq", "list"]])
      expect((await cli([...args, "--ledger", ledger])).code).toBe(0);
    expect((await cli(["audit", DS, "--interval", "2026-01-01/2026-01-04", ...druid])).code).toBe(0);
    await cli(["kill", DS, "--interval", "2026-01-01/2026-01-04", ...druid, "--ledger", ledger]);
    await cli([
      "compact",
      DS,
      "--interval",
      "2026-01-01/2026-01-04",
      ...druid,
      "--ledger",
      ledger,
      "--dry-run",
    ]);
    await cli([
      "rollback",
      DS,
      "--interval",
      "2026-01-01/2026-01-04",
      "--before",
      "2026-01-01T00:00:00Z",
      ...druid,
      "--ledger",
      ledger,
      "--dry-run",
    ]);
    // Failure paths: Druid down, Druid answering 500 to every submit, an unknown task, bad input.
    const down = await cli([
      "run",
      template,
      "--interval",
      "2026-01-02/2026-01-03",
      ...vars,
      "--druid",
      "http://127.0.0.1:9",
      "--ledger",
      ledger,
    ]);
    expect(down.code).toBe(4);
    (sim as SimHandle).setFaults([
      { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 500 },
    ]);
    const refused = await cli([
      "run",
      template,
      "--interval",
      "2026-01-03/2026-01-04",
      ...vars,
      ...druid,
      "--ledger",
      ledger,
      "--spec-version",
      "2",
      "--deadline",
      "5",
      "--json",
    ]);
    expect(refused.code).not.toBe(0);
    (sim as SimHandle).setFaults([]);
    expect((await cli(["wait", "no_such_task", ...druid, "--timeout", "1"])).code).not.toBe(0);
    expect(
      (await cli(["run", template, "--interval", "2026-01-02/2026-01-01", ...druid, "--ledger", ledger]))
        .code,
    ).toBe(2);

    // The credentials were really in play: a Druid stand-in that records headers sees the Basic header.
    const seen: string[] = [];
    const recorder = createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? ""));
      res.writeHead(404, { "content-type": "text/plain" }).end("Cannot find any task with id: [x]");
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    const port = (recorder.address() as AddressInfo).port;
    await cli(["wait", "no_such_task", "--druid", `http://127.0.0.1:${port}`, "--timeout", "1"]);
    await new Promise<void>((resolve) => recorder.close(() => resolve()));
    expect(seen).toContain(`Basic ${BASIC}`);

    for (const o of outputs) expect(leaks(o.text), o.what).toEqual([]);
    for (const file of ledgerFiles("cli.db")) expect(leaks(readFileSync(file, "latin1")), file).toEqual([]);
  }, 600_000);

  it("segops serve: its log, every route's answer, and its ledger", async () => {
    const url = (sim as SimHandle).url;
    const tokenFile = join(work, "api-token");
    writeFileSync(tokenFile, `${API_TOKEN}\n`);
    const serve = runCli(
      [
        "serve",
        "--port",
        "0",
        "--druid",
        url,
        "--ledger",
        `sqlite:${join(work, "serve.db")}`,
        "--api-token-file",
        tokenFile,
        "--tick",
        "50",
        "--log-level",
        "debug",
      ],
      env,
    );
    let base = "";
    await until(
      "the service listens",
      () => {
        const m = /listening on (http:\/\/[0-9.]+:\d+)/.exec(serve.output().stderr);
        if (m) base = m[1] as string;
        return base !== "";
      },
      { timeoutMs: 60_000, whileRunning: serve },
    );
    const answers: string[] = [];
    const call = async (path: string, init: RequestInit = {}, token: string | null = API_TOKEN) => {
      const res = await fetch(`${base}${path}`, {
        ...init,
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      });
      const text = await res.text();
      answers.push(
        `${res.status} ${path}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n${text}`,
      );
      return { status: res.status, text };
    };
    const created = await call("/api/v1/backfills", {
      method: "POST",
      body: JSON.stringify({
        template: dailyTemplate({ datasource: `${DS}_api` }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-03",
        vars: { dataDir },
      }),
    });
    expect(created.status, created.text).toBeLessThan(300);
    const id = (JSON.parse(created.text) as { id: string }).id;
    const waited = await call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    expect(JSON.parse(waited.text)).toMatchObject({ ended: true });
    for (const path of [
      "/api/v1/jobs",
      `/api/v1/jobs/${encodeURIComponent(id)}`,
      `/api/v1/jobs/${encodeURIComponent(id)}/events`,
      "/metrics",
      "/openapi.json",
      "/readyz",
      "/api/v1/no-such-route",
    ])
      await call(path);
    expect((await call("/api/v1/jobs", {}, "wrong-token-0123456789")).status).toBe(401);
    expect((await call("/api/v1/jobs", {}, null)).status).toBe(401);
    expect((await call("/api/v1/backfills", { method: "POST", body: "{ not json" })).status).toBe(400);
    serve.child.kill("SIGTERM");
    const ended = await serve.done;
    expect(ended.code).toBe(0);

    expect(leaks(`${ended.stdout}\n${ended.stderr}`)).toEqual([]);
    for (const a of answers) expect(leaks(a), a.split("\n")[0]).toEqual([]);
    for (const file of ledgerFiles("serve.db")) expect(leaks(readFileSync(file, "latin1")), file).toEqual([]);
  }, 180_000);
});

/** The SQLite ledger's files (the database and, while open or unmerged, its WAL). */
function ledgerFiles(name: string): string[] {
  const files = readdirSync(work)
    .filter((f) => f.startsWith(name))
    .map((f) => join(work, f));
  expect(existsSync(join(work, name))).toBe(true);
  return files;
}
