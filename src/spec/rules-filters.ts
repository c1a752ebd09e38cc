import { FILTER_TYPES } from "../core/druid-filter-types.js";
import { parseInterval } from "../core/interval.js";
import type { RuleContext } from "./rule-context.js";

/**
 * The `DimFilter` subtypes Druid 33 registers (`DimFilter`'s `@JsonSubTypes`; no default type) and the fields
 * their constructors require: a filter in `transformSpec.filter` or a `filtered` aggregator that lacks one
 * fails the task at submission. Messages quote Druid's where it has one.
 */

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

const KNOWN = new Set(FILTER_TYPES);

/** Each filter type's required fields: [field, Druid's words]. */
const REQUIRED: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  selector: [["dimension", "dimension must not be null"]],
  in: [
    ["dimension", "dimension cannot be null"],
    ["values", "values cannot be null"],
  ],
  inType: [
    ["column", "Invalid IN filter, column cannot be null"],
    ["matchValueType", "Invalid IN filter, matchValueType cannot be null"],
  ],
  bound: [["dimension", "dimension can not be null"]],
  equals: [
    ["column", "Invalid equality filter, column cannot be null"],
    ["matchValueType", "Invalid equality filter, matchValueType cannot be null"],
    ["matchValue", "Invalid equality filter, matchValue cannot be null"],
  ],
  null: [["column", "Invalid null filter, column cannot be null"]],
  range: [
    ["column", "Invalid range filter, column cannot be null"],
    ["matchValueType", "Invalid range filter, matchValueType cannot be null"],
  ],
  like: [
    ["dimension", "dimension must not be null"],
    ["pattern", "pattern must not be null"],
  ],
  regex: [
    ["dimension", "dimension must not be null"],
    ["pattern", "pattern must not be null"],
  ],
  search: [
    ["dimension", "dimension must not be null"],
    ["query", "query must not be null"],
  ],
  interval: [
    ["dimension", "dimension can not be null"],
    ["intervals", "intervals can not be null"],
  ],
  javascript: [
    ["dimension", "dimension must not be null"],
    ["function", "function must not be null"],
  ],
  spatial: [
    ["dimension", "dimension must not be null"],
    ["bound", "bound must not be null"],
  ],
  extraction: [
    ["dimension", "dimension must not be null"],
    ["extractionFn", "extractionFn must not be null"],
  ],
  not: [["field", "NOT operator requires at least one field"]],
  isfalse: [["field", "IS FALSE operator requires a non-null filter for field"]],
  istrue: [["field", "IS TRUE operator requires a non-null filter for field"]],
  arrayContainsElement: [
    ["column", "Invalid array_contains filter, column cannot be null"],
    ["elementMatchValueType", "Invalid array_contains filter, elementMatchValueType cannot be null"],
  ],
};

/**
 * Whether `ColumnType.fromString` reads a type name: a scalar name in any case, `ARRAY<…>` (upper case) of a
 * readable type, `COMPLEX<…>`. An unreadable one is null, which the typed filters refuse.
 */
function readableColumnType(t: string): boolean {
  if (/^(string|long|double|float)$/i.test(t)) return true;
  const element = /^ARRAY<(.+)>$/.exec(t)?.[1];
  if (element !== undefined) return readableColumnType(element);
  return /^COMPLEX<.+>$/.test(t);
}

const TYPED_FIELDS: Readonly<Record<string, string>> = {
  equals: "matchValueType",
  range: "matchValueType",
  inType: "matchValueType",
  arrayContainsElement: "elementMatchValueType",
};

/** `ExtractionFn`'s subtypes in Druid 33 (no default type): a filter's `extractionFn` must be one of them. */
const EXTRACTION_TYPES = new Set([
  "bucket",
  "cascade",
  "identity",
  "javascript",
  "lookup",
  "lower",
  "partial",
  "regex",
  "registeredLookup",
  "searchQuery",
  "stringFormat",
  "strlen",
  "substring",
  "time",
  "timeFormat",
  "upper",
]);

function checkExtractionFn(ctx: RuleContext, path: string, fn: unknown): void {
  const type = fn !== null && typeof fn === "object" && !Array.isArray(fn) ? (fn as Obj).type : undefined;
  if (typeof type === "string" && EXTRACTION_TYPES.has(type)) return;
  ctx.error(
    `${path}.type`,
    type === undefined
      ? "missing type id property 'type': an extractionFn needs one of Druid's extraction function types"
      : `Could not resolve type id ${JSON.stringify(type)} as a subtype of ExtractionFn: expected one of ${[...EXTRACTION_TYPES].map((t) => JSON.stringify(t)).join(", ")}`,
  );
}

