import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { TemplateError } from "../../src/spec/issues.js";
import { parseTemplateText } from "../../src/spec/template.js";
import { validateTemplate } from "../../src/spec/validate-template.js";

const day = parseInterval("2026-01-01/P1D");

const template = (value: Record<string, unknown>) => parseTemplateText(JSON.stringify(value), "t.json");

describe("validateTemplate (what `segops validate` reports, every problem found)", () => {
  it("reports a spec without a dataSource together with every other problem, instead of throwing", () => {
    const t = template({
      type: "index_parallel",
      spec: {
        dataSchema: { timestampSpec: { column: "t", format: "yyyy qq" }, granularitySpec: {} },
        ioConfig: {
          type: "index_parallel",
          inputSource: { type: "local", baseDir: "/d", filter: "*" },
          dropExisting: true,
        },
        tuningConfig: { type: "index_parallel", maxNumConcurrentSubTasks: 0 },
      },
    });
    const r = validateTemplate(t, { interval: day });
    expect(r.valid).toBe(false);
    expect(r.errors.map((e) => e.path)).toEqual([
      "spec.dataSchema.dataSource",
      "spec.dataSchema.timestampSpec.format",
      "spec.ioConfig.inputFormat",
      "spec.tuningConfig.maxNumConcurrentSubTasks",
    ]);
  });

  it("reports a datasource rendered empty by a variable, with the rest of the spec's problems", () => {
    const t = template({
      type: "index_parallel",
      spec: {
        dataSchema: { dataSource: "{{var.ds}}", timestampSpec: { column: "t" } },
        ioConfig: { type: "index_parallel", inputSource: { type: "local" }, dropExisting: true },
      },
    });
    const r = validateTemplate(t, { interval: day, vars: { ds: "" } });
    expect(r.errors.map((e) => e.path)).toEqual([
      "spec.dataSchema.dataSource",
      "spec.ioConfig.inputSource.baseDir",
      "spec.ioConfig.inputFormat",
    ]);
    expect(r.errors[0]?.message).toMatch(/--var ds is empty/);
  });

  it("validates like a run: rendered, id pinned, checked against the partition", () => {
    const t = template({
      type: "index_parallel",
      spec: {
        dataSchema: {
          dataSource: "wiki",
          timestampSpec: { column: "t" },
          granularitySpec: { segmentGranularity: "day" },
        },
        ioConfig: {
          type: "index_parallel",
          inputSource: { type: "local", baseDir: "/d/{{start:yyyy-MM-dd}}", filter: "*" },
          inputFormat: { type: "json" },
          dropExisting: true,
        },
        tuningConfig: { type: "index_parallel", forceGuaranteedRollup: "false" },
      },
    });
    const r = validateTemplate(t, { interval: day });
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => w.path)).toEqual(["spec.tuningConfig.forceGuaranteedRollup"]);
    const hourly = validateTemplate(t, { interval: parseInterval("2026-01-01T05:00Z/PT1H") });
    expect(hourly.errors.map((e) => e.path)).toEqual(["spec.dataSchema.granularitySpec.intervals[0]"]);
    expect(
      validateTemplate(t, { interval: parseInterval("2026-01-01T05:00Z/PT1H"), rules: "druid" }).errors,
    ).toEqual([]);
  });

  it("reports the template's own other interval as a spec error; throws for usage problems", () => {
    const fixed = template({
      type: "index_parallel",
      spec: {
        dataSchema: {
          dataSource: "wiki",
          timestampSpec: {},
          granularitySpec: { intervals: ["2026-02-01/P1D"] },
        },
        ioConfig: { type: "index_parallel", inputSource: { type: "local" }, inputFormat: { type: "json" } },
      },
    });
    const r = validateTemplate(fixed, { interval: day });
    expect(r.errors.map((e) => e.path)).toEqual(["spec.dataSchema.granularitySpec.intervals"]);
    expect(() => validateTemplate(template({ type: "index", id: "{{start}}" }))).toThrow(TemplateError);
    expect(() => validateTemplate(template({ type: "index", id: "{{var.x}}" }), { interval: day })).toThrow(
      /missing variable/,
    );
  });

  it("validates SQL templates and finished specs", () => {
    const sql = parseTemplateText(
      "SET maxNumTasks = 3;\nREPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}' SELECT 1 PARTITIONED BY HOURLY",
      "q.sql",
    );
    expect(validateTemplate(sql, { interval: day }).errors.map((e) => e.path)).toEqual([
      "query.partitionedBy",
    ]);
    const finished = template({ type: "compact", dataSource: "wiki", interval: "2026-01-01/2026-01-02" });
    expect(validateTemplate(finished).errors).toEqual([]);
  });

  it("refuses a compact task whose top-level interval is not --interval's, instead of dropping it", () => {
    const other = template({ type: "compact", dataSource: "wiki", interval: "2026-01-02/2026-01-03" });
    const r = validateTemplate(other, { interval: day });
    expect(r.errors).toEqual([
      {
        path: "interval",
        message: expect.stringMatching(
          /^the template sets "2026-01-02\/2026-01-03", but the partition is 2026-01-01T00:00:00\.000Z\/2026-01-02T00:00:00\.000Z; remove it or use "\{\{interval\}\}"$/,
        ),
      },
    ]);
    // The same interval is moved into ioConfig (CompactionTask takes only one of them), not refused.
    const same = template({ type: "compact", dataSource: "wiki", interval: "2026-01-01/2026-01-02" });
    expect(validateTemplate(same, { interval: day }).errors).toEqual([]);
  });
});
