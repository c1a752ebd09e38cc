import { bucketStart, type Granularity } from "../core/granularity.js";
import { parseTimestamp } from "./ingest.js";
import { EntityOpenError, type InputEntity, InputError, readEntities } from "./input.js";
import type { DimensionSpec, MetricSpec, TimestampPlan } from "./plans.js";
import { constructError, druidError, empty, isJson, json, jsonParseError, type Reply } from "./reply.js";
import type { RouteContext } from "./router.js";
import { planTask } from "./spec.js";

/**
 * The Overlord's data sampler, `POST /druid/indexer/v1/sampler` (docs/druid-api.md §2.12), as Druid 33 answers
 * it. The body is an `IndexTaskSamplerSpec` (`indexing-service/…/overlord/sampler/IndexTaskSamplerSpec.java`):
 * `spec` read as an `IndexTask.IndexIngestionSpec` (so the dataSchema and tuningConfig checks of a task apply),
 * `samplerConfig` with `SamplerConfig.java`'s defaults. Sampling follows `InputSourceSampler.java`: records
 * are read up to `numRows`, each becoming a response row; a parse error is a row with `unparseable` and
 * `error`; rows the transformSpec filter drops are not rows at all; `granularitySpec.intervals` filters
 * nothing; rollup merges a group into its first row (a longMin ordering column), whose `parsed` it becomes.
 * What the emulator does not model is refused with 501 `Emulator: …`, never silently misread.
 */

const PKG = "org.apache.druid.indexing.overlord.sampler";
const SAMPLER_SPEC = "org.apache.druid.client.indexing.SamplerSpec";
// SamplerModule registers `index` only (IndexTaskSamplerSpec); streaming extensions add theirs. A real
// Druid 33 answers `index_parallel` with Jackson's unknown-type 400 (seen in the conformance stage).
const SAMPLER_TYPES = ["index"];
// SamplerConfig.java.
const DEFAULT_NUM_ROWS = 200;
const MAX_NUM_ROWS = 5000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** A sampled row before serialization; null fields are left out of the answer (`@JsonInclude(NON_NULL)`). */
interface SampleRow {
  input?: Obj;
  parsed?: Obj;
  unparseable?: true;
  error?: string;
}

interface Schema {
  timestamp: TimestampPlan;
  /** null: discovery of plain (string) dimensions. */
  dimensions: DimensionSpec[] | null;
  /** The explicit dimension schemas as written, for `logicalDimensions`. */
  written: Map<string, Obj>;
  exclusions: Set<string>;
  metrics: MetricSpec[];
  queryGranularity: Granularity;
  rollup: boolean;
  filter: Obj | null;
  /** JSON discovery skips nested objects and nulls (the flattener's root fields). */
  json: boolean;
}

interface Config {
  numRows: number;
  maxClientResponseBytes: number;
}

class Unsupported extends Error {}

/** The route handler. */
export async function sample(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  let body: unknown;
  const raw = await ctx.body();
  try {
    body = JSON.parse(raw);
  } catch {
    // No mapper for JsonParseException: a 500, as for a task (docs/druid-api.md §2.2).
    return jsonParseError(raw);
  }
  try {
    const request = readRequest(body, ctx.druidVersion);
    if ("status" in request) return request;
    const entities = readEntities(request.source, request.format);
    if (entities === null) {
      throw new Unsupported(`the sampler reads local and inline input sources, not [${request.source.type}]`);
    }
    return json(200, run(entities, request.schema, request.config));
  } catch (error) {
    // InputSourceSampler wraps whatever reading throws in a SamplerException: 400 {"error"} (SamplerExceptionMapper).
    if (error instanceof EntityOpenError)
      return json(400, { error: `Failed to sample data: ${error.message}` });
    if (error instanceof Unsupported || error instanceof InputError) {
      return druidError("general", "USER", "UNSUPPORTED", `Emulator: ${error.message}`);
    }
    throw error;
  }
}

interface SampleRequest {
  source: Obj;
  format: Obj | null;
  schema: Schema;
  config: Config;
}

