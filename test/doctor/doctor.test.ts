import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { API_PROBES, UNTRIED_WRITES } from "../../src/doctor/probes.js";
import type { DoctorReport } from "../../src/doctor/report.js";
import { CAPABILITY_ROWS, flagsFor } from "../../src/druid/capabilities.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";
import { startGateProxy } from "./gate-proxy.js";

const dir = mkdtempSync(join(tmpdir(), "segops-doctor-"));
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return path;
}

async function sim(druidVersion?: number): Promise<SimHandle> {
  const s = await startSim({ ...(druidVersion !== undefined ? { druidVersion } : {}) });
  closers.push(() => s.close());
  return s;
}

async function doctor(...args: string[]) {
  const r = await segopsInProcess(["doctor", ...args]);
  return {
    ...r,
    report: args.includes("--json") && r.out !== "" ? (JSON.parse(r.out) as DoctorReport) : null,
  };
}

const codes = (r: DoctorReport) => r.findings.map((f) => f.code);

const TEMPLATE = {
  type: "index_parallel",
  spec: {
    dataSchema: {
      dataSource: "wiki",
      timestampSpec: { column: "time", format: "iso" },
      dimensionsSpec: { dimensions: ["page"] },
      granularitySpec: { segmentGranularity: "day", queryGranularity: "none" },
    },
    ioConfig: {
      type: "index_parallel",
      inputSource: { type: "local", baseDir: "/data", filter: "wiki-{{start:yyyy-MM-dd}}.json" },
      inputFormat: { type: "json" },
      dropExisting: true,
    },
    tuningConfig: { type: "index_parallel" },
  },
};

