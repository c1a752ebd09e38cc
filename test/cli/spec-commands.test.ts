import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, CommanderError } from "commander";
import { afterAll, describe, expect, it } from "vitest";
import { registerId } from "../../src/cli/commands/id.js";
import { registerRender } from "../../src/cli/commands/render.js";
import { registerValidate } from "../../src/cli/commands/validate.js";
import { exitCodeFor } from "../../src/cli/main.js";
import { parseTaskId } from "../../src/core/task-id.js";

const dir = mkdtempSync(join(tmpdir(), "segops-spec-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Runs the commands in-process like `main()` does: stdout, stderr and the exit code it would return. */
async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const program = new Command("segops")
    .exitOverride()
    .configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (err += s) });
  registerRender(program);
  registerValidate(program);
  registerId(program);
  try {
    await program.parseAsync(args, { from: "user" });
    return { code: 0, out, err };
  } catch (e) {
    // main() prints the message of errors it did not print itself.
    if (!(e instanceof CommanderError)) err += `segops: ${(e as Error).message}\n`;
    return { code: exitCodeFor(e), out, err };
  }
}

const YAML_TEMPLATE = `type: index_parallel
spec:
  dataSchema:
    dataSource: wiki
    timestampSpec: {column: time, format: iso}
    dimensionsSpec: {dimensions: [page]}
    granularitySpec: {segmentGranularity: day, queryGranularity: none}
  ioConfig:
    type: index_parallel
    inputSource: {type: local, baseDir: "/data/{{var.env}}/{{start:yyyy/MM/dd}}", filter: "*.json"}
    inputFormat: {type: json}
    dropExisting: true
  tuningConfig: {type: index_parallel, maxNumConcurrentSubTasks: 2}
context: {priority: 50}
`;
const template = file("wiki.yaml", YAML_TEMPLATE);

describe("segops render", () => {
  it("prints the rendered spec as 2-space JSON with the derived id pinned", async () => {
    const r = await run("render", template, "--interval", "2026-01-01/P1D", "--var", "env=prod");
    expect(r.code).toBe(0);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^\{\n {2}"type": "index_parallel",/);
    const spec = JSON.parse(r.out);
    expect(spec.spec.ioConfig.inputSource.baseDir).toBe("/data/prod/2026/01/01");
    expect(spec.spec.dataSchema.granularitySpec.intervals).toEqual([
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
    ]);
    expect(parseTaskId(spec.id)).toMatchObject({ datasource: "wiki", attempt: 1 });
  });

  it("warns on stderr about an unused --var", async () => {
    const r = await run(
      "render",
      template,
      "--interval",
      "2026-01-01/P1D",
      "--var",
      "env=prod",
      "--var",
      "zone=eu",
    );
    expect(r.code).toBe(0);
    expect(r.err).toBe("warning: var.zone: --var zone is not used by the template\n");
  });

  it("fails with one clear line and exit 2 on a missing variable", async () => {
    const r = await run("render", template, "--interval", "2026-01-01/P1D");
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      "segops: spec.ioConfig.inputSource.baseDir: missing variable {{var.env}}: pass --var env=VALUE\n",
    );
  });

  it("fails with exit 2 on a missing file, unreadable YAML, a bad interval, an unknown placeholder", async () => {
    const missing = await run("render", join(dir, "nope.json"), "--interval", "2026-01-01/P1D");
    expect([missing.code, missing.err]).toEqual([
      2,
      `segops: cannot read template "${join(dir, "nope.json")}": no such file\n`,
    ]);
    const broken = await run("render", file("broken.yaml", "a: [1,\n"), "--interval", "2026-01-01/P1D");
    expect(broken.code).toBe(2);
    expect(broken.err).toMatch(/^segops: cannot parse .*broken\.yaml as YAML/);
    const badInterval = await run("render", template, "--interval", "tomorrow", "--var", "env=x");
    expect([badInterval.code, badInterval.err]).toEqual([
      2,
      'segops: --interval: invalid interval "tomorrow": expected START/END or START/PERIOD, e.g. 2026-01-01/2026-01-02\n',
    ]);
    const unknown = await run(
      "render",
      file("u.json", '{"type":"index","spec":{"dataSchema":{"x":"{{day}}"}}}'),
      "--interval",
      "2026-01-01/P1D",
    );
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/^segops: spec\.dataSchema\.x: unknown placeholder \{\{day\}\}/);
  });

  it("requires --interval", async () => {
    const r = await run("render", template);
    expect(r.code).toBe(2);
    expect(r.err).toContain("required option '--interval <interval>' not specified");
  });
});

