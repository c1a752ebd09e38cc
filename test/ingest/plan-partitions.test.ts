import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { parseGranularity, parseGranularityText } from "../../src/core/granularity.js";
import { formatInterval, type Interval, parseInterval } from "../../src/core/interval.js";
import { splitInterval } from "../../src/core/partition.js";
import { DEFAULT_GATES, tuningWithGates } from "../../src/ingest/gates.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestPayload } from "../../src/ingest/types.js";
import type { JsonObject } from "../../src/ledger/types.js";
import {
  partitionDependentPaths,
  partitionIntervalCheck,
  prepareSpec,
  type SpecIssue,
  validateSpec,
} from "../../src/spec/index.js";
import { dailyTemplate } from "../helpers/dataset.js";

type Template = { [key: string]: JsonValue };

/**
 * Planning validates a template's partitions alike when they can only differ where validation does not look
 * (100,000 partitions). These tests hold the fast path to the path every partition took before:
 * render, pin the id, validate in full (`reference` below, a copy of the old loop) — same refusals with the
 * same JSON paths, same warnings, same payload specs.
 */
function reference(template: Template, range: Interval, granularity?: string) {
  const g = granularity
    ? parseGranularityText(granularity)
    : parseGranularity(
        ((template.spec as JsonObject).dataSchema as JsonObject & { granularitySpec: JsonObject })
          .granularitySpec.segmentGranularity as string,
      );
  const errors: SpecIssue[] = [];
  const warnings = new Map<string, SpecIssue>();
  const specs: JsonObject[] = [];
  for (const interval of splitInterval(range, g)) {
    const prepared = prepareSpec({ kind: "task", value: template }, { interval, vars: { dataDir: "/d" } });
    if (prepared.kind !== "task") throw new Error("not a task");
    const spec = prepared.spec as JsonObject;
    const inner = spec.spec as JsonObject;
    const gated: JsonObject = {
      ...spec,
      spec: { ...inner, tuningConfig: tuningWithGates(inner.tuningConfig as JsonObject, DEFAULT_GATES) },
    };
    const result = validateSpec(gated, { partition: interval });
    for (const e of result.errors)
      errors.push({ path: e.path, message: `${formatInterval(interval)}: ${e.message}` });
    for (const w of [...prepared.warnings, ...result.warnings])
      if (!w.path.startsWith("id")) warnings.set(`${w.path}:${w.message}`, w);
    const { id: _id, ...rest } = gated;
    specs.push(rest as JsonObject);
  }
  return { errors, warnings: [...warnings.values()], specs };
}

function planned(template: Template, range: Interval, granularity?: string) {
  try {
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: template },
      templateName: "t.json",
      range,
      vars: { dataDir: "/d" },
      ...(granularity ? { granularity } : {}),
    });
    return {
      errors: [] as SpecIssue[],
      warnings: plan.warnings,
      specs: plan.tasks.map((t) => (t.payload as unknown as IngestPayload).spec),
    };
  } catch (error) {
    const errors = (error as { errors?: SpecIssue[] }).errors;
    if (!errors) throw error;
    return { errors, warnings: null, specs: null };
  }
}

/** The template with `edit` applied to a deep copy. */
function edited(edit: (t: Template & { spec: JsonObject & Record<string, JsonObject> }) => void): Template {
  const t = structuredClone(dailyTemplate({ datasource: "plan" })) as Template & {
    spec: JsonObject & Record<string, JsonObject>;
  };
  edit(t);
  return t;
}

const DAYS = parseInterval("2026-01-01/2026-01-08");