/** The request as Jackson builds it: nested creators first, in the body's key order, then the spec's own checks. */
function readRequest(body: unknown, druidVersion: number): SampleRequest | Reply {
  if (!isObj(body)) {
    return json(400, {
      error: `Cannot deserialize value of type \`${SAMPLER_SPEC}\` from ${Array.isArray(body) ? "Array" : "non-object"} value`,
    });
  }
  if (typeof body.type !== "string") {
    return json(400, {
      error: `Could not resolve subtype of [simple type, class ${SAMPLER_SPEC}]: missing type id property 'type'`,
    });
  }
  if (!SAMPLER_TYPES.includes(body.type)) {
    return json(400, {
      error: `Please make sure to load all the necessary extensions and jars with type '${body.type}' on 'druid/coordinator' service. Could not resolve type id '${body.type}' as a subtype of \`${SAMPLER_SPEC}\` known type ids = [${SAMPLER_TYPES.join(", ")}]`,
    });
  }
  let schema: Schema | null = null;
  let config: Config = { numRows: DEFAULT_NUM_ROWS, maxClientResponseBytes: 0 };
  for (const key of Object.keys(body)) {
    if (key === "spec" && isObj(body.spec)) {
      const planned = planSpec(body.spec, druidVersion);
      if ("status" in planned) return planned;
      schema = planned;
    } else if (key === "samplerConfig" && body.samplerConfig !== null) {
      const read = readConfig(body.samplerConfig);
      if ("status" in read) return read;
      config = read;
    }
  }
  const spec = body.spec;
  if (!isObj(spec) || schema === null)
    return constructError(`${PKG}.IndexTaskSamplerSpec`, "[spec] is required");
  const io = spec.ioConfig;
  if (!isObj(io)) return constructError(`${PKG}.IndexTaskSamplerSpec`, "[spec.ioConfig] is required");
  if (!isObj(io.inputSource)) {
    return constructError(`${PKG}.IndexTaskSamplerSpec`, "[spec.ioConfig.inputSource] is required");
  }
  return { source: io.inputSource, format: isObj(io.inputFormat) ? io.inputFormat : null, schema, config };
}

/**
 * `spec` through the emulator's task planner (the same DataSchema, IOConfig and TuningConfig classes check it),
 * with Druid's default dataSchema when there is none (`InputSourceSampler.DEFAULT_DATA_SCHEMA`: column
 * `timestamp`, format `auto`, discovery). An absent inputSource is left to the sampler spec's own check, as
 * `IndexIngestionSpec` checks the format only of a source it has.
 */
function planSpec(spec: Obj, druidVersion: number): Schema | Reply {
  const dataSchema = isObj(spec.dataSchema)
    ? spec.dataSchema
    : { dataSource: "sampler", timestampSpec: {}, dimensionsSpec: {} };
  const io = isObj(spec.ioConfig) ? spec.ioConfig : { type: "index" };
  // IndexIngestionSpec's ioConfig is an IndexIOConfig: another IOConfig type does not fit it.
  if (io.type !== undefined && io.type !== "index") {
    return json(400, {
      error: `Could not resolve type id '${String(io.type)}' as a subtype of \`org.apache.druid.indexing.common.task.IndexTask$IndexIOConfig\`: Class not subtype of [simple type, class org.apache.druid.indexing.common.task.IndexTask$IndexIOConfig]`,
    });
  }
  const ioConfig = isObj(io.inputSource) ? io : { ...io, inputSource: { type: "druid" } };
  const planned = planTask({ type: "index", spec: { ...spec, dataSchema, ioConfig } }, druidVersion);
  if (!planned.ok) return planned.reply;
  const ds = planned.plan.ingest?.dataSchema;
  if (!ds) throw new Error("an index task without an ingestion plan");
  const dimsSpec = isObj(dataSchema.dimensionsSpec) ? dataSchema.dimensionsSpec : {};
  if (dimsSpec.useSchemaDiscovery === true)
    throw new Unsupported("the sampler does not model useSchemaDiscovery");
  for (const d of ds.dimensions ?? []) {
    if (!["string", "long", "float", "double"].includes(d.type)) {
      throw new Unsupported(`the sampler models string, long, float and double dimensions, not [${d.type}]`);
    }
  }
  for (const m of ds.metrics) metricType(m);
  const transformSpec = isObj(dataSchema.transformSpec) ? dataSchema.transformSpec : {};
  if (Array.isArray(transformSpec.transforms) && transformSpec.transforms.length > 0) {
    throw new Unsupported("the sampler does not evaluate transforms (a transformSpec filter it does)");
  }
  const filter = isObj(transformSpec.filter) ? transformSpec.filter : null;
  if (filter) checkFilter(filter);
  const written = new Map<string, Obj>();
  for (const d of Array.isArray(dimsSpec.dimensions) ? dimsSpec.dimensions : []) {
    if (isObj(d) && typeof d.name === "string") written.set(d.name, d);
  }
  const format = isObj(io.inputFormat) ? io.inputFormat : { type: "json" };
  return {
    timestamp: ds.timestamp,
    dimensions: ds.dimensions,
    written,
    // DataSchema#computeDimensionsSpec: the timestamp column, metric inputs and outputs are never dimensions.
    exclusions: new Set([
      ds.timestamp.column,
      "__time",
      ...ds.dimensionExclusions,
      ...ds.metrics.flatMap((m) => (m.fieldName ? [m.name, m.fieldName] : [m.name])),
    ]),
    metrics: ds.metrics,
    queryGranularity: ds.queryGranularity,
    rollup: ds.rollup,
    filter,
    json: format.type === "json",
  };
}

