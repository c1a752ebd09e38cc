import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/commands/serve.js";
import { applyConfigFile } from "../../src/cli/commands/serve-action.js";
import { deriveTaskId } from "../../src/core/task-id.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type CliOutcome, segopsInProcess } from "../helpers/cli-in-process.js";
import { ingestArgs } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Breaks found by the generated CLI cases (test/fuzz/cli-flags.test.ts), one test each, named
 * after the break. Each ran the CLI in this process against the emulator: bad input must be exit 2 naming
 * the flag or setting, with nothing submitted.
 */

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-generated-cli-"));
const template = join(work, "daily.json");
let dataDir = "";

beforeAll(async () => {
  sim = await startSim({ timeScale: 1000, handoffDelayMs: 100, seed: 5 });
  dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 2, dir: join(work, "data") });
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "generated_cli" })));
});
afterAll(async () => {
  await sim?.close();
});

const segops = (args: string[]): Promise<CliOutcome> => segopsInProcess(args);

function run(...extra: string[]): Promise<CliOutcome> {
  return segops([
    ...ingestArgs({
      template,
      dataDir,
      druid: sim.url,
      ledgerPath: join(work, "ledger.db"),
      range: { interval: "2026-01-01/2026-01-02" },
    }),
    "--json",
    ...extra,
  ]);
}

const submitted = () => sim.stats().submissions.length;

async function serveConfig(text: string, args: string[] = []): Promise<Record<string, unknown>> {
  const program = new Command("segops").exitOverride();
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === "serve") as Command;
  serve.action(() => undefined); // parse only: nothing is served
  await program.parseAsync(["serve", ...args], { from: "user" });
  const file = join(mkdtempSync(join(tmpdir(), "segops-generated-cfg-")), "serve.yaml");
  writeFileSync(file, text);
  applyConfigFile(serve, file);
  return serve.opts();
}