/** Checks one filter and the filters inside it. */
export function checkFilter(ctx: RuleContext, path: string, filter: unknown): void {
  const f = obj(filter);
  if (!f) return;
  const type = f.type;
  if (type === undefined) {
    ctx.error(
      `${path}.type`,
      `missing type id property 'type': a filter needs one of ${FILTER_TYPES.map((t) => JSON.stringify(t)).join(", ")}`,
    );
    return;
  }
  if (typeof type !== "string" || !KNOWN.has(type)) {
    const near = FILTER_TYPES.find((k) => k.toLowerCase() === String(type).toLowerCase());
    ctx.error(
      `${path}.type`,
      `Could not resolve type id ${JSON.stringify(type)} as a subtype of DimFilter${near ? ` (type ids are case-sensitive: "${near}")` : ""}`,
    );
    return;
  }
  for (const [field, message] of REQUIRED[type] ?? []) {
    if (f[field] === undefined) ctx.error(`${path}.${field}`, message);
  }
  if (f.extractionFn !== undefined) checkExtractionFn(ctx, `${path}.extractionFn`, f.extractionFn);
  const typed = TYPED_FIELDS[type];
  const columnType = typed === undefined ? undefined : f[typed];
  if (typeof columnType === "string" && !readableColumnType(columnType)) {
    ctx.error(
      `${path}.${typed}`,
      `not a column type Druid reads (${JSON.stringify(columnType)}): expected "STRING", "LONG", "DOUBLE", "FLOAT", "ARRAY<…>" or "COMPLEX<…>"`,
    );
  }
  switch (type) {
    case "and":
    case "or": {
      const fields = f.fields;
      if (!Array.isArray(fields) || fields.length === 0) {
        ctx.error(`${path}.fields`, `${type.toUpperCase()} operator requires at least one field`);
      } else {
        fields.forEach((x, i) => {
          checkFilter(ctx, `${path}.fields[${i}]`, x);
        });
      }
      return;
    }
    case "not":
    case "isfalse":
    case "istrue":
      if (f.field !== undefined) checkFilter(ctx, `${path}.field`, f.field);
      return;
    case "bound":
      if (f.lower === undefined && f.upper === undefined) {
        ctx.error(`${path}.lower`, "lower and upper can not be null at the same time");
      }
      return;
    case "range":
      if (f.lower === undefined && f.upper === undefined) {
        ctx.error(`${path}.lower`, "Invalid range filter, lower and upper cannot be null at the same time");
      }
      return;
    case "inType":
      if ((f.values === undefined) === (f.sortedValues === undefined)) {
        ctx.error(
          `${path}.values`,
          "Invalid IN filter, exactly one of values or sortedValues must be non-null",
        );
      }
      return;
    case "arrayContainsElement":
      if (
        f.elementMatchValue === undefined &&
        f.column !== undefined &&
        f.elementMatchValueType !== undefined
      ) {
        ctx.error(
          `${path}.elementMatchValue`,
          "Invalid array_contains filter, elementMatchValue cannot be null",
        );
      }
      return;
    case "columnComparison":
      if (!Array.isArray(f.dimensions) || f.dimensions.length < 2) {
        ctx.error(`${path}.dimensions`, "dimensions must have a least 2 dimensions");
      }
      return;
    case "interval":
      if (Array.isArray(f.intervals)) {
        if (f.intervals.length === 0) ctx.error(`${path}.intervals`, "must specify at least one interval");
        f.intervals.forEach((iv, i) => {
          if (typeof iv !== "string") return;
          try {
            parseInterval(iv);
          } catch (e) {
            ctx.error(`${path}.intervals[${i}]`, `cannot read the interval: ${(e as Error).message}`);
          }
        });
      }
      return;
    case "regex":
      if (typeof f.pattern === "string") {
        try {
          new RegExp(f.pattern);
        } catch (e) {
          ctx.error(`${path}.pattern`, `not a valid regular expression: ${(e as Error).message}`);
        }
      }
      return;
    default:
  }
}