/** `SamplerConfig`'s constructor: defaults, and `numRows` at most 5,000. */
function readConfig(raw: unknown): Config | Reply {
  const c = isObj(raw) ? raw : {};
  const numRows = c.numRows === undefined || c.numRows === null ? DEFAULT_NUM_ROWS : Number(c.numRows);
  if (!Number.isInteger(numRows)) {
    return json(400, {
      error: `Cannot deserialize value of type \`int\` from String ${JSON.stringify(String(c.numRows))}: not a valid \`int\` value`,
    });
  }
  if (numRows > MAX_NUM_ROWS) {
    return constructError(`${PKG}.SamplerConfig`, `numRows must be <= ${MAX_NUM_ROWS}`);
  }
  if (numRows < 1)
    throw new Unsupported(`the sampler models numRows from 1 to ${MAX_NUM_ROWS}, not ${numRows}`);
  const bytes = Number(c.maxClientResponseBytes ?? 0);
  return { numRows, maxClientResponseBytes: Number.isFinite(bytes) && bytes > 0 ? bytes : 0 };
}

/** An indexed row of the emulated IncrementalIndex. */
interface IndexRow {
  /** The response row it belongs to: the first of its rollup group (the longMin ordering aggregator). */
  sortKey: number;
  time: number;
  dims: Map<string, unknown>;
  metrics: Map<string, number | null>;
}

/** What sampling has read so far. */
interface Sampling {
  readonly rows: SampleRow[];
  /** Indexed rows by rollup key (without rollup, each row its own). */
  readonly index: Map<string, IndexRow>;
  /** The schema's dimensions, or (with discovery) those found so far, in reading order. */
  readonly dims: DimensionSpec[];
  readonly known: Set<string>;
  indexed: number;
}

/** `InputSourceSampler#sample` over the entities. */
function run(entities: InputEntity[], schema: Schema, config: Config): Obj {
  const dims: DimensionSpec[] = [...(schema.dimensions ?? [])];
  const s: Sampling = {
    rows: [],
    index: new Map(),
    dims,
    known: new Set(dims.map((d) => d.name)),
    indexed: 0,
  };
  reading: for (const entity of entities) {
    if (s.rows.length >= config.numRows) break;
    let recordNo = 0;
    for (const record of entity.records()) {
      if (s.rows.length >= config.numRows) break reading;
      recordNo++;
      sampleRecord(s, schema, record, () => {
        // IntermediateRowParsingReader#sample: the record could not be read as a map, so no `input`.
        const where = `${entity.path === null ? "" : `Path: file:${entity.path}, `}Record: ${recordNo}, Line: ${recordNo}`;
        return `Unable to parse row [${record.raw}] into JSON (${where})`;
      });
    }
  }
  attachParsed(s, schema);
  const { kept, indexed } = cutToResponseSize(s.rows, s.indexed, config.maxClientResponseBytes);
  return {
    numRowsRead: kept.length,
    numRowsIndexed: indexed,
    logicalDimensions: dims.map((d) => dimensionSchema(d, schema.written.get(d.name))),
    physicalDimensions: dims.map((d) => dimensionSchema(d, undefined)),
    logicalSegmentSchema: [
      { name: "__time", type: "LONG" },
      ...dims.map((d) => ({ name: d.name, type: d.type.toUpperCase() })),
      ...schema.metrics.map((m) => ({ name: m.name, type: metricType(m) })),
    ],
    data: kept
      .filter((r) => r.parsed !== undefined || r.unparseable !== undefined)
      .map(({ input, parsed, unparseable, error }) => ({ input, parsed, unparseable, error })),
  };
}

/**
 * One record: a response row (unparseable with its error, or not), indexed into its rollup group unless
 * unreadable, unparseable in time or dropped by the filter.
 */