const cases: Array<[string, Template, string?]> = [
  ["the daily template (a dated filter in the input source)", dailyTemplate({ datasource: "plan" })],
  [
    "inline data and intervals written as {{interval}}",
    edited((t) => {
      (t.spec.ioConfig as JsonObject).inputSource = {
        type: "inline",
        data: '{"ts":"{{start}}","x":"{{end}}"}',
      };
      ((t.spec.dataSchema as JsonObject).granularitySpec as JsonObject).intervals = ["{{interval}}"];
    }),
  ],
  [
    "a bad aggregator elsewhere in the spec",
    edited((t) => {
      (t.spec.dataSchema as JsonObject).metricsSpec = [{ type: "longSum", name: "added" }];
    }),
  ],
  [
    "a tuning value the schema refuses",
    edited((t) => {
      (t.spec.tuningConfig as JsonObject).maxRowsPerSegment = "many";
    }),
  ],
  [
    "replace and append at once (Druid's rule)",
    edited((t) => {
      (t.spec.ioConfig as JsonObject).appendToExisting = true;
    }),
  ],
  [
    "a placeholder in a tuning value, coerced by Jackson (validated per partition)",
    edited((t) => {
      (t.spec.tuningConfig as JsonObject).maxRowsPerSegment = "1{{start:dd}}";
    }),
  ],
  [
    "a placeholder in the timestamp format (validated per partition)",
    edited((t) => {
      ((t.spec.dataSchema as JsonObject).timestampSpec as JsonObject).format = "{{start:yyyy}}";
    }),
  ],
  [
    "a placeholder in the input source's type (validated per partition)",
    edited((t) => {
      ((t.spec.ioConfig as JsonObject).inputSource as JsonObject).type = "local{{start:dd}}";
    }),
  ],
  [
    "an unknown key, a warning",
    edited((t) => {
      (t.spec.dataSchema as JsonObject).dimensionSpec = {};
    }),
  ],
  [
    "hourly partitions of a daily segmentGranularity (not aligned)",
    dailyTemplate({ datasource: "plan" }),
    "hour",
  ],
  [
    "no timestampSpec and a missing inputFormat",
    edited((t) => {
      delete (t.spec.dataSchema as JsonObject).timestampSpec;
      delete (t.spec.ioConfig as JsonObject).inputFormat;
    }),
  ],
];

describe("planning validates a template's partitions alike only when that changes nothing", () => {
  for (const [name, template, granularity] of cases) {
    it(`${name}: the same refusals, warnings and specs as validating every partition in full`, () => {
      const range = granularity === "hour" ? parseInterval("2026-01-01/2026-01-01T05:00:00Z") : DAYS;
      const want = reference(template, range, granularity);
      const got = planned(template, range, granularity);
      expect(got.errors).toEqual(want.errors);
      if (want.errors.length === 0) {
        expect(got.warnings).toEqual(want.warnings);
        expect(JSON.stringify(got.specs)).toBe(JSON.stringify(want.specs));
      }
    });
  }

  it("the refusals name their JSON paths, for every partition", () => {
    const got = planned(cases[2]?.[1] as Template, DAYS);
    expect(got.errors).toHaveLength(7);
    expect(got.errors.every((e) => e.path === "spec.dataSchema.metricsSpec[0].fieldName")).toBe(true);
    expect(got.errors[6]?.message).toMatch(/^2026-01-07T00:00:00\.000Z\/2026-01-08T00:00:00\.000Z: /);
  });

  it("a template's partition-dependent placeholders are found; variables and literals are not", () => {
    const t = edited((t) => {
      (t.spec.ioConfig as JsonObject).inputSource = {
        type: "local",
        baseDir: "{{var.dataDir}}/{{'{{'}}",
        filter: "x-{{ start:yyyy }}.json",
        files: ["a", "{{end}}"],
      };
    });
    expect(partitionDependentPaths(t)).toEqual([
      ["spec", "ioConfig", "inputSource", "filter"],
      ["spec", "ioConfig", "inputSource", "files", 1],
    ]);
  });

  it("the fast path is taken only where validation cannot see the placeholder", () => {
    const first = (t: Template) => {
      const p = prepareSpec(
        { kind: "task", value: t },
        {
          interval: parseInterval("2026-01-01/2026-01-02"),
          vars: { dataDir: "/d" },
        },
      );
      return p.kind === "task" ? p.spec : {};
    };
    const daily = dailyTemplate({ datasource: "plan" });
    expect(partitionIntervalCheck(daily, first(daily))).not.toBeNull();
    for (const index of [5, 6, 7]) {
      const t = cases[index]?.[1] as Template;
      expect(partitionIntervalCheck(t, first(t))).toBeNull();
    }
  });

  it("the per-partition check refuses an unaligned partition with validateSpec's own words", () => {
    const t = dailyTemplate({ datasource: "plan" });
    const day = parseInterval("2026-01-01/2026-01-02");
    const p = prepareSpec({ kind: "task", value: t }, { interval: day, vars: { dataDir: "/d" } });
    if (p.kind !== "task") throw new Error("not a task");
    const check = partitionIntervalCheck(t, p.spec);
    expect(check?.(parseInterval("2026-01-02/2026-01-03"))).toEqual([]);
    const odd = parseInterval("2026-01-02T06:00:00Z/2026-01-03T06:00:00Z");
    const q = prepareSpec({ kind: "task", value: t }, { interval: odd, vars: { dataDir: "/d" } });
    if (q.kind !== "task") throw new Error("not a task");
    const full = validateSpec(q.spec, { partition: odd }).errors;
    expect(full).toHaveLength(1);
    expect(check?.(odd)).toEqual(full);
  });
});
