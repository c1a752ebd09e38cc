import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseInterval } from "../../../src/core/interval.js";
import { prepareSpec } from "../../../src/spec/prepare.js";
import { setStatementsToContext } from "../../../src/spec/sql-set.js";
import { parseTemplateText } from "../../../src/spec/template.js";
import { dailyTemplate } from "../../helpers/dataset.js";

/**
 * The specs held against the Druid 33 oracle (scripts/druid/oracle): the real-spec corpus
 * (test/fixtures/druid-specs), one mutation per validation rule (test/fixtures/spec-mutations) and templates
 * rendered for a few partitions as a run renders them. Each item is the exact task both the oracle and
 * `segops validate` read, after extension types the oracle cannot load are swapped for core stand-ins.
 */

type Obj = Record<string, unknown>;

export interface OracleItem {
  /** Stable id: the path under test/fixtures, or `template:<name>@<interval>`. */
  readonly id: string;
  readonly kind: "fixture" | "mutation" | "template";
  /** The task (native items), or undefined for an SQL item. */
  readonly spec: unknown;
  /**
   * SQL items: the statement as a Druid 33 Broker receives it (leading SETs moved to the request context, as
   * segops does before Druid 34). The oracle only parses it (the MSQ extension is not served).
   */
  readonly sql?: string;
  /** Extension types swapped for a core stand-in (`inputSource s3 → local`), empty when none. */
  readonly standIns: readonly string[];
  /** Mutations only: what segops must say (an error, or a warning on a spec Druid 33 accepts). */
  readonly mutation?: Mutation;
}

/** A mutation file: a whole task spec that breaks (or, for `accept`, just passes) one Druid rule. */
export interface Mutation {
  readonly rule: string;
  /** The Druid class whose constructor or deserialiser enforces the rule. */
  readonly druidClass: string;
  /** `reject`: segops reports an error; `warn`: Druid 33 accepts, segops warns; `accept`: a control. */
  readonly expect: "reject" | "warn" | "accept";
  /** The path segops must name (error or warning). */
  readonly path?: string;
  /** A task spec, or… */
  readonly spec?: unknown;
  /** …an SQL statement (INSERT/REPLACE). */
  readonly query?: string;
  /**
   * SQL mutations: `parse` when Druid's parser refuses the statement (the oracle confirms it), `source` when the
   * rule is the planner's or the MSQ engine's (pinned to Druid's source: the statement parses).
   */
  readonly confirmedBy?: "parse" | "source";
}

export const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));
const REPO = fileURLToPath(new URL("../../../", import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * Extension types whose Druid 33.0.0 jars Maven Central does not serve (only druid-datasketches is), so the
 * oracle cannot load them: input sources of druid-s3-extensions, druid-google-extensions,
 * druid-azure-extensions, druid-hdfs-storage, aliyun-oss, druid-deltalake and druid-iceberg; input formats of
 * the Avro, Parquet, ORC, Protobuf and Kafka extensions; aggregators of druid-histogram, druid-stats,
 * druid-bloom-filter and the contrib extensions. Their own rules are pinned to Druid's source instead.
 */
const UNSERVED_SOURCES = new Set(["s3", "google", "azure", "azureStorage", "hdfs", "oss", "iceberg"]);
const FORMATLESS_UNSERVED_SOURCES = new Set(["delta"]);
const UNSERVED_FORMATS = new Set([
  "avro_ocf",
  "avro_stream",
  "parquet",
  "orc",
  "protobuf",
  "kafka",
  "kinesis",
  "thrift",
]);
const UNSERVED_AGGREGATORS = new Set([
  "approxHistogram",
  "approxHistogramFold",
  "fixedBucketsHistogram",
  "variance",
  "varianceFold",
  "bloom",
  "compressedBigDecimalSum",
  "compressedBigDecimalMax",
  "compressedBigDecimalMin",
  "ddSketch",
  "distinctCount",
  "Bitmap64ExactCountBuild",
  "Bitmap64ExactCountMerge",
  "momentSketch",
  "momentSketchMerge",
  "spectatorHistogram",
  "spectatorHistogramTimer",
  "spectatorHistogramDistribution",
  "tDigestSketch",
  "timeMin",
  "timeMax",
]);
/** The `sql` input source's connectors (mysql-metadata-storage, postgresql-metadata-storage). */
const UNSERVED_CONNECTORS = new Set(["mysql", "postgresql"]);

const LOCAL_STAND_IN = { type: "local", baseDir: "/tmp/stand-in", filter: "*.json" };
const FORMATLESS_STAND_IN = { type: "druid", dataSource: "stand_in", interval: "2000-01-01/2100-01-01" };

/** The spec with unserved extension types swapped for core stand-ins, and what was swapped. */
export function withStandIns(spec: unknown): { spec: unknown; standIns: string[] } {
  const standIns: string[] = [];
  const swap = (value: unknown, key: string | undefined): unknown => {
    if (Array.isArray(value)) return value.map((v) => swap(v, key));
    if (value === null || typeof value !== "object") return value;
    const o = value as Obj;
    const type = typeof o.type === "string" ? o.type : undefined;
    if (type !== undefined && (key === "inputSource" || key === "delegates")) {
      const db = (o.database as Obj | undefined)?.type;
      if (UNSERVED_SOURCES.has(type)) {
        standIns.push(`inputSource ${type} → local`);
        return { ...LOCAL_STAND_IN };
      }
      if (FORMATLESS_UNSERVED_SOURCES.has(type) || (type === "sql" && UNSERVED_CONNECTORS.has(String(db)))) {
        standIns.push(`inputSource ${type === "sql" ? `sql (${String(db)})` : type} → druid`);
        return { ...FORMATLESS_STAND_IN };
      }
    }
    if (type !== undefined && key === "inputFormat" && UNSERVED_FORMATS.has(type)) {
      standIns.push(`inputFormat ${type} → json`);
      return { type: "json", ...(o.flattenSpec !== undefined ? { flattenSpec: o.flattenSpec } : {}) };
    }
    if (
      type !== undefined &&
      (key === "metricsSpec" || key === "aggregator") &&
      UNSERVED_AGGREGATORS.has(type)
    ) {
      standIns.push(`aggregator ${type} → count`);
      return { type: "count", ...(o.name !== undefined ? { name: o.name } : {}) };
    }
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, swap(v, k)]));
  };
  return { spec: swap(spec, undefined), standIns };
}

