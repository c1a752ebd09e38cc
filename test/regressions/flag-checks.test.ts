import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { druidOptionsFrom, positiveInt, positiveNumber } from "../../src/cli/options.js";
import { FakeDruid } from "../druid/helpers/fake-druid.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate } from "../helpers/dataset.js";

const work = mkdtempSync(join(tmpdir(), "segops-regress-f-"));
const CERT = fileURLToPath(new URL("../druid/fixtures/tls/localhost.crt", import.meta.url));

describe("--ca-file", () => {
  it("--ca-file /nonexistent names the flag, exit 2", async () => {
    const r = await runCli(["audit", "ds", "--druid", "https://127.0.0.1:9", "--ca-file", "/nonexistent"])
      .done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--ca-file /nonexistent");
    expect(r.stderr).toMatch(/no such file/);
    expect(r.stderr).not.toMatch(/ENOENT: no such file or directory, open/);
  });

  it("a --ca-file without a PEM certificate block is rejected, exit 2", async () => {
    const notPem = join(work, "not.pem");
    writeFileSync(notPem, "this is not a certificate\n");
    const r = await runCli(["audit", "ds", "--druid", "https://127.0.0.1:9", "--ca-file", notPem]).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--ca-file ${notPem}`);
    expect(r.stderr).toMatch(/no PEM certificate/);
    const broken = join(work, "broken.pem");
    writeFileSync(broken, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
    expect(() => druidOptionsFrom({ druid: "https://h:1", caFile: broken }, {})).toThrow(
      expect.objectContaining({ code: "Usage", message: expect.stringMatching(/--ca-file .*certificate/) }),
    );
  });

  it("a real PEM --ca-file is accepted and handed to the client", () => {
    const options = druidOptionsFrom({ druid: "https://h:1", caFile: CERT }, {});
    expect(String(options.tls?.ca)).toContain("-----BEGIN CERTIFICATE-----");
    expect(options.tls?.rejectUnauthorized).toBe(true);
  });

  it("with a real PEM --ca-file, segops submit talks TLS to a Druid signed by it (exit 0)", async () => {
    const druid = new FakeDruid();
    const url = await druid.start({ tls: true });
    try {
      druid.on("GET", "/druid/indexer/v1/totalWorkerCapacity", {
        status: 200,
        body: { currentClusterCapacity: 1, usedClusterCapacity: 0, maximumCapacityWithAutoScale: 1 },
      });
      druid.handle("POST", "/druid/indexer/v1/task", (req) => ({
        status: 200,
        body: { task: (JSON.parse(req.body) as { id: string }).id },
      }));
      const template = join(work, "tls.json");
      writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "tls" })));
      const args = [
        "submit",
        template,
        "--interval",
        "2026-01-01/P1D",
        "--var",
        "dataDir=/tmp",
        "--druid",
        url,
      ];
      const trusted = await runCli([...args, "--ca-file", CERT]).done;
      expect(trusted.code, trusted.stderr).toBe(0);
      expect(trusted.stdout).toMatch(/^segops_tls_/);
      const untrusted = await runCli(args).done;
      expect(untrusted.code).toBe(4);
    } finally {
      await druid.close();
    }
  });
});

describe("numeric flags", () => {
  it("--max-concurrency 0x2 and other non-decimal numbers are refused", () => {
    const int = positiveInt("--max-concurrency");
    for (const bad of ["0x2", "1e3", " 3", "3 ", "+3", "", "3.0", "0", "-1", "0b11", "0o7", "Infinity"]) {
      expect(() => int(bad), JSON.stringify(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => int("0x2")).toThrow(/--max-concurrency .*got "0x2"/);
    expect(int("12")).toBe(12);
    expect(int("007")).toBe(7);
    const num = positiveNumber("--timeout");
    for (const bad of ["0x2", "1e3", " 3", "+3", "", ".5", "5.", "0", "0.0", "NaN", "Infinity", "-2"]) {
      expect(() => num(bad), JSON.stringify(bad)).toThrow(InvalidArgumentError);
    }
    expect(num("0.5")).toBe(0.5);
    expect(num("30")).toBe(30);
  });

  it("--max-concurrency 0x2 exits 2 from the CLI", async () => {
    const r = await runCli(["poll", "some_task", "--max-concurrency", "0x2", "--druid", "http://127.0.0.1:9"])
      .done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-concurrency must be a whole number from 1 up, got "0x2"');
  });
});

describe("a credential inside a malformed URL is echoed", () => {
  for (const flag of ["--druid", "--overlord", "--coordinator", "--broker"]) {
    it(`${flag} 'http://admin:S3cr3t@[bad' names the flag, says malformed, hides the password, exit 2`, async () => {
      const extra = flag === "--druid" ? [] : ["--druid", "http://127.0.0.1:9"];
      const r = await runCli(["audit", "ds", ...extra, flag, "http://admin:S3cr3t@[bad"]).done;
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain("S3cr3t");
      expect(r.stderr).toContain(`${flag}: malformed URL "http://***@[bad"`);
    });
  }

  it("userinfo is redacted however the malformed URL is written", () => {
    for (const url of [
      "http://admin:S3cr3t@[bad",
      "http://admin:S3cr3t@host:99999",
      "http://admin:S3c/r3t@h:x",
      "admin:S3cr3t@[bad",
      "http://admin:S3cr3t@h@[bad",
    ]) {
      let message = "";
      try {
        druidOptionsFrom({ druid: url }, {});
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, url).toMatch(/^--druid: /);
      expect(message, url).not.toContain("S3cr3t");
      expect(message, url).not.toContain("S3c");
    }
  });
});
