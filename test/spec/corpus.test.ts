import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import type { ValidationResult } from "../../src/spec/issues.js";
import { validateSql } from "../../src/spec/msq.js";
import { validateSpec } from "../../src/spec/validate.js";

/**
 * Real specs from Apache Druid's repository (test/fixtures/druid-specs, origins in test/fixtures/druid-specs/SOURCES.md), validated
 * with Druid's rules only (`rules: "druid"`): segops' own partition rules (interval = partition, aligned to
 * segmentGranularity, REPLACE … OVERWRITE WHERE) would refuse specs Druid runs happily. Every spec Druid
 * accepts must be accepted; each Druid rule is then checked by mutating the corpus specs it applies to.
 */

const ROOT = fileURLToPath(new URL("../fixtures/druid-specs/", import.meta.url));

type Obj = Record<string, unknown>;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const FILES = walk(ROOT)
  .map((p) => relative(ROOT, p).split("\\").join("/"))
  .filter((f) => f.endsWith(".json") || f.endsWith(".sql"))
  .sort();
const NATIVE = FILES.filter((f) => f.endsWith(".json"));
const SQL = FILES.filter((f) => f.endsWith(".sql"));

function load(file: string): Obj {
  return JSON.parse(readFileSync(join(ROOT, file), "utf8")) as Obj;
}
function loadSql(file: string): string {
  return readFileSync(join(ROOT, file), "utf8");
}

const druid = (spec: unknown): ValidationResult => validateSpec(spec, { rules: "druid" });
const druidSql = (query: string): ValidationResult => validateSql(query, { rules: "druid" });

/**
 * Corpus files Druid rejects too (docs examples that are fragments or wrong), with the paths of the errors
 * and the Druid rule behind them.
 */
const KNOWN_INVALID: Readonly<Record<string, readonly string[]>> = {
  // A fragment showing only metricsSpec: DataSchema (IdUtils.validateId "dataSource"; Druid 37 requires the
  // timestampSpec) and IndexIngestionSpec (a null ioConfig).
  "docs/development--extensions-contrib--druid-exact-count-bitmap--L83.json": [
    "spec.dataSchema.dataSource",
    "spec.dataSchema.timestampSpec",
    "spec.ioConfig",
  ],
  // hashed / single_dim without forceGuaranteedRollup: IndexTuningConfig.getPartitionsSpec,
  // "DynamicPartitionsSpec must be used for best-effort rollup".
  "docs/ingestion--native-batch-simple-task--L37.json": ["spec.tuningConfig.partitionsSpec.type"],
  "docs/ingestion--native-batch--L141.json": ["spec.tuningConfig.partitionsSpec.type"],
  "docs/operations--migrate-from-firehose-ingestion--L136.json": ["spec.tuningConfig.partitionsSpec.type"],
  // The "before" example of the firehose migration guide: parser (DataSchema, removed in Druid 37), no
  // inputSource/inputFormat ((Parallel)IndexIngestionSpec), and single_dim without perfect rollup.
  "docs/operations--migrate-from-firehose-ingestion--L64.json": [
    "spec.dataSchema.parser",
    "spec.dataSchema.timestampSpec",
    "spec.ioConfig.inputFormat",
    "spec.ioConfig.inputSource",
    "spec.tuningConfig.partitionsSpec.type",
  ],
  // A tutorial step before the ioConfig is written (IndexIngestionSpec: null ioConfig).
  "docs/tutorials--tutorial-ingestion-spec--L385.json": ["spec.ioConfig"],
  // A tutorial step before the inputFormat is written: a local source needs one (LocalInputSource.needsFormat).
  "docs-fragments/tutorials--tutorial-ingestion-spec--L427.json": ["spec.ioConfig.inputFormat"],
  // web-console fixtures of specs it converts "with issue": a transform without type (Transform's
  // @JsonTypeInfo has no default implementation, so Jackson refuses it).
  // …and a filter of a type Druid does not register (DimFilter's subtypes).
  "web-console/spec-conversion--converts-with-issue-when-there-is-a-dimension-transform-and-strange-filter.json":
    ["spec.dataSchema.transformSpec.filter.type", "spec.dataSchema.transformSpec.transforms[0].type"],
  // CSV examples of the input-source docs with neither columns nor findColumnsFromHeader: CsvInputFormat
  // (FlatTextInputFormat) refuses them, "Either [columns] or [findColumnsFromHeader] must be set" (the Druid 33
  // oracle agrees, test/fixtures/oracle-verdicts.json).
  "docs-fragments/ingestion--input-sources--L672.json": ["spec.ioConfig.inputFormat.columns"],
  "docs-fragments/ingestion--input-sources--L702.json": ["spec.ioConfig.inputFormat.columns"],
  "docs-fragments/ingestion--input-sources--L909.json": ["spec.ioConfig.inputFormat.columns"],
  "web-console/spec-conversion--converts-with-issue-when-there-is-a-time-transform.json": [
    "spec.dataSchema.transformSpec.transforms[0].type",
  ],
};