/** The statement a Druid 33 Broker receives for an SQL template: its leading SETs go in the request context. */
export function asDruid33Sql(query: string): string {
  return setStatementsToContext(query, {}).query;
}

function fixtureItems(): OracleItem[] {
  const root = join(FIXTURES, "druid-specs");
  return walk(root)
    .filter((f) => f.endsWith(".json") || f.endsWith(".sql"))
    .map((f): OracleItem => {
      const id = relative(FIXTURES, f);
      if (f.endsWith(".sql")) {
        return {
          id,
          kind: "fixture",
          spec: undefined,
          sql: asDruid33Sql(readFileSync(f, "utf8")),
          standIns: [],
        };
      }
      const { spec, standIns } = withStandIns(readJson(f));
      return { id, kind: "fixture", spec, standIns };
    });
}

export const MUTATIONS = join(FIXTURES, "spec-mutations");

export function loadMutations(): { id: string; mutation: Mutation }[] {
  return walk(MUTATIONS)
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({ id: relative(FIXTURES, f), mutation: readJson(f) as Mutation }));
}

function mutationItems(): OracleItem[] {
  return loadMutations().map(({ id, mutation }): OracleItem => {
    if (mutation.query !== undefined) {
      return {
        id,
        kind: "mutation",
        spec: undefined,
        sql: asDruid33Sql(mutation.query),
        standIns: [],
        mutation,
      };
    }
    const { spec, standIns } = withStandIns(mutation.spec);
    return { id, kind: "mutation" as const, spec, standIns, mutation };
  });
}

/** Partitions the templates are rendered for: a plain day, a leap day, the day US clocks go forward. */
const PARTITIONS = ["2026-06-01/2026-06-02", "2024-02-29/2024-03-01", "2026-03-08/2026-03-09"];

/** The templates the tests and the README run: samples/ and the test suite's daily template (test/helpers). */
function templateItems(): OracleItem[] {
  const templates: { name: string; text: string; vars: Record<string, string> }[] = [
    {
      name: "samples/templates/wikipedia-daily.json",
      text: readFileSync(join(REPO, "samples/templates/wikipedia-daily.json"), "utf8"),
      vars: { dataDir: "/data/wikipedia" },
    },
    ...[
      { datasource: "events" },
      { datasource: "events", append: true },
      { datasource: "events", dropExisting: false, k: 4 },
    ].map((o, i) => ({
      name: `test/helpers/dataset.ts#dailyTemplate(${i})`,
      text: JSON.stringify(dailyTemplate(o)),
      vars: { dataDir: "/data/events" },
    })),
  ];
  const items: OracleItem[] = [];
  for (const t of templates) {
    for (const p of PARTITIONS) {
      const prepared = prepareSpec(parseTemplateText(t.text, t.name), {
        interval: parseInterval(p),
        vars: t.vars,
      });
      if (prepared.kind !== "task") continue;
      items.push({ id: `template:${t.name}@${p}`, kind: "template", spec: prepared.spec, standIns: [] });
    }
  }
  items.push({
    id: "template:samples/specs/wikipedia-index-parallel.json",
    kind: "template",
    spec: readJson(join(REPO, "samples/specs/wikipedia-index-parallel.json")),
    standIns: [],
  });
  return items;
}

/** Every item, fixtures first, in a stable order. */
export function oracleCorpus(): OracleItem[] {
  return [...fixtureItems(), ...mutationItems(), ...templateItems()];
}