function sampleRecord(
  s: Sampling,
  schema: Schema,
  record: { value: Obj | null; raw: string },
  unreadable: () => string,
): void {
  const value = record.value;
  if (value === null) {
    s.rows.push({ unparseable: true, error: unreadable() });
    return;
  }
  const tsValue = value[schema.timestamp.column] ?? schema.timestamp.missingValue;
  const ts = parseTimestamp(tsValue, schema.timestamp.format);
  if (!Number.isFinite(ts)) {
    const shown = tsValue === undefined ? null : String(tsValue);
    s.rows.push({
      input: value,
      unparseable: true,
      error: `Timestamp[${shown}] is unparseable! Event: ${javaMap(value)}`,
    });
    return;
  }
  // Transformer#transform drops the rows the filter rejects before the sampler sees them.
  if (schema.filter && !matches(schema.filter, value, ts)) return;
  if (schema.dimensions === null) discoverDimensions(s, schema, value);
  const errors: string[] = [];
  const rowDims = new Map<string, unknown>();
  for (const d of s.dims) rowDims.set(d.name, dimValue(value[d.name], d, errors));
  const inputs = new Map<string, number | null>();
  for (const m of schema.metrics) inputs.set(m.name, metricInput(m, value, errors));
  const time = bucketStart(schema.queryGranularity, ts);
  const rowIndex = s.rows.length;
  const key = schema.rollup ? rollupKey(time, s.dims, rowDims) : `#${rowIndex}`;
  const group = s.index.get(key);
  if (group) {
    for (const m of schema.metrics)
      group.metrics.set(m.name, combine(m, group.metrics.get(m.name), inputs.get(m.name)));
  } else {
    s.index.set(key, { sortKey: rowIndex, time, dims: rowDims, metrics: inputs });
  }
  if (errors.length > 0) {
    s.rows.push({
      input: value,
      unparseable: true,
      error: `Found unparseable columns in row: [${javaMap(value)}], exceptions: [${errors.join(",")}]`,
    });
  } else {
    s.rows.push({ input: value });
    s.indexed++;
  }
}

/** Schema discovery: a row's new root fields become string dimensions (not excluded or unflattenable ones). */
function discoverDimensions(s: Sampling, schema: Schema, value: Obj): void {
  for (const [k, v] of Object.entries(value)) {
    if (s.known.has(k) || schema.exclusions.has(k) || (schema.json && !discoverable(v))) continue;
    s.known.add(k);
    s.dims.push({ name: k, type: "string" });
  }
}

/** Each rollup group's values become the `parsed` of its first row. */
function attachParsed(s: Sampling, schema: Schema): void {
  for (const r of s.index.values()) {
    const parsed: Obj = { __time: r.time };
    for (const d of s.dims) parsed[d.name] = r.dims.get(d.name) ?? null;
    for (const m of schema.metrics) parsed[m.name] = r.metrics.get(m.name) ?? null;
    const row = s.rows[r.sortKey];
    if (row) row.parsed = parsed;
  }
}

/**
 * `maxClientResponseBytes`: the response-size cut counts the row that crosses the limit, and then counts
 * rows with input as indexed.
 */
function cutToResponseSize(
  rows: SampleRow[],
  indexed: number,
  maxBytes: number,
): { kept: SampleRow[]; indexed: number } {
  if (maxBytes <= 0) return { kept: rows, indexed };
  let size = 0;
  let count = 0;
  for (const row of rows) {
    count++;
    size += Buffer.byteLength(JSON.stringify(row));
    if (size > maxBytes) {
      const kept = rows.slice(0, count);
      return { kept, indexed: kept.filter((r) => r.input !== undefined).length };
    }
  }
  return { kept: rows, indexed };
}

/** IncrementalIndexRow equality: time, then dimension values, trailing absent ones counting as null. */
function rollupKey(time: number, dims: DimensionSpec[], values: Map<string, unknown>): string {
  const row = dims.map((d) => values.get(d.name) ?? null);
  while (row.length > 0 && row[row.length - 1] === null) row.pop();
  return JSON.stringify([time, ...row]);
}

/** The flattener's root-field discovery: primitives and lists of primitives, not objects or nulls. */
function discoverable(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (Array.isArray(v)) return v.every((x) => x === null || typeof x !== "object");
  return typeof v !== "object";
}