describe("segops doctor against the emulator, per release", () => {
  for (const version of [33, 35, 37, 39]) {
    it(`Druid ${version}: the release, the behaviours of its rows, every API usable, exit 0`, async () => {
      const s = await sim(version);
      const { code, report } = await doctor("--druid", s.url, "--json", file(`ok-${version}.json`, TEMPLATE));
      expect(code).toBe(0);
      if (!report) throw new Error("no report");
      expect(report.release).toEqual({ reported: `${version}.0.0`, behavesAs: version, warning: null });
      const flags = flagsFor(version) as unknown as Record<string, boolean>;
      expect(report.behaviours.map((b) => [b.key, b.applies])).toEqual(
        CAPABILITY_ROWS.map((row) => [row.key, flags[row.key]]),
      );
      expect(report.router.verdict).toBe("management-proxy");
      expect(report.permissions.map((p) => [p.id, p.verdict])).toEqual([
        ...API_PROBES.map((p) => [p.id, "can"]),
        ...UNTRIED_WRITES.map((w) => [w.id, "not-tried"]),
      ]);
      expect(report.templates).toEqual([{ file: expect.stringContaining("ok-"), dataSource: "wiki" }]);
      expect(report.blockers).toBe(0);
      expect(report.findings.filter((f) => f.severity !== "note").map((f) => f.code)).toEqual([]);
      // The emulator's runtime properties set no auto-kill.
      expect(report.findings.find((f) => f.code === "auto-kill")?.message).toMatch(/^no auto-kill is on/);
    });
  }

  it("reads the auto-kill settings from the services' runtime properties and holds them to --rollback-horizon", async () => {
    const s = await startSim({
      druidVersion: 35,
      runtimeProperties: {
        "druid.coordinator.kill.on": "true",
        "druid.coordinator.kill.bufferPeriod": "P7D",
        "druid.manager.segments.killUnused.enabled": "true",
      },
    });
    closers.push(() => s.close());
    const { code, report } = await doctor("--druid", s.url, "--json", "--rollback-horizon", "P30D");
    expect(code).toBe(0);
    const kills = report?.findings.filter((f) => f.code === "auto-kill").map((f) => f.message) ?? [];
    expect(kills).toEqual([
      expect.stringMatching(
        /Coordinator's auto-kill .* is on: unused segments of every datasource .* deleted P7D after/,
      ),
      expect.stringMatching(/Overlord's embedded kill .* is on: unused segments are deleted P30D after/),
    ]);
    const horizon = report?.findings.filter((f) => f.code === "rollback-horizon") ?? [];
    expect(horizon.map((f) => f.severity)).toEqual(["warning"]);
    expect(horizon[0]?.message).toContain("P7D");
    const bad = await doctor("--druid", s.url, "--rollback-horizon", "30 days");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--rollback-horizon");
  });

  it('--json has the documented shape (docs/doctor.md, "--json")', async () => {
    const s = await sim(35);
    const { report } = await doctor("--druid", s.url, "--json", file("shape.json", TEMPLATE));
    if (!report) throw new Error("no report");
    expect(Object.keys(report)).toEqual([
      "endpoints",
      "release",
      "behaviours",
      "router",
      "permissions",
      "templates",
      "findings",
      "blockers",
      "exitCode",
    ]);
    expect(Object.keys(report.permissions[0] ?? {})).toEqual([
      "id",
      "api",
      "resource",
      "action",
      "verdict",
      "status",
      "usedFor",
      "cost",
      "required",
    ]);
    for (const f of report.findings) expect(["blocker", "warning", "note"]).toContain(f.severity);
  });

  it("prints the release line and 'ready' in text", async () => {
    const s = await sim(33);
    const { code, out } = await doctor("--druid", s.url);
    expect(code).toBe(0);
    expect(out).toMatch(/^release: Druid 33\.0\.0$/m);
    expect(out).toMatch(/^ {2}yes {2}taskLimits: /m);
    expect(out).toMatch(/^ready: no blocker$/m);
  });
});

describe("segops doctor: permissions", () => {
  it("a refused optional API is a warning with what it costs; exit 0", async () => {
    const s = await sim();
    const p = await startGateProxy(s.url, { refuse: { "/druid/indexer/v1/worker": 403 } });
    closers.push(() => p.close());
    const { code, report } = await doctor("--druid", p.url, "--json");
    expect(code).toBe(0);
    const row = report?.permissions.find((x) => x.id === "overlord.workerConfig");
    expect(row).toMatchObject({ verdict: "cannot", status: 403, resource: "CONFIG", action: "READ" });
    expect(row?.cost).toMatch(/task-type limits are unseen/);
    const denied = report?.findings.find((f) => f.code === "permission-denied");
    expect(denied).toMatchObject({ severity: "warning" });
    expect(denied?.message).toContain("GET /druid/indexer/v1/worker refused (HTTP 403; needs CONFIG READ)");
  });

  it("a refused API segops cannot run without is a blocker: exit 1, and the text names it", async () => {
    const s = await sim();
    const p = await startGateProxy(s.url, {
      refuse: { "/druid/coordinator/v1/metadata/datasources/wiki/segments": 403 },
    });
    closers.push(() => p.close());
    const tpl = file("wiki.json", TEMPLATE);
    const json = await doctor("--druid", p.url, "--json", tpl);
    expect(json.code).toBe(1);
    expect(json.report?.findings[0]).toMatchObject({ severity: "blocker", code: "permission-denied" });
    const text = await doctor("--druid", p.url, tpl);
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/^not ready: 1 blocker \(permission-denied\)$/m);
    expect(text.out).toMatch(/cannot GET \/druid\/coordinator\/v1\/metadata\/datasources\/wiki\/segments/);
  });

  it("401 says the credentials were refused, and never prints them", async () => {
    const s = await sim();
    const refuse = Object.fromEntries(
      [...API_PROBES.map((x) => x.path.replace("{dataSource}", "segops-doctor-probe")), "/status"].map(
        (x) => [x, 401 as const],
      ),
    );
    const p = await startGateProxy(s.url, { refuse });
    closers.push(() => p.close());
    const secret = "pw-Zx81-never-shown";
    const pw = file("pw", secret);
    const r = await doctor("--druid", p.url, "--user", "ops", "--password-file", pw, "--json");
    expect(r.code).toBe(1);
    expect(r.report ? codes(r.report) : []).toContain("unauthenticated");
    const everything = r.out + r.err;
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(Buffer.from(`ops:${secret}`).toString("base64"));
  });
});