describe("segops id", () => {
  it("prints the same id as render pins, and a new one per attempt and spec version", async () => {
    const args = [template, "--interval", "2026-01-01/P1D", "--var", "env=prod"];
    const rendered = JSON.parse((await run("render", ...args)).out);
    const id = await run("id", ...args);
    expect(id.code).toBe(0);
    expect(id.out).toBe(`${rendered.id}\n`);
    const second = (await run("id", ...args, "--attempt", "2")).out.trim();
    const v2 = (await run("id", ...args, "--spec-version", "2")).out.trim();
    expect(second).toBe(rendered.id.replace(/_a1$/, "_a2"));
    expect(v2).not.toBe(rendered.id);
    expect((await run("id", ...args, "--prefix", "bf")).out).toMatch(
      /^bf_wiki_20260101-20260102_[0-9a-f]{12}_a1\n$/,
    );
  });

  it("refuses a bad attempt with exit 2", async () => {
    const r = await run(
      "id",
      template,
      "--interval",
      "2026-01-01/P1D",
      "--var",
      "env=prod",
      "--attempt",
      "0",
    );
    expect([r.code, r.err]).toEqual([2, 'segops: --attempt: expected a whole number from 1 up, got "0"\n']);
  });
});

describe("segops validate", () => {
  it("exits 0 for a valid template rendered for a partition", async () => {
    const r = await run("validate", template, "--interval", "2026-01-01/P1D", "--var", "env=prod");
    expect(r).toEqual({
      code: 0,
      out: `ok: ${template} — index_parallel task; rendered for 2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z (alignment and interval rules checked); variables env; Druid 33–39's spec rules, release-dependent ones as Druid 33 (offline: no cluster asked; --druid-version for another target)\n`,
      err: "",
    });
    // A variable's value may be a secret: only its name is said.
    expect(r.out).not.toContain("prod");
  });

  it("applies release-dependent rules as --druid-version's, and refuses a release it does not know", async () => {
    const zero = file(
      "zero.json",
      JSON.stringify({
        type: "index_parallel",
        spec: {
          dataSchema: {
            dataSource: "wiki",
            timestampSpec: { column: "ts" },
            dimensionsSpec: { dimensions: ["page"] },
            granularitySpec: { segmentGranularity: "day", intervals: ["2026-01-01/2026-01-02"] },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "local", baseDir: "/d", filter: "*.json" },
            inputFormat: { type: "json" },
            dropExisting: true,
          },
          tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic", maxRowsPerSegment: 0 } },
        },
      }),
    );
    const on33 = await run("validate", zero);
    expect(on33.code).toBe(0);
    expect(on33.err).toMatch(/maxRowsPerSegment 0: Druid 33 accepts it, Druid 36 and later refuse it/);
    const on36 = await run("validate", zero, "--druid-version", "36");
    expect(on36.code).toBe(2);
    expect(on36.err).toContain(
      "spec.tuningConfig.partitionsSpec.maxRowsPerSegment: maxRowsPerSegment must be greater than 0, found 0\n",
    );
    const bad = await run("validate", zero, "--druid-version", "32");
    expect([bad.code, bad.err]).toEqual([
      2,
      'segops: --druid-version: expected a Druid major release from 33 to 39 (the target cluster\'s, e.g. 33), got "32"\n',
    ]);
  });

  it("exits 2 with one path: message line per error", async () => {
    const bad = file(
      "bad.json",
      JSON.stringify({
        type: "index_parallel",
        spec: {
          dataSchema: {
            dataSource: "wiki",
            timestampSpec: { column: "t" },
            granularitySpec: { segmentGranularity: "day" },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "local", baseDir: "/d", filter: "*.json" },
            appendToExisting: true,
            dropExisting: true,
          },
        },
      }),
    );
    const r = await run("validate", bad, "--interval", "2026-01-01/P1D");
    expect(r.code).toBe(2);
    const lines = r.err.trim().split("\n");
    expect(lines).toEqual([
      "warning: spec.ioConfig.appendToExisting: appending is not idempotent: a rerun of this partition appends its rows again",
      'spec.ioConfig.inputFormat: inputFormat must not be null (input source "local" needs one)',
      "spec.ioConfig.dropExisting: Cannot simultaneously replace and append to existing segments. Either dropExisting or appendToExisting should be set to false",
      `segops: ${bad}: 2 errors, nothing submitted`,
    ]);
  });

  it("prints {valid, errors, warnings} with --json", async () => {
    const misaligned = await run(
      "validate",
      template,
      "--interval",
      "2026-01-01T06:00Z/P1D",
      "--var",
      "env=prod",
      "--json",
    );
    expect(misaligned.code).toBe(2);
    const body = JSON.parse(misaligned.out);
    expect(body.valid).toBe(false);
    expect(body.errors.map((e: { path: string }) => e.path)).toEqual([
      "spec.dataSchema.granularitySpec.intervals[0]",
    ]);
    expect(body.warnings).toEqual([]);
    const ok = await run("validate", template, "--interval", "2026-01-01/P1D", "--var", "env=prod", "--json");
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it("validates a finished spec without --interval, warning about unknown fields", async () => {
    const spec = file(
      "spec.json",
      JSON.stringify({
        type: "index_parallel",
        spec: {
          dataSchema: {
            dataSource: "wiki",
            timestampSpec: { column: "t" },
            granularitySpec: { segmentGranularity: "day", intervals: ["2026-01-01/2026-01-02"] },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "local", baseDir: "/d", filter: "*.json" },
            inputFormat: { type: "json" },
            dropExisting: true,
            dropExistng: false,
          },
        },
      }),
    );
    const r = await run("validate", spec);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^ok: .*spec\.json — index_parallel task; as written \(no --interval: the partition rules were not checked\); .* 1 warning above\n$/,
    );
    expect(r.err).toBe(
      "warning: spec.ioConfig.dropExistng: unknown field: Druid ignores it silently (docs/druid-api.md §0); check the spelling\n",
    );
  });

  it("asks for --interval when the file is a template", async () => {
    const r = await run("validate", template);
    expect([r.code, r.err]).toEqual([
      2,
      "segops: the template has placeholders: pass --interval to render it first\n",
    ]);
  });

  it("checks SQL templates: the OVERWRITE window against the partition", async () => {
    const sql = file(
      "q.sql",
      "REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'\nSELECT TIMESTAMP '{{start}}' AS __time\nPARTITIONED BY DAY\n",
    );
    expect((await run("validate", sql, "--interval", "2026-01-01/P1D")).code).toBe(0);
    const hourly = await run("validate", sql, "--interval", "2026-01-01T01:00Z/PT1H");
    expect(hourly.code).toBe(2);
    expect(hourly.err.split("\n")[0]).toMatch(
      /^query\.overwrite: OVERWRITE WHERE clause identified interval/,
    );
    const body = JSON.parse((await run("render", sql, "--interval", "2026-01-01/P1D")).out);
    expect(body.query).toContain("TIMESTAMP '2026-01-01 00:00:00'");
    expect(parseTaskId(body.context.sqlQueryId)).toMatchObject({ datasource: "wiki" });
  });
});

