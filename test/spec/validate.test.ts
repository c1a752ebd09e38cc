import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { ValidationResult } from "../../src/spec/issues.js";
import { validateSpec } from "../../src/spec/validate.js";

const day = parseInterval("2026-01-01/2026-01-02");
const DAY_TEXT = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";

type Spec = {
  type: string;
  id?: string;
  spec: {
    dataSchema: Record<string, unknown> & {
      granularitySpec: Record<string, unknown>;
      dimensionsSpec: Record<string, unknown>;
      metricsSpec: Record<string, unknown>[];
    };
    ioConfig: Record<string, unknown>;
    tuningConfig: Record<string, unknown>;
  };
  context?: Record<string, unknown>;
  [key: string]: unknown;
};

/** A spec that passes every rule (api-contract §5 skeleton, made segops-tight). */
function good(): Spec {
  return {
    type: "index_parallel",
    id: "segops_wiki_20260101-20260102_0123456789ab_a1",
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page", { type: "long", name: "userId" }] },
        metricsSpec: [
          { type: "count", name: "count" },
          { type: "longSum", name: "added", fieldName: "added" },
        ],
        granularitySpec: {
          type: "uniform",
          segmentGranularity: "day",
          queryGranularity: "none",
          rollup: true,
          intervals: [DAY_TEXT],
        },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: "/data", filter: "*.json" },
        inputFormat: { type: "json" },
        appendToExisting: false,
        dropExisting: true,
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: 2,
        partitionsSpec: { type: "dynamic" },
      },
    },
    context: { priority: 50 },
  };
}

function check(mutate: (s: Spec) => void, partition = day): ValidationResult {
  const s = good();
  mutate(s);
  return validateSpec(s, { partition });
}

function errorAt(result: ValidationResult, path: string): string {
  const found = result.errors.filter((e) => e.path === path);
  expect(found, `errors: ${JSON.stringify(result.errors)}`).toHaveLength(1);
  return (found[0] as { message: string }).message;
}

function onlyErrorAt(result: ValidationResult, path: string): string {
  expect(result.valid).toBe(false);
  expect(result.errors.map((e) => e.path)).toEqual([path]);
  return errorAt(result, path);
}

describe("a good index_parallel spec", () => {
  it("is valid with no warnings", () => {
    expect(validateSpec(good(), { partition: day })).toEqual({ valid: true, errors: [], warnings: [] });
  });
  it("is also valid as an index task", () => {
    const r = check((s) => {
      s.type = "index";
      s.spec.ioConfig.type = "index";
      s.spec.tuningConfig = { type: "index", partitionsSpec: { type: "dynamic" } };
    });
    expect(r.errors).toEqual([]);
  });
});