describe("breaks found by the generated CLI cases", () => {
  it("a huge --tick or --lease (past Node's longest timer) made a busy loop of the run; now exit 2 naming the flag", async () => {
    const before = submitted();
    for (const [flag, value] of [
      ["--tick", "99999999999"],
      ["--lease", "9007199254740991"],
      ["--retry-base", "2147483648"],
      ["--handoff-timeout", "99999999999999999999"],
      ["--druid-outage-timeout", "2147484"],
      ["--deadline", `1${"0".repeat(30)}`],
    ] as const) {
      const r = await run(flag, value);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(flag);
      expect(r.err).not.toContain("TimeoutOverflowWarning");
    }
    // The largest accepted values are the longest timers.
    await expect(
      serveConfig("tick: 2147483647\nlease: 2147483647\ndrain-timeout: 2147483\n"),
    ).resolves.toMatchObject({
      tick: 2147483647,
      lease: 2147483647,
      drainTimeout: 2147483,
    });
    expect(submitted()).toBe(before);
  });

  it("--max-unparseable above Druid's int was refused naming only spec.tuningConfig.maxParseExceptions; now names the flag", async () => {
    const before = submitted();
    const r = await run("--max-unparseable", "99999999999999999999999");
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/--max-unparseable: a row count is at most 2147483647/);
    expect(submitted()).toBe(before);
  });

  it("run --interval of the last day of 9999 was refused without naming --interval; now it is named", async () => {
    const r = await run("--interval", "9999-12-31/P1D");
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /--interval: interval 9999-12-31T00:00:00.000Z\/\+010000-01-01T00:00:00.000Z is outside years 0000–9999/,
    );
  });

  it("an --interval before year 0000 ran against Druid under a mangled task id slug; now exit 2, nothing submitted", async () => {
    const before = submitted();
    const r = await run("--interval=-000001-12-31/P1D");
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /--interval: interval -000001-12-31T00:00:00.000Z\/0000-01-01T00:00:00.000Z is outside years/,
    );
    expect(submitted()).toBe(before);
    // The task id itself refuses it (the slug read "00000112T31-00000101T00").
    expect(() =>
      deriveTaskId({
        spec: dailyTemplate({ datasource: "x" }) as never,
        specVersion: "1",
        interval: { start: Date.parse("-000001-12-31T00:00:00Z"), end: Date.parse("0000-01-01T00:00:00Z") },
      }),
    ).toThrow(/outside years 0000–9999/);
  });

  it("an --interval off the spec's segmentGranularity named only the spec's path; now --interval first", async () => {
    const r = await run("--interval", "2026-01-01T01:00:00Z/2026-01-02T01:00:00Z");
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /^segops: --interval: invalid spec: spec\.dataSchema\.granularitySpec\.intervals\[0\]: .*not aligned/m,
    );
  });

  it("a config value of the wrong type crashed serve (`druid: 0`: exit 1, 'text.lastIndexOf is not a function') or was misread; now refused naming the setting", async () => {
    // A number is written as text (then checked as the flag checks it: `druid: 0` is a malformed URL).
    await expect(serveConfig("druid: 0\n")).resolves.toMatchObject({ druid: "0" });
    await expect(serveConfig("host: [a, b]\n")).rejects.toThrow(/host: expected a single value .*got a list/);
    await expect(serveConfig("port: [80]\n")).rejects.toThrow(/port: expected a single value .*got a list/);
    await expect(serveConfig("ledger: {a: 1}\n")).rejects.toThrow(
      /ledger: expected a single value .*got a mapping/,
    );
    await expect(serveConfig("user: null\n")).rejects.toThrow(/user: expected a single value .*got null/);
    // A switch is true or false: "no" and "false" as text turned TLS verification off.
    for (const text of ['insecure: "false"\n', "insecure: no\n", "insecure: 0\n"])
      await expect(serveConfig(text)).rejects.toThrow(/insecure: expected true or false/);
    await expect(serveConfig("insecure: false\n")).resolves.toMatchObject({ insecure: false });
    // A wrong value is refused even where a flag overrides it.
    await expect(serveConfig("port: lots\n", ["--port", "9000"])).rejects.toThrow(/port: --port must be/);
    // `__proto__` is an unknown setting like any other, in YAML and in JSON (the CLI fuzz test once wrote a
    // file without it, assigning the key on a plain object, and saw that file accepted).
    for (const text of ["__proto__: 1\n", '{"__proto__": 1, "port": 0}'])
      await expect(serveConfig(text)).rejects.toThrow(/unknown setting "__proto__"/);
  });

  it("`druid: 0` in serve's config file, end to end: exit 2 naming it (was exit 1)", async () => {
    const file = join(work, "druid-zero.yaml");
    writeFileSync(file, `druid: 0\nledger: sqlite:${join(work, "serve.db")}\nport: 0\n`);
    const r = await segops(["serve", "--config", file]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('--druid: malformed URL "0"');
  });

  it("serve on a non-loopback host without a token was refused after opening the ledger and without naming --host; now before, naming it", async () => {
    const ledger = join(work, "never-opened.db");
    const r = await segops([
      "serve",
      "--host",
      "10.1.2.3",
      "--druid",
      sim.url,
      "--ledger",
      `sqlite:${ledger}`,
    ]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/--host 10\.1\.2\.3: refusing to serve on a non-loopback address without a token/);
    const { existsSync } = await import("node:fs");
    expect(existsSync(ledger)).toBe(false);
  });

  it("an empty --api-token-file or SEGOPS_CONFIG was read as none, and serve ran without its token or settings; now refused", async () => {
    const ledger = `sqlite:${join(work, "empty-paths.db")}`;
    const r = await segops([
      "serve",
      "--api-token-file",
      "",
      "--druid",
      sim.url,
      "--ledger",
      ledger,
      "--port",
      "0",
    ]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain("--api-token-file");
    const saved = process.env.SEGOPS_CONFIG;
    process.env.SEGOPS_CONFIG = "";
    try {
      const c = await segops(["serve", "--druid", sim.url, "--ledger", ledger, "--port", "0"]);
      expect(c.code, c.err).toBe(2);
      expect(c.err).toContain("--config : cannot read it");
    } finally {
      if (saved === undefined) delete process.env.SEGOPS_CONFIG;
      else process.env.SEGOPS_CONFIG = saved;
    }
    // The same for Druid's token and password files: an empty path is not "no file".
    const t = await segops(["audit", "ds", "--druid", sim.url, "--token-file", ""]);
    expect(t.code, t.err).toBe(2);
    expect(t.err).toContain("--token-file");
  });

  it("serve --concurrency, --poison-after and --max-body took any size; now bounded like a job's own", async () => {
    await expect(serveConfig("max-concurrency: 10001\n")).rejects.toThrow(
      /--max-concurrency must be a whole number from 1 to 10000/,
    );
    // The old name, still read (with a warning), is bounded alike.
    await expect(serveConfig("concurrency: 10001\n")).rejects.toThrow(
      /--concurrency must be a whole number from 1 to 10000/,
    );
    await expect(serveConfig("poison-after: 1001\n")).rejects.toThrow(
      /--poison-after must be a whole number from 1 to 1000/,
    );
    await expect(serveConfig("max-body: 1073741825\n")).rejects.toThrow(
      /--max-body must be a whole number from 1 to 1073741824/,
    );
  });
});