/** A dimension's stored value; a value its type cannot hold is a parse error and null. */
function dimValue(v: unknown, d: DimensionSpec, errors: string[]): unknown {
  if (v === undefined || v === null) return null;
  if (d.type === "string") {
    const text = (x: unknown) => (x === null || typeof x !== "object" ? String(x) : JSON.stringify(x));
    if (!Array.isArray(v)) return text(v);
    // multiValueHandling SORTED_ARRAY; one value reads back as that value.
    const values = v
      .filter((x) => x !== null)
      .map(text)
      .sort();
    return values.length === 0 ? null : values.length === 1 ? values[0] : values;
  }
  if (v === "") return null;
  const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) {
    errors.push(`could not convert value [${String(v)}] to ${d.type}`);
    return null;
  }
  return d.type === "long" ? Math.trunc(n) : n;
}

/** What a metric aggregates from a row: 1 for count, the field's number, null for an absent field. */
function metricInput(m: MetricSpec, value: Obj, errors: string[]): number | null {
  if (m.type === "count") return 1;
  const raw = m.fieldName === null ? null : value[m.fieldName];
  if (raw === undefined || raw === null || raw === "") return null;
  const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(n)) {
    errors.push(`Unable to parse value[${String(raw)}] for field[${m.fieldName}]`);
    return null;
  }
  return m.type.startsWith("long") ? Math.trunc(n) : n;
}

/** SQL-compatible null handling (Druid 33's only mode): nulls are skipped, all-null stays null. */
function combine(m: MetricSpec, a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  if (m.type.endsWith("Min")) return Math.min(a, b);
  if (m.type.endsWith("Max")) return Math.max(a, b);
  return a + b;
}

/** The column type of a metric in `logicalSegmentSchema`. */
function metricType(m: MetricSpec): string {
  if (m.type === "count") return "LONG";
  const match = /^(long|double|float)(Sum|Min|Max)$/.exec(m.type);
  if (!match?.[1])
    throw new Unsupported(`the sampler models count, *Sum, *Min and *Max metrics, not [${m.type}]`);
  return match[1].toUpperCase();
}

/** A `DimensionSchema` as Jackson writes it; `written` is the dataSchema's own, for the logical view. */
function dimensionSchema(d: DimensionSpec, written: Obj | undefined): Obj {
  const handling =
    typeof written?.multiValueHandling === "string" ? written.multiValueHandling.toUpperCase() : null;
  const bitmap = typeof written?.createBitmapIndex === "boolean" ? written.createBitmapIndex : true;
  return {
    type: d.type,
    name: d.name,
    multiValueHandling: handling ?? "SORTED_ARRAY",
    // Numeric dimension schemas never index bitmaps.
    createBitmapIndex: d.type === "string" ? bitmap : false,
  };
}

const FILTERS = ["selector", "equals", "in", "not", "and", "or", "true", "false"];

function checkFilter(f: Obj): void {
  if (typeof f.type !== "string" || !FILTERS.includes(f.type)) {
    throw new Unsupported(`the sampler evaluates ${FILTERS.join(", ")} filters, not [${String(f.type)}]`);
  }
  if (isObj(f.field)) checkFilter(f.field);
  if (Array.isArray(f.fields)) for (const g of f.fields) checkFilter(isObj(g) ? g : {});
}

/** A filter over the parsed row's values, compared as strings (a multi-value row matches on any value). */
function matches(f: Obj, row: Obj, ts: number): boolean {
  const valuesOf = (column: unknown): Array<string | null> => {
    const v = column === "__time" ? ts : row[String(column)];
    if (Array.isArray(v)) return v.length === 0 ? [null] : v.map((x) => (x === null ? null : String(x)));
    return [v === undefined || v === null || v === "" ? null : String(v)];
  };
  const text = (v: unknown) => (v === undefined || v === null || v === "" ? null : String(v));
  switch (f.type) {
    case "selector":
      return valuesOf(f.dimension).includes(text(f.value));
    case "equals":
      return valuesOf(f.column).includes(text(f.matchValue));
    case "in": {
      const wanted = Array.isArray(f.values) ? f.values.map(text) : [];
      return valuesOf(f.dimension).some((v) => wanted.includes(v));
    }
    case "not":
      return !matches(isObj(f.field) ? f.field : {}, row, ts);
    case "and":
      return (Array.isArray(f.fields) ? f.fields : []).every((g) => matches(isObj(g) ? g : {}, row, ts));
    case "or":
      return (Array.isArray(f.fields) ? f.fields : []).some((g) => matches(isObj(g) ? g : {}, row, ts));
    default:
      return f.type === "true";
  }
}

/** Java's `Map#toString`, as Druid prints events in parse-exception messages. */
function javaMap(o: Obj): string {
  return `{${Object.entries(o)
    .map(([k, v]) => `${k}=${v === null || typeof v !== "object" ? String(v) : JSON.stringify(v)}`)
    .join(", ")}}`;
}