describe("structure (zod), with found and expected in every message", () => {
  it("refuses a task type segops does not run", () => {
    const r = validateSpec({ type: "kill" });
    expect(onlyErrorAt(r, "type")).toBe(
      'expected one of "index_parallel", "index", "compact" (the task types segops runs), found string "kill"',
    );
    expect(onlyErrorAt(validateSpec([]), "(root)")).toBe("expected a task object, found an empty array");
  });
  it("names a missing dataSource", () => {
    const r = check((s) => {
      delete s.spec.dataSchema.dataSource;
    });
    expect(onlyErrorAt(r, "spec.dataSchema.dataSource")).toBe("expected string, found nothing");
  });
  it("names a wrongly typed field", () => {
    const r = check((s) => {
      s.spec.ioConfig.dropExisting = "true";
    });
    expect(errorAt(r, "spec.ioConfig.dropExisting")).toBe('expected boolean, found string "true"');
  });
  it("refuses an ioConfig type that is not the task type", () => {
    const r = check((s) => {
      s.spec.ioConfig.type = "index";
    });
    expect(onlyErrorAt(r, "spec.ioConfig.type")).toBe('expected "index_parallel", found string "index"');
  });
  it("refuses invalid granularity names (valid ones pass)", () => {
    const r = check((s) => {
      s.spec.dataSchema.granularitySpec.queryGranularity = "fortnight";
    });
    expect(onlyErrorAt(r, "spec.dataSchema.granularitySpec.queryGranularity")).toMatch(
      /unknown granularity "fortnight"/,
    );
    for (const ok of ["HOUR", "fifteen_minute", "PT1H", { type: "period", period: "P1D" }, "all"]) {
      expect(check((s) => (s.spec.dataSchema.granularitySpec.queryGranularity = ok)).errors).toEqual([]);
    }
  });
  it("refuses an unparsable interval", () => {
    const r = validateSpec(
      (() => {
        const s = good();
        s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01/yesterday"];
        return s;
      })(),
    );
    expect(errorAt(r, "spec.dataSchema.granularitySpec.intervals[0]")).toMatch(
      /invalid ISO-8601 time "yesterday"/,
    );
  });
  it("refuses unknown dimension types and reports the object branch of a dimension", () => {
    const r = check((s) => {
      s.spec.dataSchema.dimensionsSpec.dimensions = ["page", { type: "int", name: "n" }, 7];
    });
    expect(errorAt(r, "spec.dataSchema.dimensionsSpec.dimensions[1].type")).toBe(
      'expected one of "string", "long", "float", "double", "spatial", "json", "auto", found string "int"',
    );
    expect(errorAt(r, "spec.dataSchema.dimensionsSpec.dimensions[2]")).toBe(
      "expected string or object, found number 7",
    );
    const ok = check((s) => {
      s.spec.dataSchema.dimensionsSpec.dimensions = DIMS;
    });
    expect(ok.errors).toEqual([]);
  });
  it("refuses an unknown partitionsSpec type", () => {
    const r = check((s) => {
      s.spec.tuningConfig.partitionsSpec = { type: "hash" };
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.partitionsSpec.type")).toBe(
      'expected one of "dynamic", "hashed", "single_dim", "dimension", "range", found string "hash"',
    );
  });
  it("refuses non-positive sizes where Druid needs positive ones", () => {
    const r = check((s) => {
      s.spec.tuningConfig.maxRowsInMemory = 0;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.maxRowsInMemory")).toBe(
      "expected a number more than 0, found number 0",
    );
  });
});

const DIMS = [
  "a",
  ...["string", "long", "float", "double", "json", "auto"].map((type) => ({ type, name: `d_${type}` })),
];

describe("unknown keys are warnings with their path (Druid ignores them, api-contract §0)", () => {
  it("reports misspelled fields at every known level", () => {
    const r = check((s) => {
      s.spec.ioConfig.dropExsting = true;
      s.spec.dataSchema.granularitySpec.segmentGranularty = "hour";
      s.spec.tuningConfig.partitionsSpec = { type: "dynamic", maxRowPerSegment: 5 };
      s.spec.dataSchema.dimensionsSpec.dimensions = [{ name: "x", typ: "long" }];
      s.contxt = {};
    });
    expect(r.valid).toBe(true);
    expect(r.warnings.map((w) => w.path).sort()).toEqual(
      [
        "contxt",
        "spec.dataSchema.dimensionsSpec.dimensions[0].typ",
        "spec.dataSchema.granularitySpec.segmentGranularty",
        "spec.ioConfig.dropExsting",
        "spec.tuningConfig.partitionsSpec.maxRowPerSegment",
      ].sort(),
    );
    expect(r.warnings[0]?.message).toMatch(/unknown field: Druid ignores it silently/);
  });
  it("does not warn inside extension-defined objects (input sources, formats, aggregators)", () => {
    const r = check((s) => {
      s.spec.ioConfig.inputSource = { type: "s3", prefixes: ["s3://b/"], properties: { accessKeyId: "x" } };
      s.spec.ioConfig.inputFormat = { type: "parquet", flattenSpec: { useFieldDiscovery: true } };
    });
    expect(r).toEqual({ valid: true, errors: [], warnings: [] });
  });
});

describe("Druid's submit-time rules (api-contract §5, §4.3, §2.2)", () => {
  it("dropExisting with appendToExisting", () => {
    const r = check((s) => {
      s.spec.ioConfig.appendToExisting = true;
    });
    expect(onlyErrorAt(r, "spec.ioConfig.dropExisting")).toMatch(/^Cannot simultaneously replace and append/);
  });
  it("dropExisting without intervals", () => {
    const r = validateSpec(modified((s) => delete s.spec.dataSchema.granularitySpec.intervals));
    expect(onlyErrorAt(r, "spec.dataSchema.granularitySpec.intervals")).toBe(
      "GranularitySpec's intervals cannot be empty when using replace.",
    );
    // With dropExisting false there is no Druid error (only segops warnings).
    const legacy = modified((s) => {
      delete s.spec.dataSchema.granularitySpec.intervals;
      s.spec.ioConfig.dropExisting = false;
    });
    const result = validateSpec(legacy);
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.path)).toEqual([
      "spec.ioConfig.dropExisting",
      "spec.dataSchema.granularitySpec.intervals",
    ]);
  });
  it("forceGuaranteedRollup with appendToExisting", () => {
    const r = check((s) => {
      s.spec.ioConfig.dropExisting = false;
      s.spec.ioConfig.appendToExisting = true;
      s.spec.tuningConfig.forceGuaranteedRollup = true;
      s.spec.tuningConfig.partitionsSpec = { type: "hashed" };
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.forceGuaranteedRollup")).toBe(
      "Perfect rollup cannot be guaranteed when appending to existing dataSources",
    );
  });
  it("forceGuaranteedRollup needs hashed, single_dim or range partitions", () => {
    const r = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = true;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.partitionsSpec.type")).toMatch(
      /^DynamicPartitionsSpec cannot be used for perfect rollup/,
    );
    for (const ps of [
      { type: "hashed", numShards: 2 },
      { type: "single_dim", partitionDimension: "page" },
      { type: "range", partitionDimensions: ["page"] },
    ]) {
      const ok = check((s) => {
        s.spec.tuningConfig.forceGuaranteedRollup = true;
        s.spec.tuningConfig.partitionsSpec = ps;
      });
      expect(ok.errors).toEqual([]);
    }
  });
  it("non-dynamic partitions need forceGuaranteedRollup", () => {
    const r = check((s) => {
      s.spec.tuningConfig.partitionsSpec = { type: "hashed" };
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.partitionsSpec.type")).toMatch(
      /^DynamicPartitionsSpec must be used for best-effort rollup/,
    );
  });
  it("single_dim with perfect rollup needs partitionDimension; range always needs partitionDimensions", () => {
    const single = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = true;
      s.spec.tuningConfig.partitionsSpec = { type: "single_dim" };
    });
    expect(onlyErrorAt(single, "spec.tuningConfig.partitionsSpec.partitionDimension")).toBe(
      "forceGuaranteedRollup is incompatible with partitionsSpec: partitionDimension must be specified",
    );
    const range = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = true;
      s.spec.tuningConfig.partitionsSpec = { type: "range", partitionDimensions: [] };
    });
    expect(onlyErrorAt(range, "spec.tuningConfig.partitionsSpec.partitionDimensions")).toBe(
      "partitionDimensions must be specified",
    );
  });
  it("maxNumSubTasks together with maxNumConcurrentSubTasks", () => {
    const r = check((s) => {
      s.spec.tuningConfig.maxNumSubTasks = 2;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.maxNumSubTasks")).toBe(
      "Can't use both maxNumSubTasks and maxNumConcurrentSubTasks. Use maxNumConcurrentSubTasks instead",
    );
  });
  it("maxNumConcurrentSubTasks must be positive", () => {
    const r = check((s) => {
      s.spec.tuningConfig.maxNumConcurrentSubTasks = 0;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.maxNumConcurrentSubTasks")).toBe(
      "maxNumConcurrentSubTasks must be positive, found 0",
    );
  });
  it("targetPartitionSize together with maxRowsPerSegment", () => {
    const r = check((s) => {
      s.spec.tuningConfig.targetPartitionSize = 5;
      s.spec.tuningConfig.maxRowsPerSegment = 5;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.targetPartitionSize")).toBe(
      "Can't use targetPartitionSize and maxRowsPerSegment together",
    );
  });
  it("the removed parser", () => {
    const r = check((s) => {
      s.spec.dataSchema.parser = { type: "string" };
    });
    expect(onlyErrorAt(r, "spec.dataSchema.parser")).toMatch(/^parser was removed in Druid 37/);
  });
  it("a missing timestampSpec, inputSource or inputFormat", () => {
    expect(
      onlyErrorAt(
        check((s) => delete s.spec.dataSchema.timestampSpec),
        "spec.dataSchema.timestampSpec",
      ),
    ).toBe("timestampSpec must not be null");
    expect(
      onlyErrorAt(
        check((s) => delete s.spec.ioConfig.inputSource),
        "spec.ioConfig.inputSource",
      ),
    ).toBe("inputSource must not be null");
    expect(
      onlyErrorAt(
        check((s) => delete s.spec.ioConfig.inputFormat),
        "spec.ioConfig.inputFormat",
      ),
    ).toMatch(/^inputFormat must not be null/);
    // A reindexing source needs no format.
    const reindex = check((s) => {
      delete s.spec.ioConfig.inputFormat;
      s.spec.ioConfig.inputSource = { type: "druid", dataSource: "wiki", interval: DAY_TEXT };
    });
    expect(reindex.errors).toEqual([]);
  });
  it("task id and datasource name rules (IdUtils.validateId)", () => {
    expect(
      onlyErrorAt(
        check((s) => (s.id = "a/b")),
        "id",
      ),
    ).toBe("Invalid value for field [Task ID]: Value [a/b] cannot contain '/'.");
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.dataSource = ".wiki")),
        "spec.dataSchema.dataSource",
      ),
    ).toBe("Invalid value for field [dataSource]: Value [.wiki] cannot start with '.'.");
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.dataSource = "wi\tki")),
        "spec.dataSchema.dataSource",
      ),
    ).toMatch(/illegal whitespace characters/);
    expect(check((s) => (s.spec.dataSchema.dataSource = "wiki edits")).errors).toEqual([]);
  });
  it("empty dimension and metric names", () => {
    const dim = check((s) => {
      s.spec.dataSchema.dimensionsSpec.dimensions = ["a", { type: "long", name: "" }];
    });
    expect(onlyErrorAt(dim, "spec.dataSchema.dimensionsSpec.dimensions[1].name")).toBe(
      "Encountered dimension with null or empty name at position[1]",
    );
    const met = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "count", name: "" }];
    });
    expect(onlyErrorAt(met, "spec.dataSchema.metricsSpec[0].name")).toBe(
      "Encountered metric with null or empty name at position 0",
    );
  });
  it("a column named twice across dimensions and metrics", () => {
    const r = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "count", name: "page" }];
    });
    expect(onlyErrorAt(r, "spec.dataSchema.metricsSpec[0].name")).toBe(
      "Cannot specify a column more than once: [page] already at spec.dataSchema.dimensionsSpec.dimensions[0]",
    );
  });
  it("__time as a dimension must be long and first (unless forceSegmentSortByTime is false)", () => {
    const str = check((s) => {
      s.spec.dataSchema.dimensionsSpec.dimensions = ["__time"];
    });
    expect(onlyErrorAt(str, "spec.dataSchema.dimensionsSpec.dimensions[0]")).toBe(
      "Encountered dimension[__time] with incorrect type[string]. Type must be 'long'.",
    );
    const late = check((s) => {
      s.spec.dataSchema.dimensionsSpec.dimensions = ["page", { type: "long", name: "__time" }];
    });
    expect(onlyErrorAt(late, "spec.dataSchema.dimensionsSpec.dimensions[1]")).toMatch(/can only come first/);
    const unsorted = check((s) => {
      s.spec.dataSchema.dimensionsSpec = {
        dimensions: ["page", { type: "long", name: "__time" }],
        forceSegmentSortByTime: false,
      };
    });
    expect(unsorted.errors).toEqual([]);
  });
  it("aggregators: unknown types warn, field aggregators need fieldName", () => {
    const missing = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "doubleSum", name: "x" }];
    });
    expect(onlyErrorAt(missing, "spec.dataSchema.metricsSpec[0].fieldName")).toBe(
      "a doubleSum aggregator needs fieldName (the input column), found nothing",
    );
    const ext = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "myExtensionAgg", name: "x" }];
    });
    expect(ext.valid).toBe(true);
    expect(ext.warnings).toEqual([
      {
        path: "spec.dataSchema.metricsSpec[0].type",
        message:
          '"myExtensionAgg" is not a core or bundled aggregator; fine only if an extension provides it',
      },
    ]);
  });
  it("a missing ioConfig/tuningConfig type is a warning (unconfirmed whether Druid refuses it, api-contract §10)", () => {
    const r = check((s) => {
      delete s.spec.ioConfig.type;
      delete s.spec.tuningConfig.type;
    });
    expect(r.valid).toBe(true);
    expect(r.warnings.map((w) => w.path)).toEqual(["spec.ioConfig.type", "spec.tuningConfig.type"]);
  });
});