const VALID_NATIVE = NATIVE.filter((f) => !(f in KNOWN_INVALID));

function errorPaths(r: ValidationResult): string[] {
  return [...new Set(r.errors.map((e) => e.path))].sort();
}

describe("the Druid spec corpus", () => {
  it("holds at least 150 real specs, each listed in SOURCES.md", () => {
    expect(FILES.length).toBeGreaterThanOrEqual(150);
    const sources = readFileSync(join(ROOT, "SOURCES.md"), "utf8");
    for (const f of FILES) expect(sources, f).toContain(`\`${f}\``);
    for (const f of Object.keys(KNOWN_INVALID)) expect(FILES).toContain(f);
  });

  it("accepts every valid native spec (0 errors)", () => {
    const rejected = VALID_NATIVE.map((f) => ({ f, errors: druid(load(f)).errors })).filter(
      (x) => x.errors.length > 0,
    );
    expect(rejected).toEqual([]);
  });

  it("accepts every valid native spec checked against its own interval as the partition", () => {
    for (const f of VALID_NATIVE) {
      const spec = load(f);
      const intervals = (
        ((spec.spec as Obj | undefined)?.dataSchema as Obj | undefined)?.granularitySpec as Obj | undefined
      )?.intervals;
      if (!Array.isArray(intervals) || intervals.length !== 1) continue;
      const partition = parseInterval(intervals[0] as string);
      expect(validateSpec(spec, { rules: "druid", partition }).errors, f).toEqual([]);
    }
  });

  it("accepts every SQL ingestion query (0 errors) but the web console's unconverted ones", () => {
    const rejected = SQL.map((f) => ({ f, errors: druidSql(loadSql(f)).errors })).filter(
      (x) => x.errors.length > 0,
    );
    // Conversions "with issue": the console's REWRITE_[…]_TO_SQL placeholders, which Druid's parser refuses
    // (the Druid 33 oracle agrees, test/fixtures/oracle-verdicts.json).
    expect(rejected.map((x) => x.f)).toEqual([
      "sql/web-console--spec-conversion--converts-with-issue-when-there-is-a-dimension-transform-and-strange-filter.sql",
      "sql/web-console--spec-conversion--converts-with-issue-when-there-is-a-time-transform.sql",
    ]);
    for (const x of rejected) {
      for (const e of x.errors)
        expect(e.message).toMatch(/REWRITE_\[.*\]_TO_SQL is the web console's placeholder/);
    }
    for (const f of SQL) expect(druidSql(loadSql(f)).warnings, f).toEqual([]);
  });

  it("rejects the specs Druid rejects too, at the paths of Druid's rules", () => {
    for (const [f, paths] of Object.entries(KNOWN_INVALID)) {
      const r = druid(load(f));
      expect(r.valid, f).toBe(false);
      expect(errorPaths(r), f).toEqual([...paths].sort());
    }
  });

  it("lists the warnings of the valid specs: coerced scalars, fields Druid ignores, community extensions", () => {
    const classes: Record<string, number> = {};
    for (const f of VALID_NATIVE) {
      for (const w of druid(load(f)).warnings) {
        const key = `${w.path.replace(/\[\d+\]/g, "[]")}: ${w.message.replace(/ \(.*$|;.*$|: Druid.*$/, "")}`;
        classes[key] = (classes[key] ?? 0) + 1;
      }
    }
    expect(classes).toEqual({
      // The test harness's `jsonMapper.writeValueAsString("0")` and a quoted "%%FORCE_GUARANTEED_ROLLUP%%".
      'spec.tuningConfig.awaitSegmentAvailabilityTimeoutMillis: found string "0"': 8,
      'spec.tuningConfig.forceGuaranteedRollup: found string "false"': 8,
      // Fields no creator reads: maxTotalRows of a range spec, a removed tuning field, an index task's dataSource.
      "spec.tuningConfig.partitionsSpec.maxTotalRows: unknown field": 4,
      "tuningConfig.forceExtendableShardSpecs: unknown field": 2,
      "dataSource: unknown field": 2,
      'spec.dataSchema.metricsSpec[].type: "Bitmap64ExactCountBuild" comes from the community extension druid-exact-count-bitmap': 3,
      'spec.dataSchema.metricsSpec[].type: "spectatorHistogram" comes from the community extension druid-spectator-histogram': 1,
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Mutations. Each applies to the corpus specs it fits (returning false where it does not) and must be refused
// by validation with an error at the given path: one per Druid rule, named with its Druid class and rule.

interface Native {
  spec: Obj;
  schema: Obj;
  io: Obj;
  tuning: Obj;
}

function native(task: Obj): Native | undefined {
  if (task.type !== "index" && task.type !== "index_parallel") return undefined;
  const spec = task.spec as Obj;
  const schema = spec.dataSchema as Obj;
  if (!spec.ioConfig) return undefined;
  spec.tuningConfig ??= { type: task.type };
  return { spec, schema, io: spec.ioConfig as Obj, tuning: spec.tuningConfig as Obj };
}

function dimensionNames(schema: Obj): string[] {
  const dims = ((schema.dimensionsSpec as Obj | undefined)?.dimensions as unknown[] | undefined) ?? [];
  return dims
    .map((d) => (typeof d === "string" ? d : (d as Obj | null)?.name))
    .filter((n): n is string => typeof n === "string");
}

interface Mutation {
  /** The Druid class and rule. */
  readonly rule: string;
  /** Mutates a copy of the task; returns the expected error path, or undefined when it does not apply. */
  readonly apply: (task: Obj) => string | undefined;
}

const MUTATIONS: readonly Mutation[] = [
  {
    rule: "TimestampSpec → TimestampParser: Joda DateTimeFormat.forPattern refuses the pattern",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      n.schema.timestampSpec = {
        ...((n.schema.timestampSpec as Obj) ?? {}),
        format: "yyyy-MM-dd'T'HH:mm:ss.SSSQ",
      };
      return "spec.dataSchema.timestampSpec.format";
    },
  },
  {
    rule: "TimestampSpec: missingValue is a Joda DateTime",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      n.schema.timestampSpec = { ...((n.schema.timestampSpec as Obj) ?? {}), missingValue: "yesterday noon" };
      return "spec.dataSchema.timestampSpec.missingValue";
    },
  },
  {
    rule: "HashedPartitionsSpec: Checks.checkAtMostOneNotNull(targetRowsPerSegment, numShards)",
    apply: (t) => {
      const n = native(t);
      if (!n || n.io.appendToExisting === true) return undefined;
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = { type: "hashed", numShards: 2, targetRowsPerSegment: 1000 };
      return "spec.tuningConfig.partitionsSpec.numShards";
    },
  },
  {
    rule: "DimensionRangePartitionsSpec: exactly one of targetRowsPerSegment or maxRowsPerSegment (both)",
    apply: (t) => {
      const n = native(t);
      const dim = n && dimensionNames(n.schema)[0];
      if (!n || !dim || n.io.appendToExisting === true) return undefined;
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = {
        type: "range",
        partitionDimensions: [dim],
        targetRowsPerSegment: 1000,
        maxRowsPerSegment: 2000,
      };
      return "spec.tuningConfig.partitionsSpec.maxRowsPerSegment";
    },
  },
  {
    rule: "SingleDimensionPartitionsSpec → DimensionRangePartitionsSpec: exactly one of target and max (neither)",
    apply: (t) => {
      const n = native(t);
      const dim = n && dimensionNames(n.schema)[0];
      if (!n || !dim || n.io.appendToExisting === true) return undefined;
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = { type: "single_dim", partitionDimension: dim, targetRowsPerSegment: -1 };
      return "spec.tuningConfig.partitionsSpec.targetRowsPerSegment";
    },
  },
  {
    rule: "DimensionsSpec.verify: dimensions and dimensions exclusions cannot overlap",
    apply: (t) => {
      const n = native(t);
      const dim = n && dimensionNames(n.schema)[0];
      if (!n || !dim) return undefined;
      const ds = n.schema.dimensionsSpec as Obj;
      const exclusions = [...(((ds.dimensionExclusions as unknown[] | null) ?? []) as string[]), dim];
      ds.dimensionExclusions = exclusions;
      return `spec.dataSchema.dimensionsSpec.dimensionExclusions[${exclusions.length - 1}]`;
    },
  },
  {
    rule: "TransformSpec: Transform name cannot be used twice",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      const ts = ((n.schema.transformSpec as Obj | null) ?? {}) as Obj;
      const transforms = [
        ...(((ts.transforms as unknown[] | null) ?? []) as Obj[]),
        { type: "expression", name: "twice", expression: "1" },
        { type: "expression", name: "twice", expression: "2" },
      ];
      n.schema.transformSpec = { ...ts, transforms };
      return `spec.dataSchema.transformSpec.transforms[${transforms.length - 1}].name`;
    },
  },
  {
    rule: "DataSchema.computeAndValidateOutputFieldNames: __time is the primary timestamp, not a metric",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      const metrics = [
        ...(((n.schema.metricsSpec as unknown[] | null) ?? []) as Obj[]),
        { type: "count", name: "__time" },
      ];
      n.schema.metricsSpec = metrics;
      return `spec.dataSchema.metricsSpec[${metrics.length - 1}].name`;
    },
  },
  {
    rule: "ArbitraryGranularitySpec: overlapping intervals",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      n.schema.granularitySpec = {
        type: "arbitrary",
        queryGranularity: "none",
        intervals: ["2013-08-31/2013-09-02", "2013-09-01/2013-09-03"],
      };
      return "spec.dataSchema.granularitySpec.intervals[1]";
    },
  },
  {
    rule: "AggregatorsModule (Jackson subtype resolution): an unknown aggregator type",
    apply: (t) => {
      const n = native(t);
      if (!n) return undefined;
      const metrics = [
        ...(((n.schema.metricsSpec as unknown[] | null) ?? []) as Obj[]),
        { type: "longSumm", name: "typo", fieldName: "added" },
      ];
      n.schema.metricsSpec = metrics;
      return `spec.dataSchema.metricsSpec[${metrics.length - 1}].type`;
    },
  },
  {
    rule: "CompactionTask: conflicting segmentGranularity and granularitySpec.segmentGranularity",
    apply: (t) => {
      if (t.type !== "compact") return undefined;
      t.granularitySpec = { segmentGranularity: "DAY" };
      t.segmentGranularity = "MONTH";
      return "segmentGranularity";
    },
  },
  {
    rule: "CompactionTask: Checks.checkOneNotNullOrEmpty(ioConfig, interval, segments)",
    apply: (t) => {
      if (t.type !== "compact" || t.ioConfig === undefined) return undefined;
      t.interval = "2013-08-31/2013-09-02";
      return "interval";
    },
  },
];

const SQL_MUTATIONS: readonly { rule: string; apply: (q: string) => string | undefined; path: string }[] = [
  {
    rule: "DruidSqlValidator: CLUSTERED BY found before PARTITIONED BY",
    path: "query.clusteredBy",
    apply: (q) => {
      const m = /\bPARTITIONED\s+BY\s+([^\n]+?)\s*(\bCLUSTERED\s+BY\s+[^\n]+)?\s*;?\s*$/i.exec(q);
      if (!m) return undefined;
      const clustered = m[2] ?? "CLUSTERED BY channel";
      return `${q.slice(0, m.index)}${clustered}\nPARTITIONED BY ${m[1]}`;
    },
  },
  {
    rule: "DruidSqlParserUtils.convertSqlNodeToGranularity: PARTITIONED BY HOURLY is no granularity",
    path: "query.partitionedBy",
    apply: (q) => {
      const m = /\bPARTITIONED\s+BY\s+(.+?)(\s+CLUSTERED\s+BY\b[\s\S]*)?\s*;?\s*$/i.exec(q);
      if (!m) return undefined;
      return `${q.slice(0, m.index)}PARTITIONED BY HOURLY${m[2] ?? ""}`;
    },
  },
];

describe("each Druid rule rejects its mutation of the corpus specs, with the JSON path", () => {
  for (const m of MUTATIONS) {
    it(m.rule, () => {
      let applied = 0;
      for (const f of VALID_NATIVE) {
        const task = structuredClone(load(f));
        const path = m.apply(task);
        if (path === undefined) continue;
        applied++;
        const r = druid(task);
        expect(r.valid, f).toBe(false);
        expect(
          r.errors.map((e) => e.path),
          `${f}: ${JSON.stringify(r.errors)}`,
        ).toContain(path);
      }
      expect(applied).toBeGreaterThan(0);
    });
  }
  for (const m of SQL_MUTATIONS) {
    it(m.rule, () => {
      let applied = 0;
      for (const f of SQL) {
        const q = m.apply(loadSql(f));
        if (q === undefined) continue;
        applied++;
        const r = druidSql(q);
        expect(
          r.errors.map((e) => e.path),
          `${f}: ${JSON.stringify(r.errors)}\n${q}`,
        ).toContain(m.path);
      }
      expect(applied).toBeGreaterThan(10);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// The classes of false rejections: rewrites Druid reads the same way must stay accepted.

interface Rewrite {
  readonly name: string;
  /** Rewrites a copy of the task; false when it does not apply. */
  readonly apply: (task: Obj) => boolean;
  /** Paths that must not carry an "unknown field" warning afterwards. */
  readonly known?: (task: Obj) => string[];
  /** A warning expected at this path (e.g. a coerced scalar). */
  readonly warns?: string;
}

const REWRITES: readonly Rewrite[] = [
  {
    name: "explicit nulls on optional fields (Druid's @Nullable creators read them as absent)",
    apply: (t) => {
      const n = native(t);
      if (!n) return false;
      t.context = null;
      n.schema.granularitySpec ??= {};
      const g = n.schema.granularitySpec as Obj;
      g.queryGranularity = null;
      g.rollup = null;
      if (g.type !== "arbitrary") g.segmentGranularity = null;
      n.schema.transformSpec ??= null;
      n.schema.metricsSpec ??= null;
      n.schema.dimensionsSpec ??= { dimensions: null };
      n.tuning.splitHintSpec = t.type === "index_parallel" ? null : undefined;
      n.tuning.maxRowsInMemory = null;
      n.io.appendToExisting ??= null;
      return true;
    },
  },
  {
    name: "numbers and booleans written as strings (Jackson coerces scalars), with a warning",
    warns: "spec.tuningConfig.maxParseExceptions",
    apply: (t) => {
      const n = native(t);
      if (!n) return false;
      n.tuning.maxParseExceptions = "3";
      n.tuning.logParseExceptions = "true";
      n.tuning.maxBytesInMemory = "0";
      return true;
    },
  },
  {
    name: "input sources that need no inputFormat (needsFormat() false: druid, sql, delta, combining of them)",
    apply: (t) => {
      const n = native(t);
      if (!n) return false;
      delete n.io.inputFormat;
      n.io.inputSource = {
        type: "combining",
        delegates: [
          { type: "druid", dataSource: "wikipedia", interval: "2013-08-31/2013-09-02" },
          { type: "delta", tablePath: "/data/delta/wikipedia" },
        ],
      };
      return true;
    },
  },
  {
    name: "-1 meaning 'not set' in partition sizes and numShards (PartitionsSpec.HISTORICAL_NULL)",
    apply: (t) => {
      const n = native(t);
      if (!n || n.io.appendToExisting === true) return false;
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = {
        type: "hashed",
        numShards: -1,
        targetRowsPerSegment: -1,
        maxRowsPerSegment: 5000,
      };
      return true;
    },
  },
  {
    name: "a partitionsSpec without type is Druid's default, hashed (with a warning)",
    warns: "spec.tuningConfig.partitionsSpec.type",
    apply: (t) => {
      const n = native(t);
      if (!n || n.io.appendToExisting === true) return false;
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = { numShards: 2, partitionDimensions: [] };
      return true;
    },
  },
  {
    name: '{"type": "duration"} granularities and millisecond durations',
    apply: (t) => {
      const n = native(t);
      if (!n || t.type !== "index_parallel") return false;
      n.schema.granularitySpec ??= {};
      const g = n.schema.granularitySpec as Obj;
      g.queryGranularity = { type: "duration", duration: 3600000 };
      if (g.type !== "arbitrary")
        g.segmentGranularity = { type: "duration", duration: "86400000", origin: "1970-01-01" };
      n.tuning.chatHandlerTimeout = 10000;
      n.tuning.taskStatusCheckPeriodMs = "1000";
      return true;
    },
  },
  {
    name: "keys Druid reads: index aliases, appendableIndexSpec, maxPartitionSize, json formatVersion",
    apply: (t) => {
      const n = native(t);
      const dim = n && dimensionNames(n.schema)[0];
      if (!n || t.type !== "index" || !dim || n.io.appendToExisting === true) return false;
      n.tuning.rowFlushBoundary = 50000;
      n.tuning.publishTimeout = 0;
      n.tuning.appendableIndexSpec = { type: "onheap" };
      n.tuning.forceGuaranteedRollup = true;
      n.tuning.partitionsSpec = { type: "single_dim", partitionDimension: dim, maxPartitionSize: 100000 };
      n.schema.dimensionsSpec ??= {};
      const ds = n.schema.dimensionsSpec as Obj;
      ds.dimensions = [
        ...((ds.dimensions as unknown[]) ?? []),
        { type: "json", name: "nested_blob", formatVersion: 5 },
      ];
      return true;
    },
    known: () => [
      "spec.tuningConfig.rowFlushBoundary",
      "spec.tuningConfig.publishTimeout",
      "spec.tuningConfig.appendableIndexSpec",
      "spec.tuningConfig.partitionsSpec.maxPartitionSize",
    ],
  },
  {
    name: "a compact task's top-level segmentGranularity (the deprecated form of granularitySpec's)",
    apply: (t) => {
      if (t.type !== "compact") return false;
      delete t.granularitySpec;
      t.segmentGranularity = "DAY";
      return true;
    },
    known: () => ["segmentGranularity"],
  },
];

describe("rewrites Druid reads the same way stay accepted (the classes of false rejections)", () => {
  for (const rw of REWRITES) {
    it(rw.name, () => {
      let applied = 0;
      for (const f of VALID_NATIVE) {
        const task = structuredClone(load(f));
        if (!rw.apply(task)) continue;
        applied++;
        const r = druid(task);
        expect(r.errors, f).toEqual([]);
        const unknown = r.warnings.filter((w) => w.message.startsWith("unknown field")).map((w) => w.path);
        for (const p of rw.known?.(task) ?? []) expect(unknown, f).not.toContain(p);
        expect(
          unknown.filter((p) => /nested_blob|formatVersion/.test(p)),
          f,
        ).toEqual([]);
        if (rw.warns)
          expect(
            r.warnings.map((w) => w.path),
            f,
          ).toContain(rw.warns);
      }
      expect(applied).toBeGreaterThan(0);
    });
  }
});
