import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { ValidationResult } from "../../src/spec/issues.js";
import { druidView, validateSpec } from "../../src/spec/validate.js";

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

/** A spec that passes every rule (docs/druid-api.md §5 skeleton, made segops-tight). */
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

function check(mutate: (s: Spec) => void, partition = day, druidVersion?: number): ValidationResult {
  const s = good();
  mutate(s);
  return validateSpec(s, { partition, ...(druidVersion !== undefined ? { druidVersion } : {}) });
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
  it("names a wrongly typed field (a value Jackson cannot coerce either)", () => {
    const r = check((s) => {
      s.spec.ioConfig.dropExisting = "yes";
    });
    expect(errorAt(r, "spec.ioConfig.dropExisting")).toBe('expected boolean, found string "yes"');
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
    for (const ok of ["HOUR", "fifteen_minute", { type: "period", period: "PT1H" }, "all"]) {
      expect(check((s) => (s.spec.dataSchema.granularitySpec.queryGranularity = ok)).errors).toEqual([]);
    }
    // Granularity.fromString reads a plain string as a GranularityType name only (confirmed by the oracle).
    const iso = check((s) => (s.spec.dataSchema.granularitySpec.queryGranularity = "PT1H"));
    expect(onlyErrorAt(iso, "spec.dataSchema.granularitySpec.queryGranularity")).toMatch(
      /plain string as a granularity name only .* write \{"type":"period","period":"PT1H"\}/,
    );
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
  it("refuses unknown dimension types (Druid 35 on) and reports the object branch of a dimension", () => {
    const r = check(
      (s) => {
        s.spec.dataSchema.dimensionsSpec.dimensions = ["page", { type: "int", name: "n" }, 7];
      },
      day,
      35,
    );
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
  it("refuses numbers outside a Java int, and only warns on sizes Druid accepts but misuses", () => {
    const r = check((s) => {
      s.spec.tuningConfig.maxRowsInMemory = 3_000_000_000;
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.maxRowsInMemory")).toBe(
      "expected a number at most 2147483647, found number 3000000000",
    );
    // IndexTuningConfig has no check on maxRowsInMemory: 0 is accepted (and persists after every row).
    const zero = check((s) => {
      s.spec.tuningConfig.maxRowsInMemory = 0;
    });
    expect(zero.errors).toEqual([]);
    expect(zero.warnings.map((w) => w.path)).toEqual(["spec.tuningConfig.maxRowsInMemory"]);
  });
});

const DIMS = [
  "a",
  ...["string", "long", "float", "double", "json", "auto"].map((type) => ({ type, name: `d_${type}` })),
];

describe("unknown keys are warnings with their path (Druid ignores them, docs/druid-api.md §0)", () => {
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

describe("Druid's submit-time rules (docs/druid-api.md §5, §4.3, §2.2)", () => {
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
      { type: "single_dim", partitionDimension: "page", targetRowsPerSegment: 1000 },
      { type: "range", partitionDimensions: ["page"], maxRowsPerSegment: 1000 },
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
      s.spec.tuningConfig.partitionsSpec = { type: "single_dim", targetRowsPerSegment: 1000 };
    });
    expect(onlyErrorAt(single, "spec.tuningConfig.partitionsSpec.partitionDimension")).toBe(
      "forceGuaranteedRollup is incompatible with partitionsSpec: partitionDimension must be specified",
    );
    const range = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = true;
      s.spec.tuningConfig.partitionsSpec = {
        type: "range",
        partitionDimensions: [],
        targetRowsPerSegment: 1000,
      };
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
    // Worded for the target: Druid 33 refuses a parser beside an inputSource, Druid 37 has none at all.
    expect(onlyErrorAt(r, "spec.dataSchema.parser")).toMatch(
      /^Cannot use parser and inputSource together \(Druid 33\): .*ioConfig\.inputFormat/,
    );
    const r37 = check((s) => (s.spec.dataSchema.parser = { type: "string" }), day, 37);
    expect(onlyErrorAt(r37, "spec.dataSchema.parser")).toMatch(/^parser was removed in Druid 37/);
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
  it("aggregators: unknown types are refused (AggregatorsModule), community ones warn, field aggregators need fieldName", () => {
    const missing = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "doubleSum", name: "x" }];
    });
    expect(onlyErrorAt(missing, "spec.dataSchema.metricsSpec[0].fieldName")).toBe(
      "a doubleSum aggregator needs fieldName (the input column), found nothing",
    );
    // Jackson cannot resolve a type id no loaded module registers: Druid answers 400.
    const unknown = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "myExtensionAgg", name: "x" }];
    });
    expect(onlyErrorAt(unknown, "spec.dataSchema.metricsSpec[0].type")).toMatch(
      /^Could not resolve type id 'myExtensionAgg' as a subtype of AggregatorFactory/,
    );
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.metricsSpec = [{ type: "longsum", name: "x", fieldName: "y" }])),
        "spec.dataSchema.metricsSpec[0].type",
      ),
    ).toMatch(/case-sensitive: "longSum"/);
    const contrib = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "tDigestSketch", name: "x", fieldName: "y" }];
    });
    expect(contrib.valid).toBe(true);
    expect(contrib.warnings).toEqual([
      {
        path: "spec.dataSchema.metricsSpec[0].type",
        message:
          '"tDigestSketch" comes from the community extension druid-tdigestsketch: Druid refuses it unless that extension is loaded',
      },
    ]);
    const both = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "longSum", name: "x", fieldName: "y", expression: "y * 2" }];
    });
    expect(onlyErrorAt(both, "spec.dataSchema.metricsSpec[0].expression")).toMatch(/found both/);
  });
  it("a missing ioConfig/tuningConfig type is a warning (unconfirmed whether Druid refuses it, docs/druid-api.md §10)", () => {
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

describe("read as Druid reads it (Jackson + Druid's @JsonCreator constructors)", () => {
  it("explicit nulls are absent (Druid's @Nullable creators)", () => {
    const r = check((s) => {
      s.context = null as unknown as Record<string, unknown>;
      s.spec.dataSchema.granularitySpec.queryGranularity = null;
      s.spec.dataSchema.transformSpec = null;
      s.spec.dataSchema.metricsSpec = null as unknown as Record<string, unknown>[];
      s.spec.dataSchema.dimensionsSpec = { dimensions: null };
      s.spec.tuningConfig.splitHintSpec = null;
      s.spec.tuningConfig.partitionsSpec = { type: "dynamic", maxRowsPerSegment: null };
    });
    expect(r).toEqual({ valid: true, errors: [], warnings: [] });
    // A required field stays required: null is "missing".
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.dataSource = null)),
        "spec.dataSchema.dataSource",
      ),
    ).toBe("expected string, found nothing");
    // A null segmentGranularity is Druid's default, DAY (so the segops alignment rule still applies).
    expect(check((s) => (s.spec.dataSchema.granularitySpec.segmentGranularity = null)).errors).toEqual([]);
  });

  it("scalars Jackson coerces are accepted with a warning naming what Druid reads", () => {
    const r = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = "false";
      s.spec.tuningConfig.awaitSegmentAvailabilityTimeoutMillis = "0";
      s.spec.tuningConfig.maxNumConcurrentSubTasks = 2.7;
      s.spec.ioConfig.appendToExisting = 0;
      s.spec.dataSchema.timestampSpec = { column: 5, format: "iso" };
      s.spec.tuningConfig.maxRetry = "";
    });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      {
        path: "spec.dataSchema.timestampSpec.column",
        message: `found number 5: Druid's JSON mapper (Jackson) reads it as "5"; write "5"`,
      },
      {
        path: "spec.ioConfig.appendToExisting",
        message: "found number 0: Druid's JSON mapper (Jackson) reads it as false; write false",
      },
      {
        path: "spec.tuningConfig.forceGuaranteedRollup",
        message: `found string "false": Druid's JSON mapper (Jackson) reads it as false; write false`,
      },
      {
        path: "spec.tuningConfig.awaitSegmentAvailabilityTimeoutMillis",
        message: `found string "0": Druid's JSON mapper (Jackson) reads it as 0; write 0`,
      },
      {
        path: "spec.tuningConfig.maxNumConcurrentSubTasks",
        message: "found number 2.7: Druid's JSON mapper (Jackson) truncates it to 2; write 2",
      },
      {
        path: "spec.tuningConfig.maxRetry",
        message: `found string "": Druid's JSON mapper (Jackson) reads it as null (absent); write nothing (or remove the field)`,
      },
    ]);
    // The coerced value is what the rules see: "true" is perfect rollup, which dynamic partitions refuse.
    const perfect = check((s) => (s.spec.tuningConfig.forceGuaranteedRollup = "true"));
    expect(onlyErrorAt(perfect, "spec.tuningConfig.partitionsSpec.type")).toMatch(
      /cannot be used for perfect rollup/,
    );
    // Jackson refuses a decimal string for an integer.
    expect(
      onlyErrorAt(
        check((s) => (s.spec.tuningConfig.maxRetry = "1.5")),
        "spec.tuningConfig.maxRetry",
      ),
    ).toBe('expected number, found string "1.5"');
  });

  it("fields are known per Druid class: index-only aliases, per-type dimension fields, groupId", () => {
    const index = check((s) => {
      s.type = "index";
      s.spec.ioConfig.type = "index";
      s.spec.tuningConfig = {
        type: "index",
        rowFlushBoundary: 1000,
        publishTimeout: 0,
        partitionDimensions: [],
      };
    });
    expect(index).toEqual({ valid: true, errors: [], warnings: [] });
    // ParallelIndexTuningConfig passes null for them: Druid ignores them in an index_parallel task.
    const parallel = check((s) => {
      s.groupId = "g";
      s.spec.tuningConfig.rowFlushBoundary = 1000;
      s.spec.tuningConfig.appendableIndexSpec = { type: "onheap" };
      s.spec.dataSchema.dimensionsSpec.dimensions = [
        { type: "json", name: "j", formatVersion: 5 },
        { type: "long", name: "n", createBitmapIndex: false },
        { type: "string", name: "s", multiValueHandling: "sorted_Set" },
        { name: "t", multiValueHandling: "array" },
      ];
    });
    expect(parallel.errors).toEqual([]);
    expect(parallel.warnings.map((w) => w.path)).toEqual([
      "spec.dataSchema.dimensionsSpec.dimensions[1].createBitmapIndex",
      "spec.tuningConfig.rowFlushBoundary",
    ]);
    const grouped = check((s) => {
      s.type = "index";
      s.groupId = "g";
      s.spec.ioConfig.type = "index";
      s.spec.tuningConfig = { type: "index" };
    });
    expect(grouped.warnings.map((w) => w.path)).toEqual(["groupId"]);
  });

  it("a partitionsSpec without type is hashed (PartitionsSpec's defaultImpl), with a warning", () => {
    const r = check((s) => {
      s.spec.tuningConfig.partitionsSpec = { targetRowsPerSegment: 1000 };
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.partitionsSpec.type")).toMatch(
      /^DynamicPartitionsSpec must be used/,
    );
    expect(r.warnings.map((w) => w.path)).toEqual(["spec.tuningConfig.partitionsSpec.type"]);
    const perfect = check((s) => {
      s.spec.tuningConfig.forceGuaranteedRollup = true;
      s.spec.tuningConfig.partitionsSpec = { numShards: -1 };
    });
    expect(perfect.errors).toEqual([]);
  });

  it("input sources whose needsFormat() is false need no inputFormat (combining: when no delegate needs one)", () => {
    for (const inputSource of [
      { type: "delta", tablePath: "/delta/wiki" },
      { type: "sql", database: { type: "mysql" }, sqls: ["SELECT 1"] },
      { type: "generator", count: 10 },
      { type: "combining", delegates: [{ type: "druid", dataSource: "w", interval: DAY_TEXT }] },
    ]) {
      const r = check((s) => {
        delete s.spec.ioConfig.inputFormat;
        s.spec.ioConfig.inputSource = inputSource;
      });
      expect(r.errors, inputSource.type).toEqual([]);
    }
    const mixed = check((s) => {
      delete s.spec.ioConfig.inputFormat;
      s.spec.ioConfig.inputSource = {
        type: "combining",
        delegates: [
          { type: "druid", dataSource: "w", interval: DAY_TEXT },
          { type: "local", baseDir: "/d", filter: "*" },
        ],
      };
    });
    expect(onlyErrorAt(mixed, "spec.ioConfig.inputFormat")).toMatch(/^inputFormat must not be null/);
  });

  it("granularities Druid reads: duration objects, zones and origins of periods", () => {
    const r = check((s) => {
      s.spec.dataSchema.granularitySpec.queryGranularity = { type: "duration", duration: 60000 };
      s.spec.dataSchema.granularitySpec.segmentGranularity = { type: "duration", duration: 86400000 };
    });
    expect(r.errors).toEqual([]);
    const zoned = check((s) => {
      s.spec.dataSchema.granularitySpec.queryGranularity = {
        type: "period",
        period: "PT1H",
        timeZone: "America/Los_Angeles",
        origin: "2026-01-01T00:00:00Z",
      };
    });
    expect(zoned.errors).toEqual([]);
    expect(
      onlyErrorAt(
        check(
          (s) => (s.spec.dataSchema.granularitySpec.queryGranularity = { type: "duration", duration: 0 }),
        ),
        "spec.dataSchema.granularitySpec.queryGranularity",
      ),
    ).toMatch(/duration/);
  });

  it("a Joda Duration is milliseconds or PT<seconds>S (chatHandlerTimeout)", () => {
    for (const ok of [10000, "10000", "PT10S", "PT0.5S"]) {
      expect(check((s) => (s.spec.tuningConfig.chatHandlerTimeout = ok)).errors, String(ok)).toEqual([]);
    }
    expect(
      onlyErrorAt(
        check((s) => (s.spec.tuningConfig.chatHandlerTimeout = "PT10M")),
        "spec.tuningConfig.chatHandlerTimeout",
      ),
    ).toMatch(/^Invalid format: "PT10M"/);
  });
});

