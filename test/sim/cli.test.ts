import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { handoffRaceNote, registerSim, serveSim, simOptionsFromFlags } from "../../src/cli/commands/sim.js";
import { UsageError } from "../../src/core/errors.js";

describe("segops sim", () => {
  it("maps flags to emulator options and reads YAML or JSON fault files", () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-sim-cli-"));
    writeFileSync(
      join(dir, "f.yaml"),
      "- kind: status\n  status: 503\n  path: /druid/indexer/v1/task\n  count: 2\n",
    );
    writeFileSync(join(dir, "f.json"), '[{"kind":"reset","rate":0.1}]');
    expect(
      simOptionsFromFlags({
        port: "0",
        capacity: "8",
        timeScale: "1000",
        seed: "3",
        handoffDelay: "0",
        faults: join(dir, "f.yaml"),
        dataDir: dir,
      }),
    ).toEqual({
      port: 0,
      host: "127.0.0.1",
      capacity: 8,
      timeScale: 1000,
      seed: 3,
      handoffDelayMs: 0,
      faults: [{ kind: "status", status: 503, path: "/druid/indexer/v1/task", count: 2 }],
      dataDir: dir,
    });
    expect(simOptionsFromFlags({ faults: join(dir, "f.json") }).faults).toEqual([
      { kind: "reset", rate: 0.1 },
    ]);
    expect(simOptionsFromFlags({}).port).toBe(8888);
  });

  it("rejects bad flags with a usage error naming the flag", () => {
    expect(() => simOptionsFromFlags({ capacity: "zero" })).toThrow(UsageError);
    expect(() => simOptionsFromFlags({ capacity: "zero" })).toThrow(
      '--capacity must be a whole number from 1, got "zero"',
    );
    expect(() => simOptionsFromFlags({ faults: "/nonexistent/f.yaml" })).toThrow(UsageError);
  });

  it("takes --virtual-storage from Druid 35 on, and refuses it with an older --druid-version", async () => {
    expect(simOptionsFromFlags({ druidVersion: "35", virtualStorage: true })).toMatchObject({
      druidVersion: 35,
      virtualStorage: true,
    });
    const error: unknown = await serveSim(
      simOptionsFromFlags({ port: "0", druidVersion: "33", virtualStorage: true }),
      new AbortController().signal,
      () => {},
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      "Expected `virtualStorage` only with `druidVersion` 35 or newer (Druid 35 added virtual storage), got druidVersion 33: raise druidVersion or drop virtualStorage",
    );
  });

  it("serves until stopped, printing the URL, then closes", async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    const done = serveSim({ port: 0 }, stop.signal, (l) => lines.push(l));
    while (lines.length === 0) await new Promise((r) => setImmediate(r));
    const url = /listening on (\S+)/.exec(lines[0] as string)?.[1] as string;
    expect(await (await fetch(`${url}/status/health`)).text()).toBe("true");
    stop.abort();
    await done;
    expect(lines.at(-1)).toBe("Druid emulator stopped");
    await expect(fetch(`${url}/status/health`)).rejects.toThrow();
  });

  it("sped up, says that data is queryable a blink after SUCCESS here and seconds after on Druid; at real speed, nothing", async () => {
    const lines: string[] = [];
    const stop = new AbortController();
    const done = serveSim({ port: 0, timeScale: 100 }, stop.signal, (l) => lines.push(l));
    while (lines.length < 2) await new Promise((r) => setImmediate(r));
    expect(lines[1]).toContain("at --time-scale 100 a task's data becomes queryable 50 ms after SUCCESS");
    expect(lines[1]).toContain("segops wait --handoff");
    stop.abort();
    await done;
    expect(handoffRaceNote(1, 5000)).toBeNull();
    expect(handoffRaceNote(2, 5000)).toContain("2.5 s after SUCCESS");
  });

  it.each(["33", "35", "37", "39"])("emulates Druid %s with --druid-version, /status included", async (v) => {
    expect(simOptionsFromFlags({ druidVersion: v }).druidVersion).toBe(Number(v));
    const lines: string[] = [];
    const stop = new AbortController();
    const done = serveSim(
      { port: 0, ...simOptionsFromFlags({ druidVersion: v, port: "0" }) },
      stop.signal,
      (l) => lines.push(l),
    );
    while (lines.length === 0) await new Promise((r) => setImmediate(r));
    expect(lines[0]).toContain(` as Druid ${v}.0.0 `);
    const url = /listening on (\S+)/.exec(lines[0] as string)?.[1] as string;
    expect(((await (await fetch(`${url}/status`)).json()) as { version: string }).version).toBe(`${v}.0.0`);
    stop.abort();
    await done;
  });

  it("says which Druid it emulates by default, and refuses a version that is not a release number", async () => {
    expect(() => simOptionsFromFlags({ druidVersion: "thirty" })).toThrow(
      '--druid-version must be a Druid major version, got "thirty"',
    );
    const lines: string[] = [];
    const stop = new AbortController();
    const done = serveSim({ port: 0 }, stop.signal, (l) => lines.push(l));
    while (lines.length === 0) await new Promise((r) => setImmediate(r));
    expect(lines[0]).toContain(" as Druid 38.0.0 ");
    stop.abort();
    await done;
  });

  it("registers a sim command with its options", () => {
    const program = new Command();
    registerSim(program);
    const cmd = program.commands.find((c) => c.name() === "sim");
    expect(cmd?.options.map((o) => o.long)).toEqual([
      "--port",
      "--host",
      "--capacity",
      "--workers",
      "--time-scale",
      "--seed",
      "--handoff-delay",
      "--faults",
      "--data-dir",
      "--druid-version",
      "--virtual-storage",
    ]);
  });
});