describe("segops doctor: the URL", () => {
  it("tells a Router without its management proxy: one blocker, exit 1", async () => {
    const s = await sim();
    const p = await startGateProxy(s.url, { noManagementProxy: true });
    closers.push(() => p.close());
    const { code, report, out } = await doctor("--druid", p.url, "--json");
    expect(code).toBe(1);
    expect(report?.router.verdict).toBe("no-management-proxy");
    expect(report?.findings.filter((f) => f.severity !== "note").map((f) => f.code)).toEqual([
      "router-without-proxy",
    ]);
    expect(out).toContain("druid.router.managementProxy.enabled=true");
  });

  it("follows a path prefix in --druid, and says when the prefix is wrong", async () => {
    const s = await sim(35);
    const p = await startGateProxy(s.url, { prefix: "/druid-gw" });
    closers.push(() => p.close());
    const ok = await doctor("--druid", p.url, "--json");
    expect(ok.code).toBe(0);
    expect(ok.report?.release.reported).toBe("35.0.0");
    expect(p.seen).toContain("/druid/indexer/v1/workers");
    const wrong = await doctor("--druid", p.url.replace("/druid-gw", "/gw"), "--json");
    expect(wrong.code).toBe(1);
    expect(wrong.report ? codes(wrong.report) : []).toEqual(["druid-not-found"]);
  });

  it("a Druid that does not answer is one blocker, and no API is asked on its own", async () => {
    const s = await sim();
    const url = s.url;
    await s.close();
    const { code, report } = await doctor("--druid", url, "--json", "--retry-budget", "1");
    expect(code).toBe(1);
    expect(report ? codes(report) : []).toEqual(["druid-unreachable"]);
    expect(new Set(report?.permissions.map((p) => `${p.verdict} ${p.status}`))).toEqual(
      new Set(["unknown null", "not-tried null"]),
    );
  });

  it("with --overlord/--coordinator the Router check does not apply", async () => {
    const s = await sim();
    const { code, report } = await doctor("--overlord", s.url, "--coordinator", s.url, "--json");
    expect(code).toBe(0);
    expect(report?.router.verdict).toBe("direct");
  });
});