describe("Druid rules modelled from Druid's source", () => {
  it("TimestampSpec: a format Joda's DateTimeFormat.forPattern refuses; missingValue must be a DateTime", () => {
    for (const ok of [
      "auto",
      "ISO",
      "posix",
      "millis",
      "micro",
      "nano",
      "ruby",
      "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
      "dd/MMM/yyyy:HH:mm:ss Z",
    ]) {
      expect(
        check((s) => (s.spec.dataSchema.timestampSpec = { column: "t", format: ok })).errors,
        ok,
      ).toEqual([]);
    }
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.timestampSpec = { column: "t", format: "yyyy-MM-dd qq" })),
        "spec.dataSchema.timestampSpec.format",
      ),
    ).toBe("Unable to parse timestamps with format [yyyy-MM-dd qq]: Illegal pattern component: q");
    for (const ok of ["2020-01-01", "2020-01-01T00:00:00.000Z", 0]) {
      expect(
        check((s) => (s.spec.dataSchema.timestampSpec = { column: "t", missingValue: ok })).errors,
      ).toEqual([]);
    }
    expect(
      onlyErrorAt(
        check((s) => (s.spec.dataSchema.timestampSpec = { column: "t", missingValue: "2020-13-45" })),
        "spec.dataSchema.timestampSpec.missingValue",
      ),
    ).toMatch(/Invalid format: "2020-13-45"/);
  });

  it("HashedPartitionsSpec: one target size (aliases), not with numShards, positive; -1 is unset", () => {
    const hashed = (ps: Record<string, unknown>) =>
      check((s) => {
        s.spec.tuningConfig.forceGuaranteedRollup = true;
        s.spec.tuningConfig.partitionsSpec = { type: "hashed", ...ps };
      });
    expect(
      onlyErrorAt(
        hashed({ numShards: 2, targetRowsPerSegment: 10 }),
        "spec.tuningConfig.partitionsSpec.numShards",
      ),
    ).toMatch(/^At most one of \[targetRowsPerSegment\] or \[numShards\]/);
    expect(
      onlyErrorAt(
        hashed({ targetRowsPerSegment: 10, maxRowsPerSegment: 10 }),
        "spec.tuningConfig.partitionsSpec.maxRowsPerSegment",
      ),
    ).toMatch(/^At most one of \[targetRowsPerSegment\] or \[maxRowsPerSegment\]/);
    expect(onlyErrorAt(hashed({ numShards: 0 }), "spec.tuningConfig.partitionsSpec.numShards")).toBe(
      "numShards should be positive, found 0",
    );
    expect(hashed({ numShards: -1, targetRowsPerSegment: 10 }).errors).toEqual([]);
  });

  it("DimensionRangePartitionsSpec / SingleDimensionPartitionsSpec: exactly one of target and max", () => {
    const ranged = (ps: Record<string, unknown>) =>
      check((s) => {
        s.spec.tuningConfig.forceGuaranteedRollup = true;
        s.spec.tuningConfig.partitionsSpec = ps;
      });
    expect(
      onlyErrorAt(
        ranged({
          type: "range",
          partitionDimensions: ["page"],
          targetRowsPerSegment: 5,
          maxRowsPerSegment: 9,
        }),
        "spec.tuningConfig.partitionsSpec.maxRowsPerSegment",
      ),
    ).toBe("Exactly one of targetRowsPerSegment or maxRowsPerSegment must be present, found both");
    expect(
      onlyErrorAt(
        ranged({ type: "range", partitionDimensions: ["page"] }),
        "spec.tuningConfig.partitionsSpec.targetRowsPerSegment",
      ),
    ).toBe("Exactly one of targetRowsPerSegment or maxRowsPerSegment must be present, found neither");
    expect(ranged({ type: "single_dim", partitionDimension: "page", maxPartitionSize: 9 }).errors).toEqual(
      [],
    );
    expect(
      onlyErrorAt(
        ranged({
          type: "dimension",
          partitionDimension: "page",
          targetPartitionSize: 5,
          targetRowsPerSegment: 5,
        }),
        "spec.tuningConfig.partitionsSpec.targetPartitionSize",
      ),
    ).toMatch(/^At most one of \[targetRowsPerSegment\] or \[targetPartitionSize\]/);
    expect(
      onlyErrorAt(
        ranged({ type: "range", partitionDimensions: ["page"], maxRowsPerSegment: 0 }),
        "spec.tuningConfig.partitionsSpec.maxRowsPerSegment",
      ),
    ).toBe("maxRowsPerSegment must be greater than 0, found 0");
  });

  it("IndexTuningConfig: the deprecated tuning-level partition fields make the partitions spec", () => {
    const r = check((s) => {
      s.spec.tuningConfig = {
        type: "index_parallel",
        forceGuaranteedRollup: true,
        maxRowsPerSegment: 10,
        numShards: 2,
      };
    });
    expect(onlyErrorAt(r, "spec.tuningConfig.numShards")).toMatch(
      /^At most one of \[maxRowsPerSegment\] or \[numShards\]/,
    );
    const dynamic = check(
      (s) => (s.spec.tuningConfig = { type: "index_parallel", maxRowsPerSegment: 0 }),
      day,
      36,
    );
    expect(onlyErrorAt(dynamic, "spec.tuningConfig.maxRowsPerSegment")).toBe(
      "maxRowsPerSegment must be greater than 0, found 0",
    );
    expect(
      check((s) => (s.spec.tuningConfig = { type: "index_parallel", maxRowsPerSegment: -1, numShards: -1 }))
        .errors,
    ).toEqual([]);
  });

  it("DimensionsSpec.verify: a dimension also in dimensionExclusions", () => {
    const r = check((s) => {
      s.spec.dataSchema.dimensionsSpec = { dimensions: ["page"], dimensionExclusions: ["user", "page"] };
    });
    expect(onlyErrorAt(r, "spec.dataSchema.dimensionsSpec.dimensionExclusions[1]")).toBe(
      "dimensions and dimensions exclusions cannot overlap: [page] is also a dimension",
    );
  });

  it("TransformSpec: a transform name used twice", () => {
    const r = check((s) => {
      s.spec.dataSchema.transformSpec = {
        transforms: [
          { type: "expression", name: "x", expression: "1" },
          { type: "expression", name: "x", expression: "2" },
        ],
      };
    });
    expect(onlyErrorAt(r, "spec.dataSchema.transformSpec.transforms[1].name")).toBe(
      "Transform name 'x' cannot be used twice",
    );
  });

  it("DataSchema: a metric named __time (the primary timestamp)", () => {
    const r = check((s) => {
      s.spec.dataSchema.metricsSpec = [{ type: "count", name: "__time" }];
    });
    expect(onlyErrorAt(r, "spec.dataSchema.metricsSpec[0].name")).toBe(
      "Cannot specify a column more than once: [__time] already at the primary timestamp (__time cannot appear elsewhere except as long-typed dimension)",
    );
    // As a long dimension it may appear once.
    const once = check((s) => {
      s.spec.dataSchema.dimensionsSpec = { dimensions: [{ type: "long", name: "__time" }, "page"] };
    });
    expect(once.errors).toEqual([]);
  });

  it("ArbitraryGranularitySpec: overlapping intervals (abutting ones are fine); it has no segmentGranularity", () => {
    const arbitrary = (intervals: string[]) =>
      check((s) => {
        s.spec.dataSchema.granularitySpec = { type: "arbitrary", segmentGranularity: "day", intervals };
      }, parseInterval("2026-01-01/2026-01-03"));
    const r = arbitrary(["2026-01-01/2026-01-03", "2026-01-02/2026-01-03"]);
    expect(r.errors.map((e) => e.path)).toContain("spec.dataSchema.granularitySpec.intervals[1]");
    expect(r.errors.find((e) => e.path.endsWith("intervals[1]"))?.message).toBe(
      "Overlapping intervals: 2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z, 2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
    );
    const abutting = validateSpec(
      modified((s) => {
        s.spec.dataSchema.granularitySpec = {
          type: "arbitrary",
          segmentGranularity: "day",
          intervals: ["2026-01-01/2026-01-02", "2026-01-02/2026-01-03"],
        };
      }),
      { rules: "druid" },
    );
    expect(abutting.errors).toEqual([]);
    expect(abutting.warnings.map((w) => w.path)).toEqual([
      "spec.dataSchema.granularitySpec.segmentGranularity",
    ]);
  });

  it("rules: 'druid' leaves out segops' partition rules (alignment, idempotence warnings)", () => {
    const misaligned = modified((s) => {
      s.spec.dataSchema.granularitySpec.intervals = ["2026-01-01T05:00Z/PT1H"];
      s.spec.ioConfig.dropExisting = false;
    });
    expect(validateSpec(misaligned).errors.map((e) => e.path)).toEqual([
      "spec.dataSchema.granularitySpec.intervals[0]",
    ]);
    expect(validateSpec(misaligned, { rules: "druid" })).toEqual({ valid: true, errors: [], warnings: [] });
  });
});