describe("validate --json always prints the JSON result, with every problem", () => {
  it("reports a spec without a dataSource together with its other problems, as JSON", async () => {
    const noDs = file(
      "nods.json",
      JSON.stringify({
        type: "index_parallel",
        spec: {
          dataSchema: { timestampSpec: { column: "t" }, granularitySpec: { segmentGranularity: "day" } },
          ioConfig: { type: "index_parallel", inputSource: { type: "local", baseDir: "/d", filter: "*" } },
        },
      }),
    );
    const r = await run("validate", noDs, "--interval", "2026-01-01/P1D", "--json");
    expect(r.code).toBe(2);
    const result = JSON.parse(r.out) as { valid: boolean; errors: Array<{ path: string }> };
    expect(result.valid).toBe(false);
    const paths = result.errors.map((e) => e.path);
    expect(paths).toContain("spec.dataSchema.dataSource");
    expect(paths).toContain("spec.ioConfig.inputFormat");
  });
});

describe("bad input found while preparing", () => {
  it("a bad --prefix or a spec without a datasource exits 2", async () => {
    const args = [template, "--interval", "2026-01-01/P1D", "--var", "env=prod"];
    const prefix = await run("id", ...args, "--prefix", "a_b");
    expect(prefix.code).toBe(2);
    expect(prefix.err).toMatch(/^segops: invalid task id prefix "a_b"/);
    const noDs = file(
      "nods.json",
      JSON.stringify({ type: "index", spec: { dataSchema: { timestampSpec: {} } } }),
    );
    const r = await run("id", noDs, "--interval", "2026-01-01/P1D");
    expect([r.code, r.err]).toEqual([
      2,
      'segops: spec.dataSchema.dataSource is missing: set spec.dataSchema.dataSource in the template to the datasource to write (e.g. "wikipedia")\n',
    ]);
  });

  it("validate reports a template's own conflicting intervals as a spec error with its path", async () => {
    const fixed = file(
      "fixed.json",
      JSON.stringify({
        type: "index_parallel",
        spec: {
          dataSchema: {
            dataSource: "wiki",
            timestampSpec: {},
            granularitySpec: { intervals: ["2026-02-01/P1D"] },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "local", baseDir: "/d", filter: "*.json" },
            inputFormat: { type: "json" },
          },
        },
      }),
    );
    const r = await run("validate", fixed, "--interval", "2026-01-01/P1D", "--json");
    expect(r.code).toBe(2);
    const body = JSON.parse(r.out);
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0].path).toBe("spec.dataSchema.granularitySpec.intervals");
    expect(body.errors[0].message).toMatch(/^the template sets \["2026-02-01\/P1D"\], but the partition is/);
  });
});