function modified(mutate: (s: Spec) => void): Spec {
  const s = good();
  mutate(s);
  return s;
}

describe("segops partition rules", () => {
  it("the intervals must equal the partition exactly (tightness)", () => {
    const wide = check((s) => {
      s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01/2026-01-03"];
    });
    expect(onlyErrorAt(wide, "spec.dataSchema.granularitySpec.intervals")).toBe(
      `must be exactly the partition interval ["${DAY_TEXT}"], found ["2026-01-01/2026-01-03"]`,
    );
    const two = check((s) => {
      s.spec.dataSchema.granularitySpec.intervals = [DAY_TEXT, "2026-01-02/P1D"];
    });
    expect(onlyErrorAt(two, "spec.dataSchema.granularitySpec.intervals")).toMatch(
      /^must be exactly the partition interval/,
    );
    // Any spelling of the same interval is fine.
    expect(
      check((s) => (s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01T00:00Z/P1D"])).errors,
    ).toEqual([]);
  });
  it("the interval must be aligned to segmentGranularity (else Druid's lock widens it)", () => {
    const hours = parseInterval("2026-01-01T05:00Z/PT1H");
    const r = check((s) => {
      s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01T05:00Z/PT1H"];
    }, hours);
    expect(onlyErrorAt(r, "spec.dataSchema.granularitySpec.intervals[0]")).toBe(
      "2026-01-01T05:00:00.000Z/2026-01-01T06:00:00.000Z is not aligned to segmentGranularity DAY: Druid would lock and replace 2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z, beyond the partition; align the interval or change segmentGranularity",
    );
    const ok = check((s) => {
      s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01T05:00Z/PT1H"];
      s.spec.dataSchema.granularitySpec.segmentGranularity = "hour";
    }, hours);
    expect(ok.errors).toEqual([]);
  });
  it("the default segmentGranularity (DAY) applies when none is set", () => {
    const r = check((s) => {
      delete s.spec.dataSchema.granularitySpec.segmentGranularity;
      s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01T12:00Z/2026-01-02T12:00Z"];
    }, parseInterval("2026-01-01T12:00Z/2026-01-02T12:00Z"));
    expect(onlyErrorAt(r, "spec.dataSchema.granularitySpec.intervals[0]")).toMatch(/segmentGranularity DAY/);
  });
  it("warns that appending and REPLACE_LEGACY are not idempotent replacements", () => {
    const append = check((s) => {
      s.spec.ioConfig.dropExisting = false;
      s.spec.ioConfig.appendToExisting = true;
    });
    expect(append.valid).toBe(true);
    expect(append.warnings.map((w) => w.path)).toEqual(["spec.ioConfig.appendToExisting"]);
    const legacy = check((s) => {
      s.spec.ioConfig.dropExisting = false;
    });
    expect(legacy.warnings.map((w) => w.path)).toEqual(["spec.ioConfig.dropExisting"]);
  });
});

describe("compact tasks (cheap rules)", () => {
  const compact = (extra: Record<string, unknown> = {}) => ({
    type: "compact",
    dataSource: "wiki",
    ioConfig: { type: "compact", inputSpec: { type: "interval", interval: DAY_TEXT } },
    granularitySpec: { segmentGranularity: "day" },
    ...extra,
  });
  it("accepts a tight compaction", () => {
    expect(validateSpec(compact(), { partition: day })).toEqual({ valid: true, errors: [], warnings: [] });
  });
  it("checks the datasource, the interval tightness and alignment", () => {
    expect(onlyErrorAt(validateSpec(compact({ dataSource: "a/b" })), "dataSource")).toMatch(
      /cannot contain '\/'/,
    );
    const other = validateSpec(compact(), { partition: parseInterval("2026-01-02/P1D") });
    expect(onlyErrorAt(other, "ioConfig.inputSpec.interval")).toMatch(
      /^must be exactly the partition interval/,
    );
    const hourly = validateSpec(
      compact({ ioConfig: { inputSpec: { type: "interval", interval: "2026-01-01T01:00Z/PT1H" } } }),
    );
    expect(onlyErrorAt(hourly, "ioConfig.inputSpec.interval")).toMatch(
      /not aligned to segmentGranularity DAY/,
    );
    expect(onlyErrorAt(validateSpec({ type: "compact", dataSource: "wiki" }), "ioConfig.inputSpec")).toMatch(
      /found nothing/,
    );
  });
});
