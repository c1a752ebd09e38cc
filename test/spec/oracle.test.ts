import { describe, expect, it } from "vitest";
import { validateSpec } from "../../src/spec/validate.js";
import { describeSegops, disagreement, readRecorded, segopsVerdict } from "./oracle/compare.js";
import { loadMutations, oracleCorpus } from "./oracle/corpus.js";

/**
 * The Druid 33 oracle's verdicts (scripts/druid/oracle, run in the real-Druid stage, which fails when they go
 * stale) recorded in test/fixtures/oracle-verdicts.json, held against segops' validator without Java: every
 * corpus spec, mutation and rendered template gets the verdict Druid 33 gave it.
 */

const items = oracleCorpus();
const recorded = readRecorded();

describe("segops validate against the Druid 33 oracle's recorded verdicts", () => {
  it("has a recorded verdict for every spec of the corpus, and none for specs it no longer holds", () => {
    expect(items.length).toBeGreaterThan(250);
    expect(Object.keys(recorded).sort()).toEqual(items.map((i) => i.id).sort());
  });

  it("agrees with Druid 33 on every spec, mutation and rendered template", () => {
    const problems = items.flatMap((item) => {
      const oracle = recorded[item.id];
      if (oracle === undefined) return [`${item.id}: no recorded verdict`];
      const segops = segopsVerdict(item);
      const why = disagreement(item, oracle, segops);
      return why === undefined
        ? []
        : [`${item.id}: ${why}; Druid: ${oracle.message}; segops: ${describeSegops(segops)}`];
    });
    expect(problems).toEqual([]);
  });

  it("refuses every mutation Druid 33 refuses and accepts every valid spec", () => {
    const rejected = items.filter((i) => recorded[i.id]?.verdict === "reject");
    // A statement Druid's parser accepts may still break a planner rule pinned to Druid's source.
    const accepted = items.filter(
      (i) => recorded[i.id]?.verdict === "accept" && i.mutation?.confirmedBy !== "source",
    );
    expect(rejected.length).toBeGreaterThan(40);
    expect(rejected.filter((i) => segopsVerdict(i).valid).map((i) => i.id)).toEqual([]);
    expect(accepted.filter((i) => !segopsVerdict(i).valid).map((i) => i.id)).toEqual([]);
  });
});

describe("the mutation corpus (test/fixtures/spec-mutations)", () => {
  const mutations = loadMutations();

  it("names the Druid class that enforces each rule", () => {
    for (const { id, mutation } of mutations) {
      expect(mutation.druidClass, id).toMatch(/^org\.apache\.druid\.[\w.$]+$/);
      expect(mutation.rule, id).not.toBe("");
    }
  });

  it("has at least one mutation per rule, each confirmed by the oracle", () => {
    const classes = new Set(
      mutations
        .filter((m) => m.mutation.expect !== "accept")
        .map((m) => m.mutation.druidClass.split(".").pop()),
    );
    for (const cls of [
      "CsvInputFormat",
      "DelimitedInputFormat",
      "JSONPathFieldSpec",
      "LocalInputSource",
      "HttpInputSource",
      "DruidInputSource",
      "InlineInputSource",
      "Granularity",
      "HashPartitionFunction",
      "CompactionTask$CompactionTuningConfig",
      "SelectorDimFilter",
      "InDimFilter",
      "BoundDimFilter",
      "EqualityFilter",
      "RangeFilter",
      "AndDimFilter",
      "DimFilter",
      "LongSumAggregatorFactory",
      "CardinalityAggregatorFactory",
      "FilteredAggregatorFactory",
      "DynamicPartitionsSpec",
      "DimensionSchema",
      "DataSchema",
      "CompactionTask",
      "ParallelIndexIngestionSpec",
      // SQL: Druid's parser (the oracle parses) and, pinned to source, its planner and the MSQ engine.
      "DruidSqlParserUtils",
      "DruidSqlParserImpl",
      "MSQTaskSqlEngine",
      "DruidSqlValidator",
      "ExternalOperatorConversion",
    ]) {
      expect(classes, cls).toContain(cls);
    }
    for (const { id, mutation } of mutations) {
      const druidRefuses = mutation.expect === "reject" && mutation.confirmedBy !== "source";
      expect(recorded[id]?.verdict, id).toBe(druidRefuses ? "reject" : "accept");
    }
  });

  it("words the version drift for the target release: warnings on Druid 33, errors where Druid refuses", () => {
    const spec = (name: string) => mutations.find((m) => m.id.endsWith(`/${name}.json`))?.mutation.spec;
    const zero = spec("dynamic-max-rows-per-segment-zero");
    const path = "spec.tuningConfig.partitionsSpec.maxRowsPerSegment";
    const on33 = validateSpec(zero, { rules: "druid" });
    expect(on33.valid).toBe(true);
    expect(on33.warnings.find((w) => w.path === path)?.message).toMatch(
      /Druid 33 accepts it, Druid 36 and later refuse/,
    );
    expect(validateSpec(zero, { rules: "druid", druidVersion: 36 }).errors.map((e) => e.path)).toEqual([
      path,
    ]);
    const upper = spec("dimension-type-upper-case");
    const dimPath = "spec.dataSchema.dimensionsSpec.dimensions[2].type";
    expect(validateSpec(upper, { rules: "druid" }).warnings.find((w) => w.path === dimPath)?.message).toMatch(
      /^Druid 33 does not know dimension type "LONG" .* reads the column as a string dimension; Druid 35 and later refuse it/,
    );
    expect(validateSpec(upper, { rules: "druid", druidVersion: 35 }).errors.map((e) => e.path)).toEqual([
      dimPath,
    ]);
    const parser = spec("parser-with-input-source");
    expect(validateSpec(parser, { rules: "druid" }).errors[0]?.message).toMatch(/\(Druid 33\)/);
    expect(validateSpec(parser, { rules: "druid", druidVersion: 37 }).errors[0]?.message).toMatch(
      /^parser was removed in Druid 37/,
    );
  });

  it("says empty for an empty dataSource, where Druid says 'must not be null'", () => {
    const r = validateSpec(mutations.find((m) => m.id.endsWith("/datasource-empty.json"))?.mutation.spec);
    expect(r.errors.find((e) => e.path === "spec.dataSchema.dataSource")?.message).toMatch(
      /^must not be empty/,
    );
  });
});