describe("compact tasks (CompactionTask's creator)", () => {
  const base = { type: "compact", dataSource: "wiki" };
  it("takes exactly one of ioConfig, interval and segments; segments inputSpecs are Druid's too", () => {
    const both = validateSpec(
      { ...base, interval: DAY_TEXT, ioConfig: { inputSpec: { type: "interval", interval: DAY_TEXT } } },
      { rules: "druid" },
    );
    expect(onlyErrorAt(both, "interval")).toBe(
      "At most one of properties[[ioConfig, interval, segments]] must be present, found ioConfig and interval",
    );
    expect(validateSpec({ ...base, interval: DAY_TEXT }, { rules: "druid" }).errors).toEqual([]);
    expect(
      validateSpec(
        { ...base, ioConfig: { inputSpec: { type: "segments", segments: ["wiki_2026"] } } },
        { rules: "druid" },
      ).errors,
    ).toEqual([]);
  });
  it("the deprecated top-level segmentGranularity is read, and must agree with granularitySpec's", () => {
    const top = validateSpec({ ...base, interval: DAY_TEXT, segmentGranularity: "DAY" });
    expect(top).toEqual({ valid: true, errors: [], warnings: [] });
    const conflict = validateSpec(
      {
        ...base,
        interval: DAY_TEXT,
        segmentGranularity: "DAY",
        granularitySpec: { segmentGranularity: "MONTH" },
      },
      { rules: "druid" },
    );
    expect(onlyErrorAt(conflict, "segmentGranularity")).toMatch(
      /^Conflicting segment granularities found DAY/,
    );
    const same = validateSpec({
      ...base,
      interval: DAY_TEXT,
      segmentGranularity: "day",
      granularitySpec: { segmentGranularity: "DAY" },
    });
    expect(same.errors).toEqual([]);
  });
  it("reads the dimensions alias and checks its tuningConfig's partitions spec", () => {
    const r = validateSpec({
      ...base,
      interval: DAY_TEXT,
      dimensions: { dimensions: ["a", "a"] },
      tuningConfig: {
        type: "index_parallel",
        forceGuaranteedRollup: true,
        partitionsSpec: { type: "hashed", numShards: 2, targetRowsPerSegment: 5 },
      },
    });
    expect(r.errors.map((e) => e.path)).toEqual([
      "dimensions.dimensions[1]",
      "tuningConfig.partitionsSpec.numShards",
    ]);
  });
});

describe("druidView", () => {
  it("gives the values Druid acts on", () => {
    const view = druidView({
      type: "index_parallel",
      context: null,
      spec: { ioConfig: { appendToExisting: "true" }, tuningConfig: { partitionsSpec: {} } },
    });
    expect(view).toEqual({
      type: "index_parallel",
      spec: { ioConfig: { appendToExisting: true }, tuningConfig: { partitionsSpec: { type: "hashed" } } },
    });
  });
});