describe("segops doctor: settings and template lints", () => {
  it("auto-compaction on the template's datasource is a warning, a note where segops keeps it out (Druid 39)", async () => {
    const s = await sim();
    const p = await startGateProxy(s.url, {
      answers: {
        "/druid/coordinator/v1/config/compaction": {
          compactionConfigs: [{ dataSource: "wiki", skipOffsetFromLatest: "PT6H" }],
          compactionTaskSlotRatio: 0.25,
          maxCompactionTaskSlots: 2147483647,
        },
      },
    });
    closers.push(() => p.close());
    const { code, report } = await doctor("--druid", p.url, "--json", file("wiki2.json", TEMPLATE));
    expect(code).toBe(0);
    const found = report?.findings.find((f) => f.code === "auto-compaction");
    expect(found?.severity).toBe("warning");
    expect(found?.message).toContain("wiki (skipOffsetFromLatest PT6H)");
    expect(report?.findings.find((f) => f.code === "compaction-slots")?.message).toContain("25%");
    // On Druid 39 segops keeps compaction out of the partition it writes (skipIntervals): a note.
    const s39 = await sim(39);
    const p39 = await startGateProxy(s39.url, {
      answers: { "/druid/coordinator/v1/config/compaction": { compactionConfigs: [{ dataSource: "wiki" }] } },
    });
    closers.push(() => p39.close());
    const on39 = await doctor("--druid", p39.url, "--json", file("wiki39.json", TEMPLATE));
    expect(on39.report?.findings.find((f) => f.code === "auto-compaction")).toMatchObject({
      severity: "note",
    });
    expect(on39.report?.findings.find((f) => f.code === "auto-compaction")?.message).toContain(
      "skipIntervals",
    );
  });

  it("lints a template: now() (refused), unlimited parse exceptions, an append nobody versions", async () => {
    const s = await sim(37);
    const t = {
      ...TEMPLATE,
      spec: {
        dataSchema: {
          ...TEMPLATE.spec.dataSchema,
          transformSpec: { transforms: [{ type: "expression", name: "seen", expression: "now()" }] },
        },
        ioConfig: {
          type: "index_parallel",
          inputSource: { type: "s3", prefixes: ["s3://bucket/wiki/"] },
          inputFormat: { type: "json" },
          appendToExisting: true,
        },
        tuningConfig: { type: "index_parallel", maxParseExceptions: 2147483647 },
      },
    };
    const { code, report } = await doctor("--druid", s.url, "--json", file("lints.json", t));
    // now() is refused by segops' own rules (segops validate): a blocker; the others are warnings.
    expect(code).toBe(1);
    const lints = report?.findings.filter((f) => f.code.startsWith("lint-")) ?? [];
    expect(lints.map((f) => [f.code, f.severity, f.path])).toEqual([
      ["lint-now", "blocker", "spec.dataSchema.transformSpec.transforms[0].expression"],
      ["lint-unlimited-parse-exceptions", "warning", "spec.tuningConfig.maxParseExceptions"],
      ["lint-append-without-source-version", "warning", "spec.ioConfig.appendToExisting"],
    ]);
  });

  it("an index_hadoop template is a blocker that offers segops convert; SET statements are no blocker on any release", async () => {
    const hadoop = file("hadoop.json", {
      type: "index_hadoop",
      spec: { dataSchema: { dataSource: "wiki" } },
    });
    const sql = file(
      "set.sql",
      'SET maxNumTasks = 3;\nREPLACE INTO "wiki" OVERWRITE WHERE __time >= TIMESTAMP \'{{start}}\' AND __time < TIMESTAMP \'{{end}}\'\nSELECT * FROM TABLE(EXTERN(\'{"type":"local","baseDir":"/d","filter":"*"}\', \'{"type":"json"}\')) PARTITIONED BY DAY\n',
    );
    const on39 = await doctor("--druid", (await sim(39)).url, "--json", hadoop, sql);
    expect(on39.code).toBe(1);
    const blockers = on39.report?.findings.filter((f) => f.severity === "blocker") ?? [];
    expect(blockers.map((f) => f.code)).toEqual(["lint-index-hadoop"]);
    expect(blockers[0]?.message).toContain("Druid 39) has no Hadoop ingestion");
    expect(blockers[0]?.message).toContain(`segops convert ${hadoop}`);
    // Before Druid 34 segops moves the SETs into the request context: said, not refused.
    const on33 = await doctor("--druid", (await sim(33)).url, "--json", sql);
    expect(on33.code).toBe(0);
    expect(on33.report?.findings.find((f) => f.code === "lint-sql-set")).toMatchObject({
      severity: "warning",
    });
  });
});

describe("segops doctor: bad input", () => {
  it("exits 2 naming the flag or file (the connection flags as every command reads them), asking Druid nothing", async () => {
    const s = await sim();
    const p = await startGateProxy(s.url, {});
    closers.push(() => p.close());
    const url = await doctor("--druid", "not a url");
    expect(url.code).toBe(2);
    expect(url.err).toContain("--druid");
    const ca = await doctor("--druid", p.url, "--ca-file", join(dir, "no-ca.pem"));
    expect(ca.code).toBe(2);
    expect(ca.err).toContain("--ca-file");
    const noPassword = await doctor("--druid", p.url, "--user", "ops", "--password-file", join(dir, "no-pw"));
    expect(noPassword.code).toBe(2);
    expect(noPassword.err).toContain("--password-file");
    const missing = await doctor("--druid", p.url, join(dir, "nope.json"));
    expect(missing.code).toBe(2);
    expect(missing.err).toContain("nope.json");
    expect(p.seen).toEqual([]);
  });
});
